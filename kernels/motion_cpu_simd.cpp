/* gst-cudavision: the fast CPU motion search, as Highway builds it for each x86-64 (SSE4, AVX2,
 * AVX-512) or Arm target and picks at run time; motion.h states the semantics.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Vectors run along the candidates, not the pixels: for one block and one dy, lane l of a vector
 * holds the SAD of candidate dx = -R + l. Each pixel of the block is broadcast and its absolute
 * differences with one row of the padded reference (motion_prepare_reference: no clamping) are
 * added, in 16-bit lanes (a 16x16 block's SAD is at most 65280). The keys (SAD << 16 | tie-break)
 * of each candidate then go through the same minimum as the definition's, lanes past the window
 * holding a key no candidate reaches. */
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "motion_cpu_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <vector>

#include "kernels/motion.h"

HWY_BEFORE_NAMESPACE ();
namespace cuv {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

using D16 = hn::ScalableTag<uint16_t>;
using D8 = hn::Rebind<uint8_t, D16>;
using D32 = hn::Repartition<uint32_t, D16>;
using V16 = hn::Vec<D16>;
using V32 = hn::Vec<D32>;

/* The tie-breaks of every candidate, one row of ceil (2R / N) * N lanes per dy; lanes past 2R
 * are all ones, which makes their key the largest there is. */
struct TieBreaks {
  std::vector<uint32_t> keys;
  size_t row = 0;
  TieBreaks (int range, size_t lanes)
  {
    row = (2 * static_cast<size_t> (range) + lanes - 1) / lanes * lanes;
    keys.assign (row * 2 * range, UINT32_MAX);
    for (int dy = -range; dy < range; dy++)
      for (int dx = -range; dx < range; dx++)
        keys[(dy + range) * row + (dx + range)] = motion_tie_break (dx, dy);
  }
};

/* |a - b| of bytes, widened. */
HWY_INLINE V16 abs_diff (D16 d16, hn::Vec<D8> a, hn::Vec<D8> b)
{
  return hn::PromoteTo (d16, hn::Sub (hn::Max (a, b), hn::Min (a, b)));
}

/* The running minimum of @best and the keys of the SADs @sad with the tie-breaks at @tb. */
HWY_INLINE void keep_best (V16 sad, const uint32_t *tb, V32 &best_lo, V32 &best_hi)
{
  const D32 d32;
#if HWY_TARGET == HWY_SCALAR
  /* one lane: no halves */
  best_lo = hn::Min (best_lo, hn::Or (hn::ShiftLeft<16> (hn::PromoteTo (d32, sad)), hn::LoadU (d32, tb)));
  (void) best_hi;
#else
  const hn::Half<D16> dh;
  const V32 lo = hn::Or (hn::ShiftLeft<16> (hn::PromoteTo (d32, hn::LowerHalf (dh, sad))), hn::LoadU (d32, tb));
  const V32 hi = hn::Or (hn::ShiftLeft<16> (hn::PromoteTo (d32, hn::UpperHalf (dh, sad))), hn::LoadU (d32, tb + hn::Lanes (d32)));
  best_lo = hn::Min (best_lo, lo);
  best_hi = hn::Min (best_hi, hi);
#endif
}

HWY_INLINE uint32_t lowest (V32 lo, V32 hi)
{
  const D32 d32;
  return hn::GetLane (hn::MinOfLanes (d32, hn::Min (lo, hi)));
}

/* The SADs of the @n x @n block at (x, y) for one vector of candidates at @dy, lane l being
 * dx = @left + l, added to @acc. */
HWY_INLINE V16 block_sad (const Plane &cur, const Plane &ref, int x, int y, int n, int dy, int left, V16 acc)
{
  const D16 d16;
  const D8 d8;
  for (int j = 0; j < n; j++) {
    const uint8_t *c = cur.data + static_cast<size_t> (y + j) * cur.pitch + x;
    const uint8_t *r = ref.data + static_cast<ptrdiff_t> (y + j + dy) * ref.pitch + x + left;
    for (int i = 0; i < n; i++)
      acc = hn::Add (acc, abs_diff (d16, hn::Set (d8, c[i]), hn::LoadU (d8, r + i)));
  }
  return acc;
}

void search_fixed (const Plane &cur, const Plane &ref, const TieBreaks &tb, const MotionParams &params,
    MotionVector *out, const MotionGrid &g, int row_begin, int row_end)
{
  const D16 d16;
  const D32 d32;
  const int n = motion_search_size (params.block), range = params.range;
  const size_t lanes = hn::Lanes (d16);
  for (int by = row_begin; by < row_end; by++) {
    for (int bx = 0; bx < g.cols; bx++) {
      V32 best_lo = hn::Set (d32, UINT32_MAX), best_hi = best_lo;
      for (int dy = -range; dy < range; dy++) {
        const uint32_t *tb_row = tb.keys.data () + (dy + range) * tb.row;
        for (size_t k = 0; k < tb.row; k += lanes) {
          const V16 sad = block_sad (cur, ref, bx * n, by * n, n, dy, static_cast<int> (k) - range, hn::Zero (d16));
          keep_best (sad, tb_row + k, best_lo, best_hi);
        }
      }
      out[by * g.cols + bx] = motion_vector_from_key (lowest (best_lo, best_hi), n);
    }
  }
}

void search_variable (const Plane &cur, const Plane &ref, const TieBreaks &tb, const MotionParams &params,
    MotionVector *out, const MotionGrid &g, int row_begin, int row_end)
{
  const D16 d16;
  const D32 d32;
  const int range = params.range;
  const size_t lanes = hn::Lanes (d16);
  for (int my = row_begin; my < row_end; my++) {
    for (int mx = 0; mx < g.cols / 2; mx++) {
      /* the nine partition blocks: 4x4 (4), 8x4 (2), 4x8 (2), 8x8 */
      V32 lo[9], hi[9];
      for (int p = 0; p < 9; p++)
        lo[p] = hi[p] = hn::Set (d32, UINT32_MAX);
      for (int dy = -range; dy < range; dy++) {
        const uint32_t *tb_row = tb.keys.data () + (dy + range) * tb.row;
        for (size_t k = 0; k < tb.row; k += lanes) {
          const int left = static_cast<int> (k) - range;
          V16 s[4];
          for (int i = 0; i < 4; i++)
            s[i] = block_sad (cur, ref, mx * 8 + (i & 1) * 4, my * 8 + (i >> 1) * 4, 4, dy, left, hn::Zero (d16));
          const uint32_t *t = tb_row + k;
          for (int i = 0; i < 4; i++)
            keep_best (s[i], t, lo[i], hi[i]);
          keep_best (hn::Add (s[0], s[1]), t, lo[4], hi[4]);
          keep_best (hn::Add (s[2], s[3]), t, lo[5], hi[5]);
          keep_best (hn::Add (s[0], s[2]), t, lo[6], hi[6]);
          keep_best (hn::Add (s[1], s[3]), t, lo[7], hi[7]);
          keep_best (hn::Add (hn::Add (s[0], s[1]), hn::Add (s[2], s[3])), t, lo[8], hi[8]);
        }
      }
      uint32_t b4[4], b84[2], b48[2], b88;
      for (int i = 0; i < 4; i++)
        b4[i] = lowest (lo[i], hi[i]);
      b84[0] = lowest (lo[4], hi[4]);
      b84[1] = lowest (lo[5], hi[5]);
      b48[0] = lowest (lo[6], hi[6]);
      b48[1] = lowest (lo[7], hi[7]);
      b88 = lowest (lo[8], hi[8]);
      motion_choose_partition (b4, b84, b48, b88, params.penalty, out + my * 2 * g.cols + mx * 2, g.cols);
    }
  }
}

}  // namespace

void SearchRows (const Plane &cur, const MotionReference &ref, const MotionParams &params, MotionVector *out,
    int row_begin, int row_end)
{
  const MotionGrid g = motion_grid (params.block, cur.width, cur.height);
  if (g.count () == 0 || row_begin >= row_end)
    return;
  const TieBreaks tb (params.range, hn::Lanes (D16 ()));
  if (params.block == MotionBlock::Variable)
    search_variable (cur, ref.plane, tb, params, out, g, row_begin, row_end);
  else
    search_fixed (cur, ref.plane, tb, params, out, g, row_begin, row_end);
}

}  // namespace HWY_NAMESPACE
}  // namespace cuv
HWY_AFTER_NAMESPACE ();

#if HWY_ONCE
namespace cuv {

HWY_EXPORT (SearchRows);

void motion_search_rows_cpu (const Plane &cur, const MotionReference &ref, const MotionParams &params,
    MotionVector *out, int row_begin, int row_end)
{
  HWY_DYNAMIC_DISPATCH (SearchRows) (cur, ref, params, out, row_begin, row_end);
}

}  // namespace cuv
#endif
