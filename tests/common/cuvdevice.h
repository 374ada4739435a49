/* gst-cudavision kernel tests: device mirrors of host test images.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cuda_runtime_api.h>

#include "cuvtest.h"

namespace cuvtest {

constexpr uint8_t kPoison = 0xCD;

/* A device mirror of a HostImage: same size, same offsets. */
struct DeviceImage {
  uint8_t *base = nullptr;
  cuv::Frame frame;
  size_t bytes;

  explicit DeviceImage (const HostImage &h) : bytes (h.storage.size ())
  {
    CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&base), bytes));
    frame = h.frame;
    for (int p = 0; p < frame.n_planes; p++)
      frame.planes[p].data = base + (h.frame.planes[p].data - h.storage.data ());
  }
  ~DeviceImage () { cudaFree (base); }
  void upload (const HostImage &h) { CUVTEST_CHECK_CUDA (cudaMemcpy (base, h.storage.data (), bytes, cudaMemcpyHostToDevice)); }
  void download (HostImage &h) const { CUVTEST_CHECK_CUDA (cudaMemcpy (h.storage.data (), base, bytes, cudaMemcpyDeviceToHost)); }
  void poison () { CUVTEST_CHECK_CUDA (cudaMemset (base, kPoison, bytes)); }
};

struct Stride {
  int pad, offset;
};

inline constexpr cuv::PixelLayout kAll[] = {cuv::PixelLayout::RGBA, cuv::PixelLayout::BGRA, cuv::PixelLayout::RGBx,
    cuv::PixelLayout::BGRx, cuv::PixelLayout::GRAY8, cuv::PixelLayout::NV12, cuv::PixelLayout::I420};

/* Tight, padded, unaligned and offset pitches; fewer for the large frames. */
inline std::vector<Stride> strides_for (Size s)
{
  if (s.w >= 1920)
    return {{0, 0}, {3, 1}};
  return {{0, 0}, {64, 0}, {3, 1}, {0, 4}};
}

}  // namespace cuvtest
