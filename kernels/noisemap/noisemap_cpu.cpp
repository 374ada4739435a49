/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The noise map's CPU reference: each pixel decided by noisemap_pixel_changed (), as the tiles are;
 * and the regions of the tiles' counts. */
#include "kernels/noisemap/noisemap.h"

#include <algorithm>

namespace cuv {

namespace {

void noisemap_rgb (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &p, DiffStats *stats)
{
  const uint32_t painted_black = blend_px (p.color, 0, p.alpha) | 0xff000000u;
  map_rgb_words (cur, out, [&] (int x, int y, uint32_t c) {
    const bool noisy = noisemap_pixel_changed (cur, prev, x, y, p.threshold);
    stats->changed += noisy;
    if (p.overlay)
      return noisy ? (blend_px (p.color, c, p.alpha) & 0x00ffffffu) | (c & 0xff000000u) : c;
    return noisy ? painted_black : 0xff000000u;
  });
}

/* One 2x2 chroma group at a time: its pixels' Y, then its chroma, painted if any pixel is noisy. */
void noisemap_yuv (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &p, DiffStats *stats)
{
  for (int gy = 0; gy < cur.planes[1].height; gy++)
    for (int gx = 0; gx < cur.planes[1].width; gx++)
      stats->changed += noisemap_group (cur, prev, out, p, gx, gy);
}

/* YUY2/UYVY, a pair at a time: its pixels' Y, then its U and V, painted if either pixel is noisy. */
void noisemap_packed422 (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &p, DiffStats *stats)
{
  const Plane &c = cur.planes[0], &o = out.planes[0];
  const int yb = luma_byte (cur.layout), ub = packed422_u_byte (cur.layout);
  for (int y = 0; y < cur.height; y++) {
    const uint8_t *crow = plane_row (c, y);
    uint8_t *orow = plane_row (o, y);
    for (int x = 0; x + 1 < cur.width; x += 2) {
      bool any = false;
      for (int k = 0; k < 2; k++) {
        const bool noisy = noisemap_pixel_changed (cur, prev, x + k, y, p.threshold);
        stats->changed += noisy;
        any |= noisy;
        const int below = p.overlay ? crow[2 * (x + k) + yb] : p.y_black;
        orow[2 * (x + k) + yb] = static_cast<uint8_t> (noisy ? blend_byte (p.yuv[0], below, p.alpha) : below);
      }
      const int u = p.overlay ? crow[2 * x + ub] : 128, v = p.overlay ? crow[2 * x + ub + 2] : 128;
      orow[2 * x + ub] = static_cast<uint8_t> (any ? blend_byte (p.yuv[1], u, p.alpha) : u);
      orow[2 * x + ub + 2] = static_cast<uint8_t> (any ? blend_byte (p.yuv[2], v, p.alpha) : v);
    }
  }
}

}  // namespace

void noisemap_reference (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &params, DiffStats *stats)
{
  *stats = DiffStats{};
  if (layout_is_rgb (cur.layout))
    noisemap_rgb (cur, prev, out, params, stats);
  else if (layout_is_packed422 (cur.layout))
    noisemap_packed422 (cur, prev, out, params, stats);
  else
    noisemap_yuv (cur, prev, out, params, stats);
}

void noisemap_tiles_reference (const Frame &cur, const Frame &prev, int threshold, uint16_t *counts)
{
  const int cols = noise_tile_cols (cur.width);
  for (int ty = 0; ty * kNoiseTile < cur.height; ty++) {
    uint16_t *row = counts + static_cast<size_t> (ty) * cols;
    for (int tx = 0; tx < cols; tx++)
      row[tx] = 0;
    for (int y = ty * kNoiseTile; y < cur.height && y < (ty + 1) * kNoiseTile; y++)
      for (int x = 0; x < cur.width; x++)
        row[x / kNoiseTile] += noisemap_pixel_changed (cur, prev, x, y, threshold);
  }
}

const std::vector<PixelRegion> &noisemap_regions (const uint16_t *counts, int width, int height, uint64_t min_area,
    RegionScratch *scratch)
{
  const int t = kNoiseTile, cols = noise_tile_cols (width), rows = noise_tile_rows (height);
  const size_t n = static_cast<size_t> (cols) * rows;
  scratch->mask.resize (n);
  uint8_t *mask = scratch->mask.data ();
  /* whole tiles in one loop the compiler vectorises (4K has 32,400 tiles), then the cut ones of
   * the last column and row */
  for (size_t i = 0; i < n; i++)
    mask[i] = 4 * counts[i] >= t * t;
  const auto cut = [&] (int tx, int ty) {
    const int pixels = std::min (t, width - tx * t) * std::min (t, height - ty * t);
    const size_t i = static_cast<size_t> (ty) * cols + tx;
    mask[i] = counts[i] > 0 && 4 * counts[i] >= pixels;
  };
  for (int ty = 0; ty < rows; ty++)
    cut (cols - 1, ty);
  for (int tx = 0; tx < cols; tx++)
    cut (tx, rows - 1);
  return pixel_regions (RegionGrid{cols, rows, t, width, height}, min_area, counts, scratch);
}

}  // namespace cuv
