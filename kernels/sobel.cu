/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each thread produces 4 horizontally adjacent pixels of kRows consecutive rows. It keeps a rolling
 * window of three source rows in registers (6 pixels each: the 4 plus one neighbour per side), so
 * each source row is loaded once per thread with one 16-byte (RGB) or 4-byte (8-bit plane) access;
 * the side neighbours and the two halo rows of each strip hit L1/L2, not DRAM. */
#include "sobel.h"

#include <algorithm>

#include "sobel_math.h"

namespace cuv {

namespace {

constexpr int kPix = 4;   /* pixels per thread, horizontally */
constexpr int kRows = 4;  /* rows per thread, vertically */
constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

enum class Kind { RgbColor, RgbLuma, BgrLuma, Gray };

constexpr int div_up (int a, int b) { return (a + b - 1) / b; }

template <Kind K> struct Traits {
  static constexpr int kBytes = K == Kind::Gray ? 1 : 4;
};

/* The value a source pixel contributes to the window: the packed pixel (color), its luma, or the
 * byte (gray). */
template <Kind K> __device__ __forceinline__ uint32_t sample (uint32_t raw)
{
  if constexpr (K == Kind::RgbLuma)
    return luma_bt601 (raw & 0xff, (raw >> 8) & 0xff, (raw >> 16) & 0xff);
  else if constexpr (K == Kind::BgrLuma)
    return luma_bt601 ((raw >> 16) & 0xff, (raw >> 8) & 0xff, raw & 0xff);
  else
    return raw;
}

template <Kind K> __device__ __forceinline__ uint32_t load_px (const uint8_t *row, int x)
{
  if constexpr (Traits<K>::kBytes == 4)
    return __ldg (reinterpret_cast<const uint32_t *> (row) + x);
  else
    return __ldg (row + x);
}

/* w[0] = pixel x0-1, w[1..4] = x0..x0+3, w[5] = x0+4, all clamped to the row. */
template <Kind K, bool kVec>
__device__ __forceinline__ void load_row (const uint8_t *row, int x0, int width, uint32_t w[6])
{
  if (kVec && x0 + kPix <= width) {
    if constexpr (Traits<K>::kBytes == 4) {
      uint4 q = __ldg (reinterpret_cast<const uint4 *> (row + 4 * x0));
      w[1] = sample<K> (q.x);
      w[2] = sample<K> (q.y);
      w[3] = sample<K> (q.z);
      w[4] = sample<K> (q.w);
    } else {
      uint32_t q = __ldg (reinterpret_cast<const uint32_t *> (row + x0));
      w[1] = q & 0xff;
      w[2] = (q >> 8) & 0xff;
      w[3] = (q >> 16) & 0xff;
      w[4] = q >> 24;
    }
  } else {
#pragma unroll
    for (int k = 0; k < kPix; k++)
      w[1 + k] = sample<K> (load_px<K> (row, min (x0 + k, width - 1)));
  }
  w[0] = sample<K> (load_px<K> (row, max (x0 - 1, 0)));
  w[5] = sample<K> (load_px<K> (row, min (x0 + kPix, width - 1)));
}

template <Kind K>
__device__ __forceinline__ int energy_at (const uint32_t *a, const uint32_t *b, const uint32_t *c,
    int k, int shift)
{
  auto ch = [shift] (uint32_t v) { return static_cast<int> ((v >> shift) & 0xff); };
  if constexpr (K != Kind::RgbColor)
    return sobel_energy (a[k], a[k + 1], a[k + 2], b[k], b[k + 2], c[k], c[k + 1], c[k + 2]);
  else
    return sobel_energy (ch (a[k]), ch (a[k + 1]), ch (a[k + 2]), ch (b[k]), ch (b[k + 2]),
        ch (c[k]), ch (c[k + 1]), ch (c[k + 2]));
}

template <Kind K, bool kVec>
__global__ void __launch_bounds__ (kBlockX * kBlockY)
sobel_kernel (const uint8_t *__restrict__ src, int src_pitch, uint8_t *__restrict__ dst,
    int dst_pitch, int width, int height, float scale, int threshold)
{
  const int x0 = (blockIdx.x * kBlockX + threadIdx.x) * kPix;
  const int y0 = (blockIdx.y * kBlockY + threadIdx.y) * kRows;
  if (x0 >= width || y0 >= height)
    return;

  uint32_t a[6], b[6], c[6];
  auto row_ptr = [&] (int y) { return src + static_cast<size_t> (min (max (y, 0), height - 1)) * src_pitch; };
  load_row<K, kVec> (row_ptr (y0 - 1), x0, width, a);
  load_row<K, kVec> (row_ptr (y0), x0, width, b);

  const int y_end = min (y0 + kRows, height);
  for (int y = y0; y < y_end; y++) {
    load_row<K, kVec> (row_ptr (y + 1), x0, width, c);

    uint32_t out[kPix];
#pragma unroll
    for (int k = 0; k < kPix; k++) {
      if constexpr (K == Kind::RgbColor) {
        uint32_t o = b[k + 1] & 0xff000000u;
#pragma unroll
        for (int s = 0; s < 24; s += 8)
          o |= static_cast<uint32_t> (sobel_output (energy_at<K> (a, b, c, k, s), scale, threshold)) << s;
        out[k] = o;
      } else {
        uint32_t m = sobel_output (energy_at<K> (a, b, c, k, 0), scale, threshold);
        out[k] = Traits<K>::kBytes == 4 ? (m | m << 8 | m << 16) : m;
      }
    }
    if constexpr (K == Kind::RgbLuma || K == Kind::BgrLuma) {
      /* alpha comes from the raw pixel, which the luma window no longer holds */
      const uint32_t *raw = reinterpret_cast<const uint32_t *> (row_ptr (y));
#pragma unroll
      for (int k = 0; k < kPix; k++)
        out[k] |= __ldg (raw + min (x0 + k, width - 1)) & 0xff000000u;
    }

    uint8_t *drow = dst + static_cast<size_t> (y) * dst_pitch;
    if (kVec && x0 + kPix <= width) {
      if constexpr (Traits<K>::kBytes == 4)
        *reinterpret_cast<uint4 *> (drow + 4 * x0) = make_uint4 (out[0], out[1], out[2], out[3]);
      else
        *reinterpret_cast<uint32_t *> (drow + x0) = out[0] | out[1] << 8 | out[2] << 16 | out[3] << 24;
    } else {
#pragma unroll
      for (int k = 0; k < kPix; k++) {
        if (x0 + k < width) {
          if constexpr (Traits<K>::kBytes == 4)
            reinterpret_cast<uint32_t *> (drow)[x0 + k] = out[k];
          else
            drow[x0 + k] = static_cast<uint8_t> (out[k]);
        }
      }
    }
#pragma unroll
    for (int k = 0; k < 6; k++) {
      a[k] = b[k];
      b[k] = c[k];
    }
  }
}

template <Kind K>
cudaError_t launch (const Plane &s, const Plane &d, const SobelParams &p, cudaStream_t stream)
{
  dim3 block (kBlockX, kBlockY);
  dim3 grid (div_up (div_up (s.width, kPix), kBlockX), div_up (div_up (s.height, kRows), kBlockY));
  constexpr int align = Traits<K>::kBytes * kPix;
  bool vec = reinterpret_cast<uintptr_t> (s.data) % align == 0 && reinterpret_cast<uintptr_t> (d.data) % align == 0 &&
      s.pitch % align == 0 && d.pitch % align == 0;
  if (vec)
    sobel_kernel<K, true><<<grid, block, 0, stream>>> (s.data, s.pitch, d.data, d.pitch, s.width, s.height, p.scale, p.threshold);
  else
    sobel_kernel<K, false><<<grid, block, 0, stream>>> (s.data, s.pitch, d.data, d.pitch, s.width, s.height, p.scale, p.threshold);
  return cudaGetLastError ();
}

}  // namespace

cudaError_t sobel_cuda (const Frame &src, const Frame &dst, const SobelParams &params, cudaStream_t stream)
{
  if (src.width <= 0 || src.height <= 0)
    return cudaSuccess;
  const Plane &s = src.planes[0];
  const Plane &d = dst.planes[0];
  if (layout_is_rgb (src.layout)) {
    if (params.mode == SobelMode::Color)
      return launch<Kind::RgbColor> (s, d, params, stream);
    if (layout_is_bgr (src.layout))
      return launch<Kind::BgrLuma> (s, d, params, stream);
    return launch<Kind::RgbLuma> (s, d, params, stream);
  }
  cudaError_t err = launch<Kind::Gray> (s, d, params, stream);
  for (int p = 1; p < src.n_planes && err == cudaSuccess; p++) {
    const Plane &c = dst.planes[p];
    err = cudaMemset2DAsync (c.data, c.pitch, 128, static_cast<size_t> (c.width) * plane_sample_bytes (src.layout, p),
        c.height, stream);
  }
  return err;
}

}  // namespace cuv
