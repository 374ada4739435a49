/* gst-cudavision: block motion estimation by full-search SAD on luma planes.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Semantics (the CPU reference and the kernel give the same vectors and costs):
 *   Blocks tile the frame from its top-left corner; only whole blocks are searched, so the grid is
 *   floor (width / B) x floor (height / B) blocks of B = 4, 8 or 16 (8 for variable blocks: the
 *   8x8 macroblocks). Pixels of a partial block at the right or bottom edge have no vector, and a
 *   frame smaller than one block has an empty grid.
 *   Candidates: every (dx, dy) in [-R, R-1] x [-R, R-1];
 *   SAD (dx, dy) = sum |cur (x, y) - ref (x + dx, y + dy)| over the block, reference coordinates
 *   clamped to the frame. So a block whose content was at (x + dx, y + dy) in the previous frame
 *   gets the vector (dx, dy): it points from the block to where its content came from (MPEG's
 *   convention), and the content moved by (-dx, -dy).
 *   Ties: the lowest SAD wins, then the smallest |dx| + |dy|, then the smallest dy, then the
 *   smallest dx. A key that orders candidates this way fits 32 bits: SAD << 16 | tie_break.
 *   Variable blocks: for each candidate the SADs of the four 4x4 blocks of a macroblock are summed
 *   into its 8x4, 4x8 and 8x8 partitions; each of the nine partition blocks keeps its best vector.
 *   Cost of a partitioning = its summed best SADs + penalty for each vector beyond the first; the
 *   lowest cost wins, ties in the order 8x8, 8x4, 4x8, 4x4.
 * Results: one MotionVector per unit of the grid (4x4 for variable blocks, else the block), row by
 * row. A unit holds the vector of the partition block that covers it, that block's size and its
 * SAD (the units of one 8x8 partition hold the same vector and cost). */
#pragma once

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "kernels/base/image.h"
#include "kernels/base/regions.h"
#include "kernels/base/results.h"

#if CUV_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace cuv {

constexpr int kMotionMaxRange = 64;

/* The search block size; Variable searches 8x8 macroblocks split as the cost decides. */
enum class MotionBlock : int { B4 = 4, B8 = 8, B16 = 16, Variable = 0 };

struct MotionParams {
  MotionBlock block;
  int range;    /* R, 1..kMotionMaxRange */
  int penalty;  /* added per vector beyond the first of a macroblock (Variable only) */
};

/* 8 bytes, the layout of the meta's `vectors` bytes. */
struct MotionVector {
  int8_t dx;
  int8_t dy;
  uint8_t width;   /* the partition block that holds this unit: 4, 8 or 16 */
  uint8_t height;
  uint32_t cost;   /* that block's SAD at (dx, dy) */
};
static_assert (sizeof (MotionVector) == 8, "MotionVector is the meta's 8-byte record");

/* The pixels a search block covers, and a grid unit. */
inline constexpr int motion_search_size (MotionBlock b) { return b == MotionBlock::Variable ? 8 : static_cast<int> (b); }
inline constexpr int motion_unit_size (MotionBlock b) { return b == MotionBlock::Variable ? 4 : static_cast<int> (b); }

struct MotionGrid {
  int cols;  /* units */
  int rows;
  int unit;  /* pixels per unit side */
  int count () const { return cols * rows; }
};

inline MotionGrid motion_grid (MotionBlock b, int width, int height)
{
  const int s = motion_search_size (b), u = motion_unit_size (b);
  return MotionGrid{width / s * (s / u), height / s * (s / u), u};
}

/* The tie-break half of a candidate's key: smaller is preferred at equal SAD. */
CUV_HD uint32_t motion_tie_break (int dx, int dy)
{
  const int adx = dx < 0 ? -dx : dx, ady = dy < 0 ? -dy : dy;
  return static_cast<uint32_t> ((adx + ady) << 8 | (dy + 64) << 1 | (dx > 0 ? 1 : 0));
}

CUV_HD uint32_t motion_key (uint32_t sad, uint32_t tie_break) { return sad << 16 | tie_break; }

/* The vector a key's tie-break encodes. */
CUV_HD void motion_key_vector (uint32_t key, int *dx, int *dy)
{
  const int y = static_cast<int> ((key >> 1) & 127) - 64;
  const int ax = static_cast<int> ((key >> 8) & 255) - (y < 0 ? -y : y);
  *dy = y;
  *dx = (key & 1) ? ax : -ax;
}

