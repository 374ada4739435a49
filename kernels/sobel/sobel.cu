/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each thread produces 4 horizontally adjacent pixels of kRows consecutive rows. It first loads all
 * kRows + 2 source rows it needs (6 pixels each: the 4 plus one neighbour per side; one 16-byte
 * access for RGB, 4 bytes for an 8-bit plane), so that many loads are in flight before any
 * arithmetic; the side neighbours and the two halo rows hit L1/L2, not DRAM. The filter is applied
 * separably: per column a vertical smoothing (a + 2b + c) and difference (c - a), then gx and gy
 * from three columns, so each sample is unpacked once per row. YUY2 and UYVY are filtered on their
 * Y bytes (four pixels in one 8-byte load) and get 128 in U and V; P010 on its Y samples' high
 * bytes, the same loads, written back as m << 8. An 8-bit plane (NV12, I420, GRAY8, and the bytes
 * of YUY2/UYVY/P010 above) keeps each loaded row packed in two words and unpacks three rows per output row, so that
 * its kernel needs 40 registers instead of 64 and more blocks fit an SM: with many pipelines
 * sharing the GPU that is 14% less GPU time a 1920x1080 frame (docs/performance-log.md). */
#include "kernels/sobel/sobel.h"

#include <type_traits>

#include "kernels/base/cuda_access.cuh"
#include "kernels/sobel/sobel_math.h"

