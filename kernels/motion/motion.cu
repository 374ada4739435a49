/* gst-cudavision: the motion search kernel; motion.h states the semantics.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A thread block takes a 32x32-pixel tile of the current frame and copies it, and the reference
 * window around it (the tile plus the search range, edges clamped), into shared memory; its
 * warps then take the tile's search blocks one at a time. Within a warp, lane = dx: a lane keeps
 * the current block in registers and slides down the reference window one row at a time, so a
 * reference row, loaded once, is compared with every current row it meets for kChunk successive
 * dy. Four bytes per instruction (__vsadu4), the reference row realigned to the lane's dx by a
 * funnel shift. Each candidate becomes a 32-bit key (SAD << 16 | tie break) per partition block,
 * kept as a running minimum, and the warp's lanes merge their minima at the end. */
#include "kernels/motion/motion.h"

#include <algorithm>

#include "kernels/base/cuda_access.cuh"
#include "kernels/base/results.cuh"

namespace cuv {
namespace {

constexpr int kTile = 32;    /* pixels per side of a block's tile */
constexpr int kWarps = 4;
constexpr int kChunk = 8;    /* successive dy a lane carries through one slide */

/* The shared-memory window of a tile for search blocks of kS pixels and range R. */
template <int kS> struct Window {
  int groups;     /* passes of 32 dx over [-R, R) */
  int dy_span;    /* 2R rounded up to kChunk */
  int ref_words;  /* 32-bit words per reference row */
  int ref_rows;
  static constexpr int kCurWords = kTile / 4;

  __host__ __device__ explicit Window (int range)
  {
    groups = (2 * range + 31) / 32;
    dy_span = (2 * range + kChunk - 1) / kChunk * kChunk;
    /* the rightmost byte a lane reads starts at (kTile - kS) + 32 * groups - 1 */
    ref_words = ((kTile - kS + 32 * groups - 1) >> 2) + kS / 4 + 1;
    ref_rows = kTile - 1 + dy_span;
  }
  __host__ __device__ size_t bytes () const
  {
    return (static_cast<size_t> (ref_words) * ref_rows + kCurWords * kTile) * sizeof (uint32_t);
  }
};

/* Fills @dst (@words per row, @rows rows) with the plane's bytes from (x0, y0), coordinates
 * clamped to the plane. */
__device__ __forceinline__ void load_window (uint32_t *dst, int words, int rows, const Plane &p, int x0, int y0)
{
  const int n = words * rows;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const int r = i / words, w = i - r * words;
    const int y = ::min (::max (y0 + r, 0), p.height - 1);
    const uint8_t *row = p.data + static_cast<size_t> (y) * p.pitch;
    uint32_t v = 0;
#pragma unroll
    for (int b = 0; b < 4; b++) {
      const int x = ::min (::max (x0 + w * 4 + b, 0), p.width - 1);
      v |= static_cast<uint32_t> (__ldg (row + x)) << (8 * b);
    }
    dst[i] = v;
  }
}

/* The lanes' minimum of @v, in every lane. */
__device__ __forceinline__ uint32_t warp_min (uint32_t v)
{
#if __CUDA_ARCH__ >= 800
  return __reduce_min_sync (0xffffffffu, v);
#else
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = ::min (v, __shfl_xor_sync (0xffffffffu, v, o));
  return v;
#endif
}

/* The best keys of one search block: kParts partition blocks (1, or 9 for a variable macroblock:
 * four 4x4, two 8x4, two 4x8, one 8x8). */
template <bool kVariable> struct Best {
  static constexpr int kParts = kVariable ? 9 : 1;
  uint32_t key[kParts];

  __device__ __forceinline__ void clear ()
  {
#pragma unroll
    for (int i = 0; i < kParts; i++)
      key[i] = UINT32_MAX;
  }
};

/* Adds one candidate's SADs (@s: one per 4x4 quarter for a variable macroblock, else one). */
__device__ __forceinline__ void add_candidate (Best<true> &b, const uint32_t s[4], uint32_t tb)
{
  const uint32_t top = s[0] + s[1], bottom = s[2] + s[3];
#pragma unroll
  for (int i = 0; i < 4; i++)
    b.key[i] = ::min (b.key[i], motion_key (s[i], tb));
  b.key[4] = ::min (b.key[4], motion_key (top, tb));
  b.key[5] = ::min (b.key[5], motion_key (bottom, tb));
  b.key[6] = ::min (b.key[6], motion_key (s[0] + s[2], tb));
  b.key[7] = ::min (b.key[7], motion_key (s[1] + s[3], tb));
  b.key[8] = ::min (b.key[8], motion_key (top + bottom, tb));
}

__device__ __forceinline__ void add_candidate (Best<false> &b, const uint32_t s[1], uint32_t tb)
{
  b.key[0] = ::min (b.key[0], motion_key (s[0], tb));
}

/* Writes a search block's result from lane 0: the unit, or the macroblock's four units. */
__device__ __forceinline__ void write_result (const Best<true> &b, int gx, int gy, int penalty, MotionVector *out,
    int cols)
{
  const uint32_t b4[4] = {b.key[0], b.key[1], b.key[2], b.key[3]};
  const uint32_t b84[2] = {b.key[4], b.key[5]};
  const uint32_t b48[2] = {b.key[6], b.key[7]};
  motion_choose_partition (b4, b84, b48, b.key[8], penalty, out + static_cast<size_t> (gy) * 2 * cols + gx * 2, cols);
}

template <int kS> __device__ __forceinline__ void write_result (const Best<false> &b, int gx, int gy, int, MotionVector *out,
    int cols)
{
  out[static_cast<size_t> (gy) * cols + gx] = motion_vector_from_key (b.key[0], kS);
}

/* kS: search block size; kVariable: kS == 8 split into 4x4 quarters. */
template <int kS, bool kVariable>
__global__ void __launch_bounds__ (kWarps * 32) motion_search_kernel (Plane cur, Plane prev, int range, int penalty,
    int blocks_x, int blocks_y, MotionVector *out, int out_cols)
{
  extern __shared__ uint32_t smem[];
  constexpr int kW = kS / 4;             /* words per block row */
  constexpr int kQ = kVariable ? 4 : 1;  /* SADs per candidate */
  constexpr int kPerSide = kTile / kS;
  const Window<kS> win (range);
  uint32_t *ref = smem;
  uint32_t *cur_tile = smem + static_cast<size_t> (win.ref_words) * win.ref_rows;

  const int tx0 = blockIdx.x * kTile, ty0 = blockIdx.y * kTile;
  load_window (ref, win.ref_words, win.ref_rows, prev, tx0 - range, ty0 - range);
  load_window (cur_tile, Window<kS>::kCurWords, kTile, cur, tx0, ty0);
  __syncthreads ();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int b = warp; b < kPerSide * kPerSide; b += kWarps) {
    const int bx = b % kPerSide, by = b / kPerSide;
    const int gx = blockIdx.x * kPerSide + bx, gy = blockIdx.y * kPerSide + by;
    if (gx >= blocks_x || gy >= blocks_y)
      continue;
    const int ox = bx * kS, oy = by * kS;

    uint32_t cw[kS][kW];
#pragma unroll
    for (int j = 0; j < kS; j++)
#pragma unroll
      for (int i = 0; i < kW; i++)
        cw[j][i] = cur_tile[(oy + j) * Window<kS>::kCurWords + ox / 4 + i];

    Best<kVariable> best;
    best.clear ();
    for (int g = 0; g < win.groups; g++) {
      const int dx = -range + g * 32 + lane;
      if (dx >= range)  /* lanes past the window in its last pass: no candidates */
        break;
      const int c = ox + g * 32 + lane; /* the lane's byte in a reference row */
      const uint32_t *ref_col = ref + (c >> 2);
      const uint32_t shift = (c & 3) * 8;
      const uint32_t tb_x = motion_tie_break (dx, -64) - motion_tie_break (0, -64);

      for (int d0 = 0; d0 < win.dy_span; d0 += kChunk) {
        uint32_t acc[kChunk][kQ];
#pragma unroll
        for (int k = 0; k < kChunk; k++)
#pragma unroll
          for (int q = 0; q < kQ; q++)
            acc[k][q] = 0;
        const uint32_t *row = ref_col + (oy + d0) * win.ref_words;
#pragma unroll
        for (int r = 0; r < kS + kChunk - 1; r++) {
          uint32_t raw[kW + 1], rw[kW];
#pragma unroll
          for (int i = 0; i <= kW; i++)
            raw[i] = row[r * win.ref_words + i];
#pragma unroll
          for (int i = 0; i < kW; i++)
            rw[i] = __funnelshift_r (raw[i], raw[i + 1], shift);
#pragma unroll
          for (int k = 0; k < kChunk; k++) {
            const int j = r - k; /* the current row that this reference row meets at dy = d0 + k */
            if (j < 0 || j >= kS)
              continue;
#pragma unroll
            for (int i = 0; i < kW; i++) {
              const int q = kVariable ? (j >= 4) * 2 + (i >= 1) : 0;
              acc[k][q] += __vsadu4 (cw[j][i], rw[i]);
            }
          }
        }
#pragma unroll
        for (int k = 0; k < kChunk; k++) {
          const int dy = -range + d0 + k;
          if (dy < range)
            add_candidate (best, acc[k], tb_x + motion_tie_break (0, dy));
        }
      }
    }
#pragma unroll
    for (int i = 0; i < Best<kVariable>::kParts; i++)
      best.key[i] = warp_min (best.key[i]);
    if (lane == 0) {
      if constexpr (kVariable)
        write_result (best, gx, gy, penalty, out, out_cols);
      else
        write_result<kS> (best, gx, gy, penalty, out, out_cols);
    }
  }
}

