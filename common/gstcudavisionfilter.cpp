/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/gstcudavisionfilter.h"
#include "common/cuvnegotiation.h"
#include "common/cuvroute.h"

#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/controller/controller.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "common/cuvstreampool.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

enum {
  PROP_0,
  PROP_DEVICE_ID,
  PROP_BACKEND,
  PROP_MAX_FRAMES_IN_FLIGHT,
  PROP_N_THREADS,
};

#define DEFAULT_DEVICE_ID -1
#define DEFAULT_BACKEND GST_CUDA_VISION_BACKEND_AUTO
#define DEFAULT_MAX_FRAMES_IN_FLIGHT -1
#define DEFAULT_N_THREADS 0

struct GstCudaVisionFilterImpl {
  std::mutex lock; /* the properties */
  gint device_id = DEFAULT_DEVICE_ID;
  GstCudaVisionBackend backend = DEFAULT_BACKEND;
  gint max_frames_in_flight = DEFAULT_MAX_FRAMES_IN_FLIGHT;
  std::atomic<guint> n_threads{DEFAULT_N_THREADS};
  /* streaming thread: whether upstream is live (asked at each caps event) */
  bool upstream_live = true;
  /* streaming thread: whether the last caps change kept the frames as they were (another memory) */
  bool stream_continues = false;
  /* streaming thread: a finished frame that generate_output gives at its next call, after the
   * frame that was in flight */
  GstBuffer *ready = nullptr;
  /* CUDA memory is offered on the pads until start finds that no context can be had */
  bool cuda_memory_possible = true;
  /* context, stream, caps state and previous frame: what each frame goes through */
  cuv::Route route;
  /* Working in place on a buffer that others hold too: the output buffer comes from this pool
   * (made at the first such buffer after each caps change, dropped at the next and at stop), and
   * the frame goes from shared_input into it. Streaming thread only. */
  GstBufferPool *own_output_pool = nullptr;
  GstBuffer *shared_input = nullptr;
  GstBuffer *shared_input_output = nullptr; /* the output buffer prepared for it */

  void drop_own_output_pool ()
  {
    if (own_output_pool)
      gst_buffer_pool_set_active (own_output_pool, FALSE);
    gst_clear_object (&own_output_pool);
    shared_input = shared_input_output = nullptr;
  }
  ~GstCudaVisionFilterImpl ()
  {
    drop_own_output_pool ();
    gst_clear_buffer (&ready);
  }

  /* Whether this frame may stay in flight until the next is queued: max-frames-in-flight 1, or -1
   * with a source that is not live (where a frame's latency costs nothing) */
  bool frames_in_flight ()
  {
    std::lock_guard<std::mutex> lk (lock);
    return max_frames_in_flight == 1 || (max_frames_in_flight < 0 && !upstream_live);
  }
};

/* GObject allocates the private area, which holds the C++ object made in init. */
struct GstCudaVisionFilterPrivate {
  GstCudaVisionFilterImpl *impl;
};

#define gst_cuda_vision_filter_parent_class parent_class
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (GstCudaVisionFilter, gst_cuda_vision_filter, GST_TYPE_BASE_TRANSFORM);

static GstCudaVisionFilterImpl *
gst_cuda_vision_filter_impl (GstCudaVisionFilter *self)
{
  return static_cast<GstCudaVisionFilterPrivate *> (gst_cuda_vision_filter_get_instance_private (self))->impl;
}

GType
gst_cuda_vision_backend_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_VISION_BACKEND_AUTO, "CUDA when a device works, else the CPU reference (with a warning)", "auto"},
    {GST_CUDA_VISION_BACKEND_CUDA, "CUDA only: an error when no CUDA device is usable", "cuda"},
    {GST_CUDA_VISION_BACKEND_CPU, "The CPU reference implementation", "cpu"},
    {0, nullptr, nullptr},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaVisionBackend", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

