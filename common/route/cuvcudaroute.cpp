/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GstCudaVisionFilter's per-frame route: the CUDA backend's frame and its staging
 * (cuvcudaroute.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "common/route/cuvcudaroute.h"
#include "common/cuda/cuvhostcopy.h"
#include "common/route/cuvinflight.h"
#include "common/route/cuvmaps.h"
#include "common/cuda/cuvpinned.h"
#include "common/cuda/cuvsync.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

#if CUV_HAVE_CUDA
/* CUDA memory of another context (a neighbour on another device, or one that did not share its
 * context) cannot be read or written in place: the frame goes through system memory, a copy each
 * way. Never silently: a warning, once a start, says why and what to set. */
static void
warn_other_context (GstCudaVisionFilter *self, cuv::Route &route, GstBuffer *buf)
{
  if (route.warned_other_context || !route.context)
    return;
  GstCudaContext *other = cuv::memory_context (buf);
  if (!other || other == route.context)
    return;
  route.warned_other_context = true;
  gint theirs = -1, ours = -1;
  g_object_get (other, "cuda-device-id", &theirs, nullptr);
  g_object_get (route.context, "cuda-device-id", &ours, nullptr);
  if (theirs != ours)
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("CUDA memory of device %d meets this element, which runs on device %d: every frame is copied through "
         "system memory",
            theirs, ours),
        ("give every CUDA element of the pipeline the same cuda-device-id (ours take their neighbours' device "
         "with -1)"));
  else
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("CUDA memory of another CUDA context on device %d meets this element: every frame is copied through "
         "system memory",
            ours),
        ("the neighbouring elements did not share one CUDA context; leave cuda-device-id at -1, or give the "
         "elements one GstContext (gst_element_set_context)"));
}

/* A device frame with rows padded to 256 bytes, which a frame in system memory is copied into
 * (and out of) plane by plane. */
static bool
ensure_staging (GstCudaVisionFilter *self, const cuv::Route &route, CapsState::Staging &stage,
    const GstVideoInfo *info, cuv::PixelLayout layout)
{
  if (stage.device)
    return true;
  const size_t bytes = cuv::frame_bytes (cuv::padded_frame (info, layout, 256, nullptr));
  if (!CUV_CUDA_OK (self, stage.device.allocate (route.context, cuv::CudaBuffer::Kind::Device, bytes))) {
    stage.device.reset ();
    return false;
  }
  stage.device_frame = cuv::padded_frame (info, layout, 256, stage.device.data ());
  return true;
}

/* The page-locked twin of @stage's device frame, for the staged copies (cuvhostcopy.h). */
static bool
ensure_host_staging (GstCudaVisionFilter *self, const cuv::Route &route, CapsState::Staging &stage)
{
  if (stage.host)
    return true;
  if (!CUV_CUDA_OK (self, stage.host.allocate (route.context, cuv::CudaBuffer::Kind::Pinned, stage.device.size ()))) {
    stage.host.reset ();
    return false;
  }
  stage.host_frame = stage.device_frame;
  for (int p = 0; p < stage.host_frame.n_planes; p++)
    stage.host_frame.planes[p].data = stage.host.data () + (stage.device_frame.planes[p].data - stage.device.data ());
  return true;
}

namespace {

/* One frame on the CUDA backend, as process_cuda's steps see it: its buffers, where each side's
 * memory is, the stream it runs on and the kernels' views. */
struct CudaFrame {
  GstCudaVisionFilter *self;
  cuv::Route &route;
  cuv::FrameTask &task;
  const std::shared_ptr<CapsState> &state;
  GstBuffer *inbuf;
  GstBuffer *outbuf;
  bool in_place;
  bool in_dev;  /* the input is CUDA memory of our context */
  bool out_dev; /* the output is */
  bool writes;  /* the element writes the frame (writes_frame) */
  GstMemory *in_mem = nullptr; /* a device buffer holds exactly one memory */
  GstMemory *out_mem = nullptr;
  GstCudaStream *out_stream = nullptr; /* the output memory's stream (1.24+) */
  GstCudaStream *run_on = nullptr;     /* the stream the frame runs on, as GStreamer's */
  cudaStream_t stream = nullptr;       /* and as CUDA's */
  bool in_locked = false;              /* the input's pages are locked (cuvpinned.h) */
  bool hold = false;                   /* a temporal element keeps the input buffer itself */
  bool waited = false;                 /* the host has waited for the frame already */
  bool handed_on = false;              /* the output leaves unfinished, its stream in a meta (1.22) */
  cuv::Frame fin{}, fout{};            /* the device frames the operation reads and writes */

