/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One read of each pixel: every thread takes a column of 16-byte chunks of the region's rows (4
 * RGB pixels or 16 luma samples), counts each pixel's luma into its warp's own 256-entry histogram
 * in shared memory and keeps the R, G, B sums in registers. The luma sum and sum of squares are
 * not accumulated per pixel: they follow exactly from the 256 luma counts at the block's end
 * (sum k * n_k and sum k^2 * n_k), and so do the requested bins (each a range of luma values). A
 * block then merges its warps' histograms and sums and adds them to the result with one global
 * atomic per non-empty bin. The grid is as many blocks as stay resident, so the merge happens once
 * per block, not once per tile. Neighbouring pixels often share a luma value: a thread adds runs of
 * equal values with one shared atomic. The first block zeroes the other result slot, for the next
 * frame, so no memset is needed per frame. */
#include "histogram.h"

#include <algorithm>

#include "cuda_access.cuh"
#include "histogram_math.h"
#include "resident.h"

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
constexpr int kWarps = kThreads / 32;
constexpr int kInFlight = CUV_HISTOGRAM_IN_FLIGHT; /* rows per pipeline stage */
/* chunks one thread may take before its 32-bit channel sums could overflow (16 * 255 * 2^16 < 2^32) */
constexpr uint32_t kMaxChunksPerThread = 1u << 16;

enum class Access : int {
  RgbChunks,  /* 4-byte pixels, each at a 4-byte aligned address */
  LumaChunks, /* 1-byte samples */
  RgbBytes,   /* 4-byte pixels at any address, one pixel per chunk */
};

struct Region {
  const uint8_t *data; /* first row of the region */
  int pitch;
  int first_byte;     /* of the region within a row */
  int row_bytes;      /* of the region */
  uint32_t rows;
  uint32_t rows_per_block;
  uint32_t chunks;    /* per row */
  uint32_t luma_weights; /* RGB: the BT.601 weights in the pixel's byte order */
  int bins;
  bool bgr;
};

struct Sums {
  uint32_t c[3] = {0, 0, 0}; /* bytes 0, 1, 2 of RGB pixels */
};

/* Adds @n to shared-memory @addr when @p, as a predicated reduction: no branch, so no divergence. */
__device__ __forceinline__ void shared_add_if (uint32_t *addr, uint32_t n, bool p)
{
  asm volatile ("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\t@q red.shared.add.u32 [%0], %1;\n\t}"
      :: "r"(static_cast<uint32_t> (__cvta_generic_to_shared (addr))), "r"(n), "r"(static_cast<uint32_t> (p)) : "memory");
}

/* Adds bins b[0..n) to @hist with one reduction per run of equal bins, issued at the run's last
 * element; the same instructions run whatever the content. */
template <int kN>
__device__ __forceinline__ void count_runs (uint32_t *hist, const int (&b)[kN])
{
  uint32_t run = 1;
#pragma unroll
  for (int k = 0; k < kN; k++) {
    const bool last = k == kN - 1 || b[k + 1 < kN ? k + 1 : k] != b[k];
    shared_add_if (hist + b[k], run, last);
    run = last ? 1 : run + 1;
  }
}

__device__ __forceinline__ int rgb_luma (uint32_t px, uint32_t weights)
{
  return static_cast<int> (__dp4a (px, weights, 0u) >> 8);
}

/* Four RGB pixels of a chunk inside the region: the common case, without per-pixel checks. */
__device__ __forceinline__ void rgb_full (const uint32_t (&px)[4], const Region &g, uint32_t *hist, Sums &s)
{
  int l[4];
#pragma unroll
  for (int k = 0; k < 4; k++)
    l[k] = rgb_luma (px[k], g.luma_weights);
  /* bytes 0 and 2 of four pixels add up in 16-bit halves without carrying over */
  const uint32_t lo = (px[0] & 0x00ff00ffu) + (px[1] & 0x00ff00ffu) + (px[2] & 0x00ff00ffu) + (px[3] & 0x00ff00ffu);
  const uint32_t hi = ((px[0] >> 8) & 0xffu) + ((px[1] >> 8) & 0xffu) + ((px[2] >> 8) & 0xffu) + ((px[3] >> 8) & 0xffu);
  s.c[0] += lo & 0xffff;
  s.c[2] += lo >> 16;
  s.c[1] += hi;
  count_runs (hist, l);
}

