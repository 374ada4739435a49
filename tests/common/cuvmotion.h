/* gst-cudavision tests: luma planes and moving content for the motion-estimation tests.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <algorithm>

#include "tests/common/cuvtest.h"
#include "kernels/motion/motion.h"

namespace cuvtest {

/* A host luma plane with pitch = width + @pad, starting @offset bytes into its storage. */
struct LumaImage {
  std::vector<uint8_t> storage;
  cuv::Plane plane;

  LumaImage (int w, int h, int pad = 0, int offset = 0)
  {
    const int pitch = std::max (w + pad, 1);
    storage.assign (static_cast<size_t> (pitch) * std::max (h, 1) + offset + 16, 0);
    plane = cuv::Plane{storage.data () + offset, pitch, w, h};
  }
  uint8_t &at (int x, int y) { return plane.data[static_cast<size_t> (y) * plane.pitch + x]; }
  uint8_t at (int x, int y) const { return plane.data[static_cast<size_t> (y) * plane.pitch + x]; }
};

/* Random texture: every block is unlike every other place, so the true vector is the only SAD 0. */
inline void fill_texture (LumaImage &img, uint32_t seed)
{
  std::mt19937 rng (seed);
  for (int y = 0; y < img.plane.height; y++)
    for (int x = 0; x < img.plane.width; x++)
      img.at (x, y) = static_cast<uint8_t> (rng ());
}

/* @cur = @prev moved so that cur (x, y) = prev (x + dx, y + dy), coordinates clamped: every block
 * then has the vector (dx, dy) at SAD 0. */
inline void fill_shifted (LumaImage &cur, const LumaImage &prev, int dx, int dy)
{
  const cuv::Plane &p = prev.plane;
  for (int y = 0; y < p.height; y++)
    for (int x = 0; x < p.width; x++)
      cur.at (x, y) = prev.at (std::clamp (x + dx, 0, p.width - 1), std::clamp (y + dy, 0, p.height - 1));
}

/* Whether the block at (x, y) of size @n finds its content at (x + dx, y + dy) without clamping. */
inline bool block_inside (const cuv::Plane &p, int x, int y, int n, int dx, int dy)
{
  return x + dx >= 0 && y + dy >= 0 && x + dx + n <= p.width && y + dy + n <= p.height;
}

inline const char *block_name (cuv::MotionBlock b)
{
  switch (b) {
    case cuv::MotionBlock::B4: return "4x4";
    case cuv::MotionBlock::B8: return "8x8";
    case cuv::MotionBlock::B16: return "16x16";
    default: return "variable";
  }
}

inline constexpr cuv::MotionBlock kBlocks[] = {cuv::MotionBlock::Variable, cuv::MotionBlock::B4, cuv::MotionBlock::B8,
    cuv::MotionBlock::B16};

inline bool same_vector (const cuv::MotionVector &a, const cuv::MotionVector &b)
{
  return a.dx == b.dx && a.dy == b.dy && a.width == b.width && a.height == b.height && a.cost == b.cost;
}

}  // namespace cuvtest
