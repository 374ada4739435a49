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
 * scene) stops there: SAD 0 with the smallest tie-break is the smallest key there is.
 *
 * Variable blocks have nine partition blocks a macroblock, and keeping a dy beside each of their
 * nine running minima cost a fifth of the search (docs/performance-log.md). Only the SADs choose the
 * partitioning (motion_partitioning), so the search keeps each lane's lowest SAD of each partition
 * block (one minimum a dy) and stores the four 4x4 SADs of every candidate on the way; then only
 * the one, two or four blocks the partitioning writes need a vector, and each is found in the
 * stored SADs: the lanes whose lowest SAD is the block's lowest, each at the first dy (in the order
 * above) where its SAD is that, the smallest key among them. Finding four 4x4 blocks' vectors so
 * costs more than keeping their dy in the loop, and neighbours mostly take the same partitioning
 * (all 4x4 in noise, whole 8x8 blocks in a scene that pans): after a macroblock of four 4x4 blocks
 * the next one keeps their dy as before. Either way the vectors are the definition's. */
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/motion/motion_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/motion/motion.h"

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
  /* the candidate of lane l of vector v */
  int dx (int v, int l) const { return -range + 32 * (v / 2) + 8 * (v % 2) + (l < 8 ? l : l + 8); }
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

/* The partition blocks that each partitioning (motion_partitioning) writes, as bits of
 * motion_choose_partition's order: 4x4 (4), 8x4 (2), 4x8 (2), 8x8. */
constexpr unsigned kPartitioningBlocks[4] = {1u << 8, 3u << 4, 3u << 6, 15u};

/* The SADs of the four 4x4 blocks of a macroblock (top left, top right, bottom left, bottom
 * right) for 16 candidates at one dy, the first candidate's window at @row: left and right halves
 * of the top and bottom four rows (unrolled, so that the sums stay in registers). */
HWY_INLINE void quarter_sads (const uint8_t *row, ptrdiff_t pitch, const __m256i *c, __m256i s[4])
{
  HWY_UNROLL (8)
  for (int j = 0; j < 8; j++) {
    const __m256i r = _mm256_loadu_si256 (reinterpret_cast<const __m256i *> (row + j * pitch));
    const __m256i left = _mm256_mpsadbw_epu8 (r, c[j], 0x00), right = _mm256_mpsadbw_epu8 (r, c[j], 0x2d);
    const int t = j < 4 ? 0 : 2;
    s[t] = (j & 3) == 0 ? left : _mm256_add_epi16 (s[t], left);
    s[t + 1] = (j & 3) == 0 ? right : _mm256_add_epi16 (s[t + 1], right);
  }
}

/* The nine partition blocks' SADs from the four 4x4 blocks', in motion_choose_partition's order. */
HWY_INLINE void partition_sads (const __m256i s[4], __m256i p[9])
{
  for (int i = 0; i < 4; i++)
    p[i] = s[i];
  p[4] = _mm256_add_epi16 (s[0], s[1]);
  p[5] = _mm256_add_epi16 (s[2], s[3]);
  p[6] = _mm256_add_epi16 (s[0], s[2]);
  p[7] = _mm256_add_epi16 (s[1], s[3]);
  p[8] = _mm256_add_epi16 (p[4], p[5]);
}

/* The 4x4 blocks (bits: top left, top right, bottom left, bottom right) that each partition block
 * sums, in motion_choose_partition's order. */
constexpr unsigned kPartitionQuarters[9] = {1, 2, 4, 8, 3, 12, 5, 10, 15};

/* The smallest key of partition block @kBlock among its candidates of SAD @sad, the lowest it has:
 * the lanes of each vector v whose lowest SAD (@lane_min [v]) it is, each at its first dy in the
 * order searched (the smallest tie-break of its column). A lane's SADs are found in the 4x4 SADs
 * kept in @sads eight dy at a time, a gather for each 4x4 block summed. */