/* Some of four RGB pixels, at a row's ends; @valid masks the ones inside the region. */
__device__ __forceinline__ void rgb_chunk (const uint32_t (&px)[4], uint32_t valid, const Region &g, uint32_t *hist,
    Sums &s)
{
  if (valid == 0xf) {
    rgb_full (px, g, hist, s);
    return;
  }
  for (int k = 0; k < 4; k++) {
    if (valid & (1u << k)) {
      int l = rgb_luma (px[k], g.luma_weights);
      s.c[0] += px[k] & 0xff;
      s.c[1] += (px[k] >> 8) & 0xff;
      s.c[2] += (px[k] >> 16) & 0xff;
      atomicAdd (hist + l, 1u);
    }
  }
}

/* Four words of luma samples; @valid has a bit per sample inside the region. */
__device__ __forceinline__ void luma_chunk (const uint32_t (&w)[4], uint32_t valid, uint32_t *hist)
{
  if (valid == 0xffff) {
    int b[16];
#pragma unroll
    for (int k = 0; k < 4; k++)
#pragma unroll
      for (int j = 0; j < 4; j++)
        b[4 * k + j] = (w[k] >> (8 * j)) & 0xff;
    count_runs (hist, b);
    return;
  }
  for (int k = 0; k < 16; k++) {
    if (valid & (1u << k)) {
      int l = (w[k / 4] >> (8 * (k % 4))) & 0xff;
      atomicAdd (hist + l, 1u);
    }
  }
}

/* One chunk as loaded: its words and a bit per pixel (RGB) or sample (luma) inside the region. */
struct Chunk {
  uint32_t w[4];
  uint32_t valid;
};

/* Chunk @c of the region's row at @row. */
template <Access kAccess>
__device__ __forceinline__ Chunk load_chunk (const Region &g, const uint8_t *row, uint32_t c)
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
    uint4 v = __ldcs (reinterpret_cast<const uint4 *> (p));
    k.w[0] = v.x;
    k.w[1] = v.y;
    k.w[2] = v.z;
    k.w[3] = v.w;
    k.valid = kAccess == Access::RgbChunks ? 0xfu : 0xffffu;
    return k;
  }
  /* the chunk that holds the row's first or last bytes: only those inside are read */
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
  return k;
}

template <Access kAccess>
__device__ __forceinline__ void count_chunk (const Region &g, const Chunk &k, uint32_t *hist, Sums &s)
{
  if (!k.valid)
    return;
  if (kAccess == Access::LumaChunks)
    luma_chunk (k.w, k.valid, hist);
  else
    rgb_chunk (k.w, k.valid, g, hist, s);
}

__device__ __forceinline__ unsigned long long warp_sum (unsigned long long v)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync (0xffffffffu, v, o);
  return v;
}

/* Block (kBlockX, kBlockY): a column of kBlockX chunks by g.rows_per_block rows; each thread keeps
 * one chunk column and walks down the rows, kInFlight rows' loads in flight. */