template <int kS, bool kVariable>
cudaError_t launch (const Plane &cur, const Plane &prev, const MotionParams &params, MotionVector *out,
    const MotionGrid &g, cudaStream_t stream)
{
  const int blocks_x = cur.width / kS, blocks_y = cur.height / kS;
  const Window<kS> win (params.range);
  const size_t smem = win.bytes ();
  /* at most 26 KiB (R = 64, 4x4 blocks): within the default dynamic shared-memory limit */
  auto kernel = motion_search_kernel<kS, kVariable>;
  const dim3 grid (div_up (blocks_x * kS, kTile), div_up (blocks_y * kS, kTile));
  kernel<<<grid, kWarps * 32, smem, stream>>> (cur, prev, params.range, params.penalty, blocks_x, blocks_y, out, g.cols);
  return cudaGetLastError ();
}

}  // namespace

cudaError_t motion_search_cuda (const Plane &cur, const Plane &prev, const MotionParams &params, MotionVector *out,
    cudaStream_t stream)
{
  const MotionGrid g = motion_grid (params.block, cur.width, cur.height);
  if (g.count () == 0)
    return cudaSuccess;
  if (params.range < 1 || params.range > kMotionMaxRange)
    return cudaErrorInvalidValue;
  switch (params.block) {
    case MotionBlock::B4:
      return launch<4, false> (cur, prev, params, out, g, stream);
    case MotionBlock::B8:
      return launch<8, false> (cur, prev, params, out, g, stream);
    case MotionBlock::B16:
      return launch<16, false> (cur, prev, params, out, g, stream);
    case MotionBlock::Variable:
      return launch<8, true> (cur, prev, params, out, g, stream);
  }
  return cudaErrorInvalidValue;
}