/* The partitioning of a macroblock from the best keys of its nine partition blocks (b4 [row][col],
 * b84 [top, bottom], b48 [left, right], b88): 0 for 8x8, 1 for 8x4, 2 for 4x8, 3 for 4x4. Only the
 * SADs (key >> 16) decide it, not the vectors. */
CUV_HD int motion_partitioning (const uint32_t b4[4], const uint32_t b84[2], const uint32_t b48[2], uint32_t b88,
    int penalty)
{
  const uint32_t p = static_cast<uint32_t> (penalty);
  const uint32_t c88 = b88 >> 16;
  const uint32_t c84 = (b84[0] >> 16) + (b84[1] >> 16) + p;
  const uint32_t c48 = (b48[0] >> 16) + (b48[1] >> 16) + p;
  const uint32_t c44 = (b4[0] >> 16) + (b4[1] >> 16) + (b4[2] >> 16) + (b4[3] >> 16) + 3 * p;
  if (c88 <= c84 && c88 <= c48 && c88 <= c44)
    return 0;
  if (c84 <= c48 && c84 <= c44)
    return 1;
  return c48 <= c44 ? 2 : 3;
}

/* Chooses the partitioning of a macroblock from the best keys of its nine partition blocks
 * (motion_partitioning) and writes its four units at @out (@out_pitch units per row). */
CUV_HD void motion_choose_partition (const uint32_t b4[4], const uint32_t b84[2], const uint32_t b48[2],
    uint32_t b88, int penalty, MotionVector *out, int out_pitch)
{
  const int partitioning = motion_partitioning (b4, b84, b48, b88, penalty);
  uint32_t keys[4];
  int w, h;
  if (partitioning == 0) {
    keys[0] = keys[1] = keys[2] = keys[3] = b88;
    w = h = 8;
  } else if (partitioning == 1) {
    keys[0] = keys[1] = b84[0];
    keys[2] = keys[3] = b84[1];
    w = 8;
    h = 4;
  } else if (partitioning == 2) {
    keys[0] = keys[2] = b48[0];
    keys[1] = keys[3] = b48[1];
    w = 4;
    h = 8;
  } else {
    for (int i = 0; i < 4; i++)
      keys[i] = b4[i];
    w = h = 4;
  }
  for (int i = 0; i < 4; i++) {
    int dx, dy;
    motion_key_vector (keys[i], &dx, &dy);
    MotionVector &v = out[(i >> 1) * out_pitch + (i & 1)];
    v.dx = static_cast<int8_t> (dx);
    v.dy = static_cast<int8_t> (dy);
    v.width = static_cast<uint8_t> (w);
    v.height = static_cast<uint8_t> (h);
    v.cost = keys[i] >> 16;
  }
}

/* A unit of a fixed-size search from its best key. */
CUV_HD MotionVector motion_vector_from_key (uint32_t key, int size)
{
  int dx, dy;
  motion_key_vector (key, &dx, &dy);
  return MotionVector{static_cast<int8_t> (dx), static_cast<int8_t> (dy), static_cast<uint8_t> (size),
      static_cast<uint8_t> (size), key >> 16};
}

/* The plain definition: searches every block of @cur against @prev (luma planes of the same size;
 * any pitch) and writes motion_grid ().count () vectors to @out, row by row. The tests hold the
 * fast search below and the kernel to it. */
void motion_search_reference (const Plane &cur, const Plane &prev, const MotionParams &params, MotionVector *out);

/* The previous luma plane with its edge pixels repeated around it (R rows above and below, R
 * columns left, R plus a vector's width right): the fast search reads it where the definition
 * clamps. Kept between frames to reuse its memory. */
struct MotionReference {
  std::vector<uint8_t> storage;
  Plane plane{};  /* the frame inside the margins: plane.data[-R * pitch - R] is the first byte */
  int range = 0;
};
void motion_prepare_reference (const Plane &prev, int range, MotionReference *ref);

/* Rows of search blocks (8 pixels for variable blocks) that motion_search_rows_cpu () takes. */
inline int motion_search_block_rows (MotionBlock b, int height) { return height / motion_search_size (b); }

