/* gst-cudavision: the fast CPU motion search, as Highway builds it for each x86-64 (SSE4, AVX2,
 * AVX-512) or Arm target and picks at run time; motion.h states the semantics.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Vectors run along the candidates, not the pixels: for one block and one dy, lane l of a vector
 * holds the SAD of candidate dx = -R + l. Each pixel of the block is broadcast and its absolute
 * differences with one row of the padded reference (motion_prepare_reference: no clamping) are
 * added, in 16-bit lanes (a 16x16 block's SAD is at most 65280). The keys (SAD << 16 | tie-break)
 * of each candidate then go through the same minimum as the definition's, lanes past the window
 * holding a key no candidate reaches.
 *
 * On x86 targets with AVX2 the SADs come from MPSADBW instead (Highway 1.0 has no operation for
 * it; later versions name it SumsOfAdjQuadAbsDiff): one instruction gives the SADs of a block's
 * four bytes against eight windows of a reference row a byte apart, in each 128-bit half. A
 * vector of 16 16-bit lanes then holds the row SADs of 16 candidates dx (eight, and eight more 16
 * to the right), and a block's rows add up in it. The dy are taken in the order of the
 * tie-break for a fixed dx (0, -1, 1, -2, 2, ...), so that each lane keeps its lowest SAD and the
 * first dy that gave it (a strict improvement replaces it): that lane's best key. The keys of the
 * lanes are made and reduced once a block. A block equal to the reference at (0, 0) (a still
 * scene) stops there: SAD 0 with the smallest tie-break is the smallest key there is. */
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "motion_cpu_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
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

#undef CUV_MPSADBW
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#define CUV_MPSADBW 1

/* The candidates of one search: ceil (2R / 32) groups of two vectors; lane l of vector v of group g
 * is dx = -R + 32 g + 8 v + l (l < 8) or that + 8 (l >= 8), MPSADBW's two halves. */
struct Candidates {
  int range = 0;
  int groups = 0;
  std::vector<int> dy_order;  /* dy in the tie-break's order for a fixed dx */
  std::vector<uint16_t> dx_part;  /* per vector and lane: |dx| << 8 | (dx > 0) */
  std::vector<uint16_t> invalid;  /* per vector and lane: 0xffff where dx is past the range */
  explicit Candidates (int r) : range (r), groups ((2 * r + 31) / 32)
  {
    dy_order.push_back (0);
    for (int k = 1; k <= r; k++) {
      dy_order.push_back (-k);
      if (k < r)
        dy_order.push_back (k);
    }
    for (int v = 0; v < 2 * groups; v++) {
      for (int l = 0; l < 16; l++) {
        const int dx = -r + 32 * (v / 2) + 8 * (v % 2) + (l < 8 ? l : l + 8);
        const bool in = dx < r;
        dx_part.push_back (static_cast<uint16_t> (in ? (std::abs (dx) << 8 | (dx > 0 ? 1 : 0)) : 0));
        invalid.push_back (in ? 0 : 0xffff);
      }
    }
  }
  __m256i dx_vec (int v) const { return _mm256_loadu_si256 (reinterpret_cast<const __m256i *> (dx_part.data () + 16 * v)); }
  __m256i invalid_vec (int v) const { return _mm256_loadu_si256 (reinterpret_cast<const __m256i *> (invalid.data () + 16 * v)); }
};

/* Each lane's lowest SAD so far and the dy that first gave it. */
struct LaneBest {
  __m256i sad;
  __m256i dy;
  /* written out, so that it is built for this target (an implicit one is not) */
  LaneBest () : sad (_mm256_set1_epi16 (-1)), dy (_mm256_setzero_si256 ()) {}
  HWY_INLINE void keep (__m256i s, __m256i dyv)
  {
    const __m256i m = _mm256_min_epu16 (s, sad);
    /* a tie keeps the earlier dy: the smaller key */
    dy = _mm256_blendv_epi8 (dyv, dy, _mm256_cmpeq_epi16 (m, sad));
    sad = m;
  }
  /* the lowest key (SAD << 16 | tie-break) of its lanes and @acc's */
  HWY_INLINE __m256i keys (const Candidates &c, int v, __m256i acc) const
  {
    const __m256i ady = _mm256_slli_epi16 (_mm256_abs_epi16 (dy), 8);
    const __m256i tb = _mm256_or_si256 (_mm256_add_epi16 (c.dx_vec (v), ady),
        _mm256_slli_epi16 (_mm256_add_epi16 (dy, _mm256_set1_epi16 (64)), 1));
    const __m256i invalid = c.invalid_vec (v);
    const __m256i t = _mm256_or_si256 (tb, invalid), s = _mm256_or_si256 (sad, invalid);
    return _mm256_min_epu32 (acc, _mm256_min_epu32 (_mm256_unpacklo_epi16 (t, s), _mm256_unpackhi_epi16 (t, s)));
  }
};

