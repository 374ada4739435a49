/* gst-cudavision: contrast, brightness, saturation and hue, as videobalance computes them.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Semantics (videobalance's, so that cudaenhance gives its bytes):
 *   Y' = tabley[Y], (U', V') = tableuv[U][V], tables built in double precision on the host;
 *   RGB layouts go through videobalance's 8-bit BT.601 integer matrices: RGB -> YUV (clamped),
 *   the tables, YUV -> RGB (clamped); the fourth byte is copied.
 *   NV12/I420: the Y plane through tabley, each chroma sample pair through tableuv;
 *   YUY2/UYVY: the Y bytes through tabley, each pixel pair's U and V through tableuv.
 *   P010 (which videobalance does not take) at 10 bits, the same expressions at that scale: a
 *   sample's 10 bits s = sample >> 6 give Y' = tabley10[s], tabley10 built as tabley with 64,
 *   1023 for 16, 255; U and V, i = su - 512 and j = sv - 512, give
 *     U' = clamp (512 + ((i c + j s + 32768) >> 16)), V' = clamp (512 + ((j c - i s + 32768) >> 16)),
 *   c and s being saturation x cos (pi hue) and x sin (pi hue) rounded to 1/65536, clamp to
 *   0..1023; each written back as v << 6 (docs/design.md, "10-bit samples").
 * Both backends index the same tables and do the same integer arithmetic, so they agree bit for
 * bit. */
#pragma once

#include "kernels/base/image.h"

#if CUV_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace cuv {

struct EnhanceParams {
  double contrast;    /* 0..2, 1 = unchanged */
  double brightness;  /* -1..1, 0 = unchanged */
  double saturation;  /* 0..2, 1 = unchanged */
  double hue;         /* -1..1, 0 = unchanged */

  bool is_identity () const
  {
    return contrast == 1.0 && brightness == 0.0 && saturation == 1.0 && hue == 0.0;
  }
  bool operator== (const EnhanceParams &o) const
  {
    return contrast == o.contrast && brightness == o.brightness && saturation == o.saturation && hue == o.hue;
  }
};

struct EnhanceTables {
  uint8_t y[256];
  /* [u * 256 + v] = u' | v' << 8 */
  uint16_t uv[256 * 256];
  /* When uv[u * 256 + v] = c[u] | c[v] << 8 for every pair (no hue turn: U' depends on U alone
   * and V' on V alone, through one table), chroma_by_byte is set and the fast code looks each
   * chroma byte up in c as it does luma in y. */
  bool chroma_by_byte;
  uint8_t c[256];
  /* P010 */
  uint16_t y10[1024];
  int32_t hue_cos16; /* saturation x cos (pi hue) x 65536, rounded */
  int32_t hue_sin16;
};

/* A P010 luma sample through the 10-bit table. */
CUV_HD uint32_t enhance_luma10 (const uint16_t *y10, uint32_t sample)
{
  return static_cast<uint32_t> (y10[sample >> 6]) << 6;
}

/* A P010 chroma pair (@u, @v, 16-bit samples) through the 10-bit chroma arithmetic: U' | V' << 16. */
CUV_HD uint32_t enhance_chroma10 (int32_t hue_cos16, int32_t hue_sin16, uint32_t u, uint32_t v)
{
  const int32_t i = static_cast<int32_t> (u >> 6) - 512, j = static_cast<int32_t> (v >> 6) - 512;
  int32_t u2 = 512 + ((i * hue_cos16 + j * hue_sin16 + 32768) >> 16);
  int32_t v2 = 512 + ((j * hue_cos16 - i * hue_sin16 + 32768) >> 16);
  u2 = u2 < 0 ? 0 : u2 > 1023 ? 1023 : u2;
  v2 = v2 < 0 ? 0 : v2 > 1023 ? 1023 : v2;
  return static_cast<uint32_t> (u2) << 6 | static_cast<uint32_t> (v2) << 22;
}

void enhance_build_tables (const EnhanceParams &params, EnhanceTables *tables);

/* The definition, a table lookup per sample (enhance_cpu.cpp): src and dst have the same layout
 * and size; they may be the same frame (in place). */
void enhance_reference (const Frame &src, const Frame &dst, const EnhanceTables &tables);

/* The same bytes, 4:2:0 luma through the table in SIMD (enhance_simd.cpp): what the CPU
 * backend runs. */
void enhance_cpu (const Frame &src, const Frame &dst, const EnhanceTables &tables);

/* Whether enhance_cpu () runs @layout with @tables as byte table lookups in SIMD on this CPU (under
 * a cycle a byte), rather than through the definition's scalar loop: light enough that a frame
 * needs fewer bands (cuv::kLookupBandPixels). */
bool enhance_cpu_is_light (const EnhanceTables &tables, PixelLayout layout);

#if CUV_HAVE_CUDA
/* @tables is device memory holding an EnhanceTables. Launches on @stream; never synchronizes. */
cudaError_t enhance_cuda (const Frame &src, const Frame &dst, const EnhanceTables *tables,
    cudaStream_t stream);
#endif

}  // namespace cuv
