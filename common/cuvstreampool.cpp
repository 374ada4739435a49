/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cuvstreampool.h"

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
    for (auto &[s, e] : free_) {
      cudaStreamDestroy (s);
      cudaEventDestroy (e);
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
      auto [s, e] = free_.back ();
      free_.pop_back ();
      return StreamLease (shared_from_this (), s, e);
    }
  }
  ContextGuard guard (ctx_);
  if (!guard.ok ()) {
    *err = cudaErrorDeviceUninitialized;
    return StreamLease ();
  }
  cudaStream_t s = nullptr;
  *err = cudaStreamCreateWithFlags (&s, cudaStreamNonBlocking);
  if (*err != cudaSuccess)
    return StreamLease ();
  cudaEvent_t e = nullptr;
  *err = cudaEventCreateWithFlags (&e, cudaEventBlockingSync | cudaEventDisableTiming);
  if (*err != cudaSuccess) {
    cudaStreamDestroy (s);
    return StreamLease ();
  }
  return StreamLease (shared_from_this (), s, e);
}

void StreamPool::give_back (cudaStream_t s, cudaEvent_t e)
{
  std::lock_guard<std::mutex> lk (lock_);
  free_.emplace_back (s, e);
}

StreamLease &StreamLease::operator= (StreamLease &&o) noexcept
{
  if (this != &o) {
    release ();
    pool_ = std::move (o.pool_);
    stream_ = o.stream_;
    event_ = o.event_;
    o.stream_ = nullptr;
    o.event_ = nullptr;
  }
  return *this;
}

void StreamLease::release ()
{
  if (stream_ && pool_)
    pool_->give_back (stream_, event_);
  stream_ = nullptr;
  event_ = nullptr;
  pool_.reset ();
}

}  // namespace cuv
#endif
