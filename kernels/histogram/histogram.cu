/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One read of each pixel, the histogram and the sums from the same load. The region is cut into
 * tiles of 32 columns of 16-byte chunks (4 RGB pixels, 16 luma samples or 8 YUY2/UYVY pixels) by 32 rows; the grid
 * holds the blocks that stay resident, and block b takes tiles b, b + gridDim.x, ... For each
 * tile a block issues all its loads first, counts each pixel's luma into one 256-entry histogram
 * in shared memory (an increment by 1, which the hardware merges across the lanes of a warp that
 * hit the same value) and the R, G, B bytes into registers. At its end it adds its histogram to
 * one of kHistogramCopies partial histograms in global memory, picked by block: with hundreds of
 * blocks and a single copy, their atomics would wait on each other at the same 256 addresses.
 * The block that ends last sums the copies, derives the bins and the luma sums from the 256 luma
 * counts, writes the frame's HistogramResult straight into page-locked host memory (results.h)
 * and zeroes the copies for the next frame: no copy, no memset and no host work is queued per
 * frame. Each block takes its ticket once: with a block per tile (2,040 blocks at 3840x2160
 * RGBA, about four waves) each wave waited for its atomics to land, and the kernel took 28.7 us
 * against 21.1 (H100, docs/performance-log.md). */
#include "kernels/histogram/histogram.h"

#include <algorithm>

#include "kernels/base/cuda_access.cuh"
#include "kernels/histogram/histogram_math.h"
#include "kernels/base/resident.h"
#include "kernels/base/results.cuh"