  CapsState &st () const { return *state; }
};

/* The stream this frame runs on (upstream's rule, 1.24+): the output memory's, else the input
 * memory's, else ours. On 1.22 memory carries no stream: the one an element of ours wrote the
 * input on, when it pushed the frame unfinished (cuvsync.h: stream_of_writer), else ours. */
void
choose_stream (CudaFrame &f)
{
  /* a system-memory buffer may hold no memory (a broken source) */
  f.in_mem = f.in_dev ? gst_buffer_peek_memory (f.inbuf, 0) : nullptr;
  f.out_mem = f.out_dev ? gst_buffer_peek_memory (f.outbuf, 0) : nullptr;
  f.out_stream = cuv::memory_stream (f.out_mem);
  f.run_on = f.out_stream ? f.out_stream : cuv::memory_stream (f.in_mem);
  if (!f.run_on)
    f.run_on = f.route.stream.gst_stream ();
  f.stream = f.run_on ? cuv::stream_handle (f.run_on) : f.route.stream.get ();
  if (cudaStream_t writer = f.in_dev ? cuv::stream_of_writer (f.inbuf, f.route.stream) : nullptr)
    f.stream = writer;
}

/* What the element keeps between frames (staging, previous frame, tables) is ordered on one
 * stream: on another stream than the last frame's, the last one's work ends first. */
bool
follow_last_frame (CudaFrame &f)
{
  cuv::Route &route = f.route;
  if (route.last_stream && route.last_stream != f.stream &&
      !CUV_CUDA_OK (f.self, cuv::finish_last_frame (route.last_stream))) {
    GST_ELEMENT_ERROR (f.self, STREAM, FAILED, ("Processing a frame on the GPU failed"), (nullptr));
    return false;
  }
  route.last_stream = f.stream;
  cuv::replace_stream (&route.last_gst_stream, f.run_on);
  return true;
}

/* CUV_TEST_DELAY=NAME:MICROSECONDS, for tests (read once): the element named NAME holds its stream
 * that long before each frame's operation, on the stream (a host function that sleeps), so that a
 * test sees whether what follows waits for the frame or reads it early (test_stream_model_gpu). */
struct TestDelay {
  std::string element;
  gulong us = 0;
};

const TestDelay test_delay = [] {
  TestDelay d;
  const char *v = g_getenv ("CUV_TEST_DELAY");
  const char *colon = v ? strrchr (v, ':') : nullptr;
  if (colon) {
    d.element.assign (v, colon - v);
    d.us = strtoul (colon + 1, nullptr, 10);
  }
  return d;
}();

bool
delay_for_tests (CudaFrame &f)
{
  if (!test_delay.us || test_delay.element != GST_OBJECT_NAME (f.self))
    return true;
  auto sleep = [] (void *) { g_usleep (test_delay.us); };
  return CUV_CUDA_OK (f.self, cudaLaunchHostFunc (f.stream, sleep, nullptr));
}

}  // namespace

/* The route's second stream, leased at its first use; false (the frame fails, as it would
 * without its own stream) when none can be had. */
static bool
upload_stream (GstCudaVisionFilter *self, cuv::Route &route)
{
  if (route.upload)
    return true;
  cudaError_t err = cudaSuccess;
  route.upload = cuv::StreamPool::for_context (route.context)->acquire (&err);
  if (!route.upload)
    GST_ERROR_OBJECT (self, "could not create a second CUDA stream for uploads: %s", cudaGetErrorString (err));
  return static_cast<bool> (route.upload);
}

/* The input as a device frame (f.fin): CUDA memory where it is, once its writer is done; system
 * memory uploaded into the staging buffer, straight from the mapped frame (no CPU copy into the
 * pinned staging buffer first: docs/performance-log.md, the driver's pageable copy beats a CPU copy
 * and a DMA, and pinned input is one DMA), or through our staging where that pays. */
