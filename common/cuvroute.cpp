/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GstCudaVisionFilter's per-frame route: mapping, staging and the backend dispatch (cuvroute.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/cuda/gstcudamemory.h>

#include <utility>

#include "kernels/copy.h"
#include "common/cuvhostcopy.h"
#include "common/cuvpinned.h"
#include "common/cuvroute.h"
#include "common/cuvsync.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

static void
post_map_error (GstCudaVisionFilter *self, GstBuffer *buf, const GstVideoInfo *info, const char *side)
{
  GST_ELEMENT_ERROR (self, STREAM, FORMAT,
      ("The %s buffer does not hold the %dx%d %s frame its caps describe", side, GST_VIDEO_INFO_WIDTH (info),
          GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_NAME (info)),
      ("buffer of %" G_GSIZE_FORMAT " bytes, the caps need %" G_GSIZE_FORMAT " bytes (or its video meta is wrong)",
          gst_buffer_get_size (buf), GST_VIDEO_INFO_SIZE (info)));
}

/* gst_video_frame_map () of one side, as device memory when @device, with its planes checked
 * against the memory; @view gets the kernel view. Posts the error a user sees. */
static bool
map_frame (GstCudaVisionFilter *self, GstVideoFrame *vf, const GstVideoInfo *info, cuv::PixelLayout layout,
    GstBuffer *buf, GstMapFlags flags, bool device, const char *side, cuv::Frame *view)
{
  if (device)
    flags = static_cast<GstMapFlags> (flags | GST_MAP_CUDA);
  if (!cuv::map_caps_frame (vf, info, buf, flags)) {
    post_map_error (self, buf, info, side);
    return false;
  }
  *view = gst_cuda_vision_frame_from_video_frame (vf, layout);
  if (!cuv::planes_fit (vf, *view)) {
    gst_video_frame_unmap (vf);
    post_map_error (self, buf, info, side);
    return false;
  }
  return true;
}

/* In place, whether the frame is written (see writes_frame); out of place it always is. */
static bool
writes_frame (const cuv::Route &route, GstCudaVisionFilter *self, bool in_place)
{
  return !in_place || !route.op.writes_frame || route.op.writes_frame (self);
}

/* The CPU backends' transform of a temporal element sees the previous frame on the host, then
 * keeps @fin as the next one's: by a reference on @hold where it may (the input buffer, which
 * upstream's pool can spare), else as a host copy. */
static GstFlowReturn
transform_cpu (GstCudaVisionFilter *self, cuv::Route &route, CapsState &st, const cuv::Frame &fin,
    const cuv::Frame &fout, GstBuffer *hold = nullptr)
{
  if (!route.op.temporal)
    return route.op.transform_cpu (self, &fin, &fout);
  route.previous_view = st.previous.begin (&st.in_info, st.in_layout, false);
  GstFlowReturn ret = route.op.transform_cpu (self, &fin, &fout);
  route.previous_view = nullptr;
  st.previous.end ();
  if (ret == GST_FLOW_OK && hold)
    st.previous.hold (hold);
  else if (ret == GST_FLOW_OK)
    st.previous.keep_host_copy (fin);
  return ret;
}

static GstMapFlags
in_map_flags (bool in_place, bool writes)
{
  return in_place && writes ? GST_MAP_READWRITE : GST_MAP_READ;
}