void
gst_cuda_vision_filter_class_add_templates (GstElementClass *klass, const gchar *cuda_formats,
    const gchar *system_formats)
{
  gchar *str = g_strdup_printf (
      GST_VIDEO_CAPS_MAKE_WITH_FEATURES (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, "%s") "; " GST_VIDEO_CAPS_MAKE ("%s"),
      cuda_formats, system_formats);
  GstCaps *caps = gst_caps_from_string (str);
  g_free (str);
  gst_element_class_add_pad_template (klass, gst_pad_template_new ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
  gst_element_class_add_pad_template (klass, gst_pad_template_new ("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps));
  gst_caps_unref (caps);
}

gboolean
gst_cuda_vision_filter_stream_continues (GstCudaVisionFilter *self)
{
  return gst_cuda_vision_filter_impl (self)->stream_continues;
}

const cuv::Frame *
gst_cuda_vision_filter_previous_frame (GstCudaVisionFilter *self)
{
  return gst_cuda_vision_filter_impl (self)->route.previous_view;
}

GstCudaContext *
gst_cuda_vision_filter_get_context (GstCudaVisionFilter *self)
{
  return gst_cuda_vision_filter_impl (self)->route.context;
}

void
gst_cuda_vision_filter_update_passthrough (GstCudaVisionFilter *self, gboolean identity)
{
  std::shared_ptr<CapsState> state = gst_cuda_vision_filter_impl (self)->route.state ();
  /* Before caps are known, passthrough follows @identity alone; set_caps calls again. */
  gboolean same = !state || (state->in_cuda_caps == state->out_cuda_caps &&
      gst_video_info_is_equal (&state->in_info, &state->out_info));
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), identity && same);
}

/* ---- GObject ---- */

static void
gst_cuda_vision_filter_init (GstCudaVisionFilter *self)
{
  auto p = static_cast<GstCudaVisionFilterPrivate *> (gst_cuda_vision_filter_get_instance_private (self));
  p->impl = new GstCudaVisionFilterImpl ();
}

static void
gst_cuda_vision_filter_finalize (GObject *object)
{
  auto p = static_cast<GstCudaVisionFilterPrivate *> (
      gst_cuda_vision_filter_get_instance_private (GST_CUDA_VISION_FILTER (object)));
  delete p->impl;
  p->impl = nullptr;
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_cuda_vision_filter_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (object));
  std::lock_guard<std::mutex> lk (priv->lock);
  switch (prop_id) {
    case PROP_DEVICE_ID:
      priv->device_id = g_value_get_int (value);
      break;
    case PROP_BACKEND:
      priv->backend = static_cast<GstCudaVisionBackend> (g_value_get_enum (value));
      break;
    case PROP_MAX_FRAMES_IN_FLIGHT:
      priv->max_frames_in_flight = g_value_get_int (value);
      break;
    case PROP_N_THREADS:
      priv->n_threads = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_cuda_vision_filter_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (object));
  std::lock_guard<std::mutex> lk (priv->lock);
  switch (prop_id) {
    case PROP_DEVICE_ID:
      g_value_set_int (value, priv->device_id);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, priv->backend);
      break;
    case PROP_MAX_FRAMES_IN_FLIGHT:
      g_value_set_int (value, priv->max_frames_in_flight);
      break;
    case PROP_N_THREADS:
      g_value_set_uint (value, priv->n_threads);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

/* ---- context ---- */

static void
gst_cuda_vision_filter_set_context (GstElement *element, GstContext *context)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (element));
  gint device_id;
  {
    std::lock_guard<std::mutex> lk (priv->lock);
    device_id = priv->device_id;
  }
  gst_cuda_handle_set_context (element, context, device_id, &priv->route.context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

/* ---- frames in flight ---- */

/* The subclass's last word on a frame, once its work is complete. */
static void
frame_finished (GstCudaVisionFilter *self, GstBuffer *outbuf)
{
  GstCudaVisionFilterClass *klass = GST_CUDA_VISION_FILTER_GET_CLASS (self);
  if (klass->frame_finished)
    klass->frame_finished (self, outbuf);
}

/* Streaming thread: the frame in flight, finished, into @out (NULL when there was none). */
static GstFlowReturn
finish_frame_in_flight (GstCudaVisionFilter *self, GstBuffer **out)
{
  GstFlowReturn ret = cuv::finish_in_flight (self, gst_cuda_vision_filter_impl (self)->route, out);
  if (ret == GST_FLOW_OK && *out)
    frame_finished (self, *out);
  return ret;
}

/* Streaming thread, before a serialized event or a drain query goes on: the frames in flight
 * leave first. */
void
gst_cuda_vision_filter_drain_frames (GstCudaVisionFilter *self)
{
  while (cuv::has_frame_in_flight (gst_cuda_vision_filter_impl (self)->route)) {
    GstBuffer *buf = nullptr;
    /* a frame that failed is gone from the route (its error posted): the next one still leaves */
    if (finish_frame_in_flight (self, &buf) != GST_FLOW_OK || !buf)
      continue;
    GstFlowReturn ret = gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (self), buf);
    if (ret != GST_FLOW_OK)
      GST_WARNING_OBJECT (self, "pushing the frame that was in flight: %s", gst_flow_get_name (ret));
  }
}

/* At a flush and at stop: the frames in flight, and one finished after them, are dropped. */
static void
drop_frames_in_flight (GstCudaVisionFilter *self)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  cuv::drop_in_flight (self, priv->route);
  gst_clear_buffer (&priv->ready);
}

