/* gst-cudavision: one pool of CUDA streams per GstCudaContext, shared by every element on it.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An element leases a stream at start and returns it at stop (the lease's destructor). Each stream
 * comes with an event made with cudaEventBlockingSync, for a host wait that sleeps instead of
 * spinning (cuvsync.h), and two for the ends of frames in flight. Since GStreamer 1.24 the stream is a GstCudaStream, which pools and memory
 * carry to the element's neighbours (cuvstream.h). The pool lives while any lease or element holds
 * it, and destroys its streams and events with the context current. */
#pragma once

#include "common/base/cuvcuda.h"
#include "common/cuda/cuvstream.h"

#if CUV_HAVE_CUDA
#include <memory>
#include <mutex>
#include <vector>

namespace cuv {

class StreamPool;

/* One stream of the pool: a GstCudaStream on 1.24+ (NULL on 1.22), its CUDA handle, its event. */
struct PooledStream {
  GstCudaStream *gst = nullptr;
  cudaStream_t handle = nullptr;
  cudaEvent_t event = nullptr;
  /* the ends of two frames in flight (cuvsync.h: finish_in_flight), used in turn */
  cudaEvent_t done[2] = {nullptr, nullptr};
};

class StreamLease {
 public:
  StreamLease () = default;
  StreamLease (std::shared_ptr<StreamPool> pool, PooledStream s) : pool_ (std::move (pool)), s_ (s) {}
  ~StreamLease () { release (); }
  StreamLease (StreamLease &&o) noexcept : pool_ (std::move (o.pool_)), s_ (o.s_) { o.s_ = PooledStream{}; }
  StreamLease &operator= (StreamLease &&o) noexcept;
  StreamLease (const StreamLease &) = delete;
  StreamLease &operator= (const StreamLease &) = delete;

  cudaStream_t get () const { return s_.handle; }
  /* the same stream as GStreamer's object, for pools and memory (NULL on 1.22) */
  GstCudaStream *gst_stream () const { return s_.gst; }
  /* the stream's blocking-sync event (only this lease records it) */
  cudaEvent_t event () const { return s_.event; }
  /* the events that mark the ends of the element's frames in flight, @i 0 or 1 (only this lease
   * records them) */
  cudaEvent_t done_event (unsigned i) const { return s_.done[i & 1]; }
  explicit operator bool () const { return s_.handle != nullptr; }
  /* the pool the stream came from (the context's) */
  const std::shared_ptr<StreamPool> &pool () const { return pool_; }
  void release ();

 private:
  std::shared_ptr<StreamPool> pool_;
  PooledStream s_;
};

class StreamPool : public std::enable_shared_from_this<StreamPool> {
 public:
  /* The pool of @ctx, made on first use. */
  static std::shared_ptr<StreamPool> for_context (GstCudaContext *ctx);

  explicit StreamPool (GstCudaContext *ctx);
  ~StreamPool ();
  StreamPool (const StreamPool &) = delete;
  StreamPool &operator= (const StreamPool &) = delete;

  /* A free stream and its event, or new ones (a non-blocking stream); an empty lease (and the
   * CUDA error) on failure. */
  StreamLease acquire (cudaError_t *err);
  GstCudaContext *context () const { return ctx_; }

 private:
  friend class StreamLease;
  void give_back (PooledStream s);

  GstCudaContext *ctx_;
  std::mutex lock_;
  std::vector<PooledStream> free_;
};

}  // namespace cuv
#endif