namespace cuv {

namespace {

#ifndef CUV_SOBEL_ROWS
#define CUV_SOBEL_ROWS 4 /* tests/bench builds variants to compare */
#endif
/* 4 blocks of 256 threads per SM: 64 registers without spills (measured best on the H100; the
 * compiler's free choice, ~75 registers, gives 3 blocks and a 5.15-wave grid at 3840x2160) */
#ifndef CUV_SOBEL_MIN_BLOCKS
#define CUV_SOBEL_MIN_BLOCKS 4
#endif
#ifndef CUV_SOBEL_GRAY_MIN_BLOCKS
#define CUV_SOBEL_GRAY_MIN_BLOCKS 6
#endif
/* blocks of 256 threads that an SM of the architecture being compiled can hold at most (Turing
 * 4, Ampere's and Ada's consumer parts 6, the rest 8): the bounds below never ask for more */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr int kMaxBlocksPerSm = 4;
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
constexpr int kMaxBlocksPerSm = 6;
#else
constexpr int kMaxBlocksPerSm = 8;
#endif
/* the 8-bit plane's kernel (NV12, I420, GRAY8), whose packed window needs fewer registers: 6
 * blocks (40 registers) without spills where rows are aligned; 5 (48) where they are not, whose
 * byte-by-byte loads spill at 40 (measured on the H100 in docs/performance-log.md) */
constexpr int kGrayMinBlocks = CUV_SOBEL_GRAY_MIN_BLOCKS < kMaxBlocksPerSm ? CUV_SOBEL_GRAY_MIN_BLOCKS : kMaxBlocksPerSm;
constexpr int kGrayMinBlocksUnaligned = 5 < kMaxBlocksPerSm ? 5 : kMaxBlocksPerSm;
constexpr int kPix = 4;               /* pixels per thread, horizontally */
constexpr int kRows = CUV_SOBEL_ROWS; /* rows per thread, vertically */
constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

enum class Kind { RgbColor, RgbLuma, BgrLuma, Gray, Yuy2, Uyvy, P010 };

/* What an energy becomes: the magnitude by the exact root or by the hardware's approximate one
 * (where sobel_fast_root_exact_cuda proved it gives the same bytes), or 255/0 against the
 * threshold's energy bound. */
enum class Output { Exact, Fast, Threshold };

/* Kinds that filter one byte a pixel: an 8-bit plane, the Y bytes of YUY2/UYVY, the high bytes of
 * P010's Y samples. */
template <Kind K> constexpr bool kOneByte = K == Kind::Gray || K == Kind::Yuy2 || K == Kind::Uyvy || K == Kind::P010;
template <Kind K> constexpr int kBytes = K == Kind::Gray ? 1 : kOneByte<K> ? 2 : 4;
/* the byte of a pixel that is filtered: its Y in YUY2 (Y U, Y V) and UYVY (U Y, V Y), the high
 * byte of P010's little-endian sample */
template <Kind K> constexpr int kYByte = K == Kind::Uyvy || K == Kind::P010 ? 1 : 0;
/* what the other byte of a pixel's two gets: 128 for YUY2/UYVY's U and V, 0 for P010's low bits */
template <Kind K> constexpr uint32_t kOtherByte = K == Kind::P010 ? 0u : 0x80u;

template <Kind K, bool kAligned> __device__ __forceinline__ uint32_t load_px (const uint8_t *row, int x)
{
  if constexpr (kBytes<K> == 4)
    return load_px4<kAligned> (row + 4 * x);
  else
    return __ldg (row + kBytes<K> * x + kYByte<K>);
}

/* Byte offsets in a row of the pixels a thread reads beside its four, clamped to the row. */
struct SideOffsets {
  uint32_t left, right;
};

/* w[0] = pixel x0-1, w[1..4] = x0..x0+3, w[5] = x0+4, all clamped to the row. */
template <Kind K, bool kVec>
__device__ __forceinline__ void load_row (const uint8_t *row, int x0, int width, SideOffsets side, uint32_t w[6])
{
  if (kVec && x0 + kPix <= width) {
    if constexpr (kBytes<K> == 4) {
      uint4 q = __ldg (reinterpret_cast<const uint4 *> (row + 4 * x0));
      w[1] = q.x;
      w[2] = q.y;
      w[3] = q.z;
      w[4] = q.w;
    } else if constexpr (kBytes<K> == 2) {
      uint2 q = __ldg (reinterpret_cast<const uint2 *> (row + 2 * x0));
      w[1] = (q.x >> (8 * kYByte<K>)) & 0xff;
      w[2] = (q.x >> (16 + 8 * kYByte<K>)) & 0xff;
      w[3] = (q.y >> (8 * kYByte<K>)) & 0xff;
      w[4] = (q.y >> (16 + 8 * kYByte<K>)) & 0xff;
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
      w[1 + k] = load_px<K, kVec> (row, min (x0 + k, width - 1));
  }
  if constexpr (kBytes<K> == 4) {
    w[0] = load_px4<kVec> (row + side.left);
    w[5] = load_px4<kVec> (row + side.right);
  } else {
    w[0] = __ldg (row + side.left + kYByte<K>);
    w[5] = __ldg (row + side.right + kYByte<K>);
  }
}

/* Luma kinds replace each loaded pixel's colour bytes by its luma once, keeping alpha. */
template <Kind K> __device__ __forceinline__ uint32_t to_luma (uint32_t raw)
{
  /* luma_bt601 as one byte dot product: the coefficient bytes in the pixel's order, 0 for alpha */
  if constexpr (K == Kind::RgbLuma)
    return (__dp4a (raw, 77u | 150u << 8 | 29u << 16, 0u) >> 8) | (raw & 0xff000000u);
  else if constexpr (K == Kind::BgrLuma)
    return (__dp4a (raw, 29u | 150u << 8 | 77u << 16, 0u) >> 8) | (raw & 0xff000000u);
  else
    return raw;
}

/* Sobel outputs of the 4 pixels for rows a (above), b, c (below) of one 8-bit value per pixel
 * (luma, or the byte of an 8-bit plane). */
/* The output byte (in the low byte) for an energy: the magnitude, or 255/0 against the threshold's
 * energy bound in threshold mode. */
template <Output kOut, typename Energy>
__device__ __forceinline__ uint32_t output_bits (Energy e, float scale, int thr_energy)
{
  if constexpr (kOut == Output::Threshold)
    return e >= static_cast<Energy> (thr_energy) ? 0xffu : 0u;
  else if constexpr (kOut == Output::Fast)
    return sobel_magnitude_bits_fast (e, scale);
  else
    return sobel_magnitude_bits (e, scale);
}

template <Output kOut>
__device__ __forceinline__ void sobel4 (const uint32_t *a, const uint32_t *b, const uint32_t *c, float scale,
    int thr_energy, uint32_t m[kPix])
{
  int smooth[6], diff[6];
#pragma unroll
  for (int x = 0; x < 6; x++) {
    int va = a[x] & 0xff, vb = b[x] & 0xff, vc = c[x] & 0xff;
    smooth[x] = va + 2 * vb + vc;
    diff[x] = vc - va;
  }
#pragma unroll
  for (int k = 0; k < kPix; k++) {
    int gx = smooth[k + 2] - smooth[k];
    int gy = diff[k] + 2 * diff[k + 1] + diff[k + 2];
    m[k] = output_bits<kOut> (gx * gx + gy * gy, scale, thr_energy) & 0xff;
  }
}

/* Colour Sobel on packed pixels, two channels per 32-bit word (16-bit lanes): lo holds channels 0
 * and 2, hi channel 1 and alpha. Smoothing is at most 1020 per lane; differences are taken with a
 * bias (256 per diff, 1024 per gradient) so that no lane ever borrows from its neighbour. */
/* gx^2 + gy^2 of one 16-bit lane (0: low, 1: high), exactly, in float: a permute puts the biased
 * lane under 2^23's exponent, one subtraction removes 2^23 and the bias, and the squares and their
 * sum (< 2^22) are exact. This keeps the work on the FMA pipe rather than the integer ALU. */
__device__ __forceinline__ float lane_energy (uint32_t gx, uint32_t gy, int lane)
{
  const uint32_t sel = lane == 0 ? 0x7410 : 0x7432;
  float x = __fsub_rn (__uint_as_float (__byte_perm (gx, 0x4B000000u, sel)), 8389632.0f); /* 2^23 + 1024 */
  float y = __fsub_rn (__uint_as_float (__byte_perm (gy, 0x4B000000u, sel)), 8389632.0f);
  /* y * y + 2^-30 is y * y exactly unless both are 0: the zero lift for free */
  return __fmaf_rn (x, x, __fmaf_rn (y, y, kEnergyZeroLift));
}

template <Output kOut>
__device__ __forceinline__ void sobel4_color (const uint32_t (&lo)[3][6], const uint32_t (&hi)[3][6], float scale,
    int thr_energy, uint32_t out[kPix])
{
  uint32_t sm_lo[6], sm_hi[6], df_lo[6], df_hi[6];
#pragma unroll
  for (int x = 0; x < 6; x++) {
    sm_lo[x] = lo[0][x] + 2 * lo[1][x] + lo[2][x];
    sm_hi[x] = hi[0][x] + 2 * hi[1][x] + hi[2][x];
    df_lo[x] = lo[2][x] + 0x01000100u - lo[0][x];
    df_hi[x] = hi[2][x] + 0x01000100u - hi[0][x];
  }
#pragma unroll
  for (int k = 0; k < kPix; k++) {
    uint32_t gx_lo = sm_lo[k + 2] + 0x04000400u - sm_lo[k];
    uint32_t gx_hi = sm_hi[k + 2] + 0x04000400u - sm_hi[k];
    uint32_t gy_lo = df_lo[k] + 2 * df_lo[k + 1] + df_lo[k + 2];
    uint32_t gy_hi = df_hi[k] + 2 * df_hi[k + 1] + df_hi[k + 2];
    uint32_t c0 = output_bits<kOut> (lane_energy (gx_lo, gy_lo, 0), scale, thr_energy);
    uint32_t c1 = output_bits<kOut> (lane_energy (gx_hi, gy_hi, 0), scale, thr_energy);
    uint32_t c2 = output_bits<kOut> (lane_energy (gx_lo, gy_lo, 1), scale, thr_energy);
    /* low bytes of c0, c1, c2, then alpha (byte 2 of the centre's hi word) */
    out[k] = __byte_perm (__byte_perm (c0, c1, 0x0040), __byte_perm (c2, hi[1][k + 1], 0x0060), 0x5410);
  }
}

/* The chroma planes of a luma frame (NV12, I420, P010), which the output gets as 128 (no colour;
 * P010's 128 << 8): each thread fills the part of every plane that lies under its pixels, so no
 * second operation runs. */
struct Chroma {
  uint8_t *data[2];
  int pitch[2];
  int width[2]; /* bytes per row */
  int height[2];
  /* where a plane's rows are exactly kPix_bytes[p] / kPix bytes a luma pixel (NV12 1, I420 1/2,
   * P010 2, of even sizes) and its rows exactly the luma plane's shifted right by shift_y[p] (0 or
   * 1), aligned for a thread's whole span in one store: its bytes for kPix pixels; else -1 */
  int span_bytes[2], shift_y[2];
  /* the bytes of a row from a 4-byte-aligned offset: 0x80808080, P010's 0x80008000 */
  uint32_t fill;
  int n;
};

/* The bytes [x0, x1) x rows [y0, y1) of the luma plane map to [floor (x0 * cw / width), ...) of a
 * chroma plane cw bytes wide (rows alike): neighbouring threads meet exactly, the last one reaches
 * the edge, whatever the subsampling and odd sizes. */
__device__ __forceinline__ void fill_chroma (const Chroma &c, int x0, int y0, int width, int height)
{
  const int x1 = min (x0 + kPix, width), y1 = min (y0 + kRows, height);
  /* unrolled, so that the planes' fields are read from the parameters rather than a local copy */
#pragma unroll
  for (int p = 0; p < 2; p++) {
    if (p >= c.n)
      break;
    const int span = c.span_bytes[p];
    if (span >= 0) {
      /* the same bytes as below, without divisions: one 8-byte (P010), 4-byte (NV12) or 2-byte
       * (I420) store a row */
      const int bx0 = x0 * span / kPix, bx1 = x1 * span / kPix;
      for (int y = y0 >> c.shift_y[p]; y < y1 >> c.shift_y[p]; y++) {
        uint8_t *row = c.data[p] + static_cast<size_t> (y) * c.pitch[p];
        if (bx1 - bx0 == span && span == 8)
          *reinterpret_cast<uint2 *> (row + bx0) = make_uint2 (c.fill, c.fill);
        else if (bx1 - bx0 == span && span == 4)
          *reinterpret_cast<uint32_t *> (row + bx0) = c.fill;
        else if (bx1 - bx0 == span && span == 2)
          *reinterpret_cast<uint16_t *> (row + bx0) = static_cast<uint16_t> (c.fill);
        else
          for (int x = bx0; x < bx1; x++)
            row[x] = static_cast<uint8_t> (c.fill >> (8 * (x & 3)));
      }
      continue;
    }
    const int bx0 = x0 * c.width[p] / width, bx1 = x1 == width ? c.width[p] : x1 * c.width[p] / width;
    const int by0 = y0 * c.height[p] / height, by1 = y1 == height ? c.height[p] : y1 * c.height[p] / height;
    for (int y = by0; y < by1; y++)
      for (int x = bx0; x < bx1; x++)
        c.data[p][static_cast<size_t> (y) * c.pitch[p] + x] = static_cast<uint8_t> (c.fill >> (8 * (x & 3)));
  }
}

template <Kind K, bool kVec, Output kOut>
__global__ void __launch_bounds__ (kBlockX * kBlockY, kOneByte<K> ? (kVec ? kGrayMinBlocks : kGrayMinBlocksUnaligned) : CUV_SOBEL_MIN_BLOCKS)
sobel_kernel (const uint8_t *__restrict__ src, int src_pitch, uint8_t *__restrict__ dst,
    int dst_pitch, int width, int height, float scale, int thr_energy, Chroma chroma)
{
  const int x0 = (blockIdx.x * kBlockX + threadIdx.x) * kPix;
  const int y0 = (blockIdx.y * kBlockY + threadIdx.y) * kRows;
  if (x0 >= width || y0 >= height)
    return;
  if constexpr (K == Kind::Gray || K == Kind::P010)
    fill_chroma (chroma, x0, y0, width, height);

  const SideOffsets side = {static_cast<uint32_t> (max (x0 - 1, 0)) * kBytes<K>,
      static_cast<uint32_t> (min (x0 + kPix, width - 1)) * kBytes<K>};
  if constexpr (kOneByte<K>) {
    /* an 8-bit plane (or YUY2/UYVY's Y bytes): each row's six samples packed in two words (the four, and the two beside
     * them), all loaded before any arithmetic, unpacked per output row: 12 registers for the
     * window instead of 36, so that more blocks fit an SM */
    uint32_t mid[kRows + 2], sides[kRows + 2];
#pragma unroll
    for (int r = 0; r < kRows + 2; r++) {
      const uint32_t y = min (max (y0 - 1 + r, 0), height - 1);
      uint32_t w[6];
      load_row<K, kVec> (src + y * static_cast<size_t> (src_pitch), x0, width, side, w);
      mid[r] = w[1] | w[2] << 8 | w[3] << 16 | w[4] << 24;
      sides[r] = w[0] | w[5] << 8;
    }
#pragma unroll
    for (int r = 0; r < kRows; r++) {
      const int y = y0 + r;
      if (y >= height)
        break;
      uint32_t rows[3][6];
#pragma unroll
      for (int j = 0; j < 3; j++) {
        rows[j][0] = sides[r + j] & 0xff;
        rows[j][5] = sides[r + j] >> 8;
#pragma unroll
        for (int k = 0; k < kPix; k++)
          rows[j][1 + k] = (mid[r + j] >> (8 * k)) & 0xff;
      }
      uint32_t m[kPix];
      sobel4<kOut> (rows[0], rows[1], rows[2], scale, thr_energy, m);
      uint8_t *drow = dst + static_cast<size_t> (y) * dst_pitch;
      if constexpr (kBytes<K> == 2) {
        /* the Y bytes, and 128 for U and V (P010: the high bytes, and 0 below them) */
        constexpr int sy = 8 * kYByte<K>, sc = 8 - sy;
        constexpr uint32_t other = kOtherByte<K> << sc | kOtherByte<K> << (16 + sc);
        if (kVec && x0 + kPix <= width) {
          __stcs (reinterpret_cast<uint2 *> (drow + 2 * x0),
              make_uint2 (m[0] << sy | m[1] << (16 + sy) | other, m[2] << sy | m[3] << (16 + sy) | other));
        } else {
#pragma unroll
          for (int k = 0; k < kPix; k++)
            if (x0 + k < width) {
              drow[2 * (x0 + k) + kYByte<K>] = static_cast<uint8_t> (m[k]);
              drow[2 * (x0 + k) + 1 - kYByte<K>] = static_cast<uint8_t> (kOtherByte<K>);
            }
        }
      } else if (kVec && x0 + kPix <= width) {
        __stcs (reinterpret_cast<unsigned int *> (drow + x0), m[0] | m[1] << 8 | m[2] << 16 | m[3] << 24);
      } else {
#pragma unroll
        for (int k = 0; k < kPix; k++)
          if (x0 + k < width)
            drow[x0 + k] = static_cast<uint8_t> (m[k]);
      }
    }
  } else {
    /* RGB: 4 bytes a pixel */
    uint32_t win[kRows + 2][6];
#pragma unroll
    for (int r = 0; r < kRows + 2; r++) {
      const uint32_t y = min (max (y0 - 1 + r, 0), height - 1);
      load_row<K, kVec> (src + y * static_cast<size_t> (src_pitch), x0, width, side, win[r]);
    }
    if constexpr (K == Kind::RgbLuma || K == Kind::BgrLuma) {
#pragma unroll
      for (int r = 0; r < kRows + 2; r++)
#pragma unroll
        for (int x = 0; x < 6; x++)
          win[r][x] = to_luma<K> (win[r][x]);
    }

    /* colour: the two SWAR halves of three consecutive rows, indexed modulo 3 (static after unrolling) */
    uint32_t lo[3][6], hi[3][6];
    if constexpr (K == Kind::RgbColor) {
#pragma unroll
      for (int j = 0; j < 2; j++)
#pragma unroll
        for (int x = 0; x < 6; x++) {
          lo[j][x] = win[j][x] & 0x00ff00ffu;
          hi[j][x] = (win[j][x] >> 8) & 0x00ff00ffu;
        }
    }

#pragma unroll
    for (int r = 0; r < kRows; r++) {
      const int y = y0 + r;
      if (y >= height)
        break;
      uint32_t out[kPix];
      if constexpr (K == Kind::RgbColor) {
        /* rows r, r+1 were split by the previous iteration; split the new one */
#pragma unroll
        for (int x = 0; x < 6; x++) {
          lo[(r + 2) % 3][x] = win[r + 2][x] & 0x00ff00ffu;
          hi[(r + 2) % 3][x] = (win[r + 2][x] >> 8) & 0x00ff00ffu;
        }
        uint32_t a_lo[3][6], a_hi[3][6];
#pragma unroll
        for (int j = 0; j < 3; j++)
#pragma unroll
          for (int x = 0; x < 6; x++) {
            a_lo[j][x] = lo[(r + j) % 3][x];
            a_hi[j][x] = hi[(r + j) % 3][x];
          }
        sobel4_color<kOut> (a_lo, a_hi, scale, thr_energy, out);
      } else {
        uint32_t m[kPix];
        sobel4<kOut> (win[r], win[r + 1], win[r + 2], scale, thr_energy, m);
#pragma unroll
        for (int k = 0; k < kPix; k++)
          out[k] = m[k] | m[k] << 8 | m[k] << 16 | (win[r + 1][k + 1] & 0xff000000u);
      }

      uint8_t *drow = dst + static_cast<size_t> (y) * dst_pitch;
      if (kVec && x0 + kPix <= width) {
        __stcs (reinterpret_cast<uint4 *> (drow + 4 * x0), make_uint4 (out[0], out[1], out[2], out[3]));
      } else {
#pragma unroll
        for (int k = 0; k < kPix; k++)
          if (x0 + k < width)
            store_px4<kVec> (drow + 4 * (x0 + k), out[k]);
      }
    }
  }
}

template <Kind K>
cudaError_t launch (const Plane &s, const Plane &d, const SobelParams &p, cudaStream_t stream, const Chroma &chroma = {})
{
  dim3 block (kBlockX, kBlockY);
  dim3 grid (div_up (div_up (s.width, kPix), kBlockX), div_up (div_up (s.height, kRows), kBlockY));
  /* the vector path needs whole 16-byte (RGB), 8-byte (YUY2/UYVY) or 4-byte (8-bit) groups on every row */
  constexpr uintptr_t align = kBytes<K> * kPix;
  bool vec = reinterpret_cast<uintptr_t> (s.data) % align == 0 && reinterpret_cast<uintptr_t> (d.data) % align == 0 &&
      s.pitch % align == 0 && d.pitch % align == 0;
  const bool thr = p.threshold > 0;
  const int thr_energy = thr ? sobel_threshold_energy (p.scale, p.threshold) : 0;
  auto pick = [&] (auto vec_tag) {
    constexpr bool kV = decltype (vec_tag)::value;
    return thr ? sobel_kernel<K, kV, Output::Threshold>
               : p.fast_root ? sobel_kernel<K, kV, Output::Fast> : sobel_kernel<K, kV, Output::Exact>;
  };
  auto kernel = vec ? pick (std::true_type{}) : pick (std::false_type{});
  kernel<<<grid, block, 0, stream>>> (s.data, s.pitch, d.data, d.pitch, s.width, s.height, p.scale, thr_energy, chroma);
  return cudaGetLastError ();
}

__global__ void magnitude_table_kernel (float scale, int thr_energy, bool thr, bool fast, int count, uint8_t *out)
{
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < count)
    out[e] = (thr ? output_bits<Output::Threshold> (e, scale, thr_energy)
                  : fast ? output_bits<Output::Fast> (e, scale, thr_energy)
                         : output_bits<Output::Exact> (e, scale, thr_energy)) & 0xff;
}

/* Counts the energies whose output byte the approximate root gets wrong. */
__global__ void fast_root_check_kernel (float scale, int count, unsigned int *wrong)
{
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < count && (sobel_magnitude_bits_fast (e, scale) & 0xff) != (sobel_magnitude_bits (e, scale) & 0xff))
    atomicAdd (wrong, 1u);
}

}  // namespace