/* GstBaseTransform's default makes one output buffer per input and pushes it. Where the frame
 * would make the host wait for its stream (a host copy, results read on the host, a previous
 * frame kept, or GStreamer 1.22), and frames may stay in flight, the frame's buffer goes out when
 * the next frame has been queued on the GPU: the host then waits for a frame that the GPU has had
 * for a while, and the GPU is never idle while the host waits. An element that queues ahead
 * (cuvroute.h: it keeps nothing between frames) queues the next frame before it waits for the
 * last, so that their copies overlap; the others wait for the last frame first, as what they
 * keep between frames is only ready then. Order is kept: the finished frame comes first, then
 * (from the next call) the current one when it did not stay in flight. */
static GstFlowReturn
gst_cuda_vision_filter_generate_output (GstBaseTransform *trans, GstBuffer **outbuf)
{
  GstCudaVisionFilter *self = GST_CUDA_VISION_FILTER (trans);
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  *outbuf = nullptr;
  if (priv->ready) {
    *outbuf = priv->ready;
    priv->ready = nullptr;
    return GST_FLOW_OK;
  }
  if (!trans->queued_buf)
    return GST_FLOW_OK;

  /* the base class would mark the frame it is given back with this input's discontinuity: the
   * frame in flight goes out first, then */
  const bool discont = GST_BUFFER_IS_DISCONT (trans->queued_buf);
  const bool in_flight = priv->frames_in_flight ();
  const bool ahead = in_flight && !discont && cuv::queues_ahead (priv->route);
  GstBuffer *previous = nullptr;
  GstFlowReturn ret = GST_FLOW_OK;
  if (!ahead) {
    ret = finish_frame_in_flight (self, &previous);
    if (ret == GST_FLOW_OK && previous && discont) {
      ret = gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (trans), previous);
      previous = nullptr;
    }
    if (ret != GST_FLOW_OK) {
      gst_buffer_replace (&trans->queued_buf, nullptr);
      return ret;
    }
  }

  const bool earlier_in_flight = cuv::has_frame_in_flight (priv->route);
  GstBuffer *current = nullptr;
  priv->route.may_leave_in_flight = in_flight;
  ret = GST_BASE_TRANSFORM_CLASS (parent_class)->generate_output (trans, &current);
  priv->route.may_leave_in_flight = false;
  /* the route holds the frame in flight */
  if (current && priv->route.left_in_flight)
    gst_clear_buffer (&current);
  priv->route.left_in_flight = false;
  /* queued ahead: now the frame before it */
  if (ahead && earlier_in_flight) {
    GstFlowReturn finished = finish_frame_in_flight (self, &previous);
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
    priv->ready = current;
  } else {
    *outbuf = current;
  }
  return GST_FLOW_OK;
}

static gboolean
gst_cuda_vision_filter_query (GstBaseTransform *trans, GstPadDirection direction, GstQuery *query)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (trans));
  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_cuda_handle_context_query (GST_ELEMENT (trans), query, priv->route.context))
    return TRUE;
  if (GST_QUERY_TYPE (query) == GST_QUERY_DRAIN && direction == GST_PAD_SINK)
    gst_cuda_vision_filter_drain_frames (GST_CUDA_VISION_FILTER (trans));
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction, query))
    return FALSE;
  /* a frame in flight leaves when the next arrives: a frame's duration more */
  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY && direction == GST_PAD_SRC && priv->frames_in_flight ()) {
    std::shared_ptr<CapsState> state = priv->route.state ();
    if (state && GST_VIDEO_INFO_FPS_N (&state->in_info) > 0) {
      const GstClockTime frame = gst_util_uint64_scale_int (GST_SECOND, GST_VIDEO_INFO_FPS_D (&state->in_info),
          GST_VIDEO_INFO_FPS_N (&state->in_info));
      gboolean live;
      GstClockTime min, max;
      gst_query_parse_latency (query, &live, &min, &max);
      gst_query_set_latency (query, live, min + frame, GST_CLOCK_TIME_IS_VALID (max) ? max + frame : max);
    }
  }
  /* GstBaseTransform answers a caps query in the asker's order, and an upstream element that can
   * give either memory (cudaupload, a decoder) lists system memory first: the CUDA backend asks
   * for CUDA memory first, so that `cudaupload ! cudasobel` hands it CUDA memory, as a user means
   * it to; the CPU backend asks for system memory first (CUDA memory costs it a copy a frame) */
  if (GST_QUERY_TYPE (query) == GST_QUERY_CAPS && direction == GST_PAD_SINK) {
    GstCaps *caps = nullptr;
    gst_query_parse_caps_result (query, &caps);
    if (caps) {
      GstCaps *ordered = cuv::memory_first (caps, priv->route.use_cuda);
      gst_query_set_caps_result (query, ordered);
      gst_caps_unref (ordered);
    }
  }
  return TRUE;
}

