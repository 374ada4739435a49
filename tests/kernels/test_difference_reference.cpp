/* The heat map and noise map CPU references against what the test computes directly: colour
 * tables, per-pixel differences and counts, the threshold's boundary, single changed pixels at
 * each corner, static scenes, NV12/I420 chroma groups, and the YUV conversions; the regions of a
 * grid of cells as the analysers attach them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <algorithm>
#include <cmath>
#include <cstring>

#include <hwy/targets.h>

#include "tests/common/cuvdiff.h"
#include "kernels/heatmap/heatmap.h"
#include "kernels/noisemap/noisemap.h"
#include "kernels/base/regions.h"

using namespace cuvtest;

namespace {

uint32_t rgb_word (int r, int g, int b)
{
  return r | g << 8 | b << 16 | 0xff000000u;
}

void test_colormaps (Checker &c)
{
  int rgb[3];
  const struct {
    cuv::Colormap map;
    double n;
    int r, g, b;
  } cases[] = {
      {cuv::Colormap::Sine, 0.0, 0, 0, 255}, {cuv::Colormap::Sine, 0.5, 0, 255, 0}, {cuv::Colormap::Sine, 1.0, 255, 0, 0},
      {cuv::Colormap::Jet, 0.0, 0, 0, 128}, {cuv::Colormap::Jet, 0.5, 128, 255, 128}, {cuv::Colormap::Jet, 1.0, 128, 0, 0},
      {cuv::Colormap::Gray, 0.0, 0, 0, 0}, {cuv::Colormap::Gray, 1.0, 255, 255, 255},
      {cuv::Colormap::Inferno, 0.0, 0, 0, 0}, {cuv::Colormap::Inferno, 1.0, 250, 255, 167},
  };
  for (const auto &k : cases) {
    cuv::colormap_rgb (k.map, k.n, rgb);
    const bool ok = std::abs (rgb[0] - k.r) <= 1 && std::abs (rgb[1] - k.g) <= 1 && std::abs (rgb[2] - k.b) <= 1;
    c.expect (ok, "colormap " + std::to_string (static_cast<int> (k.map)) + " at " + std::to_string (k.n) + " gives " +
        std::to_string (rgb[0]) + "," + std::to_string (rgb[1]) + "," + std::to_string (rgb[2]));
  }
  /* the table: d -> min(1, gain * d / 765), packed for the layout, fourth byte 255 */
  uint32_t t[cuv::kHeatmapTableSize], bgr[cuv::kHeatmapTableSize];
  cuv::heatmap_build_table (cuv::Colormap::Sine, 1.0, cuv::PixelLayout::RGBA, t);
  c.expect (t[0] == rgb_word (0, 0, 255) && t[765] == rgb_word (255, 0, 0), "sine table ends are blue and red");
  cuv::heatmap_build_table (cuv::Colormap::Sine, 1.0, cuv::PixelLayout::BGRx, bgr);
  c.expect (bgr[0] == rgb_word (255, 0, 0) && bgr[765] == rgb_word (0, 0, 255), "BGR tables swap R and B");
  cuv::heatmap_build_table (cuv::Colormap::Gray, 4.0, cuv::PixelLayout::RGBA, t);
  bool ramp = true;
  for (int d = 0; d < cuv::kHeatmapTableSize; d++) {
    const int want = static_cast<int> (std::lrint (std::min (1.0, 4.0 * d / 765.0) * 255.0));
    ramp = ramp && t[d] == rgb_word (want, want, want);
  }
  c.expect (ramp, "gray table with gain 4 saturates at d = 191.25");
}

/* A random pair of frames, the heat map checked pixel by pixel against an independent loop. */
/* Y, U and V of pixel (@x, @y) of a YUV frame, read here from the layout's definition. */
void yuv_sample (const cuv::Frame &f, int x, int y, int yuv[3])
{
  if (f.layout == cuv::PixelLayout::YUY2 || f.layout == cuv::PixelLayout::UYVY) {
    /* YUY2: Y0 U Y1 V, UYVY: U Y0 V Y1 */
    const uint8_t *pair = &px_byte (f, x / 2, y, 0);
    const bool uyvy = f.layout == cuv::PixelLayout::UYVY;
    yuv[0] = pair[2 * (x % 2) + (uyvy ? 1 : 0)];
    yuv[1] = pair[uyvy ? 0 : 1];
    yuv[2] = pair[uyvy ? 2 : 3];
    return;
  }
  if (f.layout == cuv::PixelLayout::P010) {
    /* 16-bit little-endian samples, read as their high bytes; U V interleaved at half resolution */
    const uint8_t *uv = f.planes[1].data + static_cast<size_t> (y / 2) * f.planes[1].pitch + 4 * (x / 2);
    yuv[0] = f.planes[0].data[static_cast<size_t> (y) * f.planes[0].pitch + 2 * x + 1];
    yuv[1] = uv[1];
    yuv[2] = uv[3];
    return;
  }
  const cuv::ChromaAt cc = cuv::chroma_at (f, x / 2, y / 2);
  yuv[0] = y_at (f, x, y);
  yuv[1] = *cc.u;
  yuv[2] = *cc.v;
}

