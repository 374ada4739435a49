/* gst-cudavision: the CUDA runtime plumbing every element shares: one checking macro, and RAII
 * wrappers for the context push and for device, pinned and stream handles.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gmodule.h>
#include <gst/gst.h>
#include <gst/cuda/gstcudacontext.h>

#include <cstddef>
#include <utility>

#if CUV_HAVE_CUDA
#include <cuda_runtime_api.h>
#else
typedef struct CUstream_st *cudaStream_t;
#endif

GST_DEBUG_CATEGORY_EXTERN (gst_cuda_vision_debug);

namespace cuv {

#if CUV_HAVE_CUDA
/* Fault injection, for tests: with CUV_CUDA_FAIL_AT=N in the environment, the Nth checked CUDA
 * call of the process (CUV_CUDA_OK, and making a context current in ContextGuard) reports a
 * failure, as if the device ran out of memory, so that every error path can be driven.
 * The tests sweep N in one process through cuv_cuda_fail_at_set () and cuv_cuda_checked_calls ()
 * (cuvcuda.cpp). Returns whether this call is the one to fail; without N it only reads a flag. */
bool inject_fault ();

/* Logs a failed CUDA runtime call with its file and line against @obj; returns whether it
 * succeeded. Use through CUV_CUDA_OK. */
bool cuda_ok (cudaError_t err, GstObject *obj, const char *expr, const char *file, int line);
#define CUV_CUDA_OK(obj, expr) (::cuv::cuda_ok ((expr), GST_OBJECT_CAST (obj), #expr, __FILE__, __LINE__))

/* Makes @ctx current on this thread for the guard's lifetime. A guard inside another guard of
 * the same context on the same thread makes no driver call: the outer one's push holds (every
 * push on a streaming thread, ours and GStreamer's CUDA elements', is popped before its caller
 * returns, so the outer guard's context is current again whenever an inner guard starts). The
 * route holds one guard over a frame's whole output step, so a frame costs one push and one pop
 * an element, not one a step (docs/design.md, "A frame's lifetime"). */
class ContextGuard {
 public:
  explicit ContextGuard (GstCudaContext *ctx) : ContextGuard (ctx, true) {}
  /* The outer guard of a frame's steps takes no injected fault: where it fails, the steps' own
   * guards push and report as before, and every injected fault still reaches a step. */
  static constexpr bool kNoInjectedFault = false;
  ContextGuard (GstCudaContext *ctx, bool may_fail_by_injection);
  ~ContextGuard ();
  ContextGuard (const ContextGuard &) = delete;
  ContextGuard &operator= (const ContextGuard &) = delete;
  bool ok () const { return ok_; }

 private:
  bool ok_ = false;
  bool pushed_ = false;
  GstCudaContext *outer_ = nullptr; /* the context of this thread's guard around this one */
};

/* Frees page-locked host memory (cudaMallocHost, cudaHostAlloc) of @ctx on a thread of its own:
 * cudaFreeHost waits for every stream of the device, other pipelines' too, so no streaming or
 * state-changing thread calls it (docs/design.md, "A frame's lifetime"). The GPU must be done
 * with @ptr. Takes a reference to @ctx until the block is freed. */
void free_host_later (GstCudaContext *ctx, void *ptr);
/* Returns once every free_host_later () so far is done. */
void finish_host_frees_now ();

/* Device memory or page-locked host memory of one context, allocated and freed with that context
 * current and without waiting for the device: device memory is stream-ordered (cudaMallocAsync
 * and cudaFreeAsync on the calling thread's default stream, where the device has memory pools;
 * cudaMalloc and cudaFree wait for every stream of the device), host memory goes to
 * free_host_later (). The GPU must be done with the memory when it is freed: the base class's
 * order (release after the frames in flight) sees to that. A buffer whose context cannot be made
 * current is left allocated, with an error in the log. */
class CudaBuffer {
 public:
  enum class Kind { Device, Pinned };

  CudaBuffer () = default;
  ~CudaBuffer () { reset (); }
  CudaBuffer (CudaBuffer &&o) noexcept { *this = std::move (o); }
  CudaBuffer &operator= (CudaBuffer &&o) noexcept
  {
    if (this != &o) {
      reset ();
      std::swap (ctx_, o.ctx_);
      std::swap (ptr_, o.ptr_);
      std::swap (size_, o.size_);
      std::swap (kind_, o.kind_);
      std::swap (stream_ordered_, o.stream_ordered_);
    }
    return *this;
  }
  CudaBuffer (const CudaBuffer &) = delete;
  CudaBuffer &operator= (const CudaBuffer &) = delete;

  /* Allocates with @ctx current; returns the CUDA status (the buffer stays empty on failure). */
  cudaError_t allocate (GstCudaContext *ctx, Kind kind, size_t size);
  void reset ();

  uint8_t *data () const { return static_cast<uint8_t *> (ptr_); }
  size_t size () const { return size_; }
  explicit operator bool () const { return ptr_ != nullptr; }

 private:
  GstCudaContext *ctx_ = nullptr;
  void *ptr_ = nullptr;
  size_t size_ = 0;
  Kind kind_ = Kind::Device;
  bool stream_ordered_ = false;
};
#endif

}  // namespace cuv