template <Access kAccess>
__global__ void __launch_bounds__ (kThreads) histogram_kernel (Region g, HistogramResult *res, HistogramResult *clear_next)
{
  constexpr int kLuma = kHistogramMaxBins; /* luma values */
  __shared__ uint32_t hist[kWarps][kLuma];
  __shared__ uint32_t merged[kHistogramMaxBins];
  __shared__ unsigned long long block_sums[5];
  const int tid = threadIdx.y * kBlockX + threadIdx.x;
  for (int i = tid; i < kWarps * kLuma; i += kThreads)
    (&hist[0][0])[i] = 0;
  for (int i = tid; i < kHistogramMaxBins; i += kThreads)
    merged[i] = 0;
  if (tid < 5)
    block_sums[tid] = 0;
  if (clear_next && (blockIdx.x | blockIdx.y) == 0)
    for (int i = tid; i < static_cast<int> (sizeof (HistogramResult) / sizeof (uint64_t)); i += kThreads)
      reinterpret_cast<uint64_t *> (clear_next)[i] = 0;
  __syncthreads ();

  uint32_t *warp_hist = hist[tid / 32];
  Sums s;
  const uint32_t c = blockIdx.x * kBlockX + threadIdx.x;
  const uint32_t r0 = blockIdx.y * g.rows_per_block;
  const uint32_t r1 = min (g.rows, r0 + g.rows_per_block);
  uint32_t r = r0 + threadIdx.y;
  const size_t step = static_cast<size_t> (g.pitch) * kBlockY;
  const uint8_t *row = g.data + static_cast<size_t> (r) * g.pitch;
  /* software pipeline: the next kInFlight rows' loads are issued before this group is counted,
   * so a thread always has loads in flight while it counts */
  Chunk cur[kInFlight], next[kInFlight];
#pragma unroll
  for (int i = 0; i < kInFlight; i++)
    cur[i] = r + i * kBlockY < r1 ? load_chunk<kAccess> (g, row + i * step, c) : Chunk{{0, 0, 0, 0}, 0};
  while (r < r1) {
    r += kInFlight * kBlockY;
    row += kInFlight * step;
#pragma unroll
    for (int i = 0; i < kInFlight; i++)
      next[i] = r + i * kBlockY < r1 ? load_chunk<kAccess> (g, row + i * step, c) : Chunk{{0, 0, 0, 0}, 0};
#pragma unroll
    for (int i = 0; i < kInFlight; i++)
      count_chunk<kAccess> (g, cur[i], warp_hist, s);
#pragma unroll
    for (int i = 0; i < kInFlight; i++)
      cur[i] = next[i];
  }

  if (kAccess != Access::LumaChunks) {
#pragma unroll
    for (int k = 0; k < 3; k++) {
      unsigned long long t = warp_sum (s.c[k]);
      if (tid % 32 == 0 && t)
        atomicAdd (block_sums + k, t);
    }
  }
  __syncthreads ();

  /* thread k < 256 owns luma value k: its count over the warps gives its bin and its share of the
   * luma sums */
  unsigned long long y = 0, y2 = 0;
  if (tid < kLuma) {
    uint32_t n = 0;
#pragma unroll
    for (int w = 0; w < kWarps; w++)
      n += hist[w][tid];
    y = static_cast<unsigned long long> (tid) * n;
    y2 = static_cast<unsigned long long> (tid * tid) * n;
    if (n)
      atomicAdd (merged + histogram_bin (tid, g.bins), n);
  }
  y = warp_sum (y);
  y2 = warp_sum (y2);
  if (tid % 32 == 0 && y) {
    atomicAdd (block_sums + 3, y);
    atomicAdd (block_sums + 4, y2);
  }
  __syncthreads ();

  for (int bin = tid; bin < g.bins; bin += kThreads)
    if (merged[bin])
      atomicAdd (reinterpret_cast<unsigned long long *> (res->counts + bin), static_cast<unsigned long long> (merged[bin]));
  if (tid < 5 && block_sums[tid]) {
    /* byte 0 is R unless the layout is BGR */
    uint64_t *dst[5] = {g.bgr ? &res->sum_b : &res->sum_r, &res->sum_g, g.bgr ? &res->sum_r : &res->sum_b,
        &res->sum_y, &res->sum_y2};
    atomicAdd (reinterpret_cast<unsigned long long *> (dst[tid]), block_sums[tid]);
  }
}

/* As many blocks as stay resident, each as tall as that allows (and short enough that no
 * thread's 32-bit sums can overflow). */
template <Access kAccess>
cudaError_t
launch_histogram (Region g, HistogramResult *res, HistogramResult *clear_next, cudaStream_t stream)
{
  int blocks = 0;
  cudaError_t err = resident_blocks (reinterpret_cast<const void *> (histogram_kernel<kAccess>), kThreads, &blocks);
  if (err != cudaSuccess)
    return err;
  const uint32_t gx = (g.chunks + kBlockX - 1) / kBlockX;
  const uint32_t resident = static_cast<uint32_t> (blocks);
  uint32_t gy = std::max (1u, std::min (resident / gx, (g.rows + kBlockY - 1) / kBlockY));
  gy = std::max (gy, (g.rows + kBlockY * kMaxChunksPerThread - 1) / (kBlockY * kMaxChunksPerThread));
  g.rows_per_block = (g.rows + gy - 1) / gy;
  gy = (g.rows + g.rows_per_block - 1) / g.rows_per_block;
  histogram_kernel<kAccess><<<dim3 (gx, gy), dim3 (kBlockX, kBlockY), 0, stream>>> (g, res, clear_next);
  return cudaGetLastError ();
}

