/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/base/cuvcuda.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>

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

namespace {
/* the context of this thread's innermost ContextGuard that pushed one */
thread_local GstCudaContext *t_guarded = nullptr;
}  // namespace

ContextGuard::ContextGuard (GstCudaContext *ctx, bool may_fail_by_injection)
{
  if (ctx && ctx == t_guarded) {
    ok_ = true;
    return;
  }
  ok_ = pushed_ = ctx && !(may_fail_by_injection && inject_fault ()) && gst_cuda_context_push (ctx);
  if (pushed_) {
    outer_ = t_guarded;
    t_guarded = ctx;
  }
}

ContextGuard::~ContextGuard ()
{
  if (!pushed_)
    return;
  t_guarded = outer_;
  gst_cuda_context_pop (nullptr);
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

namespace {

/* Whether the current device allocates stream-ordered (cudaMallocAsync): not every device or
 * driver does (some virtual GPUs). */
bool
stream_ordered_allocation ()
{
  int device = 0, pools = 0;
  return cudaGetDevice (&device) == cudaSuccess &&
      cudaDeviceGetAttribute (&pools, cudaDevAttrMemoryPoolsSupported, device) == cudaSuccess && pools;
}

struct HostFree {
  GstCudaContext *ctx;
  void *ptr;
};

std::mutex free_lock;
std::condition_variable frees_done;
GThreadPool *free_pool = nullptr;
bool free_pool_closed = false;
long frees_pending = 0;

void
free_host_now (gpointer data, gpointer)
{
  auto *f = static_cast<HostFree *> (data);
  /* not a ContextGuard: this thread's calls would take turns in the fault sweep's count
   * (CUV_CUDA_FAIL_AT) at times of their own */
  const bool pushed = gst_cuda_context_push (f->ctx);
  const cudaError_t err = pushed ? cudaFreeHost (f->ptr) : cudaErrorDeviceUninitialized;
  if (pushed)
    gst_cuda_context_pop (nullptr);
  if (err != cudaSuccess)
    GST_CAT_WARNING (gst_cuda_vision_debug, "could not free page-locked memory %p: %s", f->ptr, cudaGetErrorString (err));
  gst_object_unref (f->ctx);
  delete f;
  std::lock_guard<std::mutex> lk (free_lock);
  if (--frees_pending == 0)
    frees_done.notify_all ();
}

/* At exit, before the CUDA runtime's own teardown (registered earlier, so run later): the frees
 * still queued are done, and later ones are done on the caller's thread. */
void
finish_host_frees ()
{
  GThreadPool *pool;
  {
    std::lock_guard<std::mutex> lk (free_lock);
    pool = free_pool;
    free_pool = nullptr;
    free_pool_closed = true;
  }
  if (pool)
    g_thread_pool_free (pool, FALSE, TRUE);
}

}  // namespace

void free_host_later (GstCudaContext *ctx, void *ptr)
{
  auto *f = new HostFree{static_cast<GstCudaContext *> (gst_object_ref (ctx)), ptr};
  {
    std::lock_guard<std::mutex> lk (free_lock);
    if (!free_pool && !free_pool_closed) {
      /* one thread, started when there is something to free and gone after GLib's idle timeout */
      free_pool = g_thread_pool_new (free_host_now, nullptr, 1, FALSE, nullptr);
      std::atexit (finish_host_frees);
    }
    frees_pending++;
    if (free_pool && g_thread_pool_push (free_pool, f, nullptr))
      return;
  }
  free_host_now (f, nullptr);
}

void finish_host_frees_now ()
{
  std::unique_lock<std::mutex> lk (free_lock);
  frees_done.wait (lk, [] { return frees_pending == 0; });
}

cudaError_t CudaBuffer::allocate (GstCudaContext *ctx, Kind kind, size_t size)
{
  reset ();
  ContextGuard guard (ctx);
  if (!guard.ok ())
    return cudaErrorDeviceUninitialized;
  void *p = nullptr;
  bool ordered = false;
  cudaError_t err;
  if (kind == Kind::Pinned) {
    err = cudaMallocHost (&p, size);
  } else if ((ordered = stream_ordered_allocation ())) {
    /* ordered on this thread's default stream: ready for any stream once that has run */
    err = cudaMallocAsync (&p, size, cudaStreamPerThread);
    if (err == cudaSuccess && (err = cudaStreamSynchronize (cudaStreamPerThread)) != cudaSuccess)
      cudaFreeAsync (p, cudaStreamPerThread);
  } else {
    err = cudaMalloc (&p, size);
  }
  if (err != cudaSuccess)
    return err;
  ctx_ = static_cast<GstCudaContext *> (gst_object_ref (ctx));
  ptr_ = p;
  size_ = size;
  kind_ = kind;
  stream_ordered_ = ordered;
  return cudaSuccess;
}

void CudaBuffer::reset ()
{
  if (!ptr_)
    return;
  if (kind_ == Kind::Pinned) {
    free_host_later (ctx_, ptr_);
  } else {
    ContextGuard guard (ctx_);
    if (!guard.ok ())
      GST_CAT_ERROR (gst_cuda_vision_debug, "cannot make the context of %zu bytes of device memory current: "
          "they stay allocated", size_);
    else if (stream_ordered_)
      cudaFreeAsync (ptr_, cudaStreamPerThread);
    else
      cudaFree (ptr_);
  }
  gst_object_unref (ctx_);
  ctx_ = nullptr;
  ptr_ = nullptr;
  size_ = 0;
}
#endif

}  // namespace cuv

#if CUV_HAVE_CUDA
/* The fault-injection hooks for tests/check/test_faults_gpu.cpp, which finds them with dlsym in the
 * loaded plugin so that one process can sweep N: the next run fails its Nth checked call (0: none),
 * counting from zero again. */
extern "C" G_MODULE_EXPORT void cuv_cuda_fail_at_set (long n)
{
  cuv::checked_calls = 0;
  cuv::fail_at = n;
}

/* Returns once every free_host_later () so far is done: tests call it before gst_deinit (), where
 * the leaks tracer would count the contexts that queued frees hold. */
extern "C" G_MODULE_EXPORT void cuv_finish_host_frees ()
{
  cuv::finish_host_frees_now ();
}

/* The checked calls counted since cuv_cuda_fail_at_set () (only while N > 0). */
extern "C" G_MODULE_EXPORT long cuv_cuda_checked_calls ()
{
  return cuv::checked_calls;
}
#endif