namespace {

/* Both buffers of one frame mapped (map_frame), as device memory where @in_dev / @out_dev; in
 * place the output is the input's mapping, read-write when the element @writes. Unmapped when it
 * goes; ok () is false when a map failed (the error is posted). */
class MappedFrames {
 public:
  MappedFrames (GstCudaVisionFilter *self, const CapsState &st, GstBuffer *inbuf, GstBuffer *outbuf, bool writes,
      bool in_dev, bool out_dev)
      : in_place_ (inbuf == outbuf)
  {
    if (!map_frame (self, &vin_, &st.in_info, st.in_layout, inbuf, in_map_flags (in_place_, writes), in_dev, "input",
            &in))
      return;
    if (in_place_) {
      out = in;
    } else if (!map_frame (self, &vout_, &st.out_info, st.out_layout, outbuf, GST_MAP_WRITE, out_dev, "output", &out)) {
      gst_video_frame_unmap (&vin_);
      return;
    }
    ok_ = true;
  }
  ~MappedFrames ()
  {
    if (!ok_)
      return;
    if (!in_place_)
      gst_video_frame_unmap (&vout_);
    gst_video_frame_unmap (&vin_);
  }
  MappedFrames (const MappedFrames &) = delete;
  MappedFrames &operator= (const MappedFrames &) = delete;

  bool ok () const { return ok_; }
  cuv::Frame in{}, out{}; /* the kernels' views of the mapped frames */

 private:
  bool in_place_;
  bool ok_ = false;
  GstVideoFrame vin_, vout_;
};

#if CUV_HAVE_CUDA
/* @info's frame in @layout at @data, rows padded to @align bytes (@data NULL: only the shape,
 * for cuv::frame_bytes). */
cuv::Frame
padded_frame (const GstVideoInfo *info, cuv::PixelLayout layout, int align, uint8_t *data)
{
  int pitches[3] = {0, 0, 0};
  const int w = GST_VIDEO_INFO_WIDTH (info), h = GST_VIDEO_INFO_HEIGHT (info);
  for (int p = 0; p < cuv::layout_n_planes (layout); p++)
    pitches[p] = cuv::min_pitch (layout, w, p, align);
  return cuv::make_frame (layout, w, h, data, pitches);
}
#endif

}  // namespace

#if CUV_HAVE_CUDA
/* The context of @buf's memory when it is one CUDA memory, else NULL. */
static GstCudaContext *
memory_context (GstBuffer *buf)
{
  if (gst_buffer_n_memory (buf) != 1)
    return nullptr;
  GstMemory *mem = gst_buffer_peek_memory (buf, 0);
  return gst_is_cuda_memory (mem) ? GST_CUDA_MEMORY_CAST (mem)->context : nullptr;
}

static bool
is_device_buffer (const cuv::Route &route, GstBuffer *buf)
{
  return route.context && memory_context (buf) == route.context;
}

/* CUDA memory of another context (a neighbour on another device, or one that did not share its
 * context) cannot be read or written in place: the frame goes through system memory, a copy each
 * way. Never silently: a warning, once a start, says why and what to set. */
