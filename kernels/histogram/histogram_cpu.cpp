/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The CPU reference of the histogram and its overlay: the direct definition, pixel by pixel. */
#include <algorithm>
#include <cstring>

#include "kernels/histogram/histogram_math.h"

namespace cuv {

bool
histogram_clip_roi (int frame_width, int frame_height, int x, int y, int width, int height, Roi *out)
{
  Roi r{std::min (x, frame_width), std::min (y, frame_height), 0, 0};
  r.width = width == 0 ? frame_width - r.x : std::min (width, frame_width - r.x);
  r.height = height == 0 ? frame_height - r.y : std::min (height, frame_height - r.y);
  /* a region with nothing inside the frame is empty both ways (0x0), as the docs say */
  if (r.width <= 0 || r.height <= 0)
    r.width = r.height = 0;
  *out = r;
  return r.width > 0 && r.height > 0 && r.x == x && r.y == y && (width == 0 || r.width == width) && (height == 0 || r.height == height);
}

void
histogram_reference (const Frame &src, const Roi &roi, int bins, HistogramResult *res)
{
  memset (res, 0, sizeof (*res));
  const Plane &pl = src.planes[0];
  const bool rgb = layout_is_rgb (src.layout);
  const int ri = layout_is_bgr (src.layout) ? 2 : 0;
  const bool every_other = layout_has_luma_every_other_byte (src.layout);
  const int yb = luma_byte (src.layout);
  for (int y = roi.y; y < roi.y + roi.height; y++) {
    const uint8_t *row = pl.data + static_cast<size_t> (y) * pl.pitch;
    for (int x = roi.x; x < roi.x + roi.width; x++) {
      int l;
      if (rgb) {
        const uint8_t *px = row + 4 * x;
        int r = px[ri], g = px[1], b = px[2 - ri];
        l = luma_bt601 (r, g, b);
        res->sum_r += r;
        res->sum_g += g;
        res->sum_b += b;
      } else {
        l = every_other ? row[2 * x + yb] : row[x];
      }
      res->counts[histogram_bin (l, bins)]++;
      res->sum_y += l;
      res->sum_y2 += static_cast<uint64_t> (l * l);
    }
  }
}

OverlayRect
histogram_overlay_rect (int frame_width, int frame_height, OverlayCorner corner, int size_percent)
{
  OverlayRect r{0, 0, 0, 0};
  r.width = std::min (frame_width, frame_width * size_percent / 100);
  r.height = std::min (frame_height, r.width / 2);
  if (r.width < 1 || r.height < 1)
    return OverlayRect{0, 0, 0, 0};
  int mx = std::min (8, (frame_width - r.width) / 2);
  int my = std::min (8, (frame_height - r.height) / 2);
  bool right = corner == OverlayCorner::TopRight || corner == OverlayCorner::BottomRight;
  bool bottom = corner == OverlayCorner::BottomLeft || corner == OverlayCorner::BottomRight;
  r.x = right ? frame_width - r.width - mx : mx;
  r.y = bottom ? frame_height - r.height - my : my;
  return r;
}

void
histogram_overlay_cpu (const Frame &frame, const OverlayRect &rect, int bins, const HistogramResult &res,
    uint64_t pixels)
{
  if (rect.width < 1 || rect.height < 1)
    return;
  const bool rgb = layout_is_rgb (frame.layout);
  const uint64_t rgb_sums[3] = {res.sum_r, res.sum_g, res.sum_b};
  const uint64_t luma_sums[3] = {res.sum_y, 0, 0};
  uint64_t max_count = *std::max_element (res.counts, res.counts + bins);
  OverlayBars b = overlay_bars (rect, rgb, rgb ? rgb_sums : luma_sums, pixels, max_count);
  const int ri = layout_is_bgr (frame.layout) ? 2 : 0;
  const int yb = luma_byte (frame.layout), ub = packed422_u_byte (frame.layout);
  const Plane &pl = frame.planes[0];

  for (int ly = 0; ly < rect.height; ly++) {
    uint8_t *row = pl.data + static_cast<size_t> (rect.y + ly) * pl.pitch;
    for (int lx = 0; lx < rect.width; lx++) {
      int code = overlay_code (b, lx, ly, overlay_column_count (res.counts, rect, bins, lx));
      int x = rect.x + lx;
      if (rgb) {
        uint8_t *p = row + 4 * x;
        uint32_t px = p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t> (p[3]) << 24;
        px = overlay_rgb_px (px, code, ri);
        for (int c = 0; c < 4; c++)
          p[c] = static_cast<uint8_t> (px >> (8 * c));
      } else if (layout_is_packed422 (frame.layout)) {
        /* a pair's U and V belong to the rectangle when its left pixel does */
        uint8_t *luma = row + 2 * x + yb, *u = row + 4 * (x / 2) + ub;
        *luma = overlay_luma (*luma, code);
        if (!(x & 1)) {
          u[0] = overlay_chroma (u[0]);
          u[2] = overlay_chroma (u[2]);
        }
      } else {
        uint8_t *luma = luma_at (frame, x, rect.y + ly);
        put_sample8 (frame.layout, luma, overlay_luma (sample8 (frame.layout, luma), code));
      }
    }
  }
  if (!layout_is_420 (frame.layout))
    return;
  /* a chroma sample belongs to the rectangle when its top-left luma sample does */
  for (int cy = (rect.y + 1) / 2; 2 * cy < rect.y + rect.height; cy++) {
    for (int cx = (rect.x + 1) / 2; 2 * cx < rect.x + rect.width; cx++) {
      const ChromaAt c = chroma_at (frame, cx, cy);
      put_sample8 (frame.layout, c.u, overlay_chroma (sample8 (frame.layout, c.u)));
      put_sample8 (frame.layout, c.v, overlay_chroma (sample8 (frame.layout, c.v)));
    }
  }
}

}  // namespace cuv
