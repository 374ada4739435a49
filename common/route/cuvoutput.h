/* gst-cudavision: how frames leave GstCudaVisionFilter: the order of a frame in flight and the one
 * after it (generate_output), the frames in flight drained before a serialized event or dropped
 * at a flush, the element's last word on each frame (frame_finished), and the buffers of its own
 * that an in-place element writes into when its input is shared. The base class
 * (gstcudavisionfilter.cpp) owns one Output and calls it from its GstBaseTransform vfuncs. Not
 * installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/base/gstbasetransform.h>

#include "common/route/cuvframetask.h"
#include "common/route/cuvroute.h"

namespace cuv {

class Output {
 public:
  /* GstBaseTransform's own generate_output, which makes the current frame's buffer (through
   * prepare_output_buffer and transform or transform_ip) */
  using Generate = GstFlowReturn (*) (GstBaseTransform *trans, GstBuffer **outbuf);

  Output () = default;
  Output (const Output &) = delete;
  Output &operator= (const Output &) = delete;
  ~Output ();

  /* GstBaseTransform::generate_output, keeping frames in flight where @in_flight allows
   * (max-frames-in-flight): see cuvoutput.cpp. Streaming thread. The frame's task lives in this
   * call: task () gives it to the steps that @parent calls. */
  GstFlowReturn generate (GstCudaVisionFilter *self, Route &route, bool in_flight, Generate parent, GstBuffer **outbuf);
  /* Inside generate's call of GstBaseTransform's own: the task of the frame it makes (else NULL). */
  FrameTask *task () const { return task_; }
  /* prepare_output_buffer, first: the frame's results value (route.op.begin_results, an
   * analyser's), which the task owns; NULL without one. */
  const FrameResults *begin_results (GstCudaVisionFilter *self, const Route &route, GstBuffer *inbuf);
  /* Streaming thread, before a serialized event or a drain query goes on: the frames in flight
   * are finished and pushed. */
  void drain (GstCudaVisionFilter *self, Route &route);
  /* At a flush and at stop: the frames in flight, and one finished after them, are dropped. */
  void drop (GstCudaVisionFilter *self, Route &route);
  /* The element's last word on a frame whose work is complete (route.op.frame_finished), with the
   * frame's results value. */
  static void finished (GstCudaVisionFilter *self, const Route &route, GstBuffer *outbuf, FrameResults *results);
  /* After the route left no frame in flight (@task says how the frame ended): upstream analysers'
   * results on with @outbuf or onto it, and this element's own last word, or its results
   * following the frame (cuvresultsmeta.h), published by publish_deferred (). */
  static void frame_done (GstCudaVisionFilter *self, Route &route, FrameTask &task, GstBuffer *outbuf);
  /* Streaming thread, once the chain returned (@all false), and at a drain (@all): the results that
   * followed their frames, in order, those that an element of ours on this thread holds in flight
   * excepted until a drain (cuvresultsmeta.h). False where a wait failed (an element error is
   * posted). */
  static bool publish_deferred (Route &route, bool all);

  /* prepare_output_buffer, in place, for an input that others hold too: a buffer of a pool of
   * the element's own (made at the first such input after each caps change) with the input's
   * metadata; transform_ip then writes the frame from the input into it (input_of). The frame's
   * task keeps both. */
  GstFlowReturn own_buffer (GstCudaVisionFilter *self, Route &route, const CapsState &state, GstBuffer *inbuf,
      GstBuffer **outbuf);
  /* In transform_ip: the buffer the frame comes from, for @buf, the buffer it goes into (@buf
   * itself unless own_buffer gave it). */
  GstBuffer *input_of (GstBuffer *buf) const;
  /* At a caps change and at stop: the pool of own_buffer goes. */
  void drop_pool ();

 private:
  GstFlowReturn finish_in_flight (GstCudaVisionFilter *self, Route &route, GstBuffer **out);

  /* streaming thread: a finished frame that generate gives at its next call, after the frame
   * that was in flight */
  GstBuffer *ready_ = nullptr;
  GstBufferPool *pool_ = nullptr;
  /* streaming thread, within generate: the frame's task */
  FrameTask *task_ = nullptr;
};

}  // namespace cuv
