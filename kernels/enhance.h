/* gst-cudavision: contrast, brightness, saturation and hue, as videobalance computes them.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Semantics (videobalance's, so that cudaenhance gives its bytes):
 *   Y' = tabley[Y], (U', V') = tableuv[U][V], tables built in double precision on the host;
 *   RGB layouts go through videobalance's 8-bit BT.601 integer matrices: RGB -> YUV (clamped),
 *   the tables, YUV -> RGB (clamped); the fourth byte is copied.
 *   NV12/I420: the Y plane through tabley, each chroma sample pair through tableuv;
 *   YUY2/UYVY: the Y bytes through tabley, each pixel pair's U and V through tableuv.
 * Both backends index the same tables, so they agree bit for bit. */
#pragma once

#include "image.h"

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
};

void enhance_build_tables (const EnhanceParams &params, EnhanceTables *tables);

/* The definition, a table lookup per sample (enhance_cpu.cpp): src and dst have the same layout
 * and size; they may be the same frame (in place). */
void enhance_reference (const Frame &src, const Frame &dst, const EnhanceTables &tables);

/* The same bytes, 4:2:0 luma through the table in SIMD (enhance_cpu_simd.cpp): what the CPU
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