void test_heatmap_direct (Checker &c, cuv::PixelLayout l, Size s, int blend)
{
  HostImage cur (l, s.w, s.h, 3), prev (l, s.w, s.h, 3);
  fill_pattern (cur.storage, s.w * 7 + blend);
  make_previous (cur, prev, s.h + blend);
  const cuv::PixelLayout ol = cuv::heatmap_out_layout (l);
  HostImage out (ol, s.w, s.h, 5);
  uint32_t table[cuv::kHeatmapTableSize];
  cuv::heatmap_build_table (cuv::Colormap::Jet, 2.5, ol, table);
  const cuv::YuvToRgb yuv = cuv::yuv_to_rgb_coefficients (0.299, 0.114, false);
  cuv::DiffStats st;
  cuv::heatmap_reference (cur.frame, prev.frame, out.frame, cuv::HeatmapParams{table, blend, yuv}, &st);

  uint64_t sum = 0;
  unsigned max = 0;
  int bad = 0;
  const bool rgb = cuv::layout_is_rgb (l);
  for (int y = 0; y < s.h; y++) {
    for (int x = 0; x < s.w; x++) {
      int d = 0, below[3];
      if (rgb) {
        for (int i = 0; i < 3; i++)
          d += std::abs (px_byte (cur.frame, x, y, i) - px_byte (prev.frame, x, y, i));
        for (int i = 0; i < 3; i++)
          below[i] = px_byte (cur.frame, x, y, i);
      } else {
        int cs[3], ps[3];
        yuv_sample (cur.frame, x, y, cs);
        yuv_sample (prev.frame, x, y, ps);
        d = std::abs (cs[0] - ps[0]) + std::abs (cs[1] - ps[1]) + std::abs (cs[2] - ps[2]);
        /* BT.601 limited range, computed here in double: within 1 of the fixed-point result */
        const double yf = (cs[0] - 16) * 255.0 / 219.0, uf = (cs[1] - 128) * 255.0 / 224.0, vf = (cs[2] - 128) * 255.0 / 224.0;
        const double rgbf[3] = {yf + 1.402 * vf, yf - 0.344136 * uf - 0.714136 * vf, yf + 1.772 * uf};
        for (int i = 0; i < 3; i++)
          below[i] = std::clamp (static_cast<int> (std::lrint (rgbf[i])), 0, 255);
      }
      sum += d;
      max = std::max (max, static_cast<unsigned> (d));
      for (int i = 0; i < 4; i++) {
        const int h = table[d] >> (8 * i) & 0xff;
        const int want = i == 3 ? 255 : (h * blend + below[i] * (256 - blend) + 128) >> 8;
        const int tol = rgb || blend == 256 || i == 3 ? 0 : 1;
        bad += std::abs (px_byte (out.frame, x, y, i) - want) > tol;
      }
    }
  }
  const std::string what = std::string ("heatmap ") + layout_name (l) + " " + std::to_string (s.w) + "x" +
      std::to_string (s.h) + " blend " + std::to_string (blend);
  c.expect (bad == 0, what + ": " + std::to_string (bad) + " bytes differ from the direct computation");
  c.expect (st.sum_difference == sum && st.max_difference == max, what + ": statistics " + stats_diff (st, cuv::DiffStats{sum, 0, max, 0}));
}

cuv::NoisemapParams noise_params (cuv::PixelLayout l, int threshold, bool overlay, int alpha)
{
  cuv::NoisemapParams p{};
  p.threshold = threshold;
  p.overlay = overlay;
  p.alpha = cuv::alpha256 (alpha);
  p.color = cuv::pack_px (l, 255, 0, 0, 255);
  int y, u, v;
  cuv::rgb_to_yuv (0.299, 0.114, false, 255, 0, 0, &y, &u, &v);
  p.yuv[0] = static_cast<uint8_t> (y);
  p.yuv[1] = static_cast<uint8_t> (u);
  p.yuv[2] = static_cast<uint8_t> (v);
  p.y_black = 16;
  return p;
}

