/* gst-cudavision: the per-sample Sobel arithmetic, shared by sobel.cu and sobel_cpu.cpp so that
 * both backends run the same operations in the same order.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cmath>

#ifdef __CUDACC__
#define CUV_HD __host__ __device__ __forceinline__
#else
#define CUV_HD inline
#endif

namespace cuv {

/* Rows a, b, c (top to bottom) of the 3x3 neighbourhood; index 0 left, 1 centre, 2 right. */
CUV_HD int sobel_energy (int a0, int a1, int a2, int b0, int b2, int c0, int c1, int c2)
{
  int gx = (a2 + 2 * b2 + c2) - (a0 + 2 * b0 + c0);
  int gy = (c0 + 2 * c1 + c2) - (a0 + 2 * a1 + a2);
  return gx * gx + gy * gy;
}

/* energy <= 2 * 1020^2 is exact in float; sqrt and the product are IEEE-rounded on both backends
 * (nvcc -prec-sqrt=true --fmad=false, host -ffp-contract=off). */
CUV_HD int sobel_output (int energy, float scale, int threshold)
{
#ifdef __CUDA_ARCH__
  float m = __fmul_rn (scale, __fsqrt_rn (static_cast<float> (energy)));
#else
  float m = scale * std::sqrt (static_cast<float> (energy));
#endif
  int v = m >= 255.0f ? 255 : static_cast<int> (m + 0.5f);
  if (threshold > 0)
    v = v >= threshold ? 255 : 0;
  return v;
}

}  // namespace cuv