static bool
upload (CudaFrame &f, const cuv::Frame &in_view)
{
  cuv::Route &route = f.route;
  CapsState &st = f.st ();
  if (f.in_dev) {
    f.fin = in_view;
    return CUV_CUDA_OK (f.self, cuv::wait_for_writer (f.in_mem, f.run_on, route.stream.event ()));
  }
  /* queued ahead of the last frame's wait, an upload runs on the second stream into the other
   * staging buffer (prev_stage, which only a temporal element uses otherwise): the frame that
   * last used it has been waited for (at most two frames are in flight) */
  const bool overlap = f.task.may_leave_in_flight && cuv::queues_ahead (route);
  if (overlap && !upload_stream (f.self, route))
    return false;
  if (overlap)
    std::swap (st.in_stage, st.prev_stage);
  bool ok = ensure_staging (f.self, route, st.in_stage, &st.in_info, st.in_layout);
  f.in_locked = cuv::lock_pages (route.context, f.inbuf);
  /* pageable memory that comes once: our threads' copy into page-locked staging beats the
   * driver's (cuvhostcopy.h) */
  const bool staged = !f.in_locked && cuv::staged_copy_pays (in_view);
  GST_LOG_OBJECT (f.self, "upload from %s memory%s%s", f.in_locked ? "page-locked" : "pageable",
      staged ? " through our staging" : "", overlap ? " on the upload stream" : "");
  cudaStream_t up = overlap ? route.upload.get () : f.stream;
  if (ok && staged)
    ok = ensure_host_staging (f.self, route, st.in_stage) &&
        CUV_CUDA_OK (f.self, cuv::upload_staged (in_view, st.in_stage.host_frame, st.in_stage.device_frame, up));
  else if (ok)
    ok = CUV_CUDA_OK (f.self, cuv::copy_planes_async (in_view, st.in_stage.device_frame, cudaMemcpyHostToDevice, up));
  if (ok && overlap) {
    cudaEvent_t uploaded = route.upload.event ();
    ok = CUV_CUDA_OK (f.self, cudaEventRecord (uploaded, up)) &&
        CUV_CUDA_OK (f.self, cudaStreamWaitEvent (f.stream, uploaded, 0));
  }
  f.fin = st.in_stage.device_frame;
  return ok;
}

/* The staging buffer a system-memory output is written into on the device. */
static CapsState::Staging &
out_stage (CudaFrame &f)
{
  return f.in_place ? f.st ().in_stage : f.st ().out_stage;
}

/* The element's operation from f.fin into the output's device frame (f.fout); a temporal element
 * then keeps this input as the previous frame: held, or copied where upstream cannot spare it. */
static bool
run (CudaFrame &f, const cuv::Frame &out_view)
{
  cuv::Route &route = f.route;
  CapsState &st = f.st ();
  if (f.out_dev)
    f.fout = out_view;
  else if (f.in_place)
    f.fout = f.fin;
  else if (ensure_staging (f.self, route, st.out_stage, &st.out_info, st.out_layout))
    f.fout = st.out_stage.device_frame;
  else
    return false;
  cuv::FrameJob job;
  if (!route.begin_job (GST_OBJECT (f.self), st, true, f.task.threads, f.fin, f.fout, &job))
    return false;
  job.stream = f.stream;
  job.results = f.task.results.get ();
  job.previous = route.op.temporal ? st.previous.begin (&st.in_info, st.in_layout, true) : nullptr;
  if (route.op.transform_cuda (f.self, &job) != GST_FLOW_OK)
    return false;
  if (route.op.temporal && f.in_dev && !(f.hold = st.previous.can_hold (GST_OBJECT (f.self), f.inbuf)))
    return CUV_CUDA_OK (f.self, st.previous.keep_device_copy (route.context, f.fin, f.stream));
  return true;
}

/* A system-memory output the element wrote comes down from its staging buffer. Into pageable
 * memory the driver copies on this thread alone: one DMA into our staging, then our threads' copy
 * out (cuvhostcopy.h), after which the host has waited for the frame (f.waited). */