template <int kBlock>
uint32_t partition_key (const Candidates &cand, const __m256i *sads, const __m256i (*lane_min)[9], uint16_t sad)
{
  constexpr unsigned quarters = kPartitionQuarters[kBlock];
  const int ndy = static_cast<int> (cand.dy_order.size ());
  const __m256i want16 = _mm256_set1_epi16 (static_cast<int16_t> (sad)), want = _mm256_set1_epi32 (sad);
  /* the byte offsets of dy k .. k + 7 from dy k, a dy being four 4x4 blocks' vectors */
  const __m256i steps = _mm256_setr_epi32 (0, 128, 256, 384, 512, 640, 768, 896);
  uint32_t best = UINT32_MAX;
  for (int v = 0; v < 2 * cand.groups; v++) {
    /* two mask bits a 16-bit lane: the lower one stands for it */
    uint32_t lanes = static_cast<uint32_t> (_mm256_movemask_epi8 (_mm256_cmpeq_epi16 (lane_min[v][kBlock], want16)))
        & 0x55555555u;
    const int *sv = reinterpret_cast<const int *> (sads + static_cast<size_t> (v) * ndy * 4);
    while (lanes != 0) {
      const int l = __builtin_ctz (lanes) / 2;
      lanes &= lanes - 1;
      for (int k = 0; k < ndy; k += 8) {
        /* each 32-bit lane: this lane's SAD and the next one's */
        const __m256i at = _mm256_add_epi32 (steps, _mm256_set1_epi32 (k * 128 + 2 * l));
        __m256i s = _mm256_setzero_si256 ();
        HWY_UNROLL (4)
        for (int i = 0; i < 4; i++)
          if (quarters >> i & 1)
            s = _mm256_add_epi32 (s, _mm256_and_si256 (_mm256_i32gather_epi32 (sv + 8 * i, at, 1), _mm256_set1_epi32 (0xffff)));
        const unsigned hit = static_cast<unsigned> (_mm256_movemask_ps (_mm256_castsi256_ps (_mm256_cmpeq_epi32 (s, want))));
        if (hit != 0) {
          /* its lowest SAD is at some dy before ndy, so the first hit is one (what lies past ndy,
           * the next vector's SADs or the store's padding, never comes first) */
          best = std::min (best, motion_key (sad, motion_tie_break (cand.dx (v, l), cand.dy_order[k + __builtin_ctz (hit)])));
          break;
        }
      }
    }
  }
  return best;
}

/* partition_key of partition block @p */
HWY_INLINE uint32_t partition_block_key (int p, const Candidates &cand, const __m256i *sads, const __m256i (*lane_min)[9],
    uint16_t sad)
{
  switch (p) {
    case 0: return partition_key<0> (cand, sads, lane_min, sad);
    case 1: return partition_key<1> (cand, sads, lane_min, sad);
    case 2: return partition_key<2> (cand, sads, lane_min, sad);
    case 3: return partition_key<3> (cand, sads, lane_min, sad);
    case 4: return partition_key<4> (cand, sads, lane_min, sad);
    case 5: return partition_key<5> (cand, sads, lane_min, sad);
    case 6: return partition_key<6> (cand, sads, lane_min, sad);
    case 7: return partition_key<7> (cand, sads, lane_min, sad);
    default: return partition_key<8> (cand, sads, lane_min, sad);
  }
}

/* The search of one vector of candidates (@v) of the macroblock whose rows are in @c: the lowest SAD
 * of each partition block per lane into @lane_min (lanes past the range all ones), the 4x4 SADs of
 * every dy stored at @sv, and with kQuarterDy the first dy of each 4x4 block's lowest SAD too, whose
 * keys go into @quarter_keys. */
template <bool kQuarterDy>
HWY_NOINLINE void search_vector (const uint8_t *first, ptrdiff_t pitch, const __m256i *c, const Candidates &cand, int v,
    __m256i *sv, __m256i lane_min[9], __m256i quarter_keys[4])
{
  const int ndy = static_cast<int> (cand.dy_order.size ());
  __m256i s[4], m[9], p[9], dq[4];
  /* the first dy sets the minima */
  quarter_sads (first + static_cast<ptrdiff_t> (cand.dy_order[0]) * pitch, pitch, c, s);
  for (int i = 0; i < 4; i++) {
    _mm256_store_si256 (sv + i, s[i]);
    dq[i] = _mm256_set1_epi16 (static_cast<int16_t> (cand.dy_order[0]));
  }
  partition_sads (s, m);
  for (int k = 1; k < ndy; k++) {
    quarter_sads (first + static_cast<ptrdiff_t> (cand.dy_order[k]) * pitch, pitch, c, s);
    HWY_UNROLL (4)
    for (int i = 0; i < 4; i++)
      _mm256_store_si256 (sv + 4 * k + i, s[i]);
    partition_sads (s, p);
    if (kQuarterDy) {
      const __m256i dyv = _mm256_set1_epi16 (static_cast<int16_t> (cand.dy_order[k]));
      HWY_UNROLL (4)
      for (int q = 0; q < 4; q++) {
        const __m256i lower = _mm256_min_epu16 (m[q], p[q]);
        /* a tie keeps the earlier dy: the smaller key */
        dq[q] = _mm256_blendv_epi8 (dyv, dq[q], _mm256_cmpeq_epi16 (lower, m[q]));
        m[q] = lower;
      }
    } else {
      HWY_UNROLL (4)
      for (int q = 0; q < 4; q++)
        m[q] = _mm256_min_epu16 (m[q], p[q]);
    }
    HWY_UNROLL (5)
    for (int q = 4; q < 9; q++)
      m[q] = _mm256_min_epu16 (m[q], p[q]);
  }
  for (int q = 0; q < 9; q++)
    lane_min[q] = _mm256_or_si256 (m[q], cand.invalid_vec (v));
  if (kQuarterDy) {
    for (int q = 0; q < 4; q++) {
      LaneBest b;
      b.sad = m[q];
      b.dy = dq[q];
      quarter_keys[q] = b.keys (cand, v, quarter_keys[q]);
    }
  }
}

