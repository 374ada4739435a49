/* gst-cudavision kernel tests: frame pairs for the difference kernels (heatmap, noisemap).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "kernels/base/copy.h"
#include "tests/common/cuvtest.h"
#include "kernels/difference/difference.h"

namespace cuvtest {

inline constexpr cuv::PixelLayout kDiffLayouts[] = {cuv::PixelLayout::RGBA, cuv::PixelLayout::BGRA,
    cuv::PixelLayout::RGBx, cuv::PixelLayout::BGRx, cuv::PixelLayout::NV12, cuv::PixelLayout::I420};

/* kDiffLayouts, the packed 4:2:2 ones and P010: every layout the difference kernels take. */
inline constexpr cuv::PixelLayout kDiffLayoutsAll[] = {cuv::PixelLayout::RGBA, cuv::PixelLayout::BGRA,
    cuv::PixelLayout::RGBx, cuv::PixelLayout::BGRx, cuv::PixelLayout::NV12, cuv::PixelLayout::I420,
    cuv::PixelLayout::YUY2, cuv::PixelLayout::UYVY, cuv::PixelLayout::P010};

/* @s, one wider where @l is YUY2/UYVY and its width odd: the difference kernels take those in even
 * widths, as the elements do. */
inline Size even_for (cuv::PixelLayout l, Size s)
{
  if (cuv::layout_is_packed422 (l))
    s.w += s.w % 2;
  return s;
}

/* @prev (any pitch) as a copy of @cur with a share of its bytes changed by small and large amounts, so that
 * differences near any threshold and the full range occur. */
inline void make_previous (const HostImage &cur, HostImage &prev, uint32_t seed)
{
  std::mt19937 rng (seed);
  cuv::copy_frame_cpu (cur.frame, prev.frame);
  for (uint8_t &b : prev.storage) {
    const uint32_t r = rng ();
    switch (r % 8) {
      case 0: b = static_cast<uint8_t> (b + (r >> 8) % 41 - 20); break;
      case 1: b = static_cast<uint8_t> (r >> 16); break;
      default: break;
    }
  }
}

/* Byte @i of the pixel (@x, @y) of a 4-byte layout. */
inline uint8_t &px_byte (const cuv::Frame &f, int x, int y, int i)
{
  return f.planes[0].data[static_cast<size_t> (y) * f.planes[0].pitch + 4 * x + i];
}

inline uint8_t &y_at (const cuv::Frame &f, int x, int y)
{
  return f.planes[0].data[static_cast<size_t> (y) * f.planes[0].pitch + x];
}

inline std::string stats_diff (const cuv::DiffStats &a, const cuv::DiffStats &b)
{
  if (a.sum_difference != b.sum_difference)
    return "sum " + std::to_string (a.sum_difference) + " vs " + std::to_string (b.sum_difference);
  if (a.max_difference != b.max_difference)
    return "max " + std::to_string (a.max_difference) + " vs " + std::to_string (b.max_difference);
  if (a.changed != b.changed)
    return "changed " + std::to_string (a.changed) + " vs " + std::to_string (b.changed);
  return "";
}

}  // namespace cuvtest
