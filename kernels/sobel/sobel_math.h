/* gst-cudavision: the per-sample Sobel arithmetic, shared by sobel.cu and sobel_cpu.cpp so that
 * both backends run the same operations in the same order.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/base/image.h"

#ifdef __CUDACC__
#include "kernels/base/cuda_access.cuh"
#endif


namespace cuv {

/* The byte beside each filtered Y byte of YUY2/UYVY and P010: U or V neutral (128), P010's low
 * bits 0. */
CUV_HD int sobel_other_byte (PixelLayout l)
{
  return layout_is_16bit (l) ? 0 : 128;
}

/* Rows a, b, c (top to bottom) of the 3x3 neighbourhood; index 0 left, 1 centre, 2 right. */
CUV_HD int sobel_energy (int a0, int a1, int a2, int b0, int b2, int c0, int c1, int c2)
{
  int gx = (a2 + 2 * b2 + c2) - (a0 + 2 * b0 + c0);
  int gy = (c0 + 2 * c1 + c2) - (a0 + 2 * a1 + a2);
  return gx * gx + gy * gy;
}

/* energy <= 2 * 1020^2 is exact in float; sqrt and the product are IEEE-rounded on both backends
 * (nvcc -prec-sqrt=true --fmad=false, host -ffp-contract=off). */
/* floor (fma (scale, sqrtf (energy), 0.5)) clipped to 255: one rounding for scale * root + 0.5, as
 * the GPU's fused multiply-add gives it. */
inline int sobel_magnitude_host (int energy, float scale)
{
  float t = std::fma (scale, std::sqrt (static_cast<float> (energy)), 0.5f);
  return t >= 255.0f ? 255 : static_cast<int> (t);
}

inline int sobel_output_host (int energy, float scale, int threshold)
{
  int v = sobel_magnitude_host (energy, scale);
  if (threshold > 0)
    v = v >= threshold ? 255 : 0;
  return v;
}

/* The magnitude is monotonic in the energy (every IEEE rounding step is), so `magnitude >=
 * threshold` is `energy >= the smallest energy that reaches it`: found once on the host, it spares
 * the GPU the square root in threshold mode. Returns INT32_MAX when no energy reaches it. */
inline int sobel_threshold_energy (float scale, int threshold)
{
  const int max_energy = 2 * 1020 * 1020; /* kSobelMaxEnergy */
  if (sobel_magnitude_host (max_energy, scale) < threshold)
    return 0x7fffffff;
  int lo = 0, hi = max_energy;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (sobel_magnitude_host (mid, scale) >= threshold)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

#ifdef __CUDACC__
/* An energy of 0 enters the square root as 2^-30: its root times any scale <= 64 plus 0.5 still
 * floors to 0, and every energy >= 1 absorbs it exactly. */
constexpr float kEnergyZeroLift = 9.31322574615478515625e-10f;

/* sobel_magnitude_host on the GPU for an energy given as an exact float (0 lifted, see above), as
 * the low byte of a float's bit pattern (0x4B0000vv). The square root is the IEEE-correct sequence
 * nvcc emits for normal inputs (rsqrt estimate, one Newton step with the residual), without its
 * branch to the special-value path, which no energy needs. */
/* The output byte from the root @s: floor (fma (scale, s, 0.5)) clipped to 255, as the low byte
 * of a float's bit pattern. */
__device__ __forceinline__ uint32_t sobel_root_bits (float s, float scale)
{
  float t = fminf (__fmaf_rn (scale, s, 0.5f), 255.5f);
  return __float_as_uint (__fadd_rd (t, 8388608.0f));
}

__device__ __forceinline__ uint32_t sobel_magnitude_bits (float x, float scale)
{
  float r;
  asm ("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  float s = __fmul_rn (x, r);
  float h = __fmul_rn (r, 0.5f);
  float res = __fmaf_rn (-s, s, x);
  s = __fmaf_rn (res, h, s);
  return sobel_root_bits (s, scale);
}

__device__ __forceinline__ uint32_t sobel_magnitude_bits (int energy, float scale)
{
  return sobel_magnitude_bits (fmaxf (exact_float (energy), kEnergyZeroLift), scale);
}

/* The same from the hardware's approximate square root (one instruction instead of five): not
 * correctly rounded, so it gives sobel_magnitude_host's bytes only for the scales where
 * sobel_fast_root_exact_cuda found it does, on every energy. */
__device__ __forceinline__ uint32_t sobel_magnitude_bits_fast (float x, float scale)
{
  float s;
  asm ("sqrt.approx.ftz.f32 %0, %1;" : "=f"(s) : "f"(x));
  return sobel_root_bits (s, scale);
}

__device__ __forceinline__ uint32_t sobel_magnitude_bits_fast (int energy, float scale)
{
  return sobel_magnitude_bits_fast (fmaxf (exact_float (energy), kEnergyZeroLift), scale);
}
#endif

}  // namespace cuv