/* The search of variable blocks as the header says: nine minima of the SAD a dy (an instruction
 * each; the 4x4 blocks' dy as well after a macroblock of 4x4 blocks), the 4x4 SADs stored (a store
 * each, beside the vector pipes that MPSADBW holds), and the vectors of the partitioning's blocks
 * found in them afterwards. */
void mpsad_variable (const Plane &cur, const Plane &ref, const MotionParams &params, MotionVector *out,
    const MotionGrid &g, int row_begin, int row_end)
{
  const Candidates cand (params.range);
  const int nv = 2 * cand.groups, ndy = static_cast<int> (cand.dy_order.size ());
  /* the 4x4 SADs of every vector, dy and block, and room for partition_key's gathers of eight dy
   * past them; 32-byte aligned, in bytes (a std::vector of __m256i would be one instantiation for
   * every target) */
  std::vector<uint8_t> storage ((static_cast<size_t> (nv) * ndy * 4 + 32) * sizeof (__m256i) + sizeof (__m256i));
  __m256i *const sads = reinterpret_cast<__m256i *> (
      (reinterpret_cast<uintptr_t> (storage.data ()) + sizeof (__m256i) - 1) & ~(uintptr_t{sizeof (__m256i)} - 1));
  /* whether the last macroblock took four 4x4 blocks (so this one also keeps their dy) */
  bool quarter_dy = false;
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
      /* the nine partition blocks' lowest SADs, per vector and lane (lanes past the range all ones) */
      constexpr int kMaxVectors = 2 * ((2 * kMotionMaxRange + 31) / 32);
      __m256i lane_min[kMaxVectors][9];
      __m256i quarter_keys[4] = {_mm256_set1_epi32 (-1), _mm256_set1_epi32 (-1), _mm256_set1_epi32 (-1),
          _mm256_set1_epi32 (-1)};
      for (int v = 0; v < nv; v++) {
        const uint8_t *first = ref.data + static_cast<ptrdiff_t> (y) * ref.pitch + x - cand.range + 32 * (v / 2) + 8 * (v % 2);
        __m256i *sv = sads + static_cast<size_t> (v) * ndy * 4;
        if (quarter_dy)
          search_vector<true> (first, ref.pitch, c, cand, v, sv, lane_min[v], quarter_keys);
        else
          search_vector<false> (first, ref.pitch, c, cand, v, sv, lane_min[v], quarter_keys);
      }
      /* each partition block's lowest SAD; its key with tie-break 0 until its vector is found */
      uint16_t lowest[9];
      uint32_t keys[9];
      for (int p = 0; p < 9; p++) {
        __m256i mv = lane_min[0][p];
        for (int v = 1; v < nv; v++)
          mv = _mm256_min_epu16 (mv, lane_min[v][p]);
        const __m128i h = _mm_min_epu16 (_mm256_castsi256_si128 (mv), _mm256_extracti128_si256 (mv, 1));
        lowest[p] = static_cast<uint16_t> (_mm_cvtsi128_si32 (_mm_minpos_epu16 (h)));
        keys[p] = motion_key (lowest[p], 0);
      }
      const uint32_t sad84[2] = {keys[4], keys[5]}, sad48[2] = {keys[6], keys[7]};
      const int partitioning = motion_partitioning (keys, sad84, sad48, keys[8], params.penalty);
      const unsigned written = kPartitioningBlocks[partitioning];
      for (int p = 0; p < 9; p++)
        if (written >> p & 1)
          keys[p] = quarter_dy && p < 4 ? lowest_key (quarter_keys[p]) : partition_block_key (p, cand, sads, lane_min, lowest[p]);
      /* the next macroblock likely takes the same */
      quarter_dy = partitioning == 3;
      const uint32_t b84[2] = {keys[4], keys[5]}, b48[2] = {keys[6], keys[7]};
      motion_choose_partition (keys, b84, b48, keys[8], params.penalty, out + my * 2 * g.cols + mx * 2, g.cols);
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
