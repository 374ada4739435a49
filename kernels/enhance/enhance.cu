/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One pass, 4 pixels (or samples) per thread and kRows rows, 16-byte accesses where the views are
 * aligned. Each output byte is a function of the same thread's input bytes only, so src == dst
 * (in place) is safe. The tables are read through the read-only cache: tabley is 256 bytes and
 * the chroma of neighbouring pixels is close, so the gathers mostly hit L1. YUY2/UYVY: two pixel
 * pairs a thread, each word's Y bytes and its U, V pair looked up in place. P010: a 2x2 group a
 * thread, luma through the 10-bit table, chroma through integer arithmetic. */
#include "kernels/enhance/enhance.h"

#include <algorithm>

#include "kernels/base/cuda_access.cuh"
#include "kernels/enhance/enhance_math.h"

namespace cuv {

namespace {

constexpr int kPix = 4;
constexpr int kRows = 4;
constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

/* enhance_rgb () on a packed pixel, with byte dot products (dp4a) for the RGB -> YUV step: each of
 * Y, U, V is one instruction, and one byte permute makes the chroma table index. The coefficient
 * words hold videobalance's matrix rows in the pixel's byte order. */
struct RgbCoefficients {
  uint32_t y; /* unsigned bytes */
  uint32_t u; /* signed bytes */
  uint32_t v;
};

constexpr uint32_t pack_bytes (int b0, int b1, int b2)
{
  return (static_cast<uint32_t> (b0) & 0xff) | (static_cast<uint32_t> (b1) & 0xff) << 8 | (static_cast<uint32_t> (b2) & 0xff) << 16;
}

constexpr RgbCoefficients kRgbCoeffs = {pack_bytes (66, 129, 25), pack_bytes (-38, -74, 112), pack_bytes (112, -94, -18)};
constexpr RgbCoefficients kBgrCoeffs = {pack_bytes (25, 129, 66), pack_bytes (112, -74, -38), pack_bytes (-18, -94, 112)};

__device__ __forceinline__ int dp4a_us (uint32_t px, uint32_t coeffs, int acc)
{
  int r;
  asm ("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(px), "r"(coeffs), "r"(acc));
  return r;
}

template <bool kBgr>
__device__ __forceinline__ uint32_t rgb_px (uint32_t px, const uint8_t *ty, const uint16_t *tuv)
{
  constexpr RgbCoefficients c = kBgr ? kBgrCoeffs : kRgbCoeffs;
  /* alpha's coefficient byte is 0, so the fourth byte never contributes */
  uint32_t y_raw = __dp4a (px, c.y, 4096u);
  uint32_t u_raw = dp4a_us (px, c.u, 32768);
  uint32_t v_raw = dp4a_us (px, c.v, 32768);
  /* u_raw, v_raw lie in 4208..61328 (see enhance_math.h), so byte 1 is the value and bytes 2, 3 are 0 */
  int y = __ldg (ty + (y_raw >> 8));
  uint32_t uv = __ldg (tuv + __byte_perm (v_raw, u_raw, 0x7751));
  int u = uv & 0xff, v = uv >> 8;
  int y298 = 298 * y;
  uint32_t r = clamp255 ((y298 + 409 * v - 57068) >> 8);
  uint32_t g = clamp255 ((y298 - 100 * u - 208 * v + 34707) >> 8);
  uint32_t b = clamp255 ((y298 + 516 * u - 70870) >> 8);
  uint32_t out = kBgr ? (b | g << 8 | r << 16) : (r | g << 8 | b << 16);
  return out | (px & 0xff000000u);
}

/* All kRows rows are loaded before any is written: many loads in flight, and in place stays safe
 * since a thread reads and writes only its own pixels. */
template <bool kVec, bool kBgr>
__global__ void __launch_bounds__ (kBlockX * kBlockY)
enhance_rgb_kernel (const uint8_t *src, int src_pitch, uint8_t *dst, int dst_pitch, int width,
    int height, const EnhanceTables *tables)
{
  const int x0 = (blockIdx.x * kBlockX + threadIdx.x) * kPix;
  const int y0 = (blockIdx.y * kBlockY + threadIdx.y) * kRows;
  if (x0 >= width || y0 >= height)
    return;
  const uint8_t *ty = tables->y;
  const uint16_t *tuv = tables->uv;
  const int rows = min (kRows, height - y0);
  const int n = min (kPix, width - x0);

  uint32_t px[kRows][kPix];
#pragma unroll
  for (int r = 0; r < kRows; r++) {
    if (r < rows) {
      const uint8_t *in = src + static_cast<size_t> (y0 + r) * src_pitch + 4 * x0;
      if (kVec && n == kPix) {
        /* streaming: keep L1 for the tables */
        uint4 q = __ldcs (reinterpret_cast<const uint4 *> (in));
        px[r][0] = q.x;
        px[r][1] = q.y;
        px[r][2] = q.z;
        px[r][3] = q.w;
      } else {
#pragma unroll
        for (int k = 0; k < kPix; k++)
          px[r][k] = k < n ? load_px4<kVec> (in + 4 * k) : 0;
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; r++) {
    if (r >= rows)
      break;
    uint8_t *out = dst + static_cast<size_t> (y0 + r) * dst_pitch + 4 * x0;
#pragma unroll
    for (int k = 0; k < kPix; k++)
      px[r][k] = rgb_px<kBgr> (px[r][k], ty, tuv);
    if (kVec && n == kPix) {
      __stcs (reinterpret_cast<uint4 *> (out), make_uint4 (px[r][0], px[r][1], px[r][2], px[r][3]));
    } else {
#pragma unroll
      for (int k = 0; k < kPix; k++)
        if (k < n)
          store_px4<kVec> (out + 4 * k, px[r][k]);
    }
  }
}

/* Luma plane: a byte lookup. */
template <bool kVec>
__device__ __forceinline__ void enhance_y (const uint8_t *src, int src_pitch, uint8_t *dst, int dst_pitch, int width,
    int height, const uint8_t *ty, int x0, int y0)
{
  if (x0 >= width)
    return;
  const int y_end = min (y0 + kRows, height);
  for (int y = y0; y < y_end; y++) {
    const uint8_t *in = src + static_cast<size_t> (y) * src_pitch;
    uint8_t *out = dst + static_cast<size_t> (y) * dst_pitch;
    if (kVec && x0 + kPix <= width) {
      uint32_t q = __ldg (reinterpret_cast<const uint32_t *> (in + x0));
      uint32_t r = __ldg (ty + (q & 0xff)) | __ldg (ty + ((q >> 8) & 0xff)) << 8 |
          __ldg (ty + ((q >> 16) & 0xff)) << 16 | static_cast<uint32_t> (__ldg (ty + (q >> 24))) << 24;
      *reinterpret_cast<uint32_t *> (out + x0) = r;
    } else {
      for (int x = x0; x < min (x0 + kPix, width); x++)
        out[x] = __ldg (ty + __ldg (in + x));
    }
  }
}

/* A YUV frame in one launch: the first luma_rows rows of blocks do the luma plane, kPix x kRows
 * bytes a thread; the rows below do the chroma, one sample pair a thread, from two planes (I420)
 * or one interleaved plane (NV12: u == v - 1 with a sample step of 2). */
struct YuvArgs {
  const uint8_t *y_src;
  uint8_t *y_dst;
  int y_src_pitch, y_dst_pitch, width, height;
  const uint8_t *u_src, *v_src;
  uint8_t *u_dst, *v_dst;
  int u_pitch, v_pitch, du_pitch, dv_pitch, step, c_width, c_height;
  int luma_rows; /* rows of blocks that do the luma plane */
};

/* Chroma sample pairs a thread: 4 where the plane is NV12's interleaved one, aligned for 8-byte
 * accesses (one load and one store for the four), else 1. */
template <bool kPairs4> constexpr int kPairs = kPairs4 ? 4 : 1;

/* The pair at @x of row @y, byte by byte. */
__device__ __forceinline__ void enhance_uv (const YuvArgs &a, const EnhanceTables *tables, int x, int y)
{
  int u = __ldg (a.u_src + static_cast<size_t> (y) * a.u_pitch + x * a.step);
  int v = __ldg (a.v_src + static_cast<size_t> (y) * a.v_pitch + x * a.step);
  uint32_t uv = __ldg (tables->uv + u * 256 + v);
  a.u_dst[static_cast<size_t> (y) * a.du_pitch + x * a.step] = uv & 0xff;
  a.v_dst[static_cast<size_t> (y) * a.dv_pitch + x * a.step] = uv >> 8;
}

/* Two NV12 pairs in one word (u0 v0 u1 v1, little-endian): the table gives each pair's new u in its
 * low byte and v in its high byte, the same order. */
__device__ __forceinline__ uint32_t enhance_uv2 (uint32_t w, const uint16_t *tuv)
{
  const uint32_t p0 = __ldg (tuv + (w & 0xff) * 256 + ((w >> 8) & 0xff));
  const uint32_t p1 = __ldg (tuv + ((w >> 16) & 0xff) * 256 + (w >> 24));
  return p0 | p1 << 16;
}

template <bool kVec, bool kPairs4>
__global__ void __launch_bounds__ (kBlockX * kBlockY) enhance_yuv_kernel (YuvArgs a, const EnhanceTables *tables)
{
  if (static_cast<int> (blockIdx.y) < a.luma_rows) {
    enhance_y<kVec> (a.y_src, a.y_src_pitch, a.y_dst, a.y_dst_pitch, a.width, a.height, tables->y,
        (blockIdx.x * kBlockX + threadIdx.x) * kPix, (blockIdx.y * kBlockY + threadIdx.y) * kRows);
    return;
  }
  const int x = (blockIdx.x * kBlockX + threadIdx.x) * kPairs<kPairs4>;
  const int y = (blockIdx.y - a.luma_rows) * kBlockY + threadIdx.y;
  if (x >= a.c_width || y >= a.c_height)
    return;
  if constexpr (kPairs4) {
    if (x + 4 <= a.c_width) {
      const uint2 q = __ldg (reinterpret_cast<const uint2 *> (a.u_src + static_cast<size_t> (y) * a.u_pitch + 2 * x));
      *reinterpret_cast<uint2 *> (a.u_dst + static_cast<size_t> (y) * a.du_pitch + 2 * x) =
          make_uint2 (enhance_uv2 (q.x, tables->uv), enhance_uv2 (q.y, tables->uv));
      return;
    }
  }
  for (int k = x; k < min (x + kPairs<kPairs4>, a.c_width); k++)
    enhance_uv (a, tables, k, y);
}

/* YUY2/UYVY: a pixel pair in one word (Y0 U Y1 V or U Y0 V Y1, little-endian), its Y bytes
 * through tabley and its U, V through the pair table, each back in its place. */
template <bool kUyvy> __device__ __forceinline__ uint32_t enhance_pair (uint32_t w, const EnhanceTables *t)
{
  constexpr int sy = kUyvy ? 8 : 0, su = kUyvy ? 0 : 8;
  const uint32_t uv = __ldg (t->uv + ((w >> su) & 0xff) * 256 + ((w >> (16 + su)) & 0xff));
  return static_cast<uint32_t> (__ldg (t->y + ((w >> sy) & 0xff))) << sy |
      static_cast<uint32_t> (__ldg (t->y + ((w >> (16 + sy)) & 0xff))) << (16 + sy) | (uv & 0xff) << su |
      (uv >> 8) << (16 + su);
}

/* YUY2/UYVY: two pairs (4 pixels, 8 bytes: one load and one store where aligned) of kRows rows a
 * thread. */
template <bool kUyvy, bool kVec>
__global__ void __launch_bounds__ (kBlockX * kBlockY) enhance422_kernel (const uint8_t *src, int src_pitch, uint8_t *dst,
    int dst_pitch, int pairs, int height, const EnhanceTables *tables)
{
  const int x0 = (blockIdx.x * kBlockX + threadIdx.x) * 2;
  const int y0 = (blockIdx.y * kBlockY + threadIdx.y) * kRows;
  if (x0 >= pairs)
    return;
  for (int y = y0; y < min (y0 + kRows, height); y++) {
    const uint8_t *in = src + static_cast<size_t> (y) * src_pitch + 4 * x0;
    uint8_t *out = dst + static_cast<size_t> (y) * dst_pitch + 4 * x0;
    if (kVec && x0 + 2 <= pairs) {
      const uint2 q = __ldg (reinterpret_cast<const uint2 *> (in));
      *reinterpret_cast<uint2 *> (out) = make_uint2 (enhance_pair<kUyvy> (q.x, tables), enhance_pair<kUyvy> (q.y, tables));
    } else {
      for (int k = 0; k < min (2, pairs - x0); k++)
        store_px4<kVec> (out + 4 * k, enhance_pair<kUyvy> (load_px4<kVec> (in + 4 * k), tables));
    }
  }
}

/* P010: one 2x2 group a thread, its four luma samples and its chroma pair, a 4-byte word a row and
 * one for the pair where @kVec (views aligned to 4 bytes), else 2-byte samples one by one. */
template <bool kVec>
__global__ void __launch_bounds__ (kBlockX * kBlockY) enhance_p010_kernel (Frame src, Frame dst, const EnhanceTables *t)
{
  const int gx = blockIdx.x * kBlockX + threadIdx.x, gy = blockIdx.y * kBlockY + threadIdx.y;
  if (gx >= src.planes[1].width || gy >= src.planes[1].height)
    return;
  for (int y = 2 * gy; y < min (2 * gy + 2, src.height); y++) {
    const uint8_t *in = luma_at (src, 2 * gx, y);
    uint8_t *out = luma_at (dst, 2 * gx, y);
    if (kVec && 2 * gx + 2 <= src.width) {
      const uint32_t w = __ldg (reinterpret_cast<const uint32_t *> (in));
      *reinterpret_cast<uint32_t *> (out) = enhance_luma10 (t->y10, w & 0xffff) | enhance_luma10 (t->y10, w >> 16) << 16;
      continue;
    }
    for (int k = 0; k < min (2, src.width - 2 * gx); k++)
      store_le16 (out + 2 * k, enhance_luma10 (t->y10, load_le16 (in + 2 * k)));
  }
  const uint8_t *in = chroma_at (src, gx, gy).u;
  uint8_t *out = chroma_at (dst, gx, gy).u;
  if (kVec) {
    const uint32_t w = __ldg (reinterpret_cast<const uint32_t *> (in));
    *reinterpret_cast<uint32_t *> (out) = enhance_chroma10 (t->hue_cos16, t->hue_sin16, w & 0xffff, w >> 16);
    return;
  }
  const uint32_t uv = enhance_chroma10 (t->hue_cos16, t->hue_sin16, load_le16 (in), load_le16 (in + 2));
  store_le16 (out, uv & 0xffff);
  store_le16 (out + 2, uv >> 16);
}

bool aligned (const Plane &s, const Plane &d, int align)
{
  return reinterpret_cast<uintptr_t> (s.data) % align == 0 && reinterpret_cast<uintptr_t> (d.data) % align == 0 &&
      s.pitch % align == 0 && d.pitch % align == 0;
}

}  // namespace

cudaError_t enhance_cuda (const Frame &src, const Frame &dst, const EnhanceTables *tables, cudaStream_t stream)
{
  if (src.width <= 0 || src.height <= 0)
    return cudaSuccess;
  const Plane &s = src.planes[0];
  const Plane &d = dst.planes[0];
  dim3 block (kBlockX, kBlockY);
  dim3 grid (div_up (div_up (s.width, kPix), kBlockX), div_up (div_up (s.height, kRows), kBlockY));

  if (layout_is_rgb (src.layout)) {
    const bool bgr = layout_is_bgr (src.layout), vec = aligned (s, d, 16);
    auto kernel = vec ? (bgr ? enhance_rgb_kernel<true, true> : enhance_rgb_kernel<true, false>)
                      : (bgr ? enhance_rgb_kernel<false, true> : enhance_rgb_kernel<false, false>);
    kernel<<<grid, block, 0, stream>>> (s.data, s.pitch, d.data, d.pitch, s.width, s.height, tables);
    return cudaGetLastError ();
  }

  if (layout_is_packed422 (src.layout)) {
    const int pairs = s.width / 2; /* the plane's width counts whole pairs */
    const bool vec = aligned (s, d, 8), uyvy = src.layout == PixelLayout::UYVY;
    const dim3 grid422 (div_up (div_up (pairs, 2), kBlockX), grid.y);
    auto kernel = vec ? (uyvy ? enhance422_kernel<true, true> : enhance422_kernel<false, true>)
                      : (uyvy ? enhance422_kernel<true, false> : enhance422_kernel<false, false>);
    kernel<<<grid422, block, 0, stream>>> (s.data, s.pitch, d.data, d.pitch, pairs, s.height, tables);
    return cudaGetLastError ();
  }

  if (layout_is_16bit (src.layout)) {
    const bool vec = aligned (s, d, 4) && aligned (src.planes[1], dst.planes[1], 4);
    const dim3 grid_p010 (div_up (src.planes[1].width, kBlockX), div_up (src.planes[1].height, kBlockY));
    auto kernel = vec ? enhance_p010_kernel<true> : enhance_p010_kernel<false>;
    kernel<<<grid_p010, block, 0, stream>>> (src, dst, tables);
    return cudaGetLastError ();
  }

  /* NV12 or I420: luma and chroma in one launch (a launch costs the host more than these planes
   * cost the GPU at 1920x1080) */
  const Plane &cu = src.planes[1], &du = dst.planes[1];
  const bool nv12 = src.layout == PixelLayout::NV12;
  const Plane &cv = nv12 ? cu : src.planes[2], &dv = nv12 ? du : dst.planes[2];
  YuvArgs a{s.data, d.data, s.pitch, d.pitch, s.width, s.height, cu.data, nv12 ? cu.data + 1 : cv.data, du.data,
      nv12 ? du.data + 1 : dv.data, cu.pitch, cv.pitch, du.pitch, dv.pitch, nv12 ? 2 : 1, cu.width, cu.height,
      static_cast<int> (grid.y)};
  const bool vec = aligned (s, d, 4), pairs4 = nv12 && aligned (cu, du, 8);
  const int pairs = pairs4 ? kPairs<true> : kPairs<false>;
  dim3 yuv_grid (std::max<unsigned> (grid.x, div_up (div_up (cu.width, pairs), kBlockX)), grid.y + div_up (cu.height, kBlockY));
  auto kernel = vec ? (pairs4 ? enhance_yuv_kernel<true, true> : enhance_yuv_kernel<true, false>)
                    : (pairs4 ? enhance_yuv_kernel<false, true> : enhance_yuv_kernel<false, false>);
  kernel<<<yuv_grid, block, 0, stream>>> (a, tables);
  return cudaGetLastError ();
}

}  // namespace cuv