/* Noisy pixels counted and painted as the test decides them. */
void test_noisemap_direct (Checker &c, cuv::PixelLayout l, Size s, int threshold, bool overlay)
{
  HostImage cur (l, s.w, s.h, 0, 1), prev (l, s.w, s.h, 0, 1), out (l, s.w, s.h, 2);
  fill_pattern (cur.storage, s.w + threshold);
  make_previous (cur, prev, s.h * 3 + threshold);
  const cuv::NoisemapParams p = noise_params (l, threshold, overlay, 255);
  cuv::DiffStats st;
  cuv::noisemap_reference (cur.frame, prev.frame, out.frame, p, &st);

  const bool rgb = cuv::layout_is_rgb (l);
  uint64_t changed = 0;
  int bad = 0;
  const int cols = (s.w + 15) / 16, rows = (s.h + 15) / 16;
  std::vector<int> tiles (static_cast<size_t> (cols) * rows, 0);
  bool pair_noisy = false;
  std::vector<bool> group_noisy (static_cast<size_t> ((s.w + 1) / 2) * ((s.h + 1) / 2), false);
  for (int y = 0; y < s.h; y++) {
    for (int x = 0; x < s.w; x++) {
      bool noisy = false;
      if (rgb) {
        for (int i = 0; i < 3; i++)
          noisy |= std::abs (px_byte (cur.frame, x, y, i) - px_byte (prev.frame, x, y, i)) > threshold;
        const uint8_t red[4] = {static_cast<uint8_t> (cuv::layout_is_bgr (l) ? 0 : 255), 0,
            static_cast<uint8_t> (cuv::layout_is_bgr (l) ? 255 : 0), 255};
        for (int i = 0; i < 4; i++) {
          const int below = overlay ? px_byte (cur.frame, x, y, i) : (i == 3 ? 255 : 0);
          const int want = noisy && i < 3 ? red[i] : below;
          bad += px_byte (out.frame, x, y, i) != want;
        }
      } else if (cuv::layout_is_packed422 (l)) {
        /* YUY2: Y0 U Y1 V, UYVY: U Y0 V Y1 */
        const int yb = l == cuv::PixelLayout::UYVY ? 1 : 0, ub = 1 - yb;
        auto at = [&] (const cuv::Frame &f, int i) -> uint8_t & { return px_byte (f, x / 2, y, i); };
        const int yi = 2 * (x % 2) + yb;
        noisy = std::abs (at (cur.frame, yi) - at (prev.frame, yi)) > threshold ||
            std::abs (at (cur.frame, ub) - at (prev.frame, ub)) > threshold ||
            std::abs (at (cur.frame, ub + 2) - at (prev.frame, ub + 2)) > threshold;
        bad += at (out.frame, yi) != (noisy ? p.yuv[0] : overlay ? at (cur.frame, yi) : 16);
        /* the pair's U and V: the colour's when either pixel is noisy */
        pair_noisy = x % 2 ? pair_noisy || noisy : noisy;
        if (x % 2)
          bad += at (out.frame, ub) != (pair_noisy ? p.yuv[1] : overlay ? at (cur.frame, ub) : 128) ||
              at (out.frame, ub + 2) != (pair_noisy ? p.yuv[2] : overlay ? at (cur.frame, ub + 2) : 128);
      } else if (l == cuv::PixelLayout::P010) {
        int cs[3], ps[3];
        yuv_sample (cur.frame, x, y, cs);
        yuv_sample (prev.frame, x, y, ps);
        for (int i = 0; i < 3; i++)
          noisy |= std::abs (cs[i] - ps[i]) > threshold;
        /* the Y sample: the colour's or black's Y as v << 8, or in overlay mode the sample unchanged */
        const size_t at = static_cast<size_t> (y) * out.frame.planes[0].pitch + 2 * x;
        const uint8_t *o = out.frame.planes[0].data + at;
        const uint8_t *in = cur.frame.planes[0].data + static_cast<size_t> (y) * cur.frame.planes[0].pitch + 2 * x;
        const int want_lo = !noisy && overlay ? in[0] : 0, want_hi = noisy ? p.yuv[0] : overlay ? in[1] : 16;
        bad += o[0] != want_lo || o[1] != want_hi;
        if (noisy)
          group_noisy[(y / 2) * ((s.w + 1) / 2) + x / 2] = true;
      } else {
        const cuv::ChromaAt cc = cuv::chroma_at (cur.frame, x / 2, y / 2), pc = cuv::chroma_at (prev.frame, x / 2, y / 2);
        noisy = std::abs (y_at (cur.frame, x, y) - y_at (prev.frame, x, y)) > threshold ||
            std::abs (*cc.u - *pc.u) > threshold || std::abs (*cc.v - *pc.v) > threshold;
        const int below = overlay ? y_at (cur.frame, x, y) : 16;
        bad += y_at (out.frame, x, y) != (noisy ? p.yuv[0] : below);
      }
      changed += noisy;
      tiles[(y / 16) * cols + x / 16] += noisy;
    }
  }
  if (l == cuv::PixelLayout::P010) {
    /* a group's U and V: the colour's as v << 8 when any of its pixels is noisy, else neutral
     * (map) or unchanged (overlay) */
    for (int gy = 0; gy < (s.h + 1) / 2; gy++)
      for (int gx = 0; gx < (s.w + 1) / 2; gx++) {
        const bool any = group_noisy[gy * ((s.w + 1) / 2) + gx];
        for (int k = 0; k < 2; k++) {
          const uint8_t *o = out.frame.planes[1].data + static_cast<size_t> (gy) * out.frame.planes[1].pitch + 4 * gx + 2 * k;
          const uint8_t *in = cur.frame.planes[1].data + static_cast<size_t> (gy) * cur.frame.planes[1].pitch + 4 * gx + 2 * k;
          const int want_lo = !any && overlay ? in[0] : 0, want_hi = any ? p.yuv[1 + k] : overlay ? in[1] : 128;
          bad += o[0] != want_lo || o[1] != want_hi;
        }
      }
  }
  const std::string what = std::string ("noisemap ") + layout_name (l) + " " + std::to_string (s.w) + "x" +
      std::to_string (s.h) + " threshold " + std::to_string (threshold) + (overlay ? " overlay" : " map");
  /* the tiles, whole and in bands of tile rows as the CPU backend runs them */
  std::vector<uint16_t> got (tiles.size (), 0xffff), banded (tiles.size (), 0xffff);
  cuv::noisemap_tiles_reference (cur.frame, prev.frame, threshold, got.data ());
  for (int r = 0; r < rows; r += 2) {
    const int y0 = r * 16, y1 = std::min (s.h, (r + 2) * 16);
    cuv::noisemap_tiles_reference (cuv::frame_rows (cur.frame, y0, y1), cuv::frame_rows (prev.frame, y0, y1), threshold,
        banded.data () + static_cast<size_t> (r) * cols);
  }
  int bad_tiles = 0;
  for (size_t i = 0; i < tiles.size (); i++)
    bad_tiles += got[i] != tiles[i] || banded[i] != tiles[i];
  c.expect (bad_tiles == 0, what + ": " + std::to_string (bad_tiles) + " of " + std::to_string (tiles.size ()) +
      " tile counts differ from the direct count");
  c.expect (bad == 0, what + ": " + std::to_string (bad) + " bytes differ from the direct computation");
  c.expect (st.changed == changed, what + ": " + std::to_string (st.changed) + " changed pixels, counted " +
      std::to_string (changed));
}