static bool
download (CudaFrame &f, const cuv::Frame &out_view)
{
  if (f.out_dev || !f.writes)
    return true;
  cuv::Route &route = f.route;
  CapsState::Staging &stage = out_stage (f);
  /* in place, the upload counted this memory's coming already (not inside the log macro, which
   * evaluates its arguments only when the level is on) */
  const bool out_locked = f.in_place ? f.in_locked : cuv::lock_pages (route.context, f.outbuf);
  const bool staged = !out_locked && cuv::staged_copy_pays (out_view);
  GST_LOG_OBJECT (f.self, "download into %s memory%s", out_locked ? "page-locked" : "pageable",
      staged ? " through our staging" : "");
  if (!staged)
    return CUV_CUDA_OK (f.self, cuv::copy_planes_async (stage.device_frame, out_view, cudaMemcpyDeviceToHost, f.stream));
  const bool ok = ensure_host_staging (f.self, route, stage) &&
      CUV_CUDA_OK (f.self, cuv::copy_planes_async (stage.device_frame, stage.host_frame, cudaMemcpyDeviceToHost, f.stream)) &&
      CUV_CUDA_OK (f.self, cuv::finish_before_push (f.stream, route.stream.event ()));
  if (ok) {
    cuv::frame_passed (f.outbuf, f.inbuf, f.stream);
    cuv::copy_out_staged (stage.host_frame, out_view);
  }
  f.waited = ok;
  return ok;
}

/* The frame's end once its work is queued (@ok: all of it was): no wait where the consumer waits
 * or the host has waited; a wait now; or, where the base class allows, the frame left in flight. */
static GstFlowReturn
finish (CudaFrame &f, bool ok)
{
  cuv::Route &route = f.route;
  const bool temporal = route.op.temporal;
  cuv::Route::InFlight frame{f.state, f.in_place ? nullptr : f.inbuf, f.outbuf, f.stream, nullptr, f.in_dev, f.out_dev,
      f.hold, {}, {}};
  /* The host waits before the push, unless it has waited already (a staged download), or
   * (1.24+) the frame went from CUDA memory into CUDA memory whose stream it ran on, and nothing
   * is read on the host: the memory then says that work may be pending on its stream (our write
   * map set GST_CUDA_MEMORY_TRANSFER_NEED_SYNC), and a consumer on another stream waits for it
   * (docs/design.md). */
  const bool gpu_to_gpu = ok && f.in_dev && f.out_dev && !temporal;
  /* An analyser's results follow the frame where what reads it completes them: an element of
   * ours puts them on the buffer that leaves us (cuvresultsmeta.h) */
  const bool completes = route.consumer_completes.load (std::memory_order_relaxed);
  const bool results_follow = gpu_to_gpu && route.op.host_results && completes;
  const bool on_gpu_only = gpu_to_gpu && (!route.op.host_results || results_follow);
  const bool consumer_waits = on_gpu_only && f.out_stream && f.out_stream == f.run_on;
  /* 1.22: the next element is ours and runs after this frame on its stream (cuvsync.h) */
  const bool consumer_follows = on_gpu_only && route.consumer_follows.load (std::memory_order_relaxed);
  f.handed_on = consumer_follows && !consumer_waits;
  const bool no_wait = consumer_waits || consumer_follows;
  /* upstream analysers' results: on with the frame where it leaves unfinished to one of ours that
   * completes them, else onto it once waited for (their own streams' waits where it leaves
   * unfinished to a foreign element) */
  cuv::FrameTask &task = f.task;
  task.hand_on_results = no_wait && !f.waited && completes;
  task.results_waited = no_wait && !f.waited ? nullptr : f.stream;
  if (!ok) {
    /* a failed frame may have freed what the frames whose results wait point at */
    cuv::cancel_all (route.deferred);
  } else if (!(no_wait && !f.waited && results_follow) && !cuv::publish_oldest (route.deferred, 0)) {
    /* results that wait go first: messages stay in frame order */
    ok = false;
  }
  if (ok && no_wait && !f.waited && results_follow) {
    /* at most three frames' results unpublished: this one and the two before it (an element's
     * results memory has three slots, cuv::ResultBuffers) */
    if (!cuv::publish_oldest (route.deferred, 1))
      ok = false;
    task.own_results = std::make_shared<cuv::PendingResults> (f.self, route.op.frame_finished, task.results, route.context,
        f.stream, f.outbuf);
  }
  /* an analyser queued ahead publishes in frame order: a frame the host has waited for already
   * stays behind the one in flight too */
  const bool behind_in_flight = f.waited && route.op.host_results && cuv::has_frame_in_flight (route);
  if (no_wait || (f.waited && !behind_in_flight))
    return cuv::close_cuda_frame (f.self, route, frame, ok, cuv::Wait::None);
  GST_LOG_OBJECT (f.self, "the host waits%s: in %s, out %s, output on stream %p, ran on %p%s%s",
      task.may_leave_in_flight ? " when the next frame is queued" : " before the push", f.in_dev ? "CUDA" : "system",
      f.out_dev ? "CUDA" : "system", f.out_stream, f.run_on, route.op.host_results ? ", results read on the host" : "",
      temporal ? ", keeps the previous frame" : "");
  if (!ok || !task.may_leave_in_flight)
    return cuv::close_cuda_frame (f.self, route, frame, ok, cuv::Wait::Now);
  /* in flight: the buffers live until the wait, and the input is not let go of before the GPU
   * has read it; the frame in flight before it, if any, has the other done event */
  frame.done = route.stream.done_event (route.next_done++);
  if (!CUV_CUDA_OK (f.self, cuv::mark_in_flight (f.stream, frame.done)))
    return cuv::close_cuda_frame (f.self, route, frame, false, cuv::Wait::Now);
  if (frame.inbuf)
    gst_buffer_ref (frame.inbuf);
  gst_buffer_ref (frame.outbuf);
  /* upstream analysers' results: published here, on their thread, when the frame leaves */
  for (const std::shared_ptr<cuv::PendingResults> &r : task.upstream_results)
    r->hold_in_flight ();
  /* the next frame may be processed before this one's results are published (queues_ahead) */
  frame.own = task.results;
  frame.results = std::move (task.upstream_results);
  task.upstream_results.clear ();
  route.in_flight.push_back (std::move (frame));
  task.left_in_flight = true;
  return GST_FLOW_OK;
}

