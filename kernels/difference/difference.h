/* gst-cudavision: what the frame-difference kernels (heatmap, noisemap) share: their statistics,
 * the YUV -> RGB conversion in integer form, and alpha blending on a 0..256 scale.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "kernels/base/image.h"
#include "kernels/base/results.h"

#if CUV_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace cuv {

/* Per-frame statistics of a difference kernel. Each kernel fills its own fields; the others stay 0.
 * The CUDA kernels accumulate into one of these with atomics; see heatmap_cuda (). */
struct DiffStats {
  unsigned long long sum_difference; /* heatmap: sum of d over the frame */
  unsigned long long changed;        /* noisemap: pixels whose change exceeds the threshold */
  unsigned int max_difference;       /* heatmap: largest d */
  unsigned int reserved;
};

/* Adds the statistics of one band of a frame to the frame's. */
inline void add_band_stats (DiffStats *frame, const DiffStats &band)
{
  frame->sum_difference += band.sum_difference;
  frame->changed += band.changed;
  frame->max_difference = band.max_difference > frame->max_difference ? band.max_difference : frame->max_difference;
}

/* Where a difference kernel's statistics go (results.h). */
using DiffResults = ResultsTo<DiffStats, DiffStats>;

/* A difference operation as the elements run it, over its parameters Params (heatmap.h,
 * noisemap.h): the CPU backend's path, and the CUDA launch, which launches on @stream, never
 * synchronizes and gives its statistics to @results from the kernel itself. */
template <typename Params>
using DiffCpu = void (*) (const Frame &cur, const Frame &prev, const Frame &out, const Params &params, DiffStats *stats);
#if CUV_HAVE_CUDA
template <typename Params>
using DiffCuda = cudaError_t (*) (const Frame &cur, const Frame &prev, const Frame &out, const Params &params,
    const DiffResults &results, cudaStream_t stream);
#endif

/* Rows [@y0, @y1) of @op's frames, one band of the CPU backend's frame (the bands are row pairs,
 * so that 4:2:0 chroma rows stay whole): the band's statistics, which add_band_stats () adds into
 * the frame's. The bands' sum is the whole frame's (tests/kernels/test_difference_reference.cpp). */
template <typename Params>
inline DiffStats diff_rows_cpu (DiffCpu<Params> op, const Frame &cur, const Frame &prev, const Frame &out,
    const Params &params, int y0, int y1)
{
  DiffStats band{};
  op (frame_rows (cur, y0, y1), frame_rows (prev, y0, y1), frame_rows (out, y0, y1), params, &band);
  return band;
}

/* Y'CbCr -> R'G'B' with 16-bit fixed-point coefficients, built once on the host from the stream's
 * colorimetry, so that both backends compute the same bytes:
 *   c = clamp255 ((y_gain * (Y - y_offset) + k * (U - 128) + k' * (V - 128) + 32768) >> 16). */
struct YuvToRgb {
  int y_offset; /* 16 for limited range, 0 for full */
  int y_gain;
  int rv;       /* R from V */
  int gu, gv;   /* G from U and V (negative) */
  int bu;       /* B from U */
};

/* The coefficients for the matrix with luma weights @kr, @kb (BT.601: 0.299, 0.114; BT.709:
 * 0.2126, 0.0722), in limited (16..235) or full range. */
YuvToRgb yuv_to_rgb_coefficients (double kr, double kb, bool full_range);

/* The inverse, for single colours chosen on the host (a painted colour). */
void rgb_to_yuv (double kr, double kb, bool full_range, int r, int g, int b, int *y, int *u, int *v);

