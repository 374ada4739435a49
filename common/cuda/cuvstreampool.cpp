/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuda/cuvstreampool.h"

#if CUV_HAVE_CUDA
#include <map>

namespace cuv {

namespace {
std::mutex registry_lock;
std::map<GstCudaContext *, std::weak_ptr<StreamPool>> registry;
}  // namespace

std::shared_ptr<StreamPool> StreamPool::for_context (GstCudaContext *ctx)
{
  std::lock_guard<std::mutex> lk (registry_lock);
  for (auto it = registry.begin (); it != registry.end ();)
    it = it->second.expired () ? registry.erase (it) : std::next (it);
  auto &slot = registry[ctx];
  auto pool = slot.lock ();
  if (!pool) {
    pool = std::make_shared<StreamPool> (ctx);
    slot = pool;
  }
  return pool;
}

/* The pool holds the context: the registry key stays valid while the pool lives. */
StreamPool::StreamPool (GstCudaContext *ctx) : ctx_ (static_cast<GstCudaContext *> (gst_object_ref (ctx))) {}

StreamPool::~StreamPool ()
{
  {
    ContextGuard guard (ctx_);
    for (PooledStream &s : free_) {
#if CUV_HAVE_STREAM_MODEL
      gst_cuda_stream_unref (s.gst);
#else
      cudaStreamDestroy (s.handle);
#endif
      cudaEventDestroy (s.event);
      cudaEventDestroy (s.done[0]);
      cudaEventDestroy (s.done[1]);
    }
  }
  gst_object_unref (ctx_);
}

StreamLease StreamPool::acquire (cudaError_t *err)
{
  *err = cudaSuccess;
  {
    std::lock_guard<std::mutex> lk (lock_);
    if (!free_.empty ()) {
      PooledStream s = free_.back ();
      free_.pop_back ();
      return StreamLease (shared_from_this (), s);
    }
  }
  ContextGuard guard (ctx_);
  if (!guard.ok ()) {
    *err = cudaErrorDeviceUninitialized;
    return StreamLease ();
  }
  PooledStream s;
#if CUV_HAVE_STREAM_MODEL
  /* GStreamer's stream (non-blocking, as ours were), so that pools and memory can carry it */
  s.gst = gst_cuda_stream_new (ctx_);
  if (!s.gst) {
    *err = cudaErrorMemoryAllocation;
    return StreamLease ();
  }
  s.handle = stream_handle (s.gst);
#else
  *err = cudaStreamCreateWithFlags (&s.handle, cudaStreamNonBlocking);
  if (*err != cudaSuccess)
    return StreamLease ();
#endif
  *err = cudaEventCreateWithFlags (&s.event, cudaEventBlockingSync | cudaEventDisableTiming);
  for (cudaEvent_t &done : s.done)
    if (*err == cudaSuccess)
      *err = cudaEventCreateWithFlags (&done, in_flight_event_flags ());
  if (*err != cudaSuccess) {
    for (cudaEvent_t e : {s.event, s.done[0], s.done[1]})
      if (e)
        cudaEventDestroy (e);
#if CUV_HAVE_STREAM_MODEL
    gst_cuda_stream_unref (s.gst);
#else
    cudaStreamDestroy (s.handle);
#endif
    return StreamLease ();
  }
  return StreamLease (shared_from_this (), s);
}

void StreamPool::give_back (PooledStream s)
{
  std::lock_guard<std::mutex> lk (lock_);
  free_.push_back (s);
}

StreamLease &StreamLease::operator= (StreamLease &&o) noexcept
{
  if (this != &o) {
    release ();
    pool_ = std::move (o.pool_);
    s_ = o.s_;
    o.s_ = PooledStream{};
  }
  return *this;
}

void StreamLease::release ()
{
  if (s_.handle && pool_)
    pool_->give_back (s_);
  s_ = PooledStream{};
  pool_.reset ();
}

}  // namespace cuv
#endif
