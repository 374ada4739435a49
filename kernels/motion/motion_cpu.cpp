/* gst-cudavision: the plain definition of the motion search (motion.h states the semantics) and
 * the reference plane the fast search (motion_simd.cpp) reads.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernels/motion/motion.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace cuv {

namespace {

/* The SAD of the @n x @n block at (x, y) of @cur against @prev displaced by (dx, dy), reference
 * coordinates clamped to the plane. */
uint32_t block_sad (const Plane &cur, const Plane &prev, int x, int y, int n, int dx, int dy)
{
  uint32_t sad = 0;
  for (int j = 0; j < n; j++) {
    const uint8_t *c = cur.data + static_cast<size_t> (y + j) * cur.pitch + x;
    const int ry = std::clamp (y + j + dy, 0, prev.height - 1);
    const uint8_t *r = prev.data + static_cast<size_t> (ry) * prev.pitch;
    for (int i = 0; i < n; i++) {
      const int rx = std::clamp (x + i + dx, 0, prev.width - 1);
      sad += static_cast<uint32_t> (std::abs (c[i] - r[rx]));
    }
  }
  return sad;
}

void search_fixed (const Plane &cur, const Plane &prev, int size, int range, MotionVector *out, const MotionGrid &g)
{
  for (int by = 0; by < g.rows; by++) {
    for (int bx = 0; bx < g.cols; bx++) {
      uint32_t best = UINT32_MAX;
      for (int dy = -range; dy < range; dy++)
        for (int dx = -range; dx < range; dx++)
          best = std::min (best,
              motion_key (block_sad (cur, prev, bx * size, by * size, size, dx, dy), motion_tie_break (dx, dy)));
      out[by * g.cols + bx] = motion_vector_from_key (best, size);
    }
  }
}

void search_variable (const Plane &cur, const Plane &prev, const MotionParams &params, MotionVector *out,
    const MotionGrid &g)
{
  const int range = params.range;
  for (int my = 0; my < g.rows / 2; my++) {
    for (int mx = 0; mx < g.cols / 2; mx++) {
      uint32_t b4[4], b84[2], b48[2], b88 = UINT32_MAX;
      std::fill (b4, b4 + 4, UINT32_MAX);
      std::fill (b84, b84 + 2, UINT32_MAX);
      std::fill (b48, b48 + 2, UINT32_MAX);
      for (int dy = -range; dy < range; dy++) {
        for (int dx = -range; dx < range; dx++) {
          const uint32_t tb = motion_tie_break (dx, dy);
          uint32_t s[4];
          for (int i = 0; i < 4; i++) {
            s[i] = block_sad (cur, prev, mx * 8 + (i & 1) * 4, my * 8 + (i >> 1) * 4, 4, dx, dy);
            b4[i] = std::min (b4[i], motion_key (s[i], tb));
          }
          b84[0] = std::min (b84[0], motion_key (s[0] + s[1], tb));
          b84[1] = std::min (b84[1], motion_key (s[2] + s[3], tb));
          b48[0] = std::min (b48[0], motion_key (s[0] + s[2], tb));
          b48[1] = std::min (b48[1], motion_key (s[1] + s[3], tb));
          b88 = std::min (b88, motion_key (s[0] + s[1] + s[2] + s[3], tb));
        }
      }
      motion_choose_partition (b4, b84, b48, b88, params.penalty, out + my * 2 * g.cols + mx * 2, g.cols);
    }
  }
}

}  // namespace

void motion_search_reference (const Plane &cur, const Plane &prev, const MotionParams &params, MotionVector *out)
{
  const MotionGrid g = motion_grid (params.block, cur.width, cur.height);
  if (params.block == MotionBlock::Variable)
    search_variable (cur, prev, params, out, g);
  else
    search_fixed (cur, prev, motion_search_size (params.block), params.range, out, g);
}

/* Right of the frame: R columns and a vector's width, for the loads of the last candidates. */
constexpr int kVectorSlack = 256;