constexpr uint32_t pack_weights (int b0, int b1, int b2)
{
  return static_cast<uint32_t> (b0) | static_cast<uint32_t> (b1) << 8 | static_cast<uint32_t> (b2) << 16;
}

}  // namespace

cudaError_t
histogram_cuda (const Frame &src, const Roi &roi, int bins, HistogramResult *result, HistogramResult *clear_next,
    cudaStream_t stream)
{
  if (roi.width <= 0 || roi.height <= 0) {
    /* no launch to do the zeroing: @result must come out empty, @clear_next too */
    cudaError_t err = cudaMemsetAsync (result, 0, sizeof (*result), stream);
    if (err == cudaSuccess && clear_next)
      err = cudaMemsetAsync (clear_next, 0, sizeof (*clear_next), stream);
    return err;
  }
  const Plane &pl = src.planes[0];
  const bool rgb = layout_is_rgb (src.layout);
  const int bpp = rgb ? 4 : 1;
  Region g{};
  g.data = pl.data + static_cast<size_t> (roi.y) * pl.pitch;
  g.pitch = pl.pitch;
  g.first_byte = roi.x * bpp;
  g.row_bytes = roi.width * bpp;
  g.rows = roi.height;
  g.bins = bins;
  g.bgr = layout_is_bgr (src.layout);
  g.luma_weights = g.bgr ? pack_weights (29, 150, 77) : pack_weights (77, 150, 29);
  const bool aligned = reinterpret_cast<uintptr_t> (pl.data) % 16 == 0 && pl.pitch % 16 == 0;
  /* with aligned rows every row's region starts at the same offset in its chunk */
  const int head = aligned ? (reinterpret_cast<uintptr_t> (g.data) + g.first_byte) % 16 : 15;
  g.chunks = (head + g.row_bytes + 15) / 16;
  if (!rgb)
    return launch_histogram<Access::LumaChunks> (g, result, clear_next, stream);
  if (reinterpret_cast<uintptr_t> (pl.data) % 4 == 0 && pl.pitch % 4 == 0)
    return launch_histogram<Access::RgbChunks> (g, result, clear_next, stream);
  g.chunks = roi.width;
  return launch_histogram<Access::RgbBytes> (g, result, clear_next, stream);
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

template <bool kRgb>
__global__ void __launch_bounds__ (kOverlayBlockX * kOverlayBlockY) overlay_kernel (OverlayArgs a,
    const HistogramResult *res)
{
  __shared__ unsigned long long counts[kHistogramMaxBins];
  __shared__ unsigned long long max_count;
  const int tid = threadIdx.y * kOverlayBlockX + threadIdx.x;
  if (tid == 0)
    max_count = 0;
  __syncthreads ();
  for (int b = tid; b < kHistogramMaxBins; b += kOverlayBlockX * kOverlayBlockY) {
    counts[b] = b < a.bins ? res->counts[b] : 0;
    if (counts[b])
      atomicMax (&max_count, counts[b]);
  }
  __syncthreads ();

  const int lx = blockIdx.x * kOverlayBlockX + threadIdx.x;
  const int ly = blockIdx.y * kOverlayBlockY + threadIdx.y;
  if (lx >= a.rect.width || ly >= a.rect.height)
    return;
  const uint64_t rgb_sums[3] = {res->sum_r, res->sum_g, res->sum_b};
  const uint64_t luma_sums[3] = {res->sum_y, 0, 0};
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
  p[x] = overlay_luma (p[x], code);
  if (a.frame.n_planes == 1 || (x | y) & 1)
    return;
  const int samples = a.frame.layout == PixelLayout::NV12 ? 2 : 1;
  for (int c = 1; c < a.frame.n_planes; c++) {
    const Plane &cp = a.frame.planes[c];
    uint8_t *q = cp.data + static_cast<size_t> (y / 2) * cp.pitch + (x / 2) * samples;
    for (int s = 0; s < samples; s++)
      q[s] = overlay_chroma (q[s]);
  }
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
