/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cmath>

#include "kernels/difference/difference.h"

namespace cuv {

namespace {

struct Scales {
  double y, c;
  int y_offset;
};

Scales scales (bool full_range)
{
  return full_range ? Scales{1.0, 1.0, 0} : Scales{255.0 / 219.0, 255.0 / 224.0, 16};
}

int fixed (double v)
{
  return static_cast<int> (std::lrint (v * 65536.0));
}

}  // namespace

YuvToRgb yuv_to_rgb_coefficients (double kr, double kb, bool full_range)
{
  const Scales s = scales (full_range);
  const double kg = 1.0 - kr - kb;
  YuvToRgb k;
  k.y_offset = s.y_offset;
  k.y_gain = fixed (s.y);
  k.rv = fixed ((2.0 - 2.0 * kr) * s.c);
  k.gu = fixed (-kb * (2.0 - 2.0 * kb) / kg * s.c);
  k.gv = fixed (-kr * (2.0 - 2.0 * kr) / kg * s.c);
  k.bu = fixed ((2.0 - 2.0 * kb) * s.c);
  return k;
}

void rgb_to_yuv (double kr, double kb, bool full_range, int r, int g, int b, int *y, int *u, int *v)
{
  const Scales s = scales (full_range);
  const double kg = 1.0 - kr - kb;
  const double yy = kr * r + kg * g + kb * b; /* 0..255 */
  const double cb = (b - yy) / (2.0 - 2.0 * kb), cr = (r - yy) / (2.0 - 2.0 * kr);
  *y = clamp_byte (static_cast<int> (std::lrint (s.y_offset + yy / s.y)));
  *u = clamp_byte (static_cast<int> (std::lrint (128.0 + cb / s.c)));
  *v = clamp_byte (static_cast<int> (std::lrint (128.0 + cr / s.c)));
}

}  // namespace cuv