/* Decides the backend; every failure a user must see is an element message naming the cause. */
static gboolean
gst_cuda_vision_filter_start (GstBaseTransform *trans)
{
  GstCudaVisionFilter *self = GST_CUDA_VISION_FILTER (trans);
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  [[maybe_unused]] GstElement *element = GST_ELEMENT (trans);
  gint device_id;
  GstCudaVisionBackend backend;
  {
    std::lock_guard<std::mutex> lk (priv->lock);
    device_id = priv->device_id;
    backend = priv->backend;
  }
  priv->route.use_cuda = false;
  priv->route.warned_other_context = false;
  GstCudaVisionFilterClass *klass = GST_CUDA_VISION_FILTER_GET_CLASS (self);
  priv->route.op = cuv::Operation{klass->transform_cpu, klass->transform_cuda, klass->writes_frame,
      klass->temporal != FALSE, klass->host_results != FALSE};

#if CUV_HAVE_CUDA
  int count = 0;
  cudaError_t err = cudaGetDeviceCount (&count);
  if (err != cudaSuccess || count == 0) {
    const gchar *why = err == cudaSuccess ? "no CUDA device found"
        : err == cudaErrorInsufficientDriver && !gst_cuda_load_library () ? "no NVIDIA driver (libcuda.so.1) could be loaded"
        : cudaGetErrorString (err);
    if (backend == GST_CUDA_VISION_BACKEND_CUDA) {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("No usable CUDA device: %s", why),
          ("backend=cuda needs a working NVIDIA GPU and driver; use backend=auto or backend=cpu to run on the CPU"));
      return FALSE;
    }
    if (backend == GST_CUDA_VISION_BACKEND_AUTO)
      GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND, ("No usable CUDA device (%s): running on the CPU", why),
          ("backend=auto falls back to the CPU reference implementation"));
    priv->cuda_memory_possible = false;
    return TRUE;
  }
  if (device_id >= count) {
    if (backend == GST_CUDA_VISION_BACKEND_CPU) {
      priv->cuda_memory_possible = false;
      return TRUE;
    }
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("cuda-device-id %d is out of range: this machine has %d CUDA device(s)", device_id, count),
        ("valid values are -1 (any device) and 0..%d", count - 1));
    return FALSE;
  }
  /* the CPU backend takes a context only where CUDA memory is negotiated (set_caps) */
  if (backend == GST_CUDA_VISION_BACKEND_CPU) {
    priv->cuda_memory_possible = true;
    return TRUE;
  }
  /* libgstcuda 1.22 creates contexts through its driver loader without loading it first */
  if (!gst_cuda_load_library () || !gst_cuda_ensure_element_context (element, device_id, &priv->route.context)) {
    if (backend == GST_CUDA_VISION_BACKEND_CUDA) {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("Could not create a CUDA context on device %d", device_id),
          ("gst_cuda_ensure_element_context failed: is the NVIDIA driver loadable (libcuda.so.1)?"));
      return FALSE;
    }
    if (backend == GST_CUDA_VISION_BACKEND_AUTO)
      GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
          ("Could not create a CUDA context on device %d: running on the CPU", device_id), (nullptr));
    priv->cuda_memory_possible = false;
    return TRUE;
  }
  priv->cuda_memory_possible = true;

  auto pool = cuv::StreamPool::for_context (priv->route.context);
  priv->route.stream = pool->acquire (&err);
  if (!priv->route.stream) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("Could not create a CUDA stream: %s", cudaGetErrorString (err)),
        (nullptr));
    gst_clear_object (&priv->route.context);
    return FALSE;
  }
  priv->route.use_cuda = true;
  GST_INFO_OBJECT (self, "CUDA backend on context %" GST_PTR_FORMAT, priv->route.context);
  return TRUE;
#else
  (void) device_id;
  priv->cuda_memory_possible = false;
  if (backend == GST_CUDA_VISION_BACKEND_CUDA) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("This build of cudavision has no CUDA kernels"),
        ("it was configured without nvcc (meson option cuda); use backend=auto or backend=cpu"));
    return FALSE;
  }
  if (backend == GST_CUDA_VISION_BACKEND_AUTO)
    GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND, ("This build of cudavision has no CUDA kernels: running on the CPU"),
        (nullptr));
  return TRUE;
#endif
}

static gboolean
gst_cuda_vision_filter_stop (GstBaseTransform *trans)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (trans));
  drop_frames_in_flight (GST_CUDA_VISION_FILTER (trans));
#if CUV_HAVE_CUDA
  /* the last frame's work may still run (1.24+, cuvsync.h) on what the caps state holds */
  if (priv->route.last_stream) {
    cuv::ContextGuard guard (priv->route.context);
    if (guard.ok ())
      cudaStreamSynchronize (priv->route.last_stream);
  }
#endif
  /* nothing of the element's is in use on the GPU any more: the subclass frees what it keeps */
  GstCudaVisionFilterClass *klass = GST_CUDA_VISION_FILTER_GET_CLASS (trans);
  if (klass->release)
    klass->release (GST_CUDA_VISION_FILTER (trans));
  priv->drop_own_output_pool ();
  priv->route.set_state (nullptr);