CUV_HD int clamp_byte (int v)
{
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* Packs R, G, B and a fourth byte into a 4-byte pixel of @l (RGBA/RGBx or BGRA/BGRx order). */
CUV_HD uint32_t pack_px (PixelLayout l, int r, int g, int b, int a)
{
  const bool bgr = l == PixelLayout::BGRA || l == PixelLayout::BGRx;
  const uint32_t c0 = bgr ? b : r, c2 = bgr ? r : b;
  return c0 | static_cast<uint32_t> (g) << 8 | c2 << 16 | static_cast<uint32_t> (a) << 24;
}

CUV_HD uint32_t yuv_px (const YuvToRgb &k, PixelLayout l, int y, int u, int v)
{
  const int yy = k.y_gain * (y - k.y_offset) + 32768;
  const int cu = u - 128, cv = v - 128;
  return pack_px (l, clamp_byte ((yy + k.rv * cv) >> 16), clamp_byte ((yy + k.gu * cu + k.gv * cv) >> 16),
      clamp_byte ((yy + k.bu * cu) >> 16), 255);
}

/* Each byte of @top over @bottom with weight @a / 256 (0..256), rounded: 256 gives @top. */
CUV_HD uint32_t blend_px (uint32_t top, uint32_t bottom, uint32_t a)
{
  const uint32_t na = 256 - a;
  const uint32_t even = ((top & 0x00ff00ffu) * a + (bottom & 0x00ff00ffu) * na + 0x00800080u) >> 8;
  const uint32_t odd = ((top >> 8 & 0x00ff00ffu) * a + (bottom >> 8 & 0x00ff00ffu) * na + 0x00800080u);
  return (even & 0x00ff00ffu) | (odd & 0xff00ff00u);
}

CUV_HD int blend_byte (int top, int bottom, int a)
{
  return (top * a + bottom * (256 - a) + 128) >> 8;
}

/* An opacity 0..255 on blend_px's 0..256 scale (255 -> 256, so opaque replaces exactly). */
CUV_HD int alpha256 (int alpha)
{
  return alpha + (alpha >> 7);
}

/* Sum of |a - b| over the three colour bytes of two 4-byte pixels (the fourth byte ignored). */
CUV_HD int rgb_abs_sum (uint32_t a, uint32_t b)
{
  int s = 0;
  for (int k = 0; k < 3; k++) {
    const int d = static_cast<int> (a >> (8 * k) & 0xff) - static_cast<int> (b >> (8 * k) & 0xff);
    s += d < 0 ? -d : d;
  }
  return s;
}

/* Largest |a - b| over the three colour bytes. */
CUV_HD int rgb_abs_max (uint32_t a, uint32_t b)
{
  int m = 0;
  for (int k = 0; k < 3; k++) {
    const int d = static_cast<int> (a >> (8 * k) & 0xff) - static_cast<int> (b >> (8 * k) & 0xff);
    const int ad = d < 0 ? -d : d;
    m = ad > m ? ad : m;
  }
  return m;
}

/* The Y, U and V of pixel (@x, @y) of a YUV frame: for NV12/I420/P010 the U and V of its 2x2
 * group, for YUY2/UYVY those of its pair; P010's as their top 8 bits. */
struct YuvSample {
  int y;
  int u;
  int v;
};

CUV_HD YuvSample yuv_at (const Frame &f, int x, int y)
{
  const uint8_t *row = f.planes[0].data + static_cast<size_t> (y) * f.planes[0].pitch;
  if (layout_is_packed422 (f.layout)) {
    const uint8_t *u = row + 4 * (x / 2) + packed422_u_byte (f.layout);
    return YuvSample{row[2 * x + luma_byte (f.layout)], u[0], u[2]};
  }
  const ChromaAt c = chroma_at (f, x / 2, y / 2);
  return YuvSample{sample8 (f.layout, luma_at (f, x, y)), sample8 (f.layout, c.u), sample8 (f.layout, c.v)};
}

CUV_HD uint32_t load_le32 (const uint8_t *p)
{
  return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t> (p[3]) << 24;
}

CUV_HD void store_le32 (uint8_t *p, uint32_t v)
{
  p[0] = v & 0xff;
  p[1] = v >> 8 & 0xff;
  p[2] = v >> 16 & 0xff;
  p[3] = v >> 24;
}

CUV_HD int abs_diff (int a, int b)
{
  return a > b ? a - b : b - a;
}

/* The CPU references' walk over an RGB frame, row by row: @out's word at (x, y) is
 * @op (x, y, @cur's word there); @op adds to the statistics itself. */
template <typename Op>
inline void map_rgb_words (const Frame &cur, const Frame &out, Op op)
{
  for (int y = 0; y < cur.height; y++) {
    const uint8_t *crow = plane_row (cur.planes[0], y);
    uint8_t *orow = plane_row (out.planes[0], y);
    for (int x = 0; x < cur.width; x++)
      store_le32 (orow + 4 * x, op (x, y, load_le32 (crow + 4 * x)));
  }
}

}  // namespace cuv
