/* gst-cudavision: small per-frame results of a kernel on their way to the host.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Two device slots that the kernels alternate (a launch adds into one and zeroes the other, so no
 * memset is needed per frame) and a pinned copy that one asynchronous copy fills; it is valid once
 * the base class has synchronized the stream. */
#pragma once

#include "cuvcuda.h"

namespace cuv {

#if CUV_HAVE_CUDA
template <typename T> class ResultSlots {
 public:
  /* Allocates both slots on first use and zeroes them on @stream, ahead of the first launch:
   * the element's streams are non-blocking, so a zeroing on the legacy default stream (cudaMemset)
   * would race the kernel, which then adds into whatever the allocation last held. */
  cudaError_t ensure (GstCudaContext *ctx, cudaStream_t stream)
  {
    if (device_)
      return cudaSuccess;
    cudaError_t err = device_.allocate (ctx, CudaBuffer::Kind::Device, 2 * sizeof (T));
    if (err == cudaSuccess)
      err = pinned_.allocate (ctx, CudaBuffer::Kind::Pinned, sizeof (T));
    if (err == cudaSuccess)
      err = cudaMemsetAsync (device_.data (), 0, 2 * sizeof (T), stream);
    if (err != cudaSuccess)
      reset ();
    parity_ = 0;
    return err;
  }

  T *accum () const { return reinterpret_cast<T *> (device_.data ()) + parity_; }
  T *clear_next () const { return reinterpret_cast<T *> (device_.data ()) + (1 - parity_); }

  /* After the launch: queues the copy of this frame's slot to the host and moves to the other. */
  cudaError_t download (cudaStream_t stream)
  {
    cudaError_t err = cudaMemcpyAsync (pinned_.data (), accum (), sizeof (T), cudaMemcpyDeviceToHost, stream);
    parity_ ^= 1;
    return err;
  }

  const T &host () const { return *reinterpret_cast<const T *> (pinned_.data ()); }

  void reset ()
  {
    device_.reset ();
    pinned_.reset ();
  }

 private:
  CudaBuffer device_;
  CudaBuffer pinned_;
  int parity_ = 0;
};
#endif

}  // namespace cuv