#if CUV_HAVE_CUDA
  priv->route.forget_streams ();
  priv->route.stream.release ();
#endif
  gst_clear_object (&priv->route.context);
  priv->route.use_cuda = false;
  priv->cuda_memory_possible = true;
  return TRUE;
}

/* ---- caps ---- */

/* The CPU backend makes no CUDA context at start: it takes its neighbours' (or a new one) when a
 * pad negotiates CUDA memory, which it copies through the host. */
static bool
ensure_context_for_cuda_memory (GstCudaVisionFilter *self)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  if (priv->route.context)
    return true;
#if CUV_HAVE_CUDA
  gint device_id;
  {
    std::lock_guard<std::mutex> lk (priv->lock);
    device_id = priv->device_id;
  }
  if (gst_cuda_load_library () && gst_cuda_ensure_element_context (GST_ELEMENT (self), device_id, &priv->route.context))
    return true;
#endif
  GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("Could not create a CUDA context for CUDA memory on a pad"),
      ("backend=cpu copies CUDA memory through the host, which needs the memory's CUDA context"));
  return false;
}

/* The same caps in CUDA memory first, then in system memory; the operation keeps format and size.
 * With keeps_caps: the very same caps first, memory type included (the frame passes through in
 * place), then in the other memory, which the element writes out of place where its neighbour
 * takes only that one (an analyser last before a system-memory element downloads the frame
 * itself, and the CUDA element before it need not). */
static GstCaps *
gst_cuda_vision_filter_transform_caps (GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
    GstCaps *filter)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (trans));
  GstCaps *ret = cuv::both_memories (caps, priv->cuda_memory_possible, nullptr);
  if (GST_CUDA_VISION_FILTER_GET_CLASS (trans)->keeps_caps)
    ret = gst_caps_merge (gst_caps_ref (caps), ret);
  if (filter) {
    GstCaps *both = ret;
    ret = gst_caps_intersect_full (filter, both, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (both);
  }
  GST_DEBUG_OBJECT (trans, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
      direction == GST_PAD_SINK ? "sink" : "src", caps, ret);
  return ret;
}

/* GstBaseTransform fixates our output in downstream's order, and cudadownload, like most elements
 * that take either memory, lists system memory first: the CUDA backend writes CUDA memory where
 * downstream takes both (no download in the element, and downstream's CUDA element reads the
 * frame where it is), the CPU backend system memory. */
static GstCaps *
gst_cuda_vision_filter_fixate_caps (GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
    GstCaps *othercaps)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (trans));
  if (direction == GST_PAD_SINK) {
    /* an analyser's output stays in its input's memory where downstream takes that (in place) */
    const bool cuda = GST_CUDA_VISION_FILTER_GET_CLASS (trans)->keeps_caps ? cuv::caps_are_cuda (caps)
                                                                          : priv->route.use_cuda;
    GstCaps *ordered = cuv::memory_first (othercaps, cuda);
    gst_caps_unref (othercaps);
    othercaps = ordered;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->fixate_caps (trans, direction, caps, othercaps);
}

static gboolean
gst_cuda_vision_filter_accept_caps (GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps)
{
  gboolean ok = GST_BASE_TRANSFORM_CLASS (parent_class)->accept_caps (trans, direction, caps);
  if (!ok && direction == GST_PAD_SINK && gst_caps_is_fixed (caps))
    cuv::post_unsupported_format (GST_ELEMENT (trans), caps);
  return ok;
}