namespace {

constexpr int kVoteThreads = 256;
constexpr int kVoteUnitsPerThread = 16;

/* A block counts kVoteThreads x kVoteUnitsPerThread units into votes of its own in shared memory
 * ((2R)^2 16-bit counts, two a word: a block's at most 4,096 units never carry into the next;
 * 32 KiB at R = 64), a warp's lanes with the same vector adding once; the non-zero ones go to the
 * accumulator with atomics, and the last block copies the window to the host and zeroes it
 * (results.h). */
__global__ void __launch_bounds__ (kVoteThreads) motion_votes_kernel (const MotionVector *vectors, int n, int range,
    uint32_t threshold, ResultsTo<MotionVotes, MotionVotes> to)
{
  static_assert (kVoteThreads * kVoteUnitsPerThread < 65536, "a block's counts fit 16 bits");
  extern __shared__ uint32_t pairs[];
  __shared__ uint32_t moving;
  const int side = 2 * range;
  const int count = side * side;
  for (int i = threadIdx.x; i < count / 2; i += kVoteThreads)
    pairs[i] = 0;
  if (threadIdx.x == 0)
    moving = 0;
  __syncthreads ();
  const int begin = blockIdx.x * kVoteThreads * kVoteUnitsPerThread;
  const int end = min (n, begin + kVoteThreads * kVoteUnitsPerThread);
  uint32_t my_moving = 0;
  for (int i = begin + threadIdx.x; i < end; i += kVoteThreads) {
    const MotionVector v = vectors[i];
    my_moving += motion_unit_moves (v, threshold);
    const int bin = (v.dy + range) * side + v.dx + range;
    const unsigned peers = __match_any_sync (__activemask (), bin);
    if ((threadIdx.x & 31) == __ffs (peers) - 1)
      atomicAdd (&pairs[bin >> 1], static_cast<uint32_t> (__popc (peers)) << ((bin & 1) * 16));
  }
  if (my_moving)
    atomicAdd (&moving, my_moving);
  __syncthreads ();
  for (int i = threadIdx.x; i < count; i += kVoteThreads) {
    const uint32_t c = (pairs[i >> 1] >> ((i & 1) * 16)) & 0xffff;
    if (c)
      atomicAdd (&to.accum->votes[motion_vote_index (i % side - range, i / side - range)], c);
  }
  if (threadIdx.x == 0 && moving)
    atomicAdd (&to.accum->moving, moving);
  if (!ends_last (to.ticket))
    return;
  for (int i = threadIdx.x; i < count; i += kVoteThreads) {
    const int k = motion_vote_index (i % side - range, i / side - range);
    to.out->votes[k] = __ldcg (&to.accum->votes[k]);
    to.accum->votes[k] = 0;
  }
  if (threadIdx.x == 0) {
    to.out->moving = __ldcg (&to.accum->moving);
    to.accum->moving = 0;
  }
  rearm (to.ticket);
}

}  // namespace

cudaError_t motion_votes_cuda (const MotionVector *vectors, int n, int range, uint32_t threshold,
    const ResultsTo<MotionVotes, MotionVotes> &to, cudaStream_t stream)
{
  if (range < 1 || range > kMotionMaxRange || n < 0)
    return cudaErrorInvalidValue;
  const size_t smem = sizeof (uint32_t) * 2 * range * range;
  const int blocks = std::max (1, div_up (n, kVoteThreads * kVoteUnitsPerThread));
  motion_votes_kernel<<<blocks, kVoteThreads, smem, stream>>> (vectors, n, range, threshold, to);
  return cudaGetLastError ();
}

}  // namespace cuv
