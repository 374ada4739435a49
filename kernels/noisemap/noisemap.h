/* gst-cudavision: the pixels that changed by more than a threshold since the previous frame.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Semantics:
 *   A pixel is noisy when |dR|, |dG| or |dB| exceeds the threshold (RGB layouts; the fourth byte
 *   is not compared), or |dY|, |dU| or |dV| for NV12/I420/P010 (U and V of its 2x2 chroma group;
 *   P010's samples by their top 8 bits) and YUY2/UYVY (U and V of its pair; these in even widths,
 *   as the elements take them).
 *   Map mode: the output is black (fourth byte 255) with noisy pixels in the colour.
 *   Overlay mode: the output is the current frame with noisy pixels painted in the colour.
 *   The colour's alpha is its opacity: painted = (colour * a + below * (256 - a) + 128) >> 8 with
 *   a = alpha256 (alpha), below being black (map) or the frame (overlay); the fourth byte is
 *   255 in map mode and the frame's in overlay mode.
 *   NV12/I420/P010: Y is painted per pixel; a chroma sample is painted when any pixel of its 2x2
 *   group is noisy, in YUY2/UYVY a pair's U and V when either of its pixels is. Black is Y =
 *   y_black (16 limited, 0 full), U = V = 128. P010 gets each painted or black 8-bit value v as
 *   v << 8; a sample overlay mode leaves unpainted keeps all its bits.
 *   Statistics: the number of noisy pixels.
 *   Tiles (for the regions that change, docs/results.md): the noisy pixels of each kNoiseTile x
 *   kNoiseTile tile, tiles in raster order, the last column and row of tiles cut by the frame.
 * The first frame after a reset is compared with itself: nothing changed. */
#pragma once

#include <vector>

#include "kernels/base/regions.h"
#include "kernels/difference/difference.h"

#if CUV_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace cuv {

struct NoisemapParams {
  int threshold;    /* 0..255: noisy when a change is > threshold */
  bool overlay;     /* false: map mode */
  int alpha;        /* 0..256, alpha256 () of the colour's alpha */
  uint32_t color;   /* RGB layouts: the colour packed for the layout, fourth byte 255 */
  uint8_t yuv[3];   /* NV12/I420/YUY2/UYVY/P010: the colour as Y, U, V */
  uint8_t y_black;  /* NV12/I420/YUY2/UYVY/P010: Y of black */
};

/* Whether pixel (@x, @y) of @cur is noisy against @prev: the one definition, which the map, the
 * counts and the tiles all follow. */
CUV_HD bool noisemap_pixel_changed (const Frame &cur, const Frame &prev, int x, int y, int threshold)
{
  const Plane &c = cur.planes[0], &q = prev.planes[0];
  if (layout_is_rgb (cur.layout))
    return rgb_abs_max (load_le32 (c.data + static_cast<size_t> (y) * c.pitch + 4 * x),
               load_le32 (q.data + static_cast<size_t> (y) * q.pitch + 4 * x)) > threshold;
  const YuvSample a = yuv_at (cur, x, y), b = yuv_at (prev, x, y);
  return abs_diff (a.y, b.y) > threshold || abs_diff (a.u, b.u) > threshold || abs_diff (a.v, b.v) > threshold;
}

/* Output sample @o of a 4:2:0 frame from the input's @c: @paint blended over it (overlay) or over
 * @black (map) where @noisy, else the input's sample (overlay) or @black (map). */
CUV_HD void noisemap_put_sample (PixelLayout l, uint8_t *o, const uint8_t *c, bool noisy, int paint, int black,
    const NoisemapParams &p)
{
  if (!noisy && p.overlay) {
    o[0] = c[0];
    if (layout_is_16bit (l))
      o[1] = c[1];
    return;
  }
  const int below = p.overlay ? sample8 (l, c) : black;
  put_sample8 (l, o, noisy ? blend_byte (paint, below, p.alpha) : below);
}

/* 2x2 group (@gx, @gy) of a 4:2:0 frame (NV12, I420, P010) into @out: each pixel's Y, then the
 * group's U and V, painted when any of its pixels is noisy. Returns the noisy pixels. */
CUV_HD int noisemap_group (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &p, int gx,
    int gy)
{
  int noisy_pixels = 0;
  for (int y = 2 * gy; y < 2 * gy + 2 && y < cur.height; y++) {
    for (int x = 2 * gx; x < 2 * gx + 2 && x < cur.width; x++) {
      const bool noisy = noisemap_pixel_changed (cur, prev, x, y, p.threshold);
      noisy_pixels += noisy;
      noisemap_put_sample (cur.layout, luma_at (out, x, y), luma_at (cur, x, y), noisy, p.yuv[0], p.y_black, p);
    }
  }
  const ChromaAt cc = chroma_at (cur, gx, gy), oc = chroma_at (out, gx, gy);
  noisemap_put_sample (cur.layout, oc.u, cc.u, noisy_pixels > 0, p.yuv[1], 128, p);
  noisemap_put_sample (cur.layout, oc.v, cc.v, noisy_pixels > 0, p.yuv[2], 128, p);
  return noisy_pixels;
}

/* The tile grid of the regions (a tile is kNoiseTile pixels square). */
constexpr int kNoiseTile = 16;
CUV_HD int noise_tile_cols (int width)
{
  return (width + kNoiseTile - 1) / kNoiseTile;
}
CUV_HD int noise_tile_rows (int height)
{
  return (height + kNoiseTile - 1) / kNoiseTile;
}

/* @cur, @prev and @out have the same layout and size (@cur and @prev may be the same frame). */
/* The definition, plain and scalar (noisemap_cpu.cpp): what the tests hold the others to. */
void noisemap_reference (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &params,
    DiffStats *stats);

/* The same bytes and statistics in SIMD (difference_simd.cpp), what the CPU backend runs. */
void noisemap_cpu (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &params,
    DiffStats *stats);

/* The noisy pixels of each tile into @counts (noise_tile_cols (width) to a row, one row per
 * kNoiseTile rows of the frame, the last cut), plain and scalar: the definition, and what the CPU
 * backend runs, in bands of tile rows (frame_rows () at multiples of kNoiseTile, @counts at the
 * band's first tile row). */
void noisemap_tiles_reference (const Frame &cur, const Frame &prev, int threshold, uint16_t *counts);

/* The regions that change in a @width x @height frame (docs/results.md): pixel_regions () over
 * the tiles of which at least a quarter of the pixels are noisy (of a tile cut by the frame, a
 * quarter of its own pixels, and one at least), each tile weighted by its noisy pixels @counts
 * (as the tile functions give them), those of at least @min_area noisy pixels. */
const std::vector<PixelRegion> &noisemap_regions (const uint16_t *counts, int width, int height, uint64_t min_area,
    RegionScratch *scratch);

#if CUV_HAVE_CUDA
/* The same counts on @stream, into device memory. */
cudaError_t noisemap_tiles_cuda (const Frame &cur, const Frame &prev, int threshold, uint16_t *counts,
    cudaStream_t stream);

/* As heatmap_cuda (): launches on @stream, the statistics to @results' outputs. */
cudaError_t noisemap_cuda (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &params,
    const DiffResults &results, cudaStream_t stream);
#endif

}  // namespace cuv
