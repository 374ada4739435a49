/* gst-cudavision: the launch shape and the statistics reduction shared by the frame-difference
 * kernels (heatmap.cu, noisemap.cu).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A thread owns one column of tiles, kTilePix pixels wide and kTileRows rows tall, and walks down
 * the frame. The grid covers the columns in x and, in y, only as many blocks as stay resident, so
 * a thread adds its statistics in registers and a block merges them with one atomic per field at
 * its end. A warp reads 32 adjacent tiles: 512 contiguous bytes of each RGB row. */
#pragma once

#include <algorithm>

#include "cuda_access.cuh"
#include "difference.h"
#include "resident.h"
#include "results.cuh"

namespace cuv {
namespace diff {

constexpr int kTilePix = 4;
constexpr int kTileRows = 2;
constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int kThreads = kBlockX * kBlockY;

/* The tile columns and the first tile row of this thread, and the row step of its walk. */
struct Walk {
  int x0;
  int y_first;
  int y_step;
};

__device__ __forceinline__ Walk walk ()
{
  const int cx = static_cast<int> (blockIdx.x * kBlockX + threadIdx.x);
  return Walk{cx * kTilePix, static_cast<int> ((blockIdx.y * kBlockY + threadIdx.y) * kTileRows),
      static_cast<int> (gridDim.y * kBlockY * kTileRows)};
}

/* Adds every thread's @sum into *@sum_to and raises *@max_to to the block's largest @max (either
 * pointer may be null): a warp shuffle, then one atomic per block. Every thread must call it. */
__device__ __forceinline__ void block_stats (unsigned long long sum, unsigned int max, unsigned long long *sum_to,
    unsigned int *max_to)
{
  __shared__ unsigned long long sums[kThreads / 32];
  __shared__ unsigned int maxes[kThreads / 32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    sum += __shfl_down_sync (0xffffffffu, sum, o);
    max = ::max (max, __shfl_down_sync (0xffffffffu, max, o));
  }
  const int tid = threadIdx.y * kBlockX + threadIdx.x;
  if ((tid & 31) == 0) {
    sums[tid >> 5] = sum;
    maxes[tid >> 5] = max;
  }
  __syncthreads ();
  if (tid == 0) {
    for (int w = 1; w < kThreads / 32; w++) {
      sum += sums[w];
      max = ::max (max, maxes[w]);
    }
    if (sum_to && sum)
      atomicAdd (sum_to, sum);
    if (max_to && max)
      atomicMax (max_to, max);
  }
}

/* The grid's statistics, from the block that ends last, into @r's outputs (results.h). Every
 * thread must call it, after block_stats. */
__device__ __forceinline__ void publish_stats (const DiffResults &r)
{
  if (!ends_last (r.ticket) || (threadIdx.x | threadIdx.y) != 0)
    return;
  DiffStats s{};
  s.sum_difference = __ldcg (&r.accum->sum_difference);
  s.changed = __ldcg (&r.accum->changed);
  s.max_difference = __ldcg (&r.accum->max_difference);
  *r.out = s;
  if (r.device_out)
    *r.device_out = s;
  *r.accum = DiffStats{};
  rearm (r.ticket);
}

/* The grid for a frame of @width x @height: the tile columns in x, at most the resident blocks in y. */
template <typename Kernel>
cudaError_t grid_for (Kernel kernel, int width, int height, dim3 *grid)
{
  int resident = 0;
  cudaError_t err = resident_blocks (reinterpret_cast<const void *> (kernel), kThreads, &resident);
  if (err != cudaSuccess)
    return err;
  /* one block at least: an empty frame still publishes its (zero) statistics */
  const int gx = std::max (1, div_up (div_up (width, kTilePix), kBlockX));
  const int tile_rows = div_up (height, kTileRows);
  const int gy = std::max (1, std::min (resident / gx, div_up (tile_rows, kBlockY)));
  *grid = dim3 (gx, gy);
  return cudaSuccess;
}

inline bool aligned (const Plane &p, int align)
{
  return reinterpret_cast<uintptr_t> (p.data) % align == 0 && p.pitch % align == 0;
}

__device__ __forceinline__ uint4 load16 (const uint8_t *p)
{
  return __ldcs (reinterpret_cast<const uint4 *> (p));
}

__device__ __forceinline__ void store16 (uint8_t *p, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
  __stcs (reinterpret_cast<uint4 *> (p), make_uint4 (a, b, c, d));
}

__device__ __forceinline__ const uint8_t *row (const Plane &p, int y)
{
  return p.data + static_cast<size_t> (y) * p.pitch;
}

__device__ __forceinline__ uint8_t *row_w (const Plane &p, int y)
{
  return p.data + static_cast<size_t> (y) * p.pitch;
}

}  // namespace diff
}  // namespace cuv