cudaError_t sobel_output_table_cuda (float scale, int threshold, bool fast_root, uint8_t *out, cudaStream_t stream)
{
  const int count = kSobelMaxEnergy + 1;
  const bool thr = threshold > 0;
  magnitude_table_kernel<<<div_up (count, 256), 256, 0, stream>>> (scale, thr ? sobel_threshold_energy (scale, threshold) : 0,
      thr, fast_root, count, out);
  return cudaGetLastError ();
}

cudaError_t sobel_fast_root_check_cuda (float scale, unsigned int *device_wrong, unsigned int *host_wrong,
    cudaStream_t stream)
{
  const int count = kSobelMaxEnergy + 1;
  cudaError_t err = cudaMemsetAsync (device_wrong, 0, sizeof (*device_wrong), stream);
  if (err != cudaSuccess)
    return err;
  fast_root_check_kernel<<<div_up (count, 256), 256, 0, stream>>> (scale, count, device_wrong);
  if ((err = cudaGetLastError ()) != cudaSuccess)
    return err;
  return cudaMemcpyAsync (host_wrong, device_wrong, sizeof (*host_wrong), cudaMemcpyDeviceToHost, stream);
}

cudaError_t sobel_fast_root_exact_cuda (float scale, bool *exact, cudaStream_t stream)
{
  *exact = false;
  unsigned int *wrong = nullptr, host_wrong = 1;
  /* plain cudaMalloc: stream-ordered allocation is not on every device, and this waits anyway */
  cudaError_t err = cudaMalloc (reinterpret_cast<void **> (&wrong), sizeof (*wrong));
  if (err != cudaSuccess)
    return err;
  err = sobel_fast_root_check_cuda (scale, wrong, &host_wrong, stream);
  if (err == cudaSuccess)
    err = cudaStreamSynchronize (stream);
  cudaError_t free_err = cudaFree (wrong);
  if (err == cudaSuccess)
    err = free_err;
  if (err == cudaSuccess)
    *exact = host_wrong == 0;
  return err;
}

