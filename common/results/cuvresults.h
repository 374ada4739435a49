/* gst-cudavision: the memory that a kernel's small per-frame results go through to the host.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The kernel adds into a device accumulator, and its last block writes the finished results
 * into page-locked host memory itself and zeroes the accumulator (kernels/base/results.h): no copy and
 * no memset is queued per frame, and the host reads them once the base class has waited for the
 * stream. */
#pragma once

#include "common/base/cuvcuda.h"
#include "kernels/base/results.h"

namespace cuv {

#if CUV_HAVE_CUDA
template <typename Accum, typename Out> class ResultBuffers {
 public:
  /* Allocates on first use and zeroes the accumulator on @stream, ahead of the first launch: the
   * element's streams are non-blocking, so a zeroing on the legacy default stream (cudaMemset)
   * would race the kernel, which then adds into whatever the allocation last held. */
  cudaError_t ensure (GstCudaContext *ctx, cudaStream_t stream)
  {
    if (!device_) {
      cudaError_t err = device_.allocate (ctx, CudaBuffer::Kind::Device, sizeof (Device));
      if (err == cudaSuccess)
        err = host_.allocate (ctx, CudaBuffer::Kind::Pinned, kHostSlots * sizeof (Out));
      if (err != cudaSuccess) {
        reset ();
        return err;
      }
    }
    if (zeroed_)
      return cudaSuccess;
    const cudaError_t err = cudaMemsetAsync (device_.data (), 0, sizeof (Device), stream);
    zeroed_ = err == cudaSuccess;
    return err;
  }

  /* After a launch that failed: the accumulator may hold part of a frame, so the next ensure ()
   * zeroes it again. The memory stays: the host slots hold earlier frames' results, which may
   * still be published after this frame's error (docs/design.md, "Results that follow the frame"). */
  void launch_failed () { zeroed_ = false; }

  /* The host memory holds kHostSlots results: an element whose results may be read after its
   * next frame was launched (docs/design.md, "Results that follow the frame") moves to the next
   * one before each launch; the others stay in the first. */
  static constexpr int kHostSlots = 3;
  void next_slot () { slot_ = (slot_ + 1) % kHostSlots; }

  /* For the launch; the host memory, which the GPU writes through its mapping, at its own address
   * (unified addressing). */
  ResultsTo<Accum, Out> to () const
  {
    Device *d = reinterpret_cast<Device *> (device_.data ());
    return ResultsTo<Accum, Out>{&d->accum, &d->ticket, host_slot (), &d->result};
  }

  /* The last launch's results, once its stream was waited for. */
  const Out &host () const { return *host_slot (); }

  /* At stop, when no frame's results are left to publish. */
  void reset ()
  {
    device_.reset ();
    host_.reset ();
    zeroed_ = false;
  }

 private:
  struct Device {
    Accum accum;
    Out result;
    unsigned int ticket;
  };
  Out *host_slot () const { return reinterpret_cast<Out *> (host_.data ()) + slot_; }

  CudaBuffer device_;
  CudaBuffer host_;
  int slot_ = 0;
  bool zeroed_ = false;
};
#endif

}  // namespace cuv
