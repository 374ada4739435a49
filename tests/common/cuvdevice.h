/* gst-cudavision kernel tests: device mirrors of host test images.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cuda_runtime_api.h>

#include <cstring>

#include "tests/common/cuvtest.h"
#include "kernels/base/results.h"

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

/* A kernel's results as the elements take them (kernels/base/results.h): the accumulator and the
 * ticket in device memory, zero before the first launch, the output in page-locked host memory,
 * its copy in device memory. */
template <typename Accum, typename Out> struct DeviceResults {
  struct Device {
    Accum accum;
    Out result;
    unsigned int ticket;
  };
  Device *dev = nullptr;
  Out *host = nullptr;
  DeviceResults ()
  {
    CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dev), sizeof (Device)));
    CUVTEST_CHECK_CUDA (cudaMemset (dev, 0, sizeof (Device)));
    CUVTEST_CHECK_CUDA (cudaMallocHost (reinterpret_cast<void **> (&host), sizeof (Out)));
  }
  ~DeviceResults ()
  {
    cudaFree (dev);
    cudaFreeHost (host);
  }
  DeviceResults (const DeviceResults &) = delete;
  DeviceResults &operator= (const DeviceResults &) = delete;
  cuv::ResultsTo<Accum, Out> to () const { return {&dev->accum, &dev->ticket, host, &dev->result}; }
  /* both outputs hold junk, which the next launch must overwrite */
  void poison ()
  {
    std::memset (host, 0x5a, sizeof (Out));
    CUVTEST_CHECK_CUDA (cudaMemset (&dev->result, 0x5a, sizeof (Out)));
  }
  /* after the launch and a wait: what went to the host */
  const Out &out () const { return *host; }
  /* whether the device copy holds the same bytes */
  bool device_copy_matches () const
  {
    Out d;
    CUVTEST_CHECK_CUDA (cudaMemcpy (&d, &dev->result, sizeof (d), cudaMemcpyDeviceToHost));
    return std::memcmp (&d, host, sizeof (d)) == 0;
  }
  /* whether the launch left the accumulator and the ticket zero for the next one */
  bool rearmed () const
  {
    Device d;
    CUVTEST_CHECK_CUDA (cudaMemcpy (&d, dev, sizeof (d), cudaMemcpyDeviceToHost));
    const uint8_t *a = reinterpret_cast<const uint8_t *> (&d.accum);
    for (size_t i = 0; i < sizeof (d.accum); i++)
      if (a[i])
        return false;
    return d.ticket == 0;
  }
};

/* Every layout the kernels take, the packed 4:2:2 ones of webcams and 10-bit decoders' P010
 * included. */
inline constexpr cuv::PixelLayout kAll[] = {cuv::PixelLayout::RGBA, cuv::PixelLayout::BGRA, cuv::PixelLayout::RGBx,
    cuv::PixelLayout::BGRx, cuv::PixelLayout::GRAY8, cuv::PixelLayout::NV12, cuv::PixelLayout::I420,
    cuv::PixelLayout::YUY2, cuv::PixelLayout::UYVY, cuv::PixelLayout::P010};

/* Tight, padded, unaligned and offset pitches; fewer for the large frames. */
inline std::vector<Stride> strides_for (Size s)
{
  if (s.w >= 1920)
    return {{0, 0}, {3, 1}};
  return {{0, 0}, {64, 0}, {3, 1}, {0, 4}};
}

}  // namespace cuvtest