cudaError_t SobelFastRoot::ask (float scale, int device, cudaStream_t stream, bool *fast)
{
  *fast = false;
  if (checking_) {
    const cudaError_t q = cudaEventQuery (done_);
    if (q != cudaSuccess && q != cudaErrorNotReady)
      return q;
    if (q == cudaSuccess) {
      checking_ = false;
      scale_ = checking_scale_;
      device_ = checking_device_;
      fast_ = *host_wrong_ == 0;
    }
  }
  if (scale == scale_ && device == device_) {
    *fast = fast_;
    return cudaSuccess;
  }
  if (checking_)
    return cudaSuccess;
  cudaError_t err = cudaSuccess;
  /* plain cudaMalloc: stream-ordered allocation is not on every device */
  if (!device_wrong_)
    err = cudaMalloc (reinterpret_cast<void **> (&device_wrong_), sizeof (*device_wrong_));
  if (err == cudaSuccess && !host_wrong_)
    err = cudaMallocHost (reinterpret_cast<void **> (&host_wrong_), sizeof (*host_wrong_));
  if (err == cudaSuccess && !done_)
    err = cudaEventCreateWithFlags (&done_, cudaEventDisableTiming);
  if (err == cudaSuccess)
    err = sobel_fast_root_check_cuda (scale, device_wrong_, host_wrong_, stream);
  if (err == cudaSuccess)
    err = cudaEventRecord (done_, stream);
  if (err != cudaSuccess)
    return err;
  checking_ = true;
  checking_scale_ = scale;
  checking_device_ = device;
  return cudaSuccess;
}

