/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cuvcuda.h"

#include <atomic>
#include <cstdlib>

GST_DEBUG_CATEGORY (gst_cuda_vision_debug);

namespace cuv {

#if CUV_HAVE_CUDA
namespace {
std::atomic<long> fail_at{[] {
  const char *v = g_getenv ("CUV_CUDA_FAIL_AT");
  return v ? std::atol (v) : 0L;
}()};
std::atomic<long> checked_calls{0};
}  // namespace

bool inject_fault ()
{
  const long n = fail_at.load (std::memory_order_relaxed);
  if (G_LIKELY (n <= 0) || ++checked_calls != n)
    return false;
  GST_CAT_ERROR (gst_cuda_vision_debug, "CUDA call %ld fails: injected by CUV_CUDA_FAIL_AT", n);
  return true;
}

bool cuda_ok (cudaError_t err, GstObject *obj, const char *expr, const char *file, int line)
{
  if (G_UNLIKELY (inject_fault ()) && err == cudaSuccess)
    err = cudaErrorMemoryAllocation;
  if (G_LIKELY (err == cudaSuccess))
    return true;
  gst_debug_log (gst_cuda_vision_debug, GST_LEVEL_ERROR, file, "cuda", line, G_OBJECT (obj),
      "CUDA call failed: %s: %s (%s)", expr, cudaGetErrorName (err), cudaGetErrorString (err));
  return false;
}

cudaError_t CudaBuffer::allocate (GstCudaContext *ctx, Kind kind, size_t size)
{
  reset ();
  ContextGuard guard (ctx);
  if (!guard.ok ())
    return cudaErrorDeviceUninitialized;
  void *p = nullptr;
  cudaError_t err = kind == Kind::Device ? cudaMalloc (&p, size) : cudaMallocHost (&p, size);
  if (err != cudaSuccess)
    return err;
  ctx_ = static_cast<GstCudaContext *> (gst_object_ref (ctx));
  ptr_ = p;
  size_ = size;
  kind_ = kind;
  return cudaSuccess;
}

void CudaBuffer::reset ()
{
  if (!ptr_)
    return;
  {
    ContextGuard guard (ctx_);
    if (kind_ == Kind::Device)
      cudaFree (ptr_);
    else
      cudaFreeHost (ptr_);
  }
  gst_object_unref (ctx_);
  ctx_ = nullptr;
  ptr_ = nullptr;
  size_ = 0;
}
#endif

}  // namespace cuv

#if CUV_HAVE_CUDA
/* The fault-injection hooks for tests/check/test_faults.cpp, which finds them with dlsym in the
 * loaded plugin so that one process can sweep N: the next run fails its Nth checked call (0: none),
 * counting from zero again. */
extern "C" G_MODULE_EXPORT void cuv_cuda_fail_at_set (long n)
{
  cuv::checked_calls = 0;
  cuv::fail_at = n;
}

/* The checked calls counted since cuv_cuda_fail_at_set () (only while N > 0). */
extern "C" G_MODULE_EXPORT long cuv_cuda_checked_calls ()
{
  return cuv::checked_calls;
}
#endif