/* A static scene changes nothing: overlay output is the input, the map is black, the heat map is table[0]. */
void test_static (Checker &c, cuv::PixelLayout l)
{
  HostImage cur (l, 33, 9, 4), out (l, 33, 9, 4);
  fill_pattern (cur.storage, 5);
  cuv::DiffStats st;
  cuv::noisemap_reference (cur.frame, cur.frame, out.frame, noise_params (l, 0, true, 255), &st);
  c.expect (st.changed == 0 && max_diff (out.frame, cur.frame, "static overlay") == 0,
      std::string ("static scene, overlay, threshold 0, ") + layout_name (l) + ": the frame unchanged, nothing counted");
  cuv::noisemap_reference (cur.frame, cur.frame, out.frame, noise_params (l, 0, false, 255), &st);
  HostImage black (l, 33, 9, 4);
  if (cuv::layout_is_rgb (l)) {
    for (int y = 0; y < 9; y++)
      for (int x = 0; x < 33; x++)
        px_byte (black.frame, x, y, 3) = 255;
  } else {
    std::memset (black.storage.data (), 128, black.storage.size ());
    for (int y = 0; y < 9; y++)
      std::memset (black.frame.planes[0].data + y * black.frame.planes[0].pitch, 16, 33);
  }
  c.expect (max_diff (out.frame, black.frame, "static map") == 0, std::string ("static map is black: ") + layout_name (l));

  if (!cuv::layout_is_rgb (l))
    return;
  uint32_t table[cuv::kHeatmapTableSize];
  cuv::heatmap_build_table (cuv::Colormap::Sine, 1.0, l, table);
  cuv::heatmap_reference (cur.frame, cur.frame, out.frame, cuv::HeatmapParams{table, 256, {}}, &st);
  bool all_blue = true;
  for (int y = 0; y < 9; y++)
    for (int x = 0; x < 33; x++)
      all_blue = all_blue && cuv::load_le32 (&px_byte (out.frame, x, y, 0)) == table[0];
  c.expect (all_blue && st.sum_difference == 0 && st.max_difference == 0,
      std::string ("static heat map is table[0] with zero statistics: ") + layout_name (l));
}