HWY_INLINE uint32_t lowest_key (__m256i v)
{
  __m128i m = _mm_min_epu32 (_mm256_castsi256_si128 (v), _mm256_extracti128_si256 (v, 1));
  m = _mm_min_epu32 (m, _mm_shuffle_epi32 (m, 0x4e));
  m = _mm_min_epu32 (m, _mm_shuffle_epi32 (m, 0xb1));
  return static_cast<uint32_t> (_mm_cvtsi128_si32 (m));
}

/* A block row's bytes [8 h, 8 h + 8) in every 64-bit lane (4x4 blocks: its 4 bytes). */
HWY_INLINE __m256i cur_bytes (const uint8_t *p, int n)
{
  uint64_t v = 0;
  std::memcpy (&v, p, n < 8 ? 4 : 8);
  return _mm256_set1_epi64x (static_cast<long long> (v));
}

/* The row SADs of 16 candidates (see Candidates) of an @n-byte block row whose bytes are in
 * @c[0..] (cur_bytes), against the reference row at @r (the first candidate's window). */
HWY_INLINE __m256i row_sads (const uint8_t *r, const __m256i *c, int n)
{
  /* imm 0x00: four bytes at 0 against windows from 0; 0x2d: bytes 4..7 (dword 1) against windows
   * from 4, in both halves */
  const __m256i ref = _mm256_loadu_si256 (reinterpret_cast<const __m256i *> (r));
  __m256i s = _mm256_mpsadbw_epu8 (ref, c[0], 0x00);
  if (n >= 8)
    s = _mm256_add_epi16 (s, _mm256_mpsadbw_epu8 (ref, c[0], 0x2d));
  if (n >= 16) {
    const __m256i ref8 = _mm256_loadu_si256 (reinterpret_cast<const __m256i *> (r + 8));
    s = _mm256_add_epi16 (s, _mm256_add_epi16 (_mm256_mpsadbw_epu8 (ref8, c[1], 0x00), _mm256_mpsadbw_epu8 (ref8, c[1], 0x2d)));
  }
  return s;
}

/* Whether the @n x @n block at (x, y) equals the reference there: SAD 0 at (0, 0), whose key is the
 * smallest any candidate can have (no other has so small a tie-break), so the search can stop. */
bool still_block (const Plane &cur, const Plane &ref, int x, int y, int n)
{
  for (int j = 0; j < n; j++)
    if (std::memcmp (cur.data + static_cast<size_t> (y + j) * cur.pitch + x,
            ref.data + static_cast<ptrdiff_t> (y + j) * ref.pitch + x, static_cast<size_t> (n)) != 0)
      return false;
  return true;
}

template <int kN>
void mpsad_fixed_block (const Plane &cur, const Plane &ref, const Candidates &cand, int x, int y, MotionVector *out)
{
  if (still_block (cur, ref, x, y, kN)) {
    *out = motion_vector_from_key (motion_key (0, motion_tie_break (0, 0)), kN);
    return;
  }
  __m256i c[kN][2];
  for (int j = 0; j < kN; j++)
    for (int h = 0; h < (kN + 7) / 8; h++)
      c[j][h] = cur_bytes (cur.data + static_cast<size_t> (y + j) * cur.pitch + x + 8 * h, kN);
  __m256i keys = _mm256_set1_epi32 (-1);
  for (int v = 0; v < 2 * cand.groups; v++) {
    LaneBest best;
    for (const int dy : cand.dy_order) {
      const uint8_t *row = ref.data + static_cast<ptrdiff_t> (y + dy) * ref.pitch + x - cand.range + 32 * (v / 2) + 8 * (v % 2);
      __m256i sad = _mm256_setzero_si256 ();
      HWY_UNROLL (16)
      for (int j = 0; j < kN; j++)
        sad = _mm256_add_epi16 (sad, row_sads (row + static_cast<ptrdiff_t> (j) * ref.pitch, c[j], kN));
      best.keep (sad, _mm256_set1_epi16 (static_cast<int16_t> (dy)));
    }
    keys = best.keys (cand, v, keys);
  }
  *out = motion_vector_from_key (lowest_key (keys), kN);
}

void mpsad_fixed (const Plane &cur, const Plane &ref, const MotionParams &params, MotionVector *out,
    const MotionGrid &g, int row_begin, int row_end)
{
  const Candidates cand (params.range);
  const int n = motion_search_size (params.block);
  for (int by = row_begin; by < row_end; by++) {
    for (int bx = 0; bx < g.cols; bx++) {
      MotionVector *o = out + by * g.cols + bx;
      if (n == 4)
        mpsad_fixed_block<4> (cur, ref, cand, bx * n, by * n, o);
      else if (n == 8)
        mpsad_fixed_block<8> (cur, ref, cand, bx * n, by * n, o);
      else
        mpsad_fixed_block<16> (cur, ref, cand, bx * n, by * n, o);
    }
  }
}

