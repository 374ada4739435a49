/* gst-cudavision: luma_plane on the device (luma.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernels/luma/luma.h"

#include "kernels/base/cuda_access.cuh"

namespace cuv {
namespace {

constexpr int kBlockX = 32, kBlockY = 8;

/* A thread turns four pixels into four luma bytes; the loads and the store are whole words
 * when the views are aligned for them. */
template <bool kBgr, bool kAligned> __global__ void luma_kernel (Plane in, Plane out)
{
  const int x = (blockIdx.x * kBlockX + threadIdx.x) * 4;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= out.width || y >= out.height)
    return;
  const uint8_t *s = in.data + static_cast<size_t> (y) * in.pitch + static_cast<size_t> (x) * 4;
  uint8_t *d = out.data + static_cast<size_t> (y) * out.pitch + x;
  const int n = ::min (4, out.width - x);
  uint32_t packed = 0;
#pragma unroll
  for (int i = 0; i < 4; i++) {
    if (i < n) {
      const uint32_t px = load_px4<kAligned> (s + 4 * i);
      const int c0 = px & 0xff, c1 = (px >> 8) & 0xff, c2 = (px >> 16) & 0xff;
      packed |= static_cast<uint32_t> (kBgr ? luma_bt601 (c2, c1, c0) : luma_bt601 (c0, c1, c2)) << (8 * i);
    }
  }
  if (kAligned && n == 4) {
    *reinterpret_cast<uint32_t *> (d) = packed;
  } else {
    for (int i = 0; i < n; i++)
      d[i] = static_cast<uint8_t> (packed >> (8 * i));
  }
}

/* YUY2, UYVY and P010 (kOdd: the Y bytes at odd offsets, as in UYVY and P010): a thread takes
 * four pixels' Y bytes out of eight bytes, a word each way when the views are aligned for it. */
template <bool kOdd, bool kAligned> __global__ void luma422_kernel (Plane in, Plane out)
{
  const int x = (blockIdx.x * kBlockX + threadIdx.x) * 4;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= out.width || y >= out.height)
    return;
  const uint8_t *s = in.data + static_cast<size_t> (y) * in.pitch + static_cast<size_t> (x) * 2;
  uint8_t *d = out.data + static_cast<size_t> (y) * out.pitch + x;
  const int n = ::min (4, out.width - x);
  if (kAligned && n == 4) {
    const uint2 w = *reinterpret_cast<const uint2 *> (s);
    *reinterpret_cast<uint32_t *> (d) = __byte_perm (w.x, w.y, kOdd ? 0x7531 : 0x6420);
  } else {
    for (int i = 0; i < n; i++)
      d[i] = s[2 * i + kOdd];
  }
}

template <bool kBgr> void launch (const Plane &in, const Plane &out, bool aligned, cudaStream_t stream)
{
  const dim3 block (kBlockX, kBlockY);
  const dim3 grid (div_up (div_up (out.width, 4), kBlockX), div_up (out.height, kBlockY));
  if (aligned)
    luma_kernel<kBgr, true><<<grid, block, 0, stream>>> (in, out);
  else
    luma_kernel<kBgr, false><<<grid, block, 0, stream>>> (in, out);
}

}  // namespace

cudaError_t luma_plane_cuda (const Frame &in, const Plane &out, cudaStream_t stream)
{
  if (in.width <= 0 || in.height <= 0)
    return cudaSuccess;
  const Plane &src = in.planes[0];
  if (layout_has_luma_every_other_byte (in.layout)) {
    const bool aligned = reinterpret_cast<uintptr_t> (src.data) % 8 == 0 && src.pitch % 8 == 0 &&
        (reinterpret_cast<uintptr_t> (out.data) | out.pitch) % 4 == 0;
    const dim3 block (kBlockX, kBlockY), grid (div_up (div_up (out.width, 4), kBlockX), div_up (out.height, kBlockY));
    const bool odd = luma_byte (in.layout) == 1;
    if (odd && aligned)
      luma422_kernel<true, true><<<grid, block, 0, stream>>> (src, out);
    else if (odd)
      luma422_kernel<true, false><<<grid, block, 0, stream>>> (src, out);
    else if (aligned)
      luma422_kernel<false, true><<<grid, block, 0, stream>>> (src, out);
    else
      luma422_kernel<false, false><<<grid, block, 0, stream>>> (src, out);
    return cudaGetLastError ();
  }
  if (!layout_is_rgb (in.layout))
    return cudaMemcpy2DAsync (out.data, out.pitch, src.data, src.pitch, in.width, in.height, cudaMemcpyDeviceToDevice,
        stream);
  const bool aligned = (reinterpret_cast<uintptr_t> (src.data) | src.pitch | reinterpret_cast<uintptr_t> (out.data) |
                           out.pitch) % 4 == 0;
  if (layout_is_bgr (in.layout))
    launch<true> (src, out, aligned, stream);
  else
    launch<false> (src, out, aligned, stream);
  return cudaGetLastError ();
}

}  // namespace cuv
