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

/* Makes @ctx current on this thread for the guard's lifetime. */
class ContextGuard {
 public:
  explicit ContextGuard (GstCudaContext *ctx) : ok_ (ctx && !inject_fault () && gst_cuda_context_push (ctx)) {}
  ~ContextGuard () { if (ok_) gst_cuda_context_pop (nullptr); }
  ContextGuard (const ContextGuard &) = delete;
  ContextGuard &operator= (const ContextGuard &) = delete;
  bool ok () const { return ok_; }

 private:
  bool ok_;
};

/* Device memory (cudaMalloc) or page-locked host memory (cudaMallocHost) of one context, freed
 * with that context current. */
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
};
#endif

}  // namespace cuv
