/* gst-cudavision: device helpers shared by the kernels: 4-byte pixel access that tolerates any
 * alignment, and exact int -> float conversion without the quarter-rate conversion unit.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cstdint>

namespace cuv {

constexpr int div_up (int a, int b) { return (a + b - 1) / b; }

/* A 4-byte pixel at @p: one load when @kAligned (the caller checked p % 4 == 0), else four. */
template <bool kAligned> __device__ __forceinline__ uint32_t load_px4 (const uint8_t *p)
{
  if (kAligned)
    return __ldg (reinterpret_cast<const uint32_t *> (p));
  return __ldg (p) | __ldg (p + 1) << 8 | __ldg (p + 2) << 16 | static_cast<uint32_t> (__ldg (p + 3)) << 24;
}

template <bool kAligned> __device__ __forceinline__ void store_px4 (uint8_t *p, uint32_t v)
{
  if (kAligned) {
    *reinterpret_cast<uint32_t *> (p) = v;
  } else {
    p[0] = v & 0xff;
    p[1] = (v >> 8) & 0xff;
    p[2] = (v >> 16) & 0xff;
    p[3] = v >> 24;
  }
}

/* (float) i for 0 <= i < 2^23, exactly, on the FP32 pipe: 2^23 + i has i in its mantissa. */
__device__ __forceinline__ float exact_float (int i)
{
  return __fsub_rn (__int_as_float (i | 0x4B000000), 8388608.0f);
}

}  // namespace cuv