void mpsad_variable (const Plane &cur, const Plane &ref, const MotionParams &params, MotionVector *out,
    const MotionGrid &g, int row_begin, int row_end)
{
  const Candidates cand (params.range);
  for (int my = row_begin; my < row_end; my++) {
    for (int mx = 0; mx < g.cols / 2; mx++) {
      const int x = mx * 8, y = my * 8;
      if (still_block (cur, ref, x, y, 8)) {
        /* every partition block's best is (0, 0) at SAD 0 */
        const uint32_t k = motion_key (0, motion_tie_break (0, 0));
        const uint32_t b4[4] = {k, k, k, k}, b2[2] = {k, k};
        motion_choose_partition (b4, b2, b2, k, params.penalty, out + my * 2 * g.cols + mx * 2, g.cols);
        continue;
      }
      __m256i c[8];
      for (int j = 0; j < 8; j++)
        c[j] = cur_bytes (cur.data + static_cast<size_t> (y + j) * cur.pitch + x, 8);
      /* the nine partition blocks: 4x4 (4), 8x4 (2), 4x8 (2), 8x8 */
      __m256i keys[9];
      for (int p = 0; p < 9; p++)
        keys[p] = _mm256_set1_epi32 (-1);
      for (int v = 0; v < 2 * cand.groups; v++) {
        LaneBest b[9];
        for (const int dy : cand.dy_order) {
          const __m256i dyv = _mm256_set1_epi16 (static_cast<int16_t> (dy));
          const uint8_t *row = ref.data + static_cast<ptrdiff_t> (y + dy) * ref.pitch + x - cand.range + 32 * (v / 2) + 8 * (v % 2);
          /* the 4x4 blocks: left and right halves of the top and bottom four rows (unrolled, so
           * that the sums stay in registers) */
          __m256i s[4] = {_mm256_setzero_si256 (), _mm256_setzero_si256 (), _mm256_setzero_si256 (),
              _mm256_setzero_si256 ()};
          HWY_UNROLL (8)
          for (int j = 0; j < 8; j++) {
            const __m256i r = _mm256_loadu_si256 (reinterpret_cast<const __m256i *> (row + static_cast<ptrdiff_t> (j) * ref.pitch));
            const int t = j < 4 ? 0 : 2;
            s[t] = _mm256_add_epi16 (s[t], _mm256_mpsadbw_epu8 (r, c[j], 0x00));
            s[t + 1] = _mm256_add_epi16 (s[t + 1], _mm256_mpsadbw_epu8 (r, c[j], 0x2d));
          }
          HWY_UNROLL (4)
          for (int i = 0; i < 4; i++)
            b[i].keep (s[i], dyv);
          const __m256i top = _mm256_add_epi16 (s[0], s[1]), bottom = _mm256_add_epi16 (s[2], s[3]);
          b[4].keep (top, dyv);
          b[5].keep (bottom, dyv);
          b[6].keep (_mm256_add_epi16 (s[0], s[2]), dyv);
          b[7].keep (_mm256_add_epi16 (s[1], s[3]), dyv);
          b[8].keep (_mm256_add_epi16 (top, bottom), dyv);
        }
        for (int p = 0; p < 9; p++)
          keys[p] = b[p].keys (cand, v, keys[p]);
      }
      uint32_t b4[4], b84[2], b48[2];
      for (int i = 0; i < 4; i++)
        b4[i] = lowest_key (keys[i]);
      b84[0] = lowest_key (keys[4]);
      b84[1] = lowest_key (keys[5]);
      b48[0] = lowest_key (keys[6]);
      b48[1] = lowest_key (keys[7]);
      motion_choose_partition (b4, b84, b48, lowest_key (keys[8]), params.penalty, out + my * 2 * g.cols + mx * 2, g.cols);
    }
  }
}
#endif

}  // namespace

void SearchRows (const Plane &cur, const MotionReference &ref, const MotionParams &params, MotionVector *out,
    int row_begin, int row_end)
{
  const MotionGrid g = motion_grid (params.block, cur.width, cur.height);
  if (g.count () == 0 || row_begin >= row_end)
    return;
#if CUV_MPSADBW
  if (params.block == MotionBlock::Variable)
    mpsad_variable (cur, ref.plane, params, out, g, row_begin, row_end);
  else
    mpsad_fixed (cur, ref.plane, params, out, g, row_begin, row_end);
  return;
#endif
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