/* The fast search (SIMD, the widest the CPU has, chosen at run time) of search-block rows
 * [@row_begin, @row_end) of @cur against @ref (motion_prepare_reference () of the previous plane
 * with params.range); writes those rows' units of @out, where the whole grid's vectors go. The
 * same vectors and costs as motion_search_reference (); bands of rows may run on several threads
 * at once. */
void motion_search_rows_cpu (const Plane &cur, const MotionReference &ref, const MotionParams &params,
    MotionVector *out, int row_begin, int row_end);

/* The fast search of every block on this thread. */
void motion_search_cpu (const Plane &cur, const Plane &prev, const MotionParams &params, MotionVector *out);

#if CUV_HAVE_CUDA
/* The same on the device: @out is device memory; launches on @stream, does not synchronize. */
cudaError_t motion_search_cuda (const Plane &cur, const Plane &prev, const MotionParams &params, MotionVector *out,
    cudaStream_t stream);
#endif

/* Whether a unit with vector @v moves: a non-zero vector whose SAD per pixel is below
 * @threshold (a worse match is noise or occlusion). */
CUV_HD bool motion_unit_moves (const MotionVector &v, uint32_t threshold)
{
  return (v.dx != 0 || v.dy != 0) && v.cost < static_cast<uint64_t> (threshold) * v.width * v.height;
}

/* A frame's vectors counted for cudamotionest's messages: a vote for each unit's vector, and the
 * units that move (motion_unit_moves). */
constexpr int kMotionVotesSide = 2 * kMotionMaxRange;
struct MotionVotes {
  uint32_t moving;
  uint32_t votes[kMotionVotesSide * kMotionVotesSide]; /* vector (dx, dy) at motion_vote_index (dx, dy) */
};
CUV_HD constexpr int motion_vote_index (int dx, int dy)
{
  return (dy + kMotionMaxRange) * kMotionVotesSide + dx + kMotionMaxRange;
}

/* Adds @n vectors to @votes (the definition the kernel is held to). */
void motion_votes_cpu (const MotionVector *vectors, int n, uint32_t threshold, MotionVotes *votes);

/* The moving regions of a frame's @vectors (docs/results.md): pixel_regions () over the units that
 * move (motion_unit_moves), each unit's pixels counted, those of at least @min_area moving pixels. */
const std::vector<PixelRegion> &motion_regions (const MotionVector *vectors, const MotionGrid &grid, uint32_t threshold,
    uint32_t min_area, RegionScratch *scratch);

/* The vector field as (dx, dy) pairs of signed bytes, unit by unit (cudamotionest's tensor). */
std::vector<int8_t> motion_vector_field (const MotionVector *vectors, int n);

/* The sums of cudamotionest's messages over an interval (docs/results.md): its units, the units
 * that move, and a vote for each unit's vector. Summed from each frame's MotionVotes, so that the
 * loop over a frame's units (518,400 at 3840x2160 with variable blocks) takes no square root. */
struct MotionTally {
  uint64_t units = 0;
  uint64_t moving = 0;
  std::vector<uint32_t> votes = std::vector<uint32_t> (kMotionVotesSide * kMotionVotesSide);
};

/* Adds a frame's @votes of search range @range to @tally: the votes of [-range, range)^2 (the
 * others are not the frame's: motion_votes_cuda leaves them as they were) and `moving`; the
 * caller adds the frame's units. */
void motion_tally_add (MotionTally *tally, const MotionVotes &votes, int range);

/* The summed length of the tally's vectors, in pixels: each candidate's length times its votes. */
double motion_summed_magnitude (const MotionTally &tally);

/* The most common vector of the tally; ties go to the candidate the search prefers
 * (motion_tie_break); (0, 0) without votes. */
void motion_global_vector (const MotionTally &tally, int *dx, int *dy);

#if CUV_HAVE_CUDA
/* The same on the device, for @n vectors of search range @range in device memory: the counts go
 * to @to.out (results.h: page-locked host memory, written by the kernel's last block, which also
 * zeroes @to.accum for the next launch); only the votes of [-range, range)^2 and `moving` are
 * written, the others keep what they hold. Launches on @stream, does not synchronize. */
cudaError_t motion_votes_cuda (const MotionVector *vectors, int n, int range, uint32_t threshold,
    const ResultsTo<MotionVotes, MotionVotes> &to, cudaStream_t stream);
#endif

}  // namespace cuv
