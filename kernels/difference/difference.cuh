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

#include "kernels/base/cuda_access.cuh"
#include "kernels/difference/difference.h"
#include "kernels/base/resident.h"
#include "kernels/base/results.cuh"

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

/* Launches a difference @kernel on @a's current frame (Args: the kernel's arguments, with `cur`),
 * on the grid grid_for () gives. */
template <typename Kernel, typename Args>
cudaError_t launch (Kernel kernel, const Args &a, const DiffResults &results, cudaStream_t stream)
{
  dim3 grid;
  cudaError_t err = grid_for (kernel, a.cur.width, a.cur.height, &grid);
  if (err != cudaSuccess)
    return err;
  kernel<<<grid, dim3 (kBlockX, kBlockY), 0, stream>>> (a, results);
  return cudaGetLastError ();
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

/* The high bytes of four little-endian 16-bit samples (P010's 8-bit values) as one word, in order. */
__device__ __forceinline__ uint32_t high_bytes (uint2 w)
{
  return __byte_perm (w.x, w.y, 0x7531);
}

__device__ __forceinline__ const uint8_t *row (const Plane &p, int y)
{
  return p.data + static_cast<size_t> (y) * p.pitch;
}

__device__ __forceinline__ uint8_t *row_w (const Plane &p, int y)
{
  return p.data + static_cast<size_t> (y) * p.pitch;
}

/* ---- 4:2:0 tiles (NV12, I420): a tile's kTileRows x kTilePix luma samples share two chroma
 * groups ---- */

/* The tile's luma rows from column @x0 of rows @y0.., a word of kTilePix samples each: @cur's
 * into @c, @prev's into @q. */
__device__ __forceinline__ void tile_luma (const Frame &cur, const Frame &prev, int x0, int y0, uint32_t (&c)[kTileRows],
    uint32_t (&q)[kTileRows])
{
#pragma unroll
  for (int r = 0; r < kTileRows; r++) {
    c[r] = *reinterpret_cast<const uint32_t *> (row (cur.planes[0], y0 + r) + x0);
    q[r] = *reinterpret_cast<const uint32_t *> (row (prev.planes[0], y0 + r) + x0);
  }
}

/* Two adjacent groups of chroma row @gy: of NV12's UV plane from byte @x (2 gx: the luma column
 * of group gx's first pixel), one word u0 v0 u1 v1; of an I420 U or V plane from group @gx, the
 * two bytes (u0 | u1 << 8). */
__device__ __forceinline__ uint32_t nv12_groups (const Plane &uv, int x, int gy)
{
  return *reinterpret_cast<const uint32_t *> (row (uv, gy) + x);
}

__device__ __forceinline__ uint32_t i420_groups (const Plane &p, int gx, int gy)
{
  return *reinterpret_cast<const uint16_t *> (row (p, gy) + gx);
}

/* P010: the tile's luma rows as tile_luma () gives NV12's, each row's four samples one 8-byte
 * access, their high bytes in a word; two groups' chroma as nv12_groups () from luma column @x,
 * one 8-byte access. */
__device__ __forceinline__ void tile_luma_p010 (const Frame &cur, const Frame &prev, int x0, int y0,
    uint32_t (&c)[kTileRows], uint32_t (&q)[kTileRows])
{
#pragma unroll
  for (int r = 0; r < kTileRows; r++) {
    c[r] = high_bytes (*reinterpret_cast<const uint2 *> (row (cur.planes[0], y0 + r) + 2 * x0));
    q[r] = high_bytes (*reinterpret_cast<const uint2 *> (row (prev.planes[0], y0 + r) + 2 * x0));
  }
}

__device__ __forceinline__ uint32_t p010_groups (const Plane &uv, int x, int gy)
{
  return high_bytes (*reinterpret_cast<const uint2 *> (row (uv, gy) + 2 * x));
}

/* I420's U and V bytes of two groups (i420_groups) in NV12's order, u0 v0 u1 v1. */
__device__ __forceinline__ uint32_t interleave_uv (uint32_t u, uint32_t v)
{
  return __byte_perm (u, v, 0x5140);
}

/* The walk of an RGB difference kernel over @cur and @prev into @out: each thread's column of
 * tiles down the frame; a whole tile (kVec) as kTileRows 16-byte rows of each, its output word
 * @word (c, q) for each pixel's current and previous words; a tile at the right edge (or every
 * tile without kVec) pixel by pixel, @pixel (x, y). The operations add to the thread's statistics
 * themselves. */
template <bool kVec, typename Word, typename Pixel>
__device__ __forceinline__ void rgb_tiles (const Frame &cur, const Frame &prev, const Frame &out, Word word, Pixel pixel)
{
  const Walk w = walk ();
  const int width = cur.width, height = cur.height;
  if (w.x0 >= width)
    return;
  const bool full = kVec && w.x0 + kTilePix <= width;
  for (int y0 = w.y_first; y0 < height; y0 += w.y_step) {
    const int rows = min (kTileRows, height - y0);
    if (!full) {
      for (int r = 0; r < rows; r++)
        for (int x = w.x0; x < min (w.x0 + kTilePix, width); x++)
          pixel (x, y0 + r);
    } else {
      uint4 c[kTileRows], q[kTileRows];
#pragma unroll
      for (int r = 0; r < kTileRows; r++) {
        if (r < rows) {
          c[r] = load16 (row (cur.planes[0], y0 + r) + 4 * w.x0);
          q[r] = load16 (row (prev.planes[0], y0 + r) + 4 * w.x0);
        }
      }
#pragma unroll
      for (int r = 0; r < kTileRows; r++) {
        if (r >= rows)
          break;
        const uint32_t cv[4] = {c[r].x, c[r].y, c[r].z, c[r].w}, qv[4] = {q[r].x, q[r].y, q[r].z, q[r].w};
        uint32_t o[4];
#pragma unroll
        for (int k = 0; k < 4; k++)
          o[k] = word (cv[k], qv[k]);
        store16 (row_w (out.planes[0], y0 + r) + 4 * w.x0, o[0], o[1], o[2], o[3]);
      }
    }
  }
}

}  // namespace diff
}  // namespace cuv
