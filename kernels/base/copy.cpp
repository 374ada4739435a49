/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernels/base/copy.h"

#include <cstring>

namespace cuv {

void copy_frame_cpu (const Frame &src, const Frame &dst)
{
  for (int p = 0; p < src.n_planes; p++) {
    const Plane &s = src.planes[p];
    const Plane &d = dst.planes[p];
    size_t row = static_cast<size_t> (s.width) * plane_sample_bytes (src.layout, p);
    for (int y = 0; y < s.height; y++)
      std::memmove (d.data + static_cast<size_t> (y) * d.pitch, s.data + static_cast<size_t> (y) * s.pitch, row);
  }
}

#if CUV_HAVE_CUDA
cudaError_t copy_frame_cuda (const Frame &src, const Frame &dst, cudaStream_t stream)
{
  for (int p = 0; p < src.n_planes; p++) {
    const Plane &s = src.planes[p];
    const Plane &d = dst.planes[p];
    if (s.data == d.data)
      continue;
    size_t row = static_cast<size_t> (s.width) * plane_sample_bytes (src.layout, p);
    cudaError_t err = cudaMemcpy2DAsync (d.data, d.pitch, s.data, s.pitch, row, s.height,
        cudaMemcpyDeviceToDevice, stream);
    if (err != cudaSuccess)
      return err;
  }
  return cudaSuccess;
}
#endif

}  // namespace cuv
