/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * How frames leave GstCudaVisionFilter (cuvoutput.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/route/cuvinflight.h"
#include "common/route/cuvnegotiation.h"
#include "common/route/cuvoutput.h"

#include <mutex>
#include <optional>

#define GST_CAT_DEFAULT gst_cuda_vision_debug

cuv::Output::~Output ()
{
  drop_pool ();
  gst_clear_buffer (&ready_);
}

const cuv::FrameResults *
cuv::Output::begin_results (GstCudaVisionFilter *self, const Route &route, GstBuffer *inbuf)
{
  if (!task_)
    return nullptr;
  if (route.op.begin_results)
    task_->results = route.op.begin_results (self, inbuf);
  return task_->results.get ();
}

void
cuv::Output::finished (GstCudaVisionFilter *self, const Route &route, GstBuffer *outbuf, FrameResults *results)
{
  if (route.op.frame_finished)
    route.op.frame_finished (self, outbuf, results);
}

void
cuv::Output::frame_done (GstCudaVisionFilter *self, Route &route, FrameTask &task, GstBuffer *outbuf)
{
#if CUV_HAVE_CUDA
  Results results = std::move (task.upstream_results);
  task.upstream_results.clear ();
  if (task.own_results)
    results.push_back (task.own_results);
  if (task.hand_on_results)
    hand_on_results (outbuf, std::move (results));
  else if (!results.empty ())
    put_results_on (outbuf, std::move (results), task.results_waited);
  if (task.own_results) {
    /* published by an element of ours on this thread when the frame leaves it, else once the
     * chain has returned (publish_deferred, from gst_cuda_vision_filter_chain) */
    route.deferred.push_back (std::move (task.own_results));
    return;
  }
#endif
  finished (self, route, outbuf, task.results.get ());
}

bool
cuv::Output::publish_deferred (Route &route, bool all)
{
#if CUV_HAVE_CUDA
  return publish_unheld (route.deferred, all);
#else
  (void) route;
  (void) all;
  return true;
#endif
}

/* Streaming thread: the frame in flight, finished, into @out (NULL when there was none). */
GstFlowReturn
cuv::Output::finish_in_flight (GstCudaVisionFilter *self, Route &route, GstBuffer **out)
{
  /* queued ahead, the element may have processed the next frame since: the frame's own value is
   * what publishing reads */
  std::shared_ptr<FrameResults> results;
  GstFlowReturn ret = cuv::finish_in_flight (self, route, out, &results);
  if (ret == GST_FLOW_OK && *out)
    finished (self, route, *out, results.get ());
  return ret;
}

void
cuv::Output::drain (GstCudaVisionFilter *self, Route &route)
{
  publish_deferred (route, true);
  while (has_frame_in_flight (route)) {
    GstBuffer *buf = nullptr;
    /* a frame that failed is gone from the route (its error posted): the next one still leaves */
    if (finish_in_flight (self, route, &buf) != GST_FLOW_OK || !buf)
      continue;
    GstFlowReturn ret = gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (self), buf);
    if (ret == GST_FLOW_NOT_NEGOTIATED)
      GST_ELEMENT_WARNING (self, STREAM, FORMAT, ("not negotiated"),
          ("downstream refused the frame in flight's caps (its caps changed): the frame is lost"));
    else if (ret != GST_FLOW_OK)
      GST_WARNING_OBJECT (self, "pushing the frame that was in flight: %s", gst_flow_get_name (ret));
  }
}

void
cuv::Output::drop (GstCudaVisionFilter *self, Route &route)
{
  drop_in_flight (self, route);
  gst_clear_buffer (&ready_);
#if CUV_HAVE_CUDA
  cancel_all (route.deferred);
#endif
}

#if CUV_HAVE_CUDA
/* A frame passed through as it is (passthrough, which the application may switch on at any
 * moment), to whatever follows: finished first where an element of ours pushed it unfinished
 * (1.22, cuvsync.h), with the results that followed it from an analyser of ours put on. */
static GstBuffer *
passed_through (GstBuffer *buf)
{
  cuv::before_others_read (buf);
  cuv::Results results = cuv::carried_results (buf);
  if (results.empty ())
    return buf;
  buf = gst_buffer_make_writable (buf);
  cuv::put_results_on (buf, std::move (results), nullptr);
  return buf;
}
#endif

/* GstBaseTransform's default makes one output buffer per input and pushes it. Where the frame
 * would make the host wait for its stream (a host copy, results read on the host, a previous
 * frame kept, or GStreamer 1.22), and frames may stay in flight, the frame's buffer goes out when
 * the next frame has been queued on the GPU: the host then waits for a frame that the GPU has had
 * for a while, and the GPU is never idle while the host waits. An element that queues ahead
 * (cuvinflight.h: it keeps nothing between frames) queues the next frame before it waits for the
 * last, so that their copies overlap; the others wait for the last frame first, as what they
 * keep between frames is only ready then. Order is kept: the finished frame comes first, then
 * (from the next call) the current one when it did not stay in flight. */
GstFlowReturn
cuv::Output::generate (GstCudaVisionFilter *self, Route &route, bool in_flight, Generate parent, GstBuffer **outbuf)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  *outbuf = nullptr;
  if (ready_) {
    *outbuf = ready_;
    ready_ = nullptr;
    return GST_FLOW_OK;
  }
  if (!trans->queued_buf)
    return GST_FLOW_OK;
