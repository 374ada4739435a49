/* gst-cudavision: one pool of CUDA streams per GstCudaContext, shared by every element on it.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An element leases a stream at start and returns it at stop (the lease's destructor). Each stream
 * comes with an event made with cudaEventBlockingSync, for a host wait that sleeps instead of
 * spinning (cuvsync.h). The pool lives while any lease or element holds it, and destroys its
 * streams and events with the context current. */
#pragma once

#include "cuvcuda.h"

#if CUV_HAVE_CUDA
#include <memory>
#include <mutex>
#include <vector>

namespace cuv {

class StreamPool;

class StreamLease {
 public:
  StreamLease () = default;
  StreamLease (std::shared_ptr<StreamPool> pool, cudaStream_t stream, cudaEvent_t event)
      : pool_ (std::move (pool)), stream_ (stream), event_ (event) {}
  ~StreamLease () { release (); }
  StreamLease (StreamLease &&o) noexcept : pool_ (std::move (o.pool_)), stream_ (o.stream_), event_ (o.event_)
  {
    o.stream_ = nullptr;
    o.event_ = nullptr;
  }
  StreamLease &operator= (StreamLease &&o) noexcept;
  StreamLease (const StreamLease &) = delete;
  StreamLease &operator= (const StreamLease &) = delete;

  cudaStream_t get () const { return stream_; }
  /* the stream's blocking-sync event (only this lease records it) */
  cudaEvent_t event () const { return event_; }
  explicit operator bool () const { return stream_ != nullptr; }
  void release ();

 private:
  std::shared_ptr<StreamPool> pool_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t event_ = nullptr;
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

 private:
  friend class StreamLease;
  void give_back (cudaStream_t s, cudaEvent_t e);

  GstCudaContext *ctx_;
  std::mutex lock_;
  std::vector<std::pair<cudaStream_t, cudaEvent_t>> free_;
};

}  // namespace cuv
#endif