void motion_prepare_reference (const Plane &prev, int range, MotionReference *ref)
{
  ref->range = range;
  if (prev.width <= 0 || prev.height <= 0) {
    ref->plane = Plane{nullptr, 0, 0, 0};
    return;
  }
  const int left = range, right = range + kVectorSlack;
  const int pitch = (prev.width + left + right + 63) / 64 * 64;
  const int rows = prev.height + 2 * range;
  ref->storage.resize (static_cast<size_t> (pitch) * rows);
  ref->plane = Plane{ref->storage.data () + static_cast<size_t> (range) * pitch + left, pitch, prev.width, prev.height};
  for (int y = -range; y < prev.height + range; y++) {
    const uint8_t *src = prev.data + static_cast<size_t> (std::clamp (y, 0, prev.height - 1)) * prev.pitch;
    uint8_t *dst = ref->plane.data + static_cast<ptrdiff_t> (y) * pitch;
    std::memset (dst - left, src[0], left);
    std::memcpy (dst, src, prev.width);
    std::memset (dst + prev.width, src[prev.width - 1], right);
  }
}

void motion_search_cpu (const Plane &cur, const Plane &prev, const MotionParams &params, MotionVector *out)
{
  MotionReference ref;
  motion_prepare_reference (prev, params.range, &ref);
  motion_search_rows_cpu (cur, ref, params, out, 0, motion_search_block_rows (params.block, cur.height));
}

void motion_votes_cpu (const MotionVector *vectors, int n, uint32_t threshold, MotionVotes *votes)
{
  uint32_t moving = 0;
  for (int i = 0; i < n; i++) {
    moving += motion_unit_moves (vectors[i], threshold);
    votes->votes[motion_vote_index (vectors[i].dx, vectors[i].dy)]++;
  }
  votes->moving += moving;
}

const std::vector<PixelRegion> &motion_regions (const MotionVector *vectors, const MotionGrid &grid, uint32_t threshold,
    uint32_t min_area, RegionScratch *scratch)
{
  scratch->mask.resize (grid.count ());
  uint8_t *mask = scratch->mask.data ();
  for (int i = 0; i < grid.count (); i++)
    mask[i] = motion_unit_moves (vectors[i], threshold);
  /* whole units only: the grid ends where its last whole block does */
  return pixel_regions (RegionGrid{grid.cols, grid.rows, grid.unit, grid.cols * grid.unit, grid.rows * grid.unit},
      min_area, nullptr, scratch);
}

std::vector<int8_t> motion_vector_field (const MotionVector *vectors, int n)
{
  std::vector<int8_t> field (2 * static_cast<size_t> (n));
  for (int i = 0; i < n; i++) {
    field[2 * i] = vectors[i].dx;
    field[2 * i + 1] = vectors[i].dy;
  }
  return field;
}

void motion_tally_add (MotionTally *tally, const MotionVotes &votes, int range)
{
  for (int dy = -range; dy < range; dy++)
    for (int dx = -range; dx < range; dx++)
      tally->votes[motion_vote_index (dx, dy)] += votes.votes[motion_vote_index (dx, dy)];
  tally->moving += votes.moving;
}

double motion_summed_magnitude (const MotionTally &tally)
{
  static const std::vector<double> length = [] {
    std::vector<double> l (kMotionVotesSide * kMotionVotesSide);
    for (int y = -kMotionMaxRange; y < kMotionMaxRange; y++)
      for (int x = -kMotionMaxRange; x < kMotionMaxRange; x++)
        l[motion_vote_index (x, y)] = std::sqrt (static_cast<double> (x * x + y * y));
    return l;
  }();
  double sum = 0;
  for (size_t k = 0; k < length.size (); k++)
    sum += tally.votes[k] * length[k];
  return sum;
}

void motion_global_vector (const MotionTally &tally, int *dx, int *dy)
{
  uint32_t best = 0;
  uint32_t best_tb = UINT32_MAX;
  *dx = *dy = 0;
  for (int y = -kMotionMaxRange; y < kMotionMaxRange; y++) {
    for (int x = -kMotionMaxRange; x < kMotionMaxRange; x++) {
      const uint32_t c = tally.votes[motion_vote_index (x, y)];
      const uint32_t tb = motion_tie_break (x, y);
      if (c > best || (c == best && c > 0 && tb < best_tb)) {
        best = c;
        best_tb = tb;
        *dx = x;
        *dy = y;
      }
    }
  }
}

}  // namespace cuv