#if CUV_HAVE_CUDA
  /* one push and pop of the context for all the frame's steps below (cuvcuda.h, ContextGuard) */
  std::optional<ContextGuard> current_context;
  if (route.use_cuda)
    current_context.emplace (route.context, ContextGuard::kNoInjectedFault);
#endif

  /* the base class would mark the frame it is given back with this input's discontinuity: the
   * frame in flight goes out first, then */
  const bool discont = GST_BUFFER_IS_DISCONT (trans->queued_buf);
  const bool ahead = in_flight && !discont && queues_ahead (route);
  GstBuffer *previous = nullptr;
  GstFlowReturn ret = GST_FLOW_OK;
  if (!ahead) {
    ret = finish_in_flight (self, route, &previous);
    if (ret == GST_FLOW_OK && previous && discont) {
      ret = gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (trans), previous);
      previous = nullptr;
    }
    if (ret != GST_FLOW_OK) {
      gst_buffer_replace (&trans->queued_buf, nullptr);
      return ret;
    }
  }

  const bool earlier_in_flight = has_frame_in_flight (route);
  GstBuffer *current = nullptr;
  GstBuffer *const input = trans->queued_buf;
  /* the frame's task, for the steps GstBaseTransform's generate_output calls (task ()) */
  FrameTask task;
  task.may_leave_in_flight = in_flight;
  task_ = &task;
  ret = parent (trans, &current);
  task_ = nullptr;
#if CUV_HAVE_CUDA
  if (current && current == input && !task.ran)
    current = passed_through (current);
#else
  (void) input;
#endif
  /* the route holds the frame in flight */
  if (current && task.left_in_flight)
    gst_clear_buffer (&current);
  /* queued ahead: now the frame before it */
  if (ahead && earlier_in_flight) {
    GstFlowReturn finished = finish_in_flight (self, route, &previous);
    if (finished != GST_FLOW_OK) {
      gst_clear_buffer (&current);
      return finished;
    }
  }
  if (ret == GST_BASE_TRANSFORM_FLOW_DROPPED && previous)
    ret = GST_FLOW_OK;
  if (ret != GST_FLOW_OK) {
    gst_clear_buffer (&previous);
    *outbuf = current;
    return ret;
  }
  if (previous) {
    *outbuf = previous;
    ready_ = current;
  } else {
    *outbuf = current;
  }
  return GST_FLOW_OK;
}

/* Working in place, GstBaseTransform copies a buffer that is not writable (one that a tee or its
 * source still holds), through the memory's allocator, and the element then writes the copy: two
 * passes over the frame, and GStreamer's copy of CUDA memory is slow (bench_pipelines: cudaenhance
 * on such buffers took 233 us at 4K for a 28 us kernel). A writable buffer whose memory another
 * buffer shares (imagefreeze's copies, an appsrc ring, a decoder's reference frames) is copied
 * the same way, later: mapping it for writing copies the memory (a CPU copy and a malloc for
 * system memory: cudaenhance took 2.3 ms for a 1080p frame). The element writes its result into a
 * buffer of its own instead: an element that changes every pixel in one pass, and an analyser
 * that draws on the frame (keeps_caps, writes_frame) after copying the frame with the backend's
 * copy. An analyser that only reads keeps GstBaseTransform's way: its buffer copy shares the
 * memory, which is mapped read-only. */
GstFlowReturn
cuv::Output::own_buffer (GstCudaVisionFilter *self, Route &route, const CapsState &state, GstBuffer *inbuf,
    GstBuffer **outbuf)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  if (!pool_) {
    GstCaps *caps = gst_pad_get_current_caps (GST_BASE_TRANSFORM_SRC_PAD (trans));
    guint size = 0;
    if (caps) {
#if CUV_HAVE_CUDA
      GstCudaStream *stream = route.pool_stream ();
      pool_ = make_pool (route.context, caps, &state.out_info, 0, 0, &size, stream, route.use_cuda);
      replace_stream (&stream, nullptr);
#else
      pool_ = make_pool (route.context, caps, &state.out_info, 0, 0, &size);
#endif
    }
    gst_clear_caps (&caps);
    if (!pool_ || !gst_buffer_pool_set_active (pool_, TRUE)) {
      drop_pool ();
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, ("No buffer pool for the output."),
          ("the input buffer is not writable and no pool could be made for the output"));
      return GST_FLOW_ERROR;
    }
    GST_DEBUG_OBJECT (self, "input buffers are shared: writing into buffers of our own");
  }
  GstFlowReturn ret = gst_buffer_pool_acquire_buffer (pool_, outbuf, nullptr);
  if (ret != GST_FLOW_OK)
    return ret;
  GstBaseTransformClass *bclass = GST_BASE_TRANSFORM_GET_CLASS (trans);
  if (bclass->copy_metadata && !bclass->copy_metadata (trans, inbuf, *outbuf))
    GST_WARNING_OBJECT (self, "could not copy the metadata of %" GST_PTR_FORMAT, inbuf);
  if (task_) {
    task_->shared_input = inbuf;
    task_->shared_input_output = *outbuf;
  }
  return GST_FLOW_OK;
}

GstBuffer *
cuv::Output::input_of (GstBuffer *buf) const
{
  return task_ && buf == task_->shared_input_output ? task_->shared_input : buf;
}

void
cuv::Output::drop_pool ()
{
  if (pool_)
    gst_buffer_pool_set_active (pool_, FALSE);
  gst_clear_object (&pool_);
}
