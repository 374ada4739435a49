/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The heat map in one pass: each thread reads a 4x2 tile of the current and the previous frame,
 * 16-byte accesses where all three views allow, looks d up in the colour table (3 KiB, L1
 * resident) and writes the tile. Statistics as difference.cuh describes. YUY2/UYVY: a tile row is
 * two pixel pairs, one 8-byte access, each pair's |dU| + |dV| shared by its two pixels. P010: as
 * NV12, a tile row's four luma samples and its two groups' chroma one 8-byte access each, their
 * high bytes gathered into NV12's words (high_bytes). */
#include "kernels/heatmap/heatmap.h"

#include "kernels/difference/difference.cuh"

namespace cuv {

namespace {

using namespace diff;

struct HeatArgs {
  Frame cur, prev, out;
  HeatmapParams p;
};

__device__ __forceinline__ uint32_t heat (const HeatmapParams &p, int d, uint32_t current, bool blend)
{
  const uint32_t h = __ldg (p.table + d);
  return blend ? blend_px (h, current, p.blend) | 0xff000000u : h;
}

/* One RGB pixel through any alignment: the edges of a tile row, and unaligned views. */
__device__ __forceinline__ void heat_rgb_px (const HeatArgs &a, int x, int y, bool blend, uint32_t &sum, uint32_t &mx)
{
  const uint32_t c = load_le32 (row (a.cur.planes[0], y) + 4 * x);
  const int d = rgb_abs_sum (c, load_le32 (row (a.prev.planes[0], y) + 4 * x));
  sum += d;
  mx = ::max (mx, static_cast<uint32_t> (d));
  store_le32 (row_w (a.out.planes[0], y) + 4 * x, heat (a.p, d, c, blend));
}

template <bool kVec, bool kBlend>
__global__ void __launch_bounds__ (kThreads) heatmap_rgb_kernel (HeatArgs a, DiffResults results)
{
  uint32_t sum = 0, mx = 0;
  rgb_tiles<kVec> (a.cur, a.prev, a.out,
      [&] (uint32_t c, uint32_t q) {
        const uint32_t d = __vsadu4 (c & 0x00ffffffu, q & 0x00ffffffu);
        sum += d;
        mx = ::max (mx, d);
        return heat (a.p, d, c, kBlend);
      },
      [&] (int x, int y) { heat_rgb_px (a, x, y, kBlend, sum, mx); });
  block_stats (sum, mx, &results.accum->sum_difference, &results.accum->max_difference);
  publish_stats (results);
}

/* One pixel of a YUV layout through any alignment. */
__device__ __forceinline__ void heat_yuv_px (const HeatArgs &a, int x, int y, bool blend, uint32_t &sum, uint32_t &mx)
{
  const YuvSample c = yuv_at (a.cur, x, y), q = yuv_at (a.prev, x, y);
  const int d = abs_diff (c.y, q.y) + abs_diff (c.u, q.u) + abs_diff (c.v, q.v);
  sum += d;
  mx = ::max (mx, static_cast<uint32_t> (d));
  const uint32_t current = blend ? yuv_px (a.p.yuv, PixelLayout::RGBA, c.y, c.u, c.v) : 0;
  store_le32 (row_w (a.out.planes[0], y) + 4 * x, heat (a.p, d, current, blend));
}

/* YUY2/UYVY: the tile's rows of two pairs (one 8-byte access each) into four RGBA pixels. */
template <bool kBlend, bool kUyvy>
__global__ void __launch_bounds__ (kThreads) heatmap_422_kernel (HeatArgs a, DiffResults results)
{
  constexpr int sy = kUyvy ? 8 : 0, su = kUyvy ? 0 : 8;
  const Walk w = walk ();
  const int width = a.cur.width, height = a.cur.height;
  uint32_t sum = 0, mx = 0;
  if (w.x0 < width) {
    for (int y0 = w.y_first; y0 < height; y0 += w.y_step) {
      for (int y = y0; y < min (y0 + kTileRows, height); y++) {
        if (w.x0 + kTilePix > width) {
          for (int x = w.x0; x < width; x++)
            heat_yuv_px (a, x, y, kBlend, sum, mx);
          continue;
        }
        const uint2 c = *reinterpret_cast<const uint2 *> (row (a.cur.planes[0], y) + 2 * w.x0);
        const uint2 q = *reinterpret_cast<const uint2 *> (row (a.prev.planes[0], y) + 2 * w.x0);
        const uint32_t cw[2] = {c.x, c.y}, qw[2] = {q.x, q.y};
        uint32_t o[4];
#pragma unroll
        for (int k = 0; k < 2; k++) {
          const uint32_t ad = __vabsdiffu4 (cw[k], qw[k]), duv = (ad >> su & 0xff) + (ad >> (16 + su) & 0xff);
          const int u = cw[k] >> su & 0xff, v = cw[k] >> (16 + su) & 0xff;
#pragma unroll
          for (int j = 0; j < 2; j++) {
            const uint32_t d = (ad >> (16 * j + sy) & 0xff) + duv;
            sum += d;
            mx = ::max (mx, d);
            const uint32_t current =
                kBlend ? yuv_px (a.p.yuv, PixelLayout::RGBA, cw[k] >> (16 * j + sy) & 0xff, u, v) : 0;
            o[2 * k + j] = heat (a.p, d, current, kBlend);
          }
        }
        store16 (row_w (a.out.planes[0], y) + 4 * w.x0, o[0], o[1], o[2], o[3]);
      }
    }
  }
  block_stats (sum, mx, &results.accum->sum_difference, &results.accum->max_difference);
  publish_stats (results);
}

/* |dU| + |dV| of the two chroma groups of a tile, and their samples. */
struct TileChroma {
  int d[2];
  int u[2], v[2];
};

/* The layouts the YUV kernel reads in words: NV12 (4-byte luma and chroma words), I420 (2-byte
 * chroma pieces) and P010 (8-byte words of four samples, read as their high bytes). */
enum class Yuv420 { Nv12, I420, P010 };

template <Yuv420 K>
__device__ __forceinline__ TileChroma tile_chroma (const Frame &cur, const Frame &prev, int gx, int gy)
{
  TileChroma t;
  if (K != Yuv420::I420) {
    const uint32_t c = K == Yuv420::P010 ? p010_groups (cur.planes[1], 2 * gx, gy) : nv12_groups (cur.planes[1], 2 * gx, gy);
    const uint32_t q = K == Yuv420::P010 ? p010_groups (prev.planes[1], 2 * gx, gy) : nv12_groups (prev.planes[1], 2 * gx, gy);
    const uint32_t ad = __vabsdiffu4 (c, q);
    t.d[0] = (ad & 0xff) + (ad >> 8 & 0xff);
    t.d[1] = (ad >> 16 & 0xff) + (ad >> 24);
    t.u[0] = c & 0xff, t.v[0] = c >> 8 & 0xff, t.u[1] = c >> 16 & 0xff, t.v[1] = c >> 24;
  } else {
    const uint32_t cu = i420_groups (cur.planes[1], gx, gy), cv = i420_groups (cur.planes[2], gx, gy);
    const uint32_t qu = i420_groups (prev.planes[1], gx, gy), qv = i420_groups (prev.planes[2], gx, gy);
    const uint32_t ad = __vabsdiffu4 (cu | cv << 16, qu | qv << 16);
    t.d[0] = (ad & 0xff) + (ad >> 16 & 0xff);
    t.d[1] = (ad >> 8 & 0xff) + (ad >> 24);
    t.u[0] = cu & 0xff, t.u[1] = cu >> 8, t.v[0] = cv & 0xff, t.v[1] = cv >> 8;
  }
  return t;
}

template <bool kVec, bool kBlend, Yuv420 K>
__global__ void __launch_bounds__ (kThreads) heatmap_yuv_kernel (HeatArgs a, DiffResults results)
{
  const Walk w = walk ();
  const int width = a.cur.width, height = a.cur.height;
  uint32_t sum = 0, mx = 0;
  if (w.x0 < width) {
    for (int y0 = w.y_first; y0 < height; y0 += w.y_step) {
      if (!kVec || w.x0 + kTilePix > width || y0 + kTileRows > height) {
        for (int y = y0; y < min (y0 + kTileRows, height); y++)
          for (int x = w.x0; x < min (w.x0 + kTilePix, width); x++)
            heat_yuv_px (a, x, y, kBlend, sum, mx);
      } else {
        uint32_t cy[kTileRows], qy[kTileRows];
        if (K == Yuv420::P010)
          tile_luma_p010 (a.cur, a.prev, w.x0, y0, cy, qy);
        else
          tile_luma (a.cur, a.prev, w.x0, y0, cy, qy);
        const TileChroma ch = tile_chroma<K> (a.cur, a.prev, w.x0 / 2, y0 / 2);
#pragma unroll
        for (int r = 0; r < kTileRows; r++) {
          const uint32_t dy = __vabsdiffu4 (cy[r], qy[r]);
          uint32_t o[4];
#pragma unroll
          for (int k = 0; k < 4; k++) {
            const uint32_t d = (dy >> (8 * k) & 0xff) + ch.d[k / 2];
            sum += d;
            mx = ::max (mx, d);
            const uint32_t current =
                kBlend ? yuv_px (a.p.yuv, PixelLayout::RGBA, cy[r] >> (8 * k) & 0xff, ch.u[k / 2], ch.v[k / 2]) : 0;
            o[k] = heat (a.p, d, current, kBlend);
          }
          store16 (row_w (a.out.planes[0], y0 + r) + 4 * w.x0, o[0], o[1], o[2], o[3]);
        }
      }
    }
  }
  block_stats (sum, mx, &results.accum->sum_difference, &results.accum->max_difference);
  publish_stats (results);
}

template <bool kVec, Yuv420 K>
cudaError_t launch_yuv (const HeatArgs &a, bool blend, const DiffResults &results, cudaStream_t stream)
{
  return blend ? launch (heatmap_yuv_kernel<kVec, true, K>, a, results, stream)
               : launch (heatmap_yuv_kernel<kVec, false, K>, a, results, stream);
}

}  // namespace

cudaError_t heatmap_cuda (const Frame &cur, const Frame &prev, const Frame &out, const HeatmapParams &params,
    const DiffResults &results, cudaStream_t stream)
{
  const HeatArgs a{cur, prev, out, params};
  const bool blend = params.blend < 256;
  const bool out16 = aligned (out.planes[0], 16);
  if (layout_is_rgb (cur.layout)) {
    const bool vec = out16 && aligned (cur.planes[0], 16) && aligned (prev.planes[0], 16);
    if (vec)
      return blend ? launch (heatmap_rgb_kernel<true, true>, a, results, stream)
                   : launch (heatmap_rgb_kernel<true, false>, a, results, stream);
    return blend ? launch (heatmap_rgb_kernel<false, true>, a, results, stream)
                 : launch (heatmap_rgb_kernel<false, false>, a, results, stream);
  }
  /* YUY2/UYVY in views not aligned for the packed kernel's 8- and 16-byte accesses: every pixel
   * through heat_yuv_px, the YUV kernel's narrow path, which takes any YUV layout */
  const bool packed = layout_is_packed422 (cur.layout);
  if (packed && !(out16 && aligned (cur.planes[0], 8) && aligned (prev.planes[0], 8)))
    return launch_yuv<false, Yuv420::I420> (a, blend, results, stream);
  if (packed) {
    if (cur.layout == PixelLayout::UYVY)
      return blend ? launch (heatmap_422_kernel<true, true>, a, results, stream)
                   : launch (heatmap_422_kernel<false, true>, a, results, stream);
    return blend ? launch (heatmap_422_kernel<true, false>, a, results, stream)
                 : launch (heatmap_422_kernel<false, false>, a, results, stream);
  }
  const bool p010 = layout_is_16bit (cur.layout);
  const bool semiplanar = layout_is_semiplanar (cur.layout);
  /* the luma and chroma words: 4 and 4 bytes (NV12), 4 and 2 (I420), 8 and 8 (P010) */
  const int luma_align = p010 ? 8 : 4, chroma_align = p010 ? 8 : semiplanar ? 4 : 2;
  bool vec = out16 && aligned (cur.planes[0], luma_align) && aligned (prev.planes[0], luma_align);
  for (int p = 1; p < cur.n_planes; p++)
    vec = vec && aligned (cur.planes[p], chroma_align) && aligned (prev.planes[p], chroma_align);
  /* the narrow path, pixel by pixel, is the same for every layout */
  if (!vec)
    return launch_yuv<false, Yuv420::I420> (a, blend, results, stream);
  if (p010)
    return launch_yuv<true, Yuv420::P010> (a, blend, results, stream);
  return semiplanar ? launch_yuv<true, Yuv420::Nv12> (a, blend, results, stream)
                    : launch_yuv<true, Yuv420::I420> (a, blend, results, stream);
}

}  // namespace cuv