static void
warn_other_context (GstCudaVisionFilter *self, cuv::Route &route, GstBuffer *buf)
{
  if (route.warned_other_context || !route.context)
    return;
  GstCudaContext *other = memory_context (buf);
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

/* Queues a copy of every plane between a device view and a host view on @stream. From pageable
 * host memory the driver stages the rows and returns once it has them; into pageable memory it
 * returns when the copy is done; pinned memory is one DMA each way. */
static cudaError_t
copy_planes_async (const cuv::Frame &src, const cuv::Frame &dst, cudaMemcpyKind kind, cudaStream_t stream)
{
  for (int p = 0; p < src.n_planes; p++) {
    size_t row = static_cast<size_t> (src.planes[p].width) * cuv::plane_sample_bytes (src.layout, p);
    cudaError_t err = cudaMemcpy2DAsync (dst.planes[p].data, dst.planes[p].pitch, src.planes[p].data, src.planes[p].pitch,
        row, src.planes[p].height, kind, stream);
    if (err != cudaSuccess)
      return err;
  }
  return cudaSuccess;
}

/* The same on the legacy default stream, waited for. */
static bool
copy_planes (GstCudaVisionFilter *self, const cuv::Frame &src, const cuv::Frame &dst, cudaMemcpyKind kind)
{
  return CUV_CUDA_OK (self, copy_planes_async (src, dst, kind, nullptr)) && CUV_CUDA_OK (self, cudaStreamSynchronize (nullptr));
}

/* The CPU backend on CUDA memory of our context: GStreamer 1.22's host mapping of GstCudaMemory
 * misplaces I420 chroma, so the planes are copied through host memory here instead. */
static GstFlowReturn
process_cpu_staged (GstCudaVisionFilter *self, cuv::Route &route, CapsState &st, GstBuffer *inbuf, GstBuffer *outbuf, bool in_dev,
    bool out_dev)
{
  const bool in_place = inbuf == outbuf;
  const bool writes = writes_frame (route, self, in_place);
  cuv::ContextGuard guard (route.context);
  if (!guard.ok ()) {
    GST_ELEMENT_ERROR (self, LIBRARY, INIT, ("Could not make the CUDA context current"), (nullptr));
    return GST_FLOW_ERROR;
  }
  auto host_frame = [] (std::vector<uint8_t> &store, const GstVideoInfo *info, cuv::PixelLayout layout) {
    store.resize (cuv::frame_bytes (padded_frame (info, layout, 4, nullptr)));
    return padded_frame (info, layout, 4, store.data ());
  };

  MappedFrames mapped (self, st, inbuf, outbuf, writes, in_dev, out_dev);
  if (!mapped.ok ())
    return GST_FLOW_ERROR;
  cuv::Frame fin = in_dev ? host_frame (st.cpu_in_host, &st.in_info, st.in_layout) : mapped.in;
  cuv::Frame fout = in_place ? fin : out_dev ? host_frame (st.cpu_out_host, &st.out_info, st.out_layout) : mapped.out;

  GstFlowReturn ret = GST_FLOW_ERROR;
  /* the copies below run on the legacy default stream, which does not wait for other streams */
  if (in_dev)
    cuv::wait_for_writer (gst_buffer_peek_memory (inbuf, 0), nullptr, nullptr);
  if (!in_dev || copy_planes (self, mapped.in, fin, cudaMemcpyDeviceToHost)) {
    ret = transform_cpu (self, route, st, fin, fout);
    if (ret == GST_FLOW_OK && out_dev && writes && !copy_planes (self, fout, mapped.out, cudaMemcpyHostToDevice))
      ret = GST_FLOW_ERROR;
  }
  if (ret == GST_FLOW_ERROR)
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Copying a frame between CUDA and host memory failed"), (nullptr));
  return ret;
}
#endif

static GstFlowReturn
process_cpu (GstCudaVisionFilter *self, cuv::Route &route, CapsState &st, GstBuffer *inbuf, GstBuffer *outbuf)
{
#if CUV_HAVE_CUDA
  {
    const bool in_dev = is_device_buffer (route, inbuf);
    const bool out_dev = inbuf == outbuf ? in_dev : is_device_buffer (route, outbuf);
    if (in_dev || out_dev)
      return process_cpu_staged (self, route, st, inbuf, outbuf, in_dev, out_dev);
  }
#endif
  MappedFrames mapped (self, st, inbuf, outbuf, writes_frame (route, self, inbuf == outbuf), false, false);
  if (!mapped.ok ())
    return GST_FLOW_ERROR;
  /* out of place, the input stays as it is: held instead of copied where upstream can spare it */
  GstBuffer *hold = route.op.temporal && inbuf != outbuf && st.previous.can_hold (GST_OBJECT (self), inbuf) ? inbuf : nullptr;
  return transform_cpu (self, route, st, mapped.in, mapped.out, hold);
}

#if CUV_HAVE_CUDA
/* A device frame with rows padded to 256 bytes, which a frame in system memory is copied into
 * (and out of) plane by plane. */
static bool
ensure_staging (GstCudaVisionFilter *self, const cuv::Route &route, CapsState::Staging &stage,
    const GstVideoInfo *info, cuv::PixelLayout layout)
{
  if (stage.device)
    return true;
  const size_t bytes = cuv::frame_bytes (padded_frame (info, layout, 256, nullptr));
  if (!CUV_CUDA_OK (self, stage.device.allocate (route.context, cuv::CudaBuffer::Kind::Device, bytes))) {
    stage.device.reset ();
    return false;
  }
  stage.device_frame = padded_frame (info, layout, 256, stage.device.data ());
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

enum class Wait { None, Now, InFlight };

/* What a frame on the CUDA backend does after its work was queued: the host's wait (@wait), the
 * memory's sync flag, the previous frame of a temporal element, the error message. */
static GstFlowReturn
end_frame (GstCudaVisionFilter *self, cuv::Route &route, const cuv::Route::InFlight &f, bool ok, Wait wait)
{
  CapsState &st = *f.state;
  if (wait != Wait::None) {
    const cudaError_t err =
        wait == Wait::InFlight ? cuv::finish_in_flight (f.done) : cuv::finish_before_push (f.stream, route.stream.event ());
    if (!CUV_CUDA_OK (self, err))
      ok = false;
    else if (f.out_dev)
      cuv::mark_finished (gst_buffer_peek_memory (f.outbuf, 0));
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

namespace {

/* One frame on the CUDA backend, as process_cuda's steps see it: its buffers, where each side's
 * memory is, the stream it runs on and the kernels' views. */
struct CudaFrame {
  GstCudaVisionFilter *self;
  cuv::Route &route;
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
  cuv::Frame fin{}, fout{};            /* the device frames the operation reads and writes */

  CapsState &st () const { return *state; }
};

/* The stream this frame runs on (upstream's rule, 1.24+): the output memory's, else the input
 * memory's, else ours. On 1.22 memory carries no stream: always ours. */
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
 * pinned staging buffer first: docs/performance.md, the driver's pageable copy beats a CPU copy
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
  const bool overlap = route.may_leave_in_flight && cuv::queues_ahead (route);
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
    ok = CUV_CUDA_OK (f.self, copy_planes_async (in_view, st.in_stage.device_frame, cudaMemcpyHostToDevice, up));
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
  route.previous_view = route.op.temporal ? st.previous.begin (&st.in_info, st.in_layout, true) : nullptr;
  const GstFlowReturn ret = route.op.transform_cuda (f.self, &f.fin, &f.fout, f.stream);
  route.previous_view = nullptr;
  if (ret != GST_FLOW_OK)
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
    return CUV_CUDA_OK (f.self, copy_planes_async (stage.device_frame, out_view, cudaMemcpyDeviceToHost, f.stream));
  const bool ok = ensure_host_staging (f.self, route, stage) &&
      CUV_CUDA_OK (f.self, copy_planes_async (stage.device_frame, stage.host_frame, cudaMemcpyDeviceToHost, f.stream)) &&
      CUV_CUDA_OK (f.self, cuv::finish_before_push (f.stream, route.stream.event ()));
  if (ok)
    cuv::copy_out_staged (stage.host_frame, out_view);
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
      f.hold};
  /* The host waits before the push, unless it has waited already (a staged download), or
   * (1.24+) the frame went from CUDA memory into CUDA memory whose stream it ran on, and nothing
   * is read on the host: the memory then says that work may be pending on its stream (our write
   * map set GST_CUDA_MEMORY_TRANSFER_NEED_SYNC), and a consumer on another stream waits for it
   * (docs/design.md). */
  const bool consumer_waits =
      ok && f.in_dev && f.out_dev && f.out_stream && f.out_stream == f.run_on && !route.op.host_results && !temporal;
  if (consumer_waits || f.waited)
    return end_frame (f.self, route, frame, ok, Wait::None);
  GST_LOG_OBJECT (f.self, "the host waits%s: in %s, out %s, output on stream %p, ran on %p%s%s",
      route.may_leave_in_flight ? " when the next frame is queued" : " before the push", f.in_dev ? "CUDA" : "system",
      f.out_dev ? "CUDA" : "system", f.out_stream, f.run_on, route.op.host_results ? ", results read on the host" : "",
      temporal ? ", keeps the previous frame" : "");
  if (!ok || !route.may_leave_in_flight)
    return end_frame (f.self, route, frame, ok, Wait::Now);
  /* in flight: the buffers live until the wait, and the input is not let go of before the GPU
   * has read it; the frame in flight before it, if any, has the other done event */
  frame.done = route.stream.done_event (route.next_done++);
  if (!CUV_CUDA_OK (f.self, cuv::mark_in_flight (f.stream, frame.done)))
    return end_frame (f.self, route, frame, false, Wait::Now);
  if (frame.inbuf)
    gst_buffer_ref (frame.inbuf);
  gst_buffer_ref (frame.outbuf);
  route.in_flight.push_back (std::move (frame));
  route.left_in_flight = true;
  return GST_FLOW_OK;
}

/* One frame on the CUDA backend, in its steps: the stream it runs on, the buffers mapped, the
 * input uploaded, the operation run, the output downloaded, the frame finished. */
static GstFlowReturn
process_cuda (GstCudaVisionFilter *self, cuv::Route &route, const std::shared_ptr<CapsState> &state, GstBuffer *inbuf,
    GstBuffer *outbuf)
{
  const bool in_place = inbuf == outbuf;
  const bool in_dev = is_device_buffer (route, inbuf);
  const bool out_dev = in_place ? in_dev : is_device_buffer (route, outbuf);
  CudaFrame f{self, route, state, inbuf, outbuf, in_place, in_dev, out_dev, writes_frame (route, self, in_place)};
  if (!in_dev)
    warn_other_context (self, route, inbuf);
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
  /* the mapped frames' views: device views of CUDA memory, host views of system memory */
  MappedFrames mapped (self, *state, inbuf, outbuf, f.writes, in_dev, out_dev);
  if (!mapped.ok ())
    return GST_FLOW_ERROR;
  const bool ok = upload (f, mapped.in) && run (f, mapped.out) && download (f, mapped.out);
  return finish (f, ok);
}
#endif

void
cuv::Route::finish_last_frame ()
{
#if CUV_HAVE_CUDA
  if (!last_stream)
    return;
  ContextGuard guard (context);
  if (guard.ok ())
    cudaStreamSynchronize (last_stream);
#endif
}

void
cuv::Route::close ()
{
  set_state (nullptr);
#if CUV_HAVE_CUDA
  forget_streams ();
  stream.release ();
#endif
  gst_clear_object (&context);
  use_cuda = false;
}

GstFlowReturn
cuv::process_frame (GstCudaVisionFilter *self, Route &route, GstBuffer *inbuf, GstBuffer *outbuf)
{
  std::shared_ptr<CapsState> state = route.state ();
  if (!state) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("Received a buffer before caps were negotiated"), (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  route.left_in_flight = false;
  if (route.op.temporal && GST_BUFFER_IS_DISCONT (inbuf)) {
    GST_DEBUG_OBJECT (self, "DISCONT: forgetting the previous frame");
    state->previous.reset ();
  }
#if CUV_HAVE_CUDA
  if (route.use_cuda)
    return process_cuda (self, route, state, inbuf, outbuf);
#endif
  return process_cpu (self, route, *state, inbuf, outbuf);
}

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
  return route.use_cuda && !route.op.temporal && !route.op.host_results;
}

GstFlowReturn
cuv::finish_in_flight (GstCudaVisionFilter *self, Route &route, GstBuffer **out)
{
  *out = nullptr;
#if CUV_HAVE_CUDA
  if (route.in_flight.empty ())
    return GST_FLOW_OK;
  Route::InFlight f = std::move (route.in_flight.front ());
  route.in_flight.pop_front ();
  cuv::ContextGuard guard (route.context);
  GstFlowReturn ret = end_frame (self, route, f, guard.ok (), Wait::InFlight);
  if (f.inbuf)
    gst_buffer_unref (f.inbuf);
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
