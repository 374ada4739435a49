/* gst-cudavision: the motion drawings on the device (motion_draw.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernels/motion/motion_draw.h"

#include "kernels/base/cuda_access.cuh"

namespace cuv {
namespace {

constexpr int kBlockX = 32, kBlockY = 8;

/* One thread per grid unit: a line, or (@head) a head. Threads whose lines cross write the same
 * colour, so the result does not depend on their order. */
template <bool kHead> __global__ void arrows_kernel (const MotionVector *vectors, MotionGrid g, uint32_t color, Frame f)
{
  const int ux = blockIdx.x * kBlockX + threadIdx.x, uy = blockIdx.y * kBlockY + threadIdx.y;
  if (ux >= g.cols || uy >= g.rows)
    return;
  const MotionVector v = vectors[uy * g.cols + ux];
  if (kHead)
    motion_draw_head (v, ux, uy, g.unit, color, f);
  else
    motion_draw_line (v, ux, uy, g.unit, color, f);
}

/* One thread per pixel; for YUV the thread of a 2x2 group's (a pair's, for YUY2 and UYVY) first
 * pixel also writes its chroma (a group never straddles two units: units are multiples of 4
 * pixels). */
__global__ void wheel_kernel (const MotionVector *vectors, MotionGrid g, const uint32_t *table, int range,
    uint32_t black, Frame f)
{
  const int x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= f.width || y >= f.height)
    return;
  const uint32_t c = motion_wheel_color (vectors, g, table, range, black, x, y);
  const Plane &p0 = f.planes[0];
  if (layout_is_rgb (f.layout)) {
    store_px4<false> (p0.data + static_cast<size_t> (y) * p0.pitch + static_cast<size_t> (x) * 4, c);
    return;
  }
  if (layout_is_packed422 (f.layout)) {
    /* each pixel its Y; the pair's first pixel the chroma too */
    if ((x & 1) == 0)
      motion_put_pixel (f, x, y, c);
    else
      p0.data[static_cast<size_t> (y) * p0.pitch + 2 * x + (f.layout == PixelLayout::UYVY)] = c & 0xff;
    return;
  }
  if (((x | y) & 1) == 0) {
    motion_put_pixel (f, x, y, c);
  } else {
    put_sample8 (f.layout, luma_at (f, x, y), c & 0xff);
  }
}

}  // namespace

cudaError_t motion_arrows_cuda (const MotionVector *vectors, const MotionGrid &g, const ArrowColors &colors,
    const Frame &frame, cudaStream_t stream)
{
  if (g.count () == 0)
    return cudaSuccess;
  const dim3 block (kBlockX, kBlockY), grid (div_up (g.cols, kBlockX), div_up (g.rows, kBlockY));
  arrows_kernel<false><<<grid, block, 0, stream>>> (vectors, g, colors.line, frame);
  arrows_kernel<true><<<grid, block, 0, stream>>> (vectors, g, colors.head, frame);
  return cudaGetLastError ();
}

cudaError_t motion_wheel_cuda (const MotionVector *vectors, const MotionGrid &g, const uint32_t *table, int range,
    uint32_t black, const Frame &frame, cudaStream_t stream)
{
  if (frame.width <= 0 || frame.height <= 0)
    return cudaSuccess;
  const dim3 block (kBlockX, kBlockY), grid (div_up (frame.width, kBlockX), div_up (frame.height, kBlockY));
  wheel_kernel<<<grid, block, 0, stream>>> (vectors, g, table, range, black, frame);
  return cudaGetLastError ();
}

}  // namespace cuv
