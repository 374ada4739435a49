/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GstCudaVisionFilter's per-frame route: the frames in flight (cuvinflight.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <utility>

#include "common/route/cuvinflight.h"
#include "common/cuda/cuvsync.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

#if CUV_HAVE_CUDA
GstFlowReturn
cuv::close_cuda_frame (GstCudaVisionFilter *self, Route &route, const Route::InFlight &f, bool ok, Wait wait)
{
  CapsState &st = *f.state;
  if (wait != Wait::None) {
    const cudaError_t err =
        wait == Wait::InFlight ? cuv::finish_in_flight (f.done) : cuv::finish_before_push (f.stream, route.stream.event ());
    if (!CUV_CUDA_OK (self, err)) {
      ok = false;
    } else {
      if (f.out_dev)
        cuv::mark_finished (gst_buffer_peek_memory (f.outbuf, 0));
      cuv::frame_passed (f.outbuf, f.inbuf, f.stream);
    }
  }
  if (route.op.temporal) {
    st.previous.end ();
    if (!ok) {
      st.previous.reset ();
    } else if (f.hold) {
      st.previous.hold (f.inbuf);
    } else if (!f.in_dev) {
      /* the staged upload stays as the previous frame; the next frame uploads into the other */
      std::swap (st.in_stage, st.prev_stage);
      st.previous.keep_view (st.prev_stage.device_frame);
    }
  }

  if (!ok) {
    cudaError_t err = cudaGetLastError ();
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Processing a frame on the GPU failed"),
        ("%s; the debug log (GST_DEBUG=cudavision:5) names the failing call", err != cudaSuccess ? cudaGetErrorString (err) : "see the log"));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}
#endif

bool
cuv::has_frame_in_flight (const Route &route)
{
#if CUV_HAVE_CUDA
  return !route.in_flight.empty ();
#else
  (void) route;
  return false;
#endif
}

bool
cuv::queues_ahead (const Route &route)
{
  return route.use_cuda && !route.op.temporal;
}

GstFlowReturn
cuv::finish_in_flight (GstCudaVisionFilter *self, Route &route, GstBuffer **out, std::shared_ptr<FrameResults> *results)
{
  *out = nullptr;
  results->reset ();
#if CUV_HAVE_CUDA
  if (route.in_flight.empty ())
    return GST_FLOW_OK;
  Route::InFlight f = std::move (route.in_flight.front ());
  route.in_flight.pop_front ();
  *results = std::move (f.own);
  cuv::ContextGuard guard (route.context);
  GstFlowReturn ret = close_cuda_frame (self, route, f, guard.ok (), Wait::InFlight);
  if (f.inbuf)
    gst_buffer_unref (f.inbuf);
  if (ret == GST_FLOW_OK && !f.results.empty ()) {
    /* upstream analysers' results onto the frame, which now leaves finished (the buffer is the
     * route's alone since the frame was queued) */
    f.outbuf = gst_buffer_make_writable (f.outbuf);
    put_results_on (f.outbuf, std::move (f.results), f.stream);
  }
  if (ret == GST_FLOW_OK)
    *out = f.outbuf;
  else
    gst_buffer_unref (f.outbuf);
  return ret;
#else
  (void) self;
  (void) route;
  return GST_FLOW_OK;
#endif
}

void
cuv::drop_in_flight (GstCudaVisionFilter *self, Route &route)
{
#if CUV_HAVE_CUDA
  if (route.in_flight.empty ())
    return;
  GST_DEBUG_OBJECT (self, "dropping %zu frame(s) in flight", route.in_flight.size ());
  /* not a ContextGuard: an injected fault (CUV_CUDA_FAIL_AT) would leak the frames below, and
   * the fault sweep's leaks tracer rightly fails on that; a real failure to push is the case */
  const bool pushed = route.context && gst_cuda_context_push (route.context);
  while (!route.in_flight.empty ()) {
    Route::InFlight f = std::move (route.in_flight.front ());
    route.in_flight.pop_front ();
    if (route.op.temporal)
      f.state->previous.end ();
    /* buffers the GPU may still read or write go back to their pools only once it is done; when
     * that cannot be known (no context), they are kept, as are the caps state and staging they
     * use: a leak, never memory reused under the GPU's writes */
    if (!pushed || cuv::finish_in_flight (f.done) != cudaSuccess) {
      GST_ERROR_OBJECT (self, "cannot wait for a frame in flight: its buffers stay allocated");
      new std::shared_ptr<CapsState> (std::move (f.state));
      continue;
    }
    if (f.inbuf)
      gst_buffer_unref (f.inbuf);
    gst_buffer_unref (f.outbuf);
  }
  if (pushed)
    gst_cuda_context_pop (nullptr);
#else
  (void) self;
  (void) route;
#endif
}
