/* gst-cudavision: an analyser's results that follow its frame to the next of our elements, which
 * puts them on the buffer that leaves us (docs/design.md, "Results that follow the frame"). Not
 * installed; no element outside this plugin reads the meta.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An analyser reads its results on the host, so it used to wait for its stream before every push.
 * Where what reads its output is an element of ours that says so in the ALLOCATION query, it pushes
 * at once instead, and the frame carries a PendingResults (this meta). The next element of ours
 * that waits on the host anyway (before its own push, or because its consumer is not ours) puts
 * the results on its output buffer, where a foreign element, a pad probe or the application reads
 * them; one that pushes on unfinished to another of ours hands them on. Results are published on
 * the analyser's own streaming thread only (its interval is that thread's): either inside its push,
 * when the element that completes them runs there, or by the analyser itself once its push has
 * returned. Another thread that needs them waits for that. */
#pragma once

#include <gst/gst.h>

#include "common/base/cuvcuda.h"
#include "common/results/cuvframeresults.h"

#if CUV_HAVE_CUDA
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

typedef struct _GstCudaVisionFilter GstCudaVisionFilter;

namespace cuv {

/* One frame's results, not yet published. */
class PendingResults {
 public:
  /* The analyser's last word on a frame (frame_finished): the frame's results @value, its metas
   * onto @results, its messages. */
  using Publish = void (*) (GstCudaVisionFilter *owner, GstBuffer *results, FrameResults *value);

  /* The owner's streaming thread, once the frame's work is queued on @stream of @ctx, before the
   * frame (@frame, whose timestamps the results take) is pushed: @value, the frame's results,
   * is held until they are published or dropped. */
  PendingResults (GstCudaVisionFilter *owner, Publish publish, std::shared_ptr<FrameResults> value, GstCudaContext *ctx,
      cudaStream_t stream, GstBuffer *frame);
  ~PendingResults ();
  PendingResults (const PendingResults &) = delete;
  PendingResults &operator= (const PendingResults &) = delete;

  /* The owner's streaming thread, once its push has returned (or at a drain): publishes, unless an
   * element that ran inside the push did. Returns false where the host's wait failed. */
  bool complete ();
  /* The owner, at a flush or stop: the frame's results are not published. */
  void cancel ();
  /* An element of ours that holds the frame in flight: on the owner's thread, it publishes the
   * results there when the frame leaves it (put_on), so the owner need not (held ()). */
  void hold_in_flight ();
  bool held () const;
  /* Another element of ours, before @buf (writable) leaves to an element that is not ours: the
   * results onto @buf. @waited is a stream the host has waited for since the frame's work was
   * queued (NULL: none), which spares the wait when it is the frame's. */
  void put_on (GstBuffer *buf, cudaStream_t waited);

 private:
  bool publish_locked (cudaStream_t waited);

  mutable std::mutex lock_;
  std::condition_variable done_cv_;
  bool done_ = false;
  bool held_ = false;
  GThread *owner_thread_;
  /* valid until done_: the owner publishes or cancels before it goes */
  GstCudaVisionFilter *owner_;
  Publish publish_;
  /* the frame's results, let go of (on the owner's thread) once published or dropped */
  std::shared_ptr<FrameResults> value_;
  GstCudaContext *context_;
  cudaStream_t stream_;
  /* an empty buffer with the frame's timestamps: the owner's publish puts its metas here */
  GstBuffer *results_;
};

using Results = std::vector<std::shared_ptr<PendingResults>>;
/* An element's own results not yet published, oldest first. */
using Deferred = std::deque<std::shared_ptr<PendingResults>>;

/* The owner's streaming thread, once a push has returned: publishes, in order, every result up to
 * the last one that no element of ours holds in flight on this thread (all of them with @all: a
 * drain). False where a wait failed (an element error is posted). */
bool publish_unheld (Deferred &deferred, bool all);
/* Before another frame's results are kept: publishes the oldest until at most @keep are left. */
bool publish_oldest (Deferred &deferred, size_t keep);
/* At a flush or stop. */
void cancel_all (Deferred &deferred);

/* The meta's API type: in the ALLOCATION query (common/base/cuvmetaquery.h), what reads our
 * buffers says it completes results that follow the frame. */
GType results_meta_api_type ();

/* The results that @buf carries (none without the meta). */
Results carried_results (GstBuffer *buf);
/* Before @buf (writable) leaves to an element of ours that completes results: it carries
 * @results and nothing else (no meta when there are none). */
void hand_on_results (GstBuffer *buf, Results results);
/* Before @buf (writable) leaves to anything else: @results onto it, and the meta gone. */
void put_results_on (GstBuffer *buf, Results results, cudaStream_t waited);

}  // namespace cuv
#endif