namespace cuv {

namespace {

/* CUV_HISTOGRAM_ROWS / CUV_HISTOGRAM_IN_FLIGHT: for benchmark variants (tests/bench/meson.build) */
#ifndef CUV_HISTOGRAM_ROWS
#define CUV_HISTOGRAM_ROWS 16
#endif
#ifndef CUV_HISTOGRAM_IN_FLIGHT
#define CUV_HISTOGRAM_IN_FLIGHT 2
#endif
constexpr int kBlockX = 32;
constexpr int kBlockY = CUV_HISTOGRAM_ROWS;
constexpr int kThreads = kBlockX * kBlockY;
constexpr int kInFlight = CUV_HISTOGRAM_IN_FLIGHT; /* chunks per thread, all loaded before counting */
constexpr int kTileRows = kBlockY * kInFlight;

enum class Access : int {
  RgbChunks,  /* 4-byte pixels, each at a 4-byte aligned address */
  LumaChunks, /* 1-byte samples */
  Luma422Chunks, /* YUY2/UYVY: the Y bytes of 2-byte pixels */
  RgbBytes,   /* 4-byte pixels at any address, one pixel per chunk */
};

struct Region {
  const uint8_t *data; /* first row of the region */
  int pitch;
  int first_byte;     /* of the region within a row */
  int row_bytes;      /* of the region */
  uint32_t rows;
  uint32_t chunks;    /* per row */
  uint32_t tiles_x;   /* tiles across a row */
  uint32_t tiles;     /* in the region */
  int head;           /* aligned rows: the region's first byte's offset in its chunk; else -1 */
  uint32_t luma_weights; /* RGB: the BT.601 weights in the pixel's byte order */
  int y_byte;         /* YUY2/UYVY: the parity of the Y bytes' offsets from the region's first byte */
  int bins;
  PixelLayout layout;
};

struct Sums {
  uint32_t c[3] = {0, 0, 0}; /* bytes 0, 1, 2 of RGB pixels */
};

/* Adds 1 to the 32-bit counter at shared-memory byte address @addr. */
__device__ __forceinline__ void shared_inc (uint32_t addr)
{
  asm volatile ("red.shared.add.u32 [%0], 1;" ::"r"(addr) : "memory");
}

/* The histogram's shared address is 1 KiB aligned, so a counter's address is an OR with it. */
__device__ __forceinline__ void count_rgb (uint32_t hist, uint32_t px, uint32_t weights, Sums &s)
{
  shared_inc (hist | ((__dp4a (px, weights, 0u) >> 6) & 0x3fcu));
  s.c[0] = __dp4a (px, 0x1u, s.c[0]);
  s.c[1] = __dp4a (px, 0x100u, s.c[1]);
  s.c[2] = __dp4a (px, 0x10000u, s.c[2]);
}

/* Four words of luma samples; @valid has a bit per sample inside the region. */
__device__ __forceinline__ void count_luma (uint32_t hist, const uint32_t (&w)[4], uint32_t valid)
{
#pragma unroll
  for (int k = 0; k < 4; k++) {
    const uint32_t a[4] = {(w[k] << 2) & 0x3fcu, (w[k] >> 6) & 0x3fcu, (w[k] >> 14) & 0x3fcu, (w[k] >> 22) & 0x3fcu};
#pragma unroll
    for (int j = 0; j < 4; j++)
      if (valid & (1u << (4 * k + j)))
        shared_inc (hist | a[j]);
  }
}

/* One chunk as loaded: its words and a bit per pixel (RGB) or sample (luma) inside the region. */
struct Chunk {
  uint32_t w[4];
  uint32_t valid;
};

/* The bytes of a 16-byte chunk that are Y bytes of YUY2/UYVY, where the chunk's first byte is
 * byte @off of the region: every other one, from the first or the second. */
__device__ __forceinline__ uint32_t luma422_mask (const Region &g, int off)
{
  return ((off ^ g.y_byte) & 1) ? 0xaaaau : 0x5555u;
}

/* Chunk @c of the region's row at @row, any alignment: for the region's edges and rows whose
 * start is not 16-byte aligned alike. */
template <Access kAccess>
__device__ __forceinline__ Chunk load_edge_chunk (const Region &g, const uint8_t *row, uint32_t c)
{
  Chunk k{{0, 0, 0, 0}, 0};
  if (c >= g.chunks)
    return k;
  if (kAccess == Access::RgbBytes) {
    k.w[0] = load_px4<false> (row + g.first_byte + 4 * c);
    k.valid = 1;
    return k;
  }
  const uintptr_t begin = reinterpret_cast<uintptr_t> (row + g.first_byte);
  const int head = static_cast<int> (begin & 15);
  const int off = 16 * static_cast<int> (c) - head; /* of the chunk's first byte from the region's */
  const uint8_t *p = reinterpret_cast<const uint8_t *> (begin - head) + 16 * c;
  if (off >= 0 && off + 16 <= g.row_bytes) {
    /* inside the region although the rows are not aligned alike */
    const uint4 v = __ldcs (reinterpret_cast<const uint4 *> (p));
    return Chunk{{v.x, v.y, v.z, v.w},
        kAccess == Access::RgbChunks ? 0xfu : kAccess == Access::LumaChunks ? 0xffffu : luma422_mask (g, off)};
  }
#pragma unroll
  for (int i = 0; i < 4; i++) {
    if (kAccess == Access::RgbChunks) {
      if (off + 4 * i >= 0 && off + 4 * i < g.row_bytes) {
        k.w[i] = __ldg (reinterpret_cast<const uint32_t *> (p + 4 * i));
        k.valid |= 1u << i;
      }
    } else {
      for (int j = 0; j < 4; j++)
        if (off + 4 * i + j >= 0 && off + 4 * i + j < g.row_bytes) {
          k.w[i] |= static_cast<uint32_t> (__ldg (p + 4 * i + j)) << (8 * j);
          k.valid |= 1u << (4 * i + j);
        }
    }
  }
  if (kAccess == Access::Luma422Chunks)
    k.valid &= luma422_mask (g, off);
  return k;
}

template <Access kAccess>
__device__ __forceinline__ void count_chunk (const Region &g, const Chunk &k, uint32_t hist, Sums &s)
{
  if (kAccess == Access::LumaChunks || kAccess == Access::Luma422Chunks) {
    count_luma (hist, k.w, k.valid);
  } else {
#pragma unroll
    for (int i = 0; i < 4; i++)
      if (k.valid & (1u << i))
        count_rgb (hist, k.w[i], g.luma_weights, s);
  }
}

/* The last block: the partial copies summed into the frame's result, as histogram_cpu gives it
 * (@bins bins, the luma sums from the 256 luma counts, the byte sums as R, G, B of the layout),
 * written out, and the copies zeroed for the next launch. @hist is the block's shared
 * histogram, free again: a bin's count, as a luma value's, is below 2^32 (histogram_cuda). */
__device__ __forceinline__ void finish_histogram (const Region &g, const HistogramResults &r, uint32_t *hist)
{
  __shared__ unsigned long long luma_sums[2];
  __shared__ unsigned long long byte_sums[3];
  const int tid = threadIdx.y * kBlockX + threadIdx.x;
  for (int i = tid; i < kHistogramMaxBins; i += kThreads)
    hist[i] = 0;
  if (tid < 2)
    luma_sums[tid] = 0;
  if (tid < 3) {
    unsigned long long b = 0;
    for (int c = 0; c < kHistogramCopies; c++) {
      auto *p = reinterpret_cast<unsigned long long *> (&r.accum->sums[c][tid]);
      b += __ldcg (p);
      *p = 0;
    }
    byte_sums[tid] = b;
  }
  __syncthreads ();
  static_assert (kThreads >= kHistogramMaxBins, "a thread per luma value");
  unsigned long long y = 0, y2 = 0;
  if (tid < kHistogramMaxBins) {
    uint32_t n = 0;
    for (int c = 0; c < kHistogramCopies; c++) {
      n += __ldcg (&r.accum->counts[c][tid]);
      r.accum->counts[c][tid] = 0;
    }
    if (n)
      atomicAdd (hist + histogram_bin (tid, g.bins), n);
    y = static_cast<unsigned long long> (n) * tid;
    y2 = y * tid;
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    y += __shfl_down_sync (0xffffffffu, y, o);
    y2 += __shfl_down_sync (0xffffffffu, y2, o);
  }
  if (tid % 32 == 0 && tid < kHistogramMaxBins && y) {
    atomicAdd (luma_sums, y);
    atomicAdd (luma_sums + 1, y2);
  }
  __syncthreads ();
  for (int i = tid; i < kHistogramMaxBins; i += kThreads) {
    r.out->counts[i] = hist[i];
    if (r.device_out)
      r.device_out->counts[i] = hist[i];
  }
  if (tid == 0) {
    const bool rgb = layout_is_rgb (g.layout), bgr = layout_is_bgr (g.layout);
    const uint64_t s[5] = {rgb ? byte_sums[bgr ? 2 : 0] : 0, rgb ? byte_sums[1] : 0, rgb ? byte_sums[bgr ? 0 : 2] : 0,
        luma_sums[0], luma_sums[1]};
    for (HistogramResult *out : {r.out, r.device_out}) {
      if (!out)
        continue;
      out->sum_r = s[0];
      out->sum_g = s[1];
      out->sum_b = s[2];
      out->sum_y = s[3];
      out->sum_y2 = s[4];
    }
    rearm (r.ticket);
  }
}

/* Where thread (x, y) of a block works in tile @tile: its chunk column, its first row, and
 * whether its chunks lie inside aligned rows (16-byte loads). */
struct TileSpot {
  uint32_t c;
  uint32_t r0;
  const uint8_t *row;
  int off;
  bool interior;
};

template <Access kAccess>
__device__ __forceinline__ TileSpot tile_spot (const Region &g, uint32_t tile)
{
  TileSpot t;
  t.c = (tile % g.tiles_x) * kBlockX + threadIdx.x;
  t.r0 = (tile / g.tiles_x) * kTileRows + threadIdx.y;
  t.row = g.data + static_cast<size_t> (t.r0) * g.pitch;
  t.off = 16 * static_cast<int> (t.c) - g.head;
  t.interior = kAccess != Access::RgbBytes && g.head >= 0 && t.c < g.chunks && t.off >= 0 && t.off + 16 <= g.row_bytes;
  return t;
}

/* The tiles of kBlockX chunk columns by kTileRows rows, block b taking tiles b, b + gridDim.x,
 * ...: the grid holds only the blocks that stay resident, so that each block adds its histogram
 * into the partials and takes its ticket once. Thread (x, y) takes rows y, y + kBlockY, ... of
 * its column of a tile. Interior chunks (every chunk of aligned rows but the first and last of a
 * row) are 16-byte loads issued all at once, the first tile's before the shared histogram is
 * even zeroed; the region's edges go through load_edge_chunk. */
template <Access kAccess>
__global__ void __launch_bounds__ (kThreads) histogram_kernel (Region g, HistogramResults r)
{
  __shared__ __align__ (1024) uint32_t hist[kHistogramMaxBins];
  __shared__ unsigned long long block_sums[3];
  const int tid = threadIdx.y * kBlockX + threadIdx.x;
  const size_t step = static_cast<size_t> (g.pitch) * kBlockY;
  uint32_t tile = blockIdx.x;
  TileSpot t = tile_spot<kAccess> (g, tile);
  uint4 v[kInFlight];
  auto load = [&] {
    if (!t.interior)
      return;
    const uint4 *p = reinterpret_cast<const uint4 *> (t.row + g.first_byte + t.off);
#pragma unroll
    for (int i = 0; i < kInFlight; i++)
      v[i] = t.r0 + i * kBlockY < g.rows ? __ldcs (p + i * step / 16) : make_uint4 (0, 0, 0, 0);
  };
  if (tile < g.tiles)
    load ();
  for (int i = tid; i < kHistogramMaxBins; i += kThreads)
    hist[i] = 0;
  if (tid < 3)
    block_sums[tid] = 0;
  __syncthreads ();

  const uint32_t h = static_cast<uint32_t> (__cvta_generic_to_shared (hist));
  Sums s;
  for (; tile < g.tiles; tile += gridDim.x) {
    if (tile != blockIdx.x) {
      t = tile_spot<kAccess> (g, tile);
      load ();
    }
    if (t.interior) {
#pragma unroll
      for (int i = 0; i < kInFlight; i++) {
        if (t.r0 + i * kBlockY >= g.rows)
          break;
        if (kAccess == Access::LumaChunks || kAccess == Access::Luma422Chunks) {
          const uint32_t w[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
          count_luma (h, w, kAccess == Access::LumaChunks ? 0xffffu : luma422_mask (g, t.off));
        } else {
          count_rgb (h, v[i].x, g.luma_weights, s);
          count_rgb (h, v[i].y, g.luma_weights, s);
          count_rgb (h, v[i].z, g.luma_weights, s);
          count_rgb (h, v[i].w, g.luma_weights, s);
        }
      }
    } else {
      for (int i = 0; i < kInFlight && t.r0 + i * kBlockY < g.rows; i++)
        count_chunk<kAccess> (g, load_edge_chunk<kAccess> (g, t.row + i * step, t.c), h, s);
    }
  }

  if (kAccess == Access::RgbChunks || kAccess == Access::RgbBytes) {
#pragma unroll
    for (int k = 0; k < 3; k++) {
      unsigned long long sum = s.c[k];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
        sum += __shfl_down_sync (0xffffffffu, sum, o);
      if (tid % 32 == 0 && sum)
        atomicAdd (block_sums + k, sum);
    }
  }
  __syncthreads ();

  const int copy = blockIdx.x % kHistogramCopies;
  for (int i = tid; i < kHistogramMaxBins; i += kThreads)
    if (hist[i])
      atomicAdd (&r.accum->counts[copy][i], hist[i]);
  if (tid < 3 && block_sums[tid])
    atomicAdd (reinterpret_cast<unsigned long long *> (&r.accum->sums[copy][tid]), block_sums[tid]);
  if (ends_last (r.ticket))
    finish_histogram (g, r, hist);
}

template <Access kAccess>
cudaError_t
launch_histogram (const Region &g, const HistogramResults &r, cudaStream_t stream)
{
  const auto kernel = histogram_kernel<kAccess>;
  int resident = 0;
  cudaError_t err = resident_blocks (reinterpret_cast<const void *> (kernel), kThreads, &resident);
  if (err != cudaSuccess)
    return err;
  Region tiled = g;
  tiled.tiles = g.tiles_x * ((g.rows + kTileRows - 1) / kTileRows);
  /* one block at least: an empty region still publishes its (empty) result */
  const uint32_t blocks = std::max (1u, std::min (tiled.tiles, static_cast<uint32_t> (resident)));
  kernel<<<blocks, dim3 (kBlockX, kBlockY), 0, stream>>> (tiled, r);
  return cudaGetLastError ();
}

constexpr uint32_t pack_weights (int b0, int b1, int b2)
{
  return static_cast<uint32_t> (b0) | static_cast<uint32_t> (b1) << 8 | static_cast<uint32_t> (b2) << 16;
}

}  // namespace

cudaError_t
histogram_cuda (const Frame &src, const Roi &roi, int bins, const HistogramResults &results, cudaStream_t stream)
{
  if (static_cast<uint64_t> (std::max (roi.width, 0)) * static_cast<uint64_t> (std::max (roi.height, 0)) >> 32 ||
      bins < 1 || bins > kHistogramMaxBins)
    return cudaErrorInvalidValue;
  const Plane &pl = src.planes[0];
  const bool rgb = layout_is_rgb (src.layout), packed = layout_has_luma_every_other_byte (src.layout);
  const int bpp = rgb ? 4 : packed ? 2 : 1;
  Region g{};
  g.data = pl.data + static_cast<size_t> (roi.y) * pl.pitch;
  g.pitch = pl.pitch;
  g.first_byte = roi.x * bpp;
  g.row_bytes = std::max (roi.width, 0) * bpp;
  g.rows = std::max (roi.height, 0);
  g.bins = bins;
  g.layout = src.layout;
  g.luma_weights = layout_is_bgr (src.layout) ? pack_weights (29, 150, 77) : pack_weights (77, 150, 29);
  g.y_byte = luma_byte (src.layout);
  const bool aligned = reinterpret_cast<uintptr_t> (pl.data) % 16 == 0 && pl.pitch % 16 == 0;
  /* with aligned rows every row's region starts at the same offset in its chunk */
  g.head = aligned ? static_cast<int> ((reinterpret_cast<uintptr_t> (g.data) + g.first_byte) % 16) : -1;
  g.chunks = ((aligned ? g.head : 15) + g.row_bytes + 15) / 16;
  if (!rgb || (reinterpret_cast<uintptr_t> (pl.data) % 4 == 0 && pl.pitch % 4 == 0)) {
    g.tiles_x = (g.chunks + kBlockX - 1) / kBlockX;
    return rgb      ? launch_histogram<Access::RgbChunks> (g, results, stream)
        : packed ? launch_histogram<Access::Luma422Chunks> (g, results, stream)
                 : launch_histogram<Access::LumaChunks> (g, results, stream);
  }
  g.chunks = std::max (roi.width, 0);
  g.head = -1;
  g.tiles_x = (g.chunks + kBlockX - 1) / kBlockX;
  return launch_histogram<Access::RgbBytes> (g, results, stream);
}

/* ---- overlay ---- */

namespace {

constexpr int kOverlayBlockX = 32;
constexpr int kOverlayBlockY = 8;

struct OverlayArgs {
  Frame frame;
  OverlayRect rect;
  int bins;
  uint64_t pixels;
};

/* Every block first takes the frame's result (the histogram kernel's device_out) into shared
 * memory, and its fullest bin. */
template <bool kRgb>
__global__ void __launch_bounds__ (kOverlayBlockX * kOverlayBlockY) overlay_kernel (OverlayArgs a,
    const HistogramResult *result)
{
  constexpr int kThreadsOverlay = kOverlayBlockX * kOverlayBlockY;
  __shared__ unsigned long long counts[kHistogramMaxBins];
  __shared__ unsigned long long max_count;
  const int tid = threadIdx.y * kOverlayBlockX + threadIdx.x;
  if (tid == 0)
    max_count = 0;
  __syncthreads ();
  for (int b = tid; b < a.bins; b += kThreadsOverlay) {
    counts[b] = result->counts[b];
    if (counts[b])
      atomicMax (&max_count, counts[b]);
  }
  __syncthreads ();

  const int lx = blockIdx.x * kOverlayBlockX + threadIdx.x;
  const int ly = blockIdx.y * kOverlayBlockY + threadIdx.y;
  if (lx >= a.rect.width || ly >= a.rect.height)
    return;
  const uint64_t rgb_sums[3] = {result->sum_r, result->sum_g, result->sum_b};
  const uint64_t luma_sums[3] = {result->sum_y, 0, 0};
  OverlayBars bars = overlay_bars (a.rect, kRgb, kRgb ? rgb_sums : luma_sums, a.pixels, max_count);
  int code = overlay_code (bars, lx, ly, overlay_column_count (counts, a.rect, a.bins, lx));

  const int x = a.rect.x + lx, y = a.rect.y + ly;
  const Plane &pl = a.frame.planes[0];
  uint8_t *p = pl.data + static_cast<size_t> (y) * pl.pitch;
  if (kRgb) {
    p += 4 * x;
    const int ri = layout_is_bgr (a.frame.layout) ? 2 : 0;
    if (reinterpret_cast<uintptr_t> (p) % 4 == 0)
      store_px4<true> (p, overlay_rgb_px (load_px4<true> (p), code, ri));
    else
      store_px4<false> (p, overlay_rgb_px (load_px4<false> (p), code, ri));
    return;
  }
  if (layout_is_packed422 (a.frame.layout)) {
    /* a pair's U and V belong to the rectangle when its left pixel does */
    uint8_t *luma = p + 2 * x + luma_byte (a.frame.layout), *u = p + 4 * (x / 2) + packed422_u_byte (a.frame.layout);
    *luma = overlay_luma (*luma, code);
    if (!(x & 1)) {
      u[0] = overlay_chroma (u[0]);
      u[2] = overlay_chroma (u[2]);
    }
    return;
  }
  const PixelLayout l = a.frame.layout;
  uint8_t *luma = luma_at (a.frame, x, y);
  put_sample8 (l, luma, overlay_luma (sample8 (l, luma), code));
  if (a.frame.n_planes == 1 || (x | y) & 1)
    return;
  const ChromaAt c = chroma_at (a.frame, x / 2, y / 2);
  put_sample8 (l, c.u, overlay_chroma (sample8 (l, c.u)));
  put_sample8 (l, c.v, overlay_chroma (sample8 (l, c.v)));
}

}  // namespace

cudaError_t
histogram_overlay_cuda (const Frame &frame, const OverlayRect &rect, int bins, const HistogramResult *result,
    uint64_t pixels, cudaStream_t stream)
{
  if (rect.width < 1 || rect.height < 1)
    return cudaSuccess;
  OverlayArgs a{frame, rect, bins, pixels};
  dim3 block (kOverlayBlockX, kOverlayBlockY);
  dim3 grid (div_up (rect.width, kOverlayBlockX), div_up (rect.height, kOverlayBlockY));
  if (layout_is_rgb (frame.layout))
    overlay_kernel<true><<<grid, block, 0, stream>>> (a, result);
  else
    overlay_kernel<false><<<grid, block, 0, stream>>> (a, result);
  return cudaGetLastError ();
}

}  // namespace cuv