/* One pixel changed by exactly the threshold is quiet; by one more, it is the only noisy pixel. */
void test_corners_and_boundary (Checker &c, cuv::PixelLayout l)
{
  const int w = 19, h = 11, t = 20;
  HostImage cur (l, w, h, 0), prev (l, w, h, 0), out (l, w, h, 0);
  fill_pattern (cur.storage, 9);
  for (uint8_t &b : cur.storage)
    b = static_cast<uint8_t> (std::clamp<int> (b, 30, 220));
  const int corners[4][2] = {{0, 0}, {w - 1, 0}, {0, h - 1}, {w - 1, h - 1}};
  for (const auto &k : corners) {
    for (int delta : {t, t + 1}) {
      prev.storage = cur.storage;
      if (cuv::layout_is_rgb (l))
        px_byte (prev.frame, k[0], k[1], 1) = static_cast<uint8_t> (px_byte (cur.frame, k[0], k[1], 1) - delta);
      else
        y_at (prev.frame, k[0], k[1]) = static_cast<uint8_t> (y_at (cur.frame, k[0], k[1]) + delta);
      cuv::DiffStats st;
      cuv::noisemap_reference (cur.frame, prev.frame, out.frame, noise_params (l, t, false, 255), &st);
      const uint64_t want = delta > t ? 1 : 0;
      c.expect (st.changed == want, std::string ("noisemap ") + layout_name (l) + " corner " + std::to_string (k[0]) + "," +
          std::to_string (k[1]) + " changed by " + std::to_string (delta) + " at threshold 20: " +
          std::to_string (st.changed) + " noisy");
      uint32_t table[cuv::kHeatmapTableSize];
      cuv::heatmap_build_table (cuv::Colormap::Gray, 1.0, cuv::heatmap_out_layout (l), table);
      HostImage hout (cuv::heatmap_out_layout (l), w, h, 0);
      cuv::heatmap_reference (cur.frame, prev.frame, hout.frame,
          cuv::HeatmapParams{table, 256, cuv::yuv_to_rgb_coefficients (0.299, 0.114, false)}, &st);
      c.expect (st.max_difference == static_cast<unsigned> (delta) && st.sum_difference == static_cast<unsigned> (delta),
          std::string ("heatmap ") + layout_name (l) + " one pixel changed by " + std::to_string (delta) + ": " +
          stats_diff (st, cuv::DiffStats{static_cast<unsigned> (delta), 0, static_cast<unsigned> (delta), 0}));
    }
  }
}

/* NV12/I420: a changed chroma sample makes its whole 2x2 group noisy, and paints its chroma. */
void test_chroma_group (Checker &c, cuv::PixelLayout l)
{
  HostImage cur (l, 6, 4, 0), prev (l, 6, 4, 0), out (l, 6, 4, 0);
  std::memset (cur.storage.data (), 100, cur.storage.size ());
  prev.storage = cur.storage;
  *cuv::chroma_at (prev.frame, 1, 1).v = 50;
  cuv::DiffStats st;
  const cuv::NoisemapParams p = noise_params (l, 20, true, 255);
  cuv::noisemap_reference (cur.frame, prev.frame, out.frame, p, &st);
  const cuv::ChromaAt oc = cuv::chroma_at (out.frame, 1, 1), quiet = cuv::chroma_at (out.frame, 0, 0);
  c.expect (st.changed == 4 && y_at (out.frame, 2, 2) == p.yuv[0] && y_at (out.frame, 3, 3) == p.yuv[0] &&
      y_at (out.frame, 1, 1) == 100 && *oc.u == p.yuv[1] && *oc.v == p.yuv[2] && *quiet.u == 100,
      std::string (layout_name (l)) + ": a changed V sample paints its 2x2 group (" + std::to_string (st.changed) + " noisy)");
}