void SobelFastRoot::release ()
{
  if (done_)
    cudaEventDestroy (done_);
  if (device_wrong_)
    cudaFree (device_wrong_);
  if (host_wrong_)
    cudaFreeHost (host_wrong_);
  done_ = nullptr;
  device_wrong_ = host_wrong_ = nullptr;
  checking_ = false;
  scale_ = -1.0f;
  device_ = -1;
  fast_ = false;
}

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
  /* YUY2/UYVY: the plane's width counts whole pairs (sobel.h) */
  if (src.layout == PixelLayout::YUY2)
    return launch<Kind::Yuy2> (s, d, params, stream);
  if (src.layout == PixelLayout::UYVY)
    return launch<Kind::Uyvy> (s, d, params, stream);
  Chroma chroma{};
  chroma.fill = layout_is_16bit (dst.layout) ? 0x80008000u : 0x80808080u;
  for (int p = 1; p < dst.n_planes && chroma.n < 2; p++, chroma.n++) {
    const Plane &c = dst.planes[p];
    chroma.data[chroma.n] = c.data;
    chroma.pitch[chroma.n] = c.pitch;
    chroma.width[chroma.n] = c.width * plane_sample_bytes (dst.layout, p);
    chroma.height[chroma.n] = c.height;
    /* the fast fill: a plane of exactly (width * span / kPix) x (height >> sy) bytes, span 2, 4 or
     * 8, 0 <= sy <= 1, whose rows start on the store's alignment */
    const int w = chroma.width[chroma.n], h = c.height;
    const int span = w == s.width ? 4 : 2 * w == s.width ? 2 : w == 2 * s.width ? 8 : -1;
    const int sy = h == s.height ? 0 : 2 * h == s.height ? 1 : -1;
    const bool fast = span > 0 && sy >= 0 && reinterpret_cast<uintptr_t> (c.data) % span == 0 && c.pitch % span == 0;
    chroma.span_bytes[chroma.n] = fast ? span : -1;
    chroma.shift_y[chroma.n] = fast ? sy : -1;
  }
  if (layout_is_16bit (src.layout))
    return launch<Kind::P010> (s, d, params, stream, chroma);
  return launch<Kind::Gray> (s, d, params, stream, chroma);
}

}  // namespace cuv
