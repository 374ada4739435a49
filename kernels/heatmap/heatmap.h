/* gst-cudavision: the difference to the previous frame as a colour-mapped heat map.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Semantics:
 *   d = |dR| + |dG| + |dB| (0..765) for RGB layouts; |dY| + |dU| + |dV| of the pixel's samples
 *   for NV12/I420/P010 (U and V of its 2x2 chroma group; P010's samples by their top 8 bits) and
 *   YUY2/UYVY (U and V of its pair; these in even widths, as the elements take them);
 *   heat = table[d], the colour map at n = min(1, gain * d / 765), built once on the host;
 *   out = (heat * a + current * (256 - a) + 128) >> 8 per channel with a = round(blend * 256),
 *   the fourth byte 255. RGB layouts keep their layout; the YUV layouts give RGBA, the current frame
 *   converted with YuvToRgb for the blend.
 *   Statistics: the sum and the maximum of d.
 * The first frame after a reset is compared with itself (prev == cur): d = 0 everywhere. */
#pragma once

#include "kernels/difference/difference.h"

#if CUV_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace cuv {

enum class Colormap : int {
  Sine,    /* blue (no change), green (half), red (full), as three phase-shifted sines */
  Jet,     /* MATLAB's jet: dark blue, cyan, yellow, dark red */
  Inferno, /* matplotlib's inferno (a polynomial fit): black, purple, orange, pale yellow */
  Gray,    /* black to white */
};

constexpr int kHeatmapTableSize = 766;

/* One colour per d: table[d] packed for @out_layout (4-byte RGB order), fourth byte 255. */
void heatmap_build_table (Colormap map, double gain, PixelLayout out_layout, uint32_t table[kHeatmapTableSize]);

/* The colour map itself, n in 0..1 -> R, G, B in 0..255 (rounded). */
void colormap_rgb (Colormap map, double n, int rgb[3]);

struct HeatmapParams {
  const uint32_t *table; /* host memory for the CPU, device memory for CUDA */
  int blend;             /* 0..256 */
  YuvToRgb yuv;          /* for YUV input */
};

/* The output layout for an input layout: RGB layouts keep theirs, the YUV layouts give RGBA. */
inline PixelLayout heatmap_out_layout (PixelLayout in)
{
  return layout_is_rgb (in) ? in : PixelLayout::RGBA;
}

/* @cur and @prev have the same layout and size (they may be the same frame); @out has
 * heatmap_out_layout () and the same size. */
/* The definition, plain and scalar (heatmap_cpu.cpp): what the tests hold the others to. */
void heatmap_reference (const Frame &cur, const Frame &prev, const Frame &out, const HeatmapParams &params,
    DiffStats *stats);

/* The same bytes and statistics in SIMD (difference_simd.cpp), what the CPU backend runs. */
void heatmap_cpu (const Frame &cur, const Frame &prev, const Frame &out, const HeatmapParams &params,
    DiffStats *stats);

#if CUV_HAVE_CUDA
/* Launches on @stream and never synchronizes. The statistics go to @results' outputs, from the
 * kernel itself (results.h); an empty frame gives zero statistics. */
cudaError_t heatmap_cuda (const Frame &cur, const Frame &prev, const Frame &out, const HeatmapParams &params,
    const DiffResults &results, cudaStream_t stream);
#endif

}  // namespace cuv