void test_yuv_conversion (Checker &c)
{
  const cuv::YuvToRgb k = cuv::yuv_to_rgb_coefficients (0.299, 0.114, false);
  c.expect (cuv::yuv_px (k, cuv::PixelLayout::RGBA, 16, 128, 128) == rgb_word (0, 0, 0) &&
      cuv::yuv_px (k, cuv::PixelLayout::RGBA, 235, 128, 128) == rgb_word (255, 255, 255),
      "limited-range black and white convert exactly");
  const cuv::YuvToRgb f = cuv::yuv_to_rgb_coefficients (0.2126, 0.0722, true);
  c.expect (cuv::yuv_px (f, cuv::PixelLayout::RGBA, 0, 128, 128) == rgb_word (0, 0, 0) &&
      cuv::yuv_px (f, cuv::PixelLayout::RGBA, 255, 128, 128) == rgb_word (255, 255, 255), "full-range black and white");
  const int colours[][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {200, 100, 50}, {17, 180, 240}};
  for (bool full : {false, true}) {
    for (const auto &col : colours) {
      int y, u, v;
      cuv::rgb_to_yuv (0.2126, 0.0722, full, col[0], col[1], col[2], &y, &u, &v);
      const uint32_t back = cuv::yuv_px (cuv::yuv_to_rgb_coefficients (0.2126, 0.0722, full), cuv::PixelLayout::RGBA, y, u, v);
      bool near = true;
      for (int i = 0; i < 3; i++)
        near = near && std::abs (static_cast<int> (back >> (8 * i) & 0xff) - col[i]) <= 3;
      c.expect (near, "RGB -> YUV -> RGB round trip of " + std::to_string (col[0]) + "," + std::to_string (col[1]) + "," +
          std::to_string (col[2]) + (full ? " (full range)" : " (limited range)"));
    }
  }
}

/* Whether two frames of one shape hold the same samples (padding ignored). */
bool same_frames (const cuv::Frame &a, const cuv::Frame &b)
{
  return max_diff (a, b, "", false) == 0;
}

bool same_stats (const cuv::DiffStats &a, const cuv::DiffStats &b)
{
  return a.sum_difference == b.sum_difference && a.changed == b.changed && a.max_difference == b.max_difference;
}

/* @op over bands of @rows rows (even, as the element's row pairs) through diff_rows_cpu (), the
 * statistics added as the element adds its bands'. */
template <typename Params>
cuv::DiffStats in_bands (cuv::DiffCpu<Params> op, const cuv::Frame &cur, const cuv::Frame &prev, const cuv::Frame &out,
    const Params &params, int rows)
{
  cuv::DiffStats total{};
  for (int y = 0; y < cur.height; y += rows)
    cuv::add_band_stats (&total, cuv::diff_rows_cpu (op, cur, prev, out, params, y, std::min (cur.height, y + rows)));
  return total;
}

/* The fast heat map and noise map (every SIMD target this CPU runs, as Highway dispatches them)
 * give the definitions' bytes and statistics: every layout (YUY2/UYVY in even widths, as the
 * elements take them), widths around each vector length,
 * odd sizes, padded and unaligned rows, each blend, threshold and mode, whole and in bands of
 * row pairs as the element runs them. */
