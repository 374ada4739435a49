/* gst-cudavision: the pixels that changed by more than a threshold since the previous frame.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Semantics:
 *   A pixel is noisy when |dR|, |dG| or |dB| exceeds the threshold (RGB layouts; the fourth byte
 *   is not compared), or |dY|, |dU| or |dV| for NV12/I420 (U and V of its 2x2 chroma group) and
 *   YUY2/UYVY (U and V of its pair; these in even widths, as the elements take them).
 *   Map mode: the output is black (fourth byte 255) with noisy pixels in the colour.
 *   Overlay mode: the output is the current frame with noisy pixels painted in the colour.
 *   The colour's alpha is its opacity: painted = (colour * a + below * (256 - a) + 128) >> 8 with
 *   a = alpha256 (alpha), below being black (map) or the frame (overlay); the fourth byte is
 *   255 in map mode and the frame's in overlay mode.
 *   NV12/I420: Y is painted per pixel; a chroma sample is painted when any pixel of its 2x2 group
 *   is noisy, in YUY2/UYVY a pair's U and V when either of its pixels is. Black is Y = y_black
 *   (16 limited, 0 full), U = V = 128.
 *   Statistics: the number of noisy pixels.
 *   Tiles (for the regions that change, docs/results.md): the noisy pixels of each kNoiseTile x
 *   kNoiseTile tile, tiles in raster order, the last column and row of tiles cut by the frame.
 * The first frame after a reset is compared with itself: nothing changed. */
#pragma once

#include "difference.h"

#if CUV_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace cuv {

struct NoisemapParams {
  int threshold;    /* 0..255: noisy when a change is > threshold */
  bool overlay;     /* false: map mode */
  int alpha;        /* 0..256, alpha256 () of the colour's alpha */
  uint32_t color;   /* RGB layouts: the colour packed for the layout, fourth byte 255 */
  uint8_t yuv[3];   /* NV12/I420/YUY2/UYVY: the colour as Y, U, V */
  uint8_t y_black;  /* NV12/I420/YUY2/UYVY: Y of black */
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

/* The same bytes and statistics in SIMD (difference_cpu_simd.cpp), what the CPU backend runs. */
void noisemap_cpu (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &params,
    DiffStats *stats);

/* The noisy pixels of each tile into @counts (noise_tile_cols (width) to a row, one row per
 * kNoiseTile rows of the frame, the last cut), plain and scalar: the definition, and what the CPU
 * backend runs, in bands of tile rows (frame_rows () at multiples of kNoiseTile, @counts at the
 * band's first tile row). */
void noisemap_tiles_reference (const Frame &cur, const Frame &prev, int threshold, uint16_t *counts);

#if CUV_HAVE_CUDA
/* The same counts on @stream, into device memory. */
cudaError_t noisemap_tiles_cuda (const Frame &cur, const Frame &prev, int threshold, uint16_t *counts,
    cudaStream_t stream);

/* As heatmap_cuda (): launches on @stream, the statistics to @results' outputs. */
cudaError_t noisemap_cuda (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &params,
    const DiffResults &results, cudaStream_t stream);
#endif

}  // namespace cuv
