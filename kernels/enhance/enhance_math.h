/* gst-cudavision: videobalance's per-pixel integer arithmetic, shared by both backends.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cstdint>

#include "kernels/base/image.h"


namespace cuv {

CUV_HD int clamp255 (int v)
{
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* videobalance's 8-bit SDTV matrices: value = (m0 a + m1 b + m2 c + m3) >> 8. videobalance clamps
 * the forward results too; for 8-bit inputs they always lie in 16..239 (each row's negative and
 * positive coefficients sum to at most 224 * 255 / 256 around the offset), so the clamps there are
 * identities and are left out. */
CUV_HD uint32_t enhance_rgb (int r, int g, int b, const uint8_t *tabley, const uint16_t *tableuv)
{
  int y = (66 * r + 129 * g + 25 * b + 4096) >> 8;
  int u = (-38 * r - 74 * g + 112 * b + 32768) >> 8;
  int v = (112 * r - 94 * g - 18 * b + 32768) >> 8;
  y = tabley[y];
  uint32_t uv = tableuv[u * 256 + v];
  u = uv & 0xff;
  v = uv >> 8;
  int r2 = clamp255 ((298 * y + 409 * v - 57068) >> 8);
  int g2 = clamp255 ((298 * y - 100 * u - 208 * v + 34707) >> 8);
  int b2 = clamp255 ((298 * y + 516 * u - 70870) >> 8);
  return static_cast<uint32_t> (r2) | static_cast<uint32_t> (g2) << 8 | static_cast<uint32_t> (b2) << 16;
}

}  // namespace cuv