void test_fast_equals_definition (Checker &c)
{
  const Size shapes[] = {{1, 1}, {2, 3}, {7, 5}, {16, 4}, {33, 9}, {64, 2}, {65, 7}, {129, 6}, {200, 11}};
  uint32_t table[cuv::kHeatmapTableSize], bgr_table[cuv::kHeatmapTableSize];
  cuv::heatmap_build_table (cuv::Colormap::Inferno, 3.0, cuv::PixelLayout::RGBA, table);
  cuv::heatmap_build_table (cuv::Colormap::Jet, 1.5, cuv::PixelLayout::BGRA, bgr_table);
  for (int64_t target : hwy::SupportedAndGeneratedTargets ()) {
    hwy::SetSupportedTargetsForTest (target);
    int wrong = 0, cases = 0;
    for (cuv::PixelLayout l : kDiffLayoutsAll) {
      for (Size shape : shapes) {
        const Size s = even_for (l, shape);
        for (int pad : {0, 3}) {
          HostImage cur (l, s.w, s.h, pad, pad), prev (l, s.w, s.h, 2 * pad, 1);
          fill_pattern (cur.storage, s.w * 13 + s.h + pad);
          make_previous (cur, prev, s.w + 5 * s.h);
          const cuv::PixelLayout ol = cuv::heatmap_out_layout (l);
          const uint32_t *t = cuv::layout_is_bgr (ol) ? bgr_table : table;
          for (int blend : {256, 77, 0}) {
            const cuv::HeatmapParams hp{t, blend, cuv::yuv_to_rgb_coefficients (0.2126, 0.0722, blend == 77)};
            HostImage want (ol, s.w, s.h, 1), got (ol, s.w, s.h, pad + 2, 1), banded (ol, s.w, s.h, 0);
            cuv::DiffStats sw, sg;
            cuv::heatmap_reference (cur.frame, prev.frame, want.frame, hp, &sw);
            cuv::heatmap_cpu (cur.frame, prev.frame, got.frame, hp, &sg);
            const cuv::DiffStats sb = in_bands (cuv::heatmap_cpu, cur.frame, prev.frame, banded.frame, hp, 4);
            cases += 2;
            wrong += !same_frames (got.frame, want.frame) || !same_stats (sg, sw);
            wrong += !same_frames (banded.frame, want.frame) || !same_stats (sb, sw);
          }
          for (int threshold : {0, 9, 255}) {
            for (bool overlay : {false, true}) {
              for (int alpha : {255, 90, 0}) {
                const cuv::NoisemapParams np = noise_params (l, threshold, overlay, alpha);
                HostImage want (l, s.w, s.h, 1), got (l, s.w, s.h, pad + 1, 3), banded (l, s.w, s.h, 2);
                cuv::DiffStats sw, sg;
                cuv::noisemap_reference (cur.frame, prev.frame, want.frame, np, &sw);
                cuv::noisemap_cpu (cur.frame, prev.frame, got.frame, np, &sg);
                const cuv::DiffStats sb = in_bands (cuv::noisemap_cpu, cur.frame, prev.frame, banded.frame, np, 2);
                cases += 2;
                wrong += !same_frames (got.frame, want.frame) || !same_stats (sg, sw);
                wrong += !same_frames (banded.frame, want.frame) || !same_stats (sb, sw);
              }
            }
          }
        }
      }
    }
    std::printf ("fast heat map and noise map %s: %d cases\n", hwy::TargetName (target), cases);
    c.expect (wrong == 0, std::string ("fast heat map and noise map (") + hwy::TargetName (target) +
        ") equal the definitions: " + std::to_string (wrong) + " of " + std::to_string (cases) + " cases differ");
  }
  hwy::SetSupportedTargetsForTest (0);
}

/* connected_regions () on a hand-drawn mask: 8-connected (a diagonal joins), boxes, cells, weights,
 * the raster order of first cells, and min_cells. */
void test_connected_regions (Checker &c)
{
  const char *rows[] = {
      "##......#",
      ".#......#",
      "..#.....#",
      "........#",
      "...##....",
  };
  const int cols = 9, n = 5;
  std::vector<uint8_t> mask;
  std::vector<uint16_t> weights;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < cols; x++) {
      mask.push_back (rows[y][x] == '#');
      weights.push_back (static_cast<uint16_t> (y * cols + x));
    }
  const std::vector<cuv::Region> all = cuv::connected_regions (mask.data (), cols, n, 1, weights.data ());
  const auto same = [] (const cuv::Region &r, int x, int y, int w, int h, int cells, uint64_t weight) {
    return r.x == x && r.y == y && r.width == w && r.height == h && r.cells == cells && r.weight == weight;
  };
  c.expect (all.size () == 3 && same (all[0], 0, 0, 3, 3, 4, 0 + 1 + 10 + 20) && same (all[1], 8, 0, 1, 4, 4, 8 + 17 + 26 + 35) &&
          same (all[2], 3, 4, 2, 1, 2, 39 + 40),
      "connected_regions: the three regions of the drawn mask, with their boxes, cells and weights");
  const std::vector<cuv::Region> big = cuv::connected_regions (mask.data (), cols, n, 3);
  c.expect (big.size () == 2 && big[0].weight == 0 && same (big[1], 8, 0, 1, 4, 4, 0),
      "connected_regions: min_cells leaves out the two-cell region; no weights sum to 0");
}

bool same_region (const cuv::PixelRegion &r, int x, int y, int w, int h, uint64_t area, double confidence)
{
  return r.x == x && r.y == y && r.width == w && r.height == h && r.area == area && r.confidence == confidence;
}

/* pixel_regions () on the same drawn mask, as both analysers attach regions: boxes in pixels cut
 * at the frame's edges, the area from the weights (cudanoisemap's tiles) or the cells' pixels
 * (cudamotionest's units), min_area at its boundary, the confidence, the scratch reused. */
