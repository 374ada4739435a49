/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The noise map in one pass, shaped as heatmap.cu: a 4x2 tile per thread, byte-parallel
 * compares (__vabsdiffu4, __vcmpgtu4) and byte-parallel painting (blend_px under a byte mask).
 * YUY2/UYVY: a tile row is two pixel pairs, one 8-byte access, each pair's word compared and
 * painted at once. P010: as NV12 on the samples' high bytes (a tile row's four luma samples and
 * its two groups' chroma one 8-byte access each), the painted bytes written back as v << 8 and
 * an unpainted sample in overlay mode as it came (wide_out). */
#include "kernels/noisemap/noisemap.h"

#include "kernels/difference/difference.cuh"

namespace cuv {

namespace {

using namespace diff;

struct NoiseArgs {
  Frame cur, prev, out;
  NoisemapParams p;
  uint32_t threshold4;   /* the threshold in each byte */
  uint32_t painted_black; /* map mode's noisy pixel (RGB layouts) */
  uint32_t paint422;      /* YUY2/UYVY: a pair word of the colour */
  uint32_t black422;      /* YUY2/UYVY: a pair word of black */
};

/* YUY2/UYVY: the Y bytes of a pair word (Y0 U Y1 V or U Y0 V Y1, little-endian). */
__host__ __device__ __forceinline__ uint32_t y_bytes_422 (PixelLayout l)
{
  return l == PixelLayout::UYVY ? 0xff00ff00u : 0x00ff00ffu;
}

/* A pair word in @l's byte order from Y (both pixels), U and V. */
__host__ __device__ __forceinline__ uint32_t pair_word (PixelLayout l, uint32_t y, uint32_t u, uint32_t v)
{
  return l == PixelLayout::UYVY ? u | y << 8 | v << 16 | y << 24 : y | u << 8 | y << 16 | v << 24;
}

/* The bytes of a pair word to paint: the Y byte of each noisy pixel (its Y, or the pair's U or V,
 * changed by more than the threshold), and U and V when either is. */
__device__ __forceinline__ uint32_t noisy_bytes_422 (uint32_t c, uint32_t q, uint32_t threshold4, PixelLayout l)
{
  const uint32_t ys = y_bytes_422 (l), d = __vcmpgtu4 (__vabsdiffu4 (c, q), threshold4);
  const uint32_t px = (d & ~ys) ? ys : d & ys;
  return px ? px | ~ys : 0;
}

__host__ __device__ __forceinline__ uint32_t replicate (uint32_t b)
{
  return b * 0x01010101u;
}

/* The output pixel of an RGB layout. */
__device__ __forceinline__ uint32_t noise_rgb (const NoiseArgs &a, uint32_t c, bool noisy)
{
  if (a.p.overlay)
    return noisy ? (blend_px (a.p.color, c, a.p.alpha) & 0x00ffffffu) | (c & 0xff000000u) : c;
  return noisy ? a.painted_black : 0xff000000u;
}

__device__ __forceinline__ void noise_rgb_px (const NoiseArgs &a, int x, int y, uint32_t &changed)
{
  const uint32_t c = load_le32 (row (a.cur.planes[0], y) + 4 * x);
  const bool noisy = rgb_abs_max (c, load_le32 (row (a.prev.planes[0], y) + 4 * x)) > a.p.threshold;
  changed += noisy;
  store_le32 (row_w (a.out.planes[0], y) + 4 * x, noise_rgb (a, c, noisy));
}

template <bool kVec>
__global__ void __launch_bounds__ (kThreads) noisemap_rgb_kernel (NoiseArgs a, DiffResults results)
{
  uint32_t changed = 0;
  rgb_tiles<kVec> (a.cur, a.prev, a.out,
      [&] (uint32_t c, uint32_t q) {
        const bool noisy = (__vcmpgtu4 (__vabsdiffu4 (c, q), a.threshold4) & 0x00ffffffu) != 0;
        changed += noisy;
        return noise_rgb (a, c, noisy);
      },
      [&] (int x, int y) { noise_rgb_px (a, x, y, changed); });
  block_stats (changed, 0, &results.accum->changed, nullptr);
  publish_stats (results);
}

/* YUY2/UYVY: the output word of a pair, its noisy pixels added to @changed. */
__device__ __forceinline__ uint32_t noise_pair (const NoiseArgs &a, uint32_t c, uint32_t q, uint32_t &changed)
{
  const uint32_t mask = noisy_bytes_422 (c, q, a.threshold4, a.cur.layout);
  changed += __popc (mask & y_bytes_422 (a.cur.layout)) >> 3;
  const uint32_t below = a.p.overlay ? c : a.black422;
  return mask ? (blend_px (a.paint422, below, a.p.alpha) & mask) | (below & ~mask) : below;
}

/* YUY2/UYVY: the tile's rows of two pairs, one 8-byte access each where aligned. */
template <bool kVec>
__global__ void __launch_bounds__ (kThreads) noisemap_422_kernel (NoiseArgs a, DiffResults results)
{
  const Walk w = walk ();
  const int pairs = a.cur.width / 2, height = a.cur.height, p0 = w.x0 / 2;
  uint32_t changed = 0;
  if (p0 < pairs) {
    for (int y0 = w.y_first; y0 < height; y0 += w.y_step) {
      for (int y = y0; y < min (y0 + kTileRows, height); y++) {
        const uint8_t *c = row (a.cur.planes[0], y) + 4 * p0, *q = row (a.prev.planes[0], y) + 4 * p0;
        uint8_t *o = row_w (a.out.planes[0], y) + 4 * p0;
        if (kVec && p0 + 2 <= pairs) {
          const uint2 cw = *reinterpret_cast<const uint2 *> (c), qw = *reinterpret_cast<const uint2 *> (q);
          *reinterpret_cast<uint2 *> (o) = make_uint2 (noise_pair (a, cw.x, qw.x, changed), noise_pair (a, cw.y, qw.y, changed));
        } else {
          for (int k = 0; k < min (2, pairs - p0); k++)
            store_le32 (o + 4 * k, noise_pair (a, load_le32 (c + 4 * k), load_le32 (q + 4 * k), changed));
        }
      }
    }
  }
  block_stats (changed, 0, &results.accum->changed, nullptr);
  publish_stats (results);
}

/* The painted word: @paint where @mask is set, @below elsewhere. */
__device__ __forceinline__ uint32_t select_bytes (uint32_t mask, uint32_t paint, uint32_t below)
{
  return (paint & mask) | (below & ~mask);
}

/* The 4:2:0 layouts the YUV kernel reads in words: NV12 (4-byte luma and chroma words), I420 (2-byte
 * chroma pieces) and P010 (8-byte words of four samples, read as their high bytes). */
enum class Yuv420 { Nv12, I420, P010 };

/* Four 8-bit output values @v as P010 samples, v << 8; where @keep has a byte set (overlay mode,
 * not painted) the sample @orig as it came. */
__device__ __forceinline__ uint2 wide_out (uint32_t v, uint32_t keep, uint2 orig)
{
  const uint2 w = make_uint2 (__byte_perm (v, 0, 0x1404), __byte_perm (v, 0, 0x3424));
  const uint2 k = make_uint2 (__byte_perm (keep, 0, 0x1100), __byte_perm (keep, 0, 0x3322));
  return make_uint2 ((orig.x & k.x) | (w.x & ~k.x), (orig.y & k.y) | (w.y & ~k.y));
}

template <bool kVec, Yuv420 K>
__global__ void __launch_bounds__ (kThreads) noisemap_yuv_kernel (NoiseArgs a, DiffResults results)
{
  const Walk w = walk ();
  const int width = a.cur.width, height = a.cur.height;
  const NoisemapParams &p = a.p;
  const uint32_t y4 = replicate (p.yuv[0]);
  const uint32_t black4 = replicate (p.y_black);
  uint32_t changed = 0;
  if (w.x0 < width) {
    for (int y0 = w.y_first; y0 < height; y0 += w.y_step) {
      const int gx = w.x0 / 2, gy = y0 / 2;
      if (!kVec || w.x0 + kTilePix > width || y0 + kTileRows > height) {
        for (int g = gx; g < min (gx + 2, a.cur.planes[1].width); g++)
          changed += noisemap_group (a.cur, a.prev, a.out, a.p, g, gy);
      } else {
        constexpr bool kWide = K == Yuv420::P010;
        uint32_t cy[kTileRows], qy[kTileRows];
        if (kWide)
          tile_luma_p010 (a.cur, a.prev, w.x0, y0, cy, qy);
        else
          tile_luma (a.cur, a.prev, w.x0, y0, cy, qy);
        /* chroma as u0 v0 u1 v1 (NV12's order) */
        uint32_t cuv, quv;
        if (kWide) {
          cuv = p010_groups (a.cur.planes[1], w.x0, gy);
          quv = p010_groups (a.prev.planes[1], w.x0, gy);
        } else if (K == Yuv420::Nv12) {
          cuv = nv12_groups (a.cur.planes[1], w.x0, gy);
          quv = nv12_groups (a.prev.planes[1], w.x0, gy);
        } else {
          cuv = interleave_uv (i420_groups (a.cur.planes[1], gx, gy), i420_groups (a.cur.planes[2], gx, gy));
          quv = interleave_uv (i420_groups (a.prev.planes[1], gx, gy), i420_groups (a.prev.planes[2], gx, gy));
        }
        /* per group, 0xffff when its U or V changed; spread to the group's two pixels */
        const uint32_t cmask = __vcmpgtu4 (__vabsdiffu4 (cuv, quv), a.threshold4);
        const bool g0 = (cmask & 0x0000ffffu) != 0, g1 = (cmask & 0xffff0000u) != 0;
        const uint32_t chroma_px = (g0 ? 0x0000ffffu : 0) | (g1 ? 0xffff0000u : 0);
        uint32_t any = 0;
#pragma unroll
        for (int r = 0; r < kTileRows; r++) {
          const uint32_t mask = __vcmpgtu4 (__vabsdiffu4 (cy[r], qy[r]), a.threshold4) | chroma_px;
          changed += __popc (mask) >> 3;
          any |= mask;
          const uint32_t below = p.overlay ? cy[r] : black4;
          const uint32_t out = mask ? select_bytes (mask, blend_px (y4, below, p.alpha), below) : below;
          if (kWide) {
            uint8_t *o = row_w (a.out.planes[0], y0 + r) + 2 * w.x0;
            /* overlay keeps an unpainted sample's 16 bits: the input's, read again */
            *reinterpret_cast<uint2 *> (o) = wide_out (out, p.overlay ? ~mask : 0,
                *reinterpret_cast<const uint2 *> (row (a.cur.planes[0], y0 + r) + 2 * w.x0));
          } else {
            *reinterpret_cast<uint32_t *> (row_w (a.out.planes[0], y0 + r) + w.x0) = out;
          }
        }
        /* chroma: painted per group when any of its four pixels is noisy */
        const uint32_t gpaint = (any & 0x0000ffffu ? 0x0000ffffu : 0) | (any & 0xffff0000u ? 0xffff0000u : 0);
        const uint32_t below_uv = p.overlay ? cuv : 0x80808080u;
        const uint32_t paint_uv = p.yuv[1] | p.yuv[2] << 8 | p.yuv[1] << 16 | p.yuv[2] << 24;
        const uint32_t ouv = gpaint ? select_bytes (gpaint, blend_px (paint_uv, below_uv, p.alpha), below_uv) : below_uv;
        if (kWide) {
          *reinterpret_cast<uint2 *> (row_w (a.out.planes[1], gy) + 2 * w.x0) = wide_out (ouv, p.overlay ? ~gpaint : 0,
              *reinterpret_cast<const uint2 *> (row (a.cur.planes[1], gy) + 2 * w.x0));
        } else if (K == Yuv420::Nv12) {
          *reinterpret_cast<uint32_t *> (row_w (a.out.planes[1], gy) + w.x0) = ouv;
        } else {
          *reinterpret_cast<uint16_t *> (row_w (a.out.planes[1], gy) + gx) = static_cast<uint16_t> (__byte_perm (ouv, 0, 0x7720));
          *reinterpret_cast<uint16_t *> (row_w (a.out.planes[2], gy) + gx) = static_cast<uint16_t> (__byte_perm (ouv, 0, 0x7731));
        }
      }
    }
  }
  block_stats (changed, 0, &results.accum->changed, nullptr);
  publish_stats (results);
}

/* The tiles: a block covers four tiles side by side (64 x 16 pixels), a thread four pixels of a
 * row, compared byte-parallel as the map's kernels do; each tile's count is summed in shared
 * memory. Pixels at the right edge, or of planes not aligned for the wide loads, go one by one
 * through the definition. */
constexpr int kTilesPerBlock = 4;
constexpr int kTilePixPerThread = 4;
constexpr int kTileThreadsX = kTilesPerBlock * kNoiseTile / kTilePixPerThread;

/* The noisy pixels among the four at (@x0, @y), @x0 a multiple of 4 and @x0 + 4 <= width. */
__device__ __forceinline__ int noisy_of_four (const Frame &cur, const Frame &prev, int x0, int y, uint32_t threshold4)
{
  if (layout_is_rgb (cur.layout)) {
    const uint4 c = load16 (row (cur.planes[0], y) + 4 * x0), q = load16 (row (prev.planes[0], y) + 4 * x0);
    const uint32_t cv[4] = {c.x, c.y, c.z, c.w}, qv[4] = {q.x, q.y, q.z, q.w};
    int n = 0;
#pragma unroll
    for (int k = 0; k < 4; k++)
      n += (__vcmpgtu4 (__vabsdiffu4 (cv[k], qv[k]), threshold4) & 0x00ffffffu) != 0;
    return n;
  }
  if (layout_is_packed422 (cur.layout)) {
    const uint2 c = *reinterpret_cast<const uint2 *> (row (cur.planes[0], y) + 2 * x0);
    const uint2 q = *reinterpret_cast<const uint2 *> (row (prev.planes[0], y) + 2 * x0);
    const uint32_t ys = y_bytes_422 (cur.layout);
    return (__popc (noisy_bytes_422 (c.x, q.x, threshold4, cur.layout) & ys) +
               __popc (noisy_bytes_422 (c.y, q.y, threshold4, cur.layout) & ys)) >> 3;
  }
  const bool wide = layout_is_16bit (cur.layout);
  const uint32_t cy = wide ? high_bytes (*reinterpret_cast<const uint2 *> (row (cur.planes[0], y) + 2 * x0))
                           : *reinterpret_cast<const uint32_t *> (row (cur.planes[0], y) + x0);
  const uint32_t qy = wide ? high_bytes (*reinterpret_cast<const uint2 *> (row (prev.planes[0], y) + 2 * x0))
                           : *reinterpret_cast<const uint32_t *> (row (prev.planes[0], y) + x0);
  /* the two chroma groups as u0 v0 u1 v1 */
  uint32_t cuv, quv;
  const int gy = y / 2;
  if (wide) {
    cuv = p010_groups (cur.planes[1], x0, gy);
    quv = p010_groups (prev.planes[1], x0, gy);
  } else if (cur.layout == PixelLayout::NV12) {
    cuv = nv12_groups (cur.planes[1], x0, gy);
    quv = nv12_groups (prev.planes[1], x0, gy);
  } else {
    const int gx = x0 / 2;
    cuv = interleave_uv (i420_groups (cur.planes[1], gx, gy), i420_groups (cur.planes[2], gx, gy));
    quv = interleave_uv (i420_groups (prev.planes[1], gx, gy), i420_groups (prev.planes[2], gx, gy));
  }
  const uint32_t cmask = __vcmpgtu4 (__vabsdiffu4 (cuv, quv), threshold4);
  const uint32_t chroma_px = ((cmask & 0x0000ffffu) ? 0x0000ffffu : 0) | ((cmask & 0xffff0000u) ? 0xffff0000u : 0);
  return __popc (__vcmpgtu4 (__vabsdiffu4 (cy, qy), threshold4) | chroma_px) >> 3;
}

template <bool kVec>
__global__ void __launch_bounds__ (kTileThreadsX * kNoiseTile) noisemap_tiles_kernel (Frame cur, Frame prev,
    int threshold, uint16_t *counts)
{
  __shared__ int tile_count[kTilesPerBlock];
  const int tid = threadIdx.y * kTileThreadsX + threadIdx.x;
  if (tid < kTilesPerBlock)
    tile_count[tid] = 0;
  __syncthreads ();
  const int x0 = (blockIdx.x * kTileThreadsX + threadIdx.x) * kTilePixPerThread;
  const int y = blockIdx.y * kNoiseTile + threadIdx.y;
  int n = 0;
  if (y < cur.height && x0 < cur.width) {
    if (kVec && x0 + kTilePixPerThread <= cur.width) {
      n = noisy_of_four (cur, prev, x0, y, static_cast<uint32_t> (threshold) * 0x01010101u);
    } else {
      for (int x = x0; x < min (x0 + kTilePixPerThread, cur.width); x++)
        n += noisemap_pixel_changed (cur, prev, x, y, threshold);
    }
  }
  const int t = threadIdx.x / (kNoiseTile / kTilePixPerThread);
  if (n)
    atomicAdd (&tile_count[t], n);
  __syncthreads ();
  const int cols = noise_tile_cols (cur.width), tx = blockIdx.x * kTilesPerBlock + tid;
  if (tid < kTilesPerBlock && tx < cols)
    counts[blockIdx.y * cols + tx] = static_cast<uint16_t> (tile_count[tid]);
}

}  // namespace

cudaError_t noisemap_tiles_cuda (const Frame &cur, const Frame &prev, int threshold, uint16_t *counts, cudaStream_t stream)
{
  if (cur.width <= 0 || cur.height <= 0)
    return cudaSuccess;
  bool vec;
  if (layout_is_rgb (cur.layout)) {
    vec = aligned (cur.planes[0], 16) && aligned (prev.planes[0], 16);
  } else if (layout_is_packed422 (cur.layout)) {
    vec = aligned (cur.planes[0], 8) && aligned (prev.planes[0], 8);
  } else {
    /* the luma and chroma words: 4 and 4 bytes (NV12), 4 and 2 (I420), 8 and 8 (P010) */
    const bool p010 = layout_is_16bit (cur.layout);
    const int luma_align = p010 ? 8 : 4, chroma_align = p010 ? 8 : cur.layout == PixelLayout::NV12 ? 4 : 2;
    vec = true;
    for (int p = 0; p < cur.n_planes; p++)
      vec = vec && aligned (cur.planes[p], p == 0 ? luma_align : chroma_align) &&
          aligned (prev.planes[p], p == 0 ? luma_align : chroma_align);
  }
  const dim3 grid (div_up (noise_tile_cols (cur.width), kTilesPerBlock), noise_tile_rows (cur.height));
  const dim3 block (kTileThreadsX, kNoiseTile);
  if (vec)
    noisemap_tiles_kernel<true><<<grid, block, 0, stream>>> (cur, prev, threshold, counts);
  else
    noisemap_tiles_kernel<false><<<grid, block, 0, stream>>> (cur, prev, threshold, counts);
  return cudaGetLastError ();
}

cudaError_t noisemap_cuda (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &params,
    const DiffResults &results, cudaStream_t stream)
{
  const NoiseArgs a{cur, prev, out, params, replicate (static_cast<uint32_t> (params.threshold)),
      blend_px (params.color, 0, params.alpha) | 0xff000000u,
      pair_word (cur.layout, params.yuv[0], params.yuv[1], params.yuv[2]), pair_word (cur.layout, params.y_black, 128, 128)};
  if (layout_is_packed422 (cur.layout)) {
    const bool vec = aligned (cur.planes[0], 8) && aligned (prev.planes[0], 8) && aligned (out.planes[0], 8);
    return vec ? launch (noisemap_422_kernel<true>, a, results, stream)
               : launch (noisemap_422_kernel<false>, a, results, stream);
  }
  if (layout_is_rgb (cur.layout)) {
    const bool vec = aligned (cur.planes[0], 16) && aligned (prev.planes[0], 16) && aligned (out.planes[0], 16);
    return vec ? launch (noisemap_rgb_kernel<true>, a, results, stream)
               : launch (noisemap_rgb_kernel<false>, a, results, stream);
  }
  const bool p010 = layout_is_16bit (cur.layout), semiplanar = layout_is_semiplanar (cur.layout);
  /* the luma and chroma words: 4 and 4 bytes (NV12), 4 and 2 (I420), 8 and 8 (P010) */
  const int luma_align = p010 ? 8 : 4, chroma_align = p010 ? 8 : semiplanar ? 4 : 2;
  bool vec = true;
  for (int p = 0; p < cur.n_planes; p++) {
    const int al = p == 0 ? luma_align : chroma_align;
    vec = vec && aligned (cur.planes[p], al) && aligned (prev.planes[p], al) && aligned (out.planes[p], al);
  }
  /* the narrow path, group by group through the definition, is the same for every layout */
  if (!vec)
    return launch (noisemap_yuv_kernel<false, Yuv420::I420>, a, results, stream);
  if (p010)
    return launch (noisemap_yuv_kernel<true, Yuv420::P010>, a, results, stream);
  return semiplanar ? launch (noisemap_yuv_kernel<true, Yuv420::Nv12>, a, results, stream)
                    : launch (noisemap_yuv_kernel<true, Yuv420::I420>, a, results, stream);
}

}  // namespace cuv