static gboolean
gst_cuda_vision_filter_set_caps (GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstCudaVisionFilter *self = GST_CUDA_VISION_FILTER (trans);
  GstCudaVisionFilterClass *klass = GST_CUDA_VISION_FILTER_GET_CLASS (self);
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  /* GstBaseTransform renegotiates from its chain function too (a RECONFIGURE from downstream)
   * while a frame is in flight: that frame and its results leave first, with the caps they were
   * made for, so that set_info may free what they used (docs/design.md, "A frame's lifetime") */
  gst_cuda_vision_filter_drain_frames (self);
  auto state = std::make_shared<CapsState> ();
  /* refused caps leave no state: a buffer that still comes is not negotiated, never processed
   * with the last caps' state or with what the subclass only half set */
  const auto refuse = [priv] {
    priv->route.set_state (nullptr);
    return FALSE;
  };

  if (!gst_video_info_from_caps (&state->in_info, incaps) || !gst_video_info_from_caps (&state->out_info, outcaps) ||
      !gst_cuda_vision_layout_from_format (GST_VIDEO_INFO_FORMAT (&state->in_info), &state->in_layout) ||
      !gst_cuda_vision_layout_from_format (GST_VIDEO_INFO_FORMAT (&state->out_info), &state->out_layout)) {
    GST_ERROR_OBJECT (self, "unusable caps %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, incaps, outcaps);
    return refuse ();
  }
  if (cuv::layout_is_packed422 (state->in_layout) && GST_VIDEO_INFO_WIDTH (&state->in_info) % 2) {
    /* a pair's second half lies past an odd width, and GStreamer's own CUDA copies leave it out
     * (docs/design.md, packed 4:2:2) */
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("%s takes %s frames of even width only; these are %d pixels wide", GST_ELEMENT_NAME (self),
            GST_VIDEO_INFO_NAME (&state->in_info), GST_VIDEO_INFO_WIDTH (&state->in_info)),
        ("YUY2 and UYVY pixels come in pairs"));
    return refuse ();
  }
  state->in_cuda_caps = cuv::caps_are_cuda (incaps);
  state->out_cuda_caps = cuv::caps_are_cuda (outcaps);
  if ((state->in_cuda_caps || state->out_cuda_caps) && !ensure_context_for_cuda_memory (self))
    return refuse ();
  bool same = state->in_cuda_caps == state->out_cuda_caps && gst_video_info_is_equal (&state->in_info, &state->out_info);
  gst_base_transform_set_in_place (trans, klass->supports_in_place && same);
  priv->drop_own_output_pool ();
  /* the same frames in another memory (downstream switching between CUDA and system memory) go
   * on as one stream: the previous frame is handed on (docs/design.md, "Temporal elements") */
  std::shared_ptr<CapsState> old = priv->route.state ();
  priv->stream_continues = old && gst_video_info_is_equal (&old->in_info, &state->in_info) &&
      gst_video_info_is_equal (&old->out_info, &state->out_info);
  if (klass->temporal && priv->stream_continues) {
    GST_DEBUG_OBJECT (self, "new caps, the same frames: keeping the previous frame");
    state->take_previous (*old);
  } else if (klass->temporal && old) {
    GST_DEBUG_OBJECT (self, "new caps: forgetting the previous frame");
  }
  old.reset ();
  priv->route.set_state (state);
  if (klass->set_info && !klass->set_info (self, &state->in_info, &state->out_info))
    return refuse ();
  /* a live source's frames wait for no next frame unless the user says so (max-frames-in-flight);
   * without an answer, upstream counts as live */
  GstQuery *latency = gst_query_new_latency ();
  gboolean live = TRUE;
  if (gst_pad_peer_query (GST_BASE_TRANSFORM_SINK_PAD (trans), latency))
    gst_query_parse_latency (latency, &live, nullptr, nullptr);
  gst_query_unref (latency);
  {
    std::lock_guard<std::mutex> lk (priv->lock);
    priv->upstream_live = live != FALSE;
  }
  GST_DEBUG_OBJECT (self, "upstream is %slive", live ? "" : "not ");
  return TRUE;
}

/* ---- allocation ---- */

static gboolean
gst_cuda_vision_filter_propose_allocation (GstBaseTransform *trans, GstQuery *decide_query, GstQuery *query)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (trans));
  /* a temporal element holds the previous input buffer, and a frame in flight its input: ask
   * upstream's pool for as many more */
  const guint held = (GST_CUDA_VISION_FILTER_GET_CLASS (trans)->temporal ? 1 : 0) + 1;
  /* in place or passthrough (no decide_query), the parent forwards the query downstream, and
   * upstream's buffers go on downstream: downstream's pool where it gave one, else ours (also
   * where downstream does not answer: a base sink without propose_allocation, appsink 1.22) */
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->propose_allocation (trans, decide_query, query) && decide_query)
    return FALSE;
#if CUV_HAVE_CUDA
  /* the stream the element runs on travels upstream with the pool (1.24+, cuvsync.h) */
  GstCudaStream *stream = priv->route.pool_stream ();
  const bool ok = cuv::propose_allocation (priv->route.context, query, held, stream, priv->route.use_cuda);
  cuv::replace_stream (&stream, nullptr);
  return ok;
#else
  return cuv::propose_allocation (priv->route.context, query, held, nullptr, false);
#endif
}

static gboolean
gst_cuda_vision_filter_decide_allocation (GstBaseTransform *trans, GstQuery *query)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (trans));
#if CUV_HAVE_CUDA
  GstCudaStream *downstream = nullptr;
  const bool decided =
      cuv::decide_allocation (GST_OBJECT (trans), priv->route.context, query, 1, priv->route.use_cuda,
          priv->route.stream.gst_stream (), &downstream);
  priv->route.set_downstream_stream (downstream);
  cuv::replace_stream (&downstream, nullptr);
  if (!decided)
    return FALSE;
#else
  GstCudaStream *downstream = nullptr;
  if (!cuv::decide_allocation (GST_OBJECT (trans), priv->route.context, query, 1, false, nullptr, &downstream))
    return FALSE;