void test_pixel_regions (Checker &c)
{
  const char *rows[] = {
      "##......#",
      ".#......#",
      "..#.....#",
      "........#",
      "...##....",
  };
  cuv::RegionScratch scratch;
  std::vector<uint16_t> weights;
  for (int y = 0; y < 5; y++)
    for (int x = 0; x < 9; x++) {
      scratch.mask.push_back (rows[y][x] == '#');
      weights.push_back (static_cast<uint16_t> ((x + y) % 4 + 1));
    }
  /* cells of 4 pixels over 34 x 18: the last column is 2 pixels wide, the last row 2 tall */
  const cuv::RegionGrid cut{9, 5, 4, 34, 18};
  std::vector<cuv::PixelRegion> r = cuv::pixel_regions (cut, 0, weights.data (), &scratch);
  c.expect (r.size () == 3 && same_region (r[0], 0, 0, 12, 12, 1 + 2 + 3 + 1, 7.0 / 144) &&
          same_region (r[1], 32, 0, 2, 16, 1 + 2 + 3 + 4, 10.0 / 32) && same_region (r[2], 12, 16, 8, 2, 4 + 1, 5.0 / 16),
      "pixel_regions: the weighted regions in pixels, cut at the frame's edges, with their areas and confidences");
  r = cuv::pixel_regions (cut, 7, weights.data (), &scratch);
  c.expect (r.size () == 2 && r[0].area == 7 && r[1].area == 10, "pixel_regions: min_area keeps a region of that area");
  r = cuv::pixel_regions (cut, 8, weights.data (), &scratch);
  c.expect (r.size () == 1 && r[0].area == 10, "pixel_regions: min_area leaves out the regions below it");
  /* without weights a region's area is its cells' pixels, on a grid whole in its frame */
  const cuv::RegionGrid whole{9, 5, 4, 36, 20};
  r = cuv::pixel_regions (whole, 64, nullptr, &scratch);
  c.expect (r.size () == 2 && same_region (r[0], 0, 0, 12, 12, 64, 64.0 / 144) && same_region (r[1], 32, 0, 4, 16, 64, 1.0),
      "pixel_regions: without weights, the cells' pixels, those of at least min_area");
  c.expect (cuv::pixel_regions (whole, 65, nullptr, &scratch).empty (), "pixel_regions: none above min_area");
}

/* noisemap_regions (): a tile changes with a quarter of its pixels noisy, a tile cut by the frame
 * with a quarter of its own (40 x 20: tiles of 16x16, 8x16, 16x4 and 8x4 pixels), one under it
 * does not; the regions weighted by the counts. */
void test_noisemap_regions (Checker &c)
{
  const uint16_t counts[] = {64, 63, 32, 16, 15, 8};
  cuv::RegionScratch scratch;
  std::vector<cuv::PixelRegion> r = cuv::noisemap_regions (counts, 40, 20, 0, &scratch);
  const std::vector<uint8_t> mask (scratch.mask.begin (), scratch.mask.end ());
  c.expect (mask == std::vector<uint8_t>{1, 0, 1, 1, 0, 1}, "noisemap_regions: the changing tiles, whole and cut");
  c.expect (r.size () == 2 && same_region (r[0], 0, 0, 16, 20, 64 + 16, 80.0 / 320) &&
          same_region (r[1], 32, 0, 8, 20, 32 + 8, 40.0 / 160),
      "noisemap_regions: the regions of the changing tiles, weighted by their noisy pixels");
  r = cuv::noisemap_regions (counts, 40, 20, 41, &scratch);
  c.expect (r.size () == 1 && r[0].area == 80, "noisemap_regions: min_area in noisy pixels");
}

}  // namespace

int main ()
{
  Checker c;
  test_colormaps (c);
  test_yuv_conversion (c);
  test_fast_equals_definition (c);
  test_connected_regions (c);
  test_pixel_regions (c);
  test_noisemap_regions (c);
  for (cuv::PixelLayout l : kDiffLayouts) {
    for (Size s : sizes (false)) {
      for (int blend : {256, 100, 0})
        test_heatmap_direct (c, l, s, blend);
      for (int t : {0, 20, 254})
        for (bool overlay : {false, true})
          test_noisemap_direct (c, l, s, t, overlay);
    }
    test_static (c, l);
    test_corners_and_boundary (c, l);
    if (!cuv::layout_is_rgb (l))
      test_chroma_group (c, l);
  }
  for (cuv::PixelLayout l : {cuv::PixelLayout::YUY2, cuv::PixelLayout::UYVY, cuv::PixelLayout::P010}) {
    for (Size s : sizes (false)) {
      for (int blend : {256, 100, 0})
        test_heatmap_direct (c, l, even_for (l, s), blend);
      for (int t : {0, 20, 254})
        for (bool overlay : {false, true})
          test_noisemap_direct (c, l, even_for (l, s), t, overlay);
    }
  }
  return c.finish ("difference-reference");
}