/* One frame on the CUDA backend, in its steps: the stream it runs on, the buffers mapped, the
 * input uploaded, the operation run, the output downloaded, the frame finished. */
GstFlowReturn
cuv::process_cuda (GstCudaVisionFilter *self, Route &route, FrameTask &task, const std::shared_ptr<CapsState> &state,
    GstBuffer *inbuf, GstBuffer *outbuf)
{
  const bool in_place = inbuf == outbuf;
  const bool in_dev = cuv::is_device_buffer (route, inbuf);
  const bool out_dev = in_place ? in_dev : cuv::is_device_buffer (route, outbuf);
  CudaFrame f{self, route, task, state, inbuf, outbuf, in_place, in_dev, out_dev, cuv::output_written (route, self, task, in_place)};
  if (!in_dev) {
    warn_other_context (self, route, inbuf);
    /* read on the host, or by another context */
    cuv::before_others_read (inbuf);
  }
  if (!out_dev && !in_place)
    warn_other_context (self, route, outbuf);
  choose_stream (f);

  cuv::ContextGuard guard (route.context);
  if (!guard.ok ()) {
    GST_ELEMENT_ERROR (self, LIBRARY, INIT, ("Could not make the CUDA context current"), (nullptr));
    return GST_FLOW_ERROR;
  }
  if (!follow_last_frame (f))
    return GST_FLOW_ERROR;
  GstFlowReturn ret;
  {
    /* the mapped frames' views: device views of CUDA memory, host views of system memory */
    cuv::MappedFrames mapped (self, *state, inbuf, outbuf, f.writes, in_dev, out_dev);
    if (!mapped.ok ())
      return GST_FLOW_ERROR;
    const bool ok = upload (f, mapped.in) && delay_for_tests (f) && run (f, mapped.out) && download (f, mapped.out);
    ret = finish (f, ok);
  }
  /* unmapped, the output is writable again (a mapped video frame holds a reference) */
  if (f.handed_on)
    cuv::hand_on_unfinished (outbuf, inbuf, route.stream, f.stream);
  return ret;
}
#endif