#endif
  return GST_BASE_TRANSFORM_CLASS (parent_class)->decide_allocation (trans, query);
}

/* ---- processing ---- */

/* A flush forgets a temporal element's previous frame (a caps change does through the new caps
 * state, a DISCONT buffer in cuv::process_frame). */
static gboolean
gst_cuda_vision_filter_sink_event (GstBaseTransform *trans, GstEvent *event)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (trans));
  /* a serialized event (EOS, caps, segment, gap, ...) comes after the frame in flight */
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
    drop_frames_in_flight (GST_CUDA_VISION_FILTER (trans));
  else if (GST_EVENT_IS_SERIALIZED (event))
    gst_cuda_vision_filter_drain_frames (GST_CUDA_VISION_FILTER (trans));
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP && GST_CUDA_VISION_FILTER_GET_CLASS (trans)->temporal) {
    if (std::shared_ptr<CapsState> state = priv->route.state ()) {
      GST_DEBUG_OBJECT (trans, "FLUSH_STOP: forgetting the previous frame");
      state->previous.reset ();
    }
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

static void
gst_cuda_vision_filter_before_transform (GstBaseTransform *trans, GstBuffer *buffer)
{
  GstClockTime ts = gst_segment_to_stream_time (&trans->segment, GST_FORMAT_TIME, GST_BUFFER_PTS (buffer));
  if (GST_CLOCK_TIME_IS_VALID (ts))
    gst_object_sync_values (GST_OBJECT (trans), ts);
}

static GstFlowReturn
gst_cuda_vision_filter_transform (GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer *outbuf)
{
  GstCudaVisionFilter *self = GST_CUDA_VISION_FILTER (trans);
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  GstFlowReturn ret = cuv::process_frame (self, priv->route, inbuf, outbuf);
  if (ret == GST_FLOW_OK && !priv->route.left_in_flight)
    frame_finished (self, outbuf);
  return ret;
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
static GstFlowReturn
gst_cuda_vision_filter_prepare_output_buffer (GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer **outbuf)
{
  GstCudaVisionFilter *self = GST_CUDA_VISION_FILTER (trans);
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  priv->shared_input = priv->shared_input_output = nullptr;
  std::shared_ptr<CapsState> state = priv->route.state ();
  GstCudaVisionFilterClass *klass = GST_CUDA_VISION_FILTER_GET_CLASS (self);
  /* an analyser has taken this frame's settings already (its prepare_output_buffer), so that
   * writes_frame answers for this frame */
  const bool only_reads = klass->keeps_caps && !(klass->writes_frame && klass->writes_frame (self));
  if (!gst_base_transform_is_in_place (trans) || gst_base_transform_is_passthrough (trans) || only_reads ||
      (gst_buffer_is_writable (inbuf) && gst_buffer_is_all_memory_writable (inbuf)) || !state)
    return GST_BASE_TRANSFORM_CLASS (parent_class)->prepare_output_buffer (trans, inbuf, outbuf);

  if (!priv->own_output_pool) {
    GstCaps *caps = gst_pad_get_current_caps (GST_BASE_TRANSFORM_SRC_PAD (trans));
    guint size = 0;
    if (caps)
    {
#if CUV_HAVE_CUDA
      GstCudaStream *stream = priv->route.pool_stream ();
      priv->own_output_pool =
          cuv::make_pool (priv->route.context, caps, &state->out_info, 0, 0, &size, stream, priv->route.use_cuda);
      cuv::replace_stream (&stream, nullptr);
#else
      priv->own_output_pool = cuv::make_pool (priv->route.context, caps, &state->out_info, 0, 0, &size);
#endif
    }
    gst_clear_caps (&caps);
    if (!priv->own_output_pool || !gst_buffer_pool_set_active (priv->own_output_pool, TRUE)) {
      priv->drop_own_output_pool ();
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, ("No buffer pool for the output."),
          ("the input buffer is not writable and no pool could be made for the output"));
      return GST_FLOW_ERROR;
    }
    GST_DEBUG_OBJECT (self, "input buffers are shared: writing into buffers of our own");
  }
  GstFlowReturn ret = gst_buffer_pool_acquire_buffer (priv->own_output_pool, outbuf, nullptr);
  if (ret != GST_FLOW_OK)
    return ret;
  GstBaseTransformClass *bclass = GST_BASE_TRANSFORM_GET_CLASS (trans);
  if (bclass->copy_metadata && !bclass->copy_metadata (trans, inbuf, *outbuf))
    GST_WARNING_OBJECT (self, "could not copy the metadata of %" GST_PTR_FORMAT, inbuf);
  priv->shared_input = inbuf;
  priv->shared_input_output = *outbuf;
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_cuda_vision_filter_transform_ip (GstBaseTransform *trans, GstBuffer *buf)
{
  GstCudaVisionFilter *self = GST_CUDA_VISION_FILTER (trans);
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  GstBuffer *in = buf == priv->shared_input_output ? priv->shared_input : buf;
  priv->shared_input = priv->shared_input_output = nullptr;
  GstFlowReturn ret = cuv::process_frame (self, priv->route, in, buf);
  if (ret == GST_FLOW_OK && !priv->route.left_in_flight)
    frame_finished (self, buf);
  return ret;
}

static void
gst_cuda_vision_filter_class_init (GstCudaVisionFilterClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->finalize = gst_cuda_vision_filter_finalize;
  gobject_class->set_property = gst_cuda_vision_filter_set_property;
  gobject_class->get_property = gst_cuda_vision_filter_get_property;

  /**
   * GstCudaVisionFilter:cuda-device-id:
   *
   * The CUDA device to run on; -1 takes the context a neighbouring CUDA element already uses, or
   * device 0.
   */
  g_object_class_install_property (gobject_class, PROP_DEVICE_ID,
      g_param_spec_int ("cuda-device-id", "CUDA device id",
          "CUDA device to run on (-1 = the one neighbouring CUDA elements use, else device 0); "
          "a value past the device count is an error at start",
          -1, G_MAXINT, DEFAULT_DEVICE_ID,
          static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));
  /**
   * GstCudaVisionFilter:backend:
   *
   * Where frames are processed: `auto` uses CUDA when a device works and otherwise the CPU
   * reference (posting one warning), `cuda` fails at start without a usable device, `cpu` always
   * runs the CPU reference (which gives the same bytes).
   */
  g_object_class_install_property (gobject_class, PROP_BACKEND,
      g_param_spec_enum ("backend", "Backend",
          "Where frames are processed: auto (CUDA if a device works, else the CPU with a warning), "
          "cuda (error without a usable device) or cpu (the CPU reference; same output bytes)",
          GST_TYPE_CUDA_VISION_BACKEND, DEFAULT_BACKEND,
          static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));

  /**
   * GstCudaVisionFilter:max-frames-in-flight:
   *
   * Where a frame makes the host wait for the GPU before it leaves (a host copy, results read on
   * the host, a previous frame kept, or any frame on GStreamer 1.22), 1 lets it leave when the
   * next frame has been queued, so the GPU never waits for the host, at one frame of latency; 0
   * pushes each frame as soon as it is complete. -1 is 1 when upstream is not live (a file, a
   * decoder, videotestsrc, appsrc by default) and 0 when it is (a camera). The latency query
   * reports the frame that is held.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_FRAMES_IN_FLIGHT,
      g_param_spec_int ("max-frames-in-flight", "Max frames in flight",
          "Frames whose GPU work may still run when the next frame arrives: 1 pushes each frame once the "
          "next is queued (throughput, one frame of latency), 0 pushes each frame as soon as it is done; "
          "-1 = 1 when upstream is not live, 0 when it is",
          -1, 1, DEFAULT_MAX_FRAMES_IN_FLIGHT,
          static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));

  /**
   * GstCudaVisionFilter:n-threads:
   *
   * The CPU backend splits each frame into this many bands and runs them at once (0 = one per
   * core; for the light operations, table lookups, differences and counting, one per megapixel
   * up to that: a smaller frame stays on the core whose cache holds it), as videoconvert's
   * property does. The worker threads are one set for the whole process,
   * shared by every element in it, so a chain of elements does not oversubscribe the machine.
   * The output is the same for every value. The CUDA backend ignores it.
   */
  g_object_class_install_property (gobject_class, PROP_N_THREADS,
      g_param_spec_uint ("n-threads", "Threads",
          "CPU backend: bands each frame is split into and run at once, on worker threads every element "
          "of the process shares (0 = one per core, or per megapixel for light operations); the output is the "
          "same for any value",
          0, G_MAXINT, DEFAULT_N_THREADS,
          static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));

  element_class->set_context = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_set_context);

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = FALSE;
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_stop);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_query);
  trans_class->transform_caps = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_transform_caps);
  trans_class->fixate_caps = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_fixate_caps);
  trans_class->accept_caps = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_accept_caps);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_set_caps);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_propose_allocation);
  trans_class->decide_allocation = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_decide_allocation);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_sink_event);
  trans_class->before_transform = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_before_transform);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_transform);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_transform_ip);
  trans_class->prepare_output_buffer = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_prepare_output_buffer);
  trans_class->generate_output = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_generate_output);

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_VISION_FILTER, static_cast<GstPluginAPIFlags> (0));
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_VISION_BACKEND, static_cast<GstPluginAPIFlags> (0));
  gst_cuda_memory_init_once ();
}

gint
gst_cuda_vision_filter_get_n_threads (GstCudaVisionFilter *self)
{
  /* the property's range ends at G_MAXINT */
  return static_cast<gint> (gst_cuda_vision_filter_impl (self)->n_threads.load ());
}
