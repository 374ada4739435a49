/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/element/gstcudavisionfilter.h"
#include "common/route/cuvnegotiation.h"
#include "common/route/cuvoutput.h"
#include "common/route/cuvrenegotiation.h"
#include "common/route/cuvcpuroute.h"
#include "common/route/cuvcudaroute.h"
#include "common/route/cuvroute.h"
#include "common/element/cuvfiltersettings.h"
#include "common/element/cuvsettings.h"

#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/controller/controller.h>

#include <memory>

#define GST_CAT_DEFAULT gst_cuda_vision_debug

struct GstCudaVisionFilterImpl {
  GstObject *owner; /* its lock guards settings and upstream_live */
  cuv::FilterSettings settings;
  /* streaming thread: whether upstream is live (asked at each caps event) */
  bool upstream_live = true;
  /* streaming thread: whether the last caps change kept the frames as they were (another memory) */
  bool stream_continues = false;
  /* CUDA memory is offered on the pads until start finds that no context can be had */
  bool cuda_memory_possible = true;
  /* context, stream, caps state and previous frame: what each frame goes through */
  cuv::Route route;
  /* how frames leave: in order, in flight, into buffers of our own */
  cuv::Output output;
  /* the properties now */
  cuv::FilterSettings now () { return cuv::snapshot (owner, settings); }
  /* the cuda-device-id property */
  gint device () { return now ().device_id; }
  /* n-threads (0: one per core, as cuv::parallel_bands () takes it; the range ends at G_MAXINT) */
  int n_threads () { return static_cast<int> (now ().n_threads); }

  /* Whether this frame may stay in flight until the next is queued: max-frames-in-flight 1, or -1
   * with a source that is not live (where a frame's latency costs nothing) */
  bool frames_in_flight ()
  {
    GST_OBJECT_LOCK (owner);
    const bool in_flight = settings.max_frames_in_flight == 1 || (settings.max_frames_in_flight < 0 && !upstream_live);
    GST_OBJECT_UNLOCK (owner);
    return in_flight;
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

/* GstBaseTransform's chain function, the same for every element (taken at the first init) */
static GstPadChainFunction base_chain = nullptr;

/* The sink pad's chain function, written here alone: GstBaseTransform's, through the refused
 * caps' renegotiation (cuvrenegotiation.h), then the results that waited for the push published
 * (cuvoutput.h): also where a push failed, after which the base class asks for no more output. */
static GstFlowReturn
gst_cuda_vision_filter_chain (GstPad *pad, GstObject *parent, GstBuffer *buffer)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (parent));
  const GstFlowReturn ret = cuv::chain_surviving_refusals (base_chain, pad, parent, buffer);
  if (!cuv::Output::publish_deferred (priv->route, false) && ret == GST_FLOW_OK)
    return GST_FLOW_ERROR;
  return ret;
}

/* What reads our output may have changed (a tee's new branch): an element in place, for which
 * GstBaseTransform decides no allocation, learns it again only when upstream asks, and until then
 * its results wait before the push (cuvresultsmeta.h). A RECONFIGURE stays here where the element
 * renegotiates itself (cuvrenegotiation.h). */
static gboolean
gst_cuda_vision_filter_src_event (GstBaseTransform *trans, GstEvent *event)
{
#if CUV_HAVE_CUDA
  if (GST_EVENT_TYPE (event) == GST_EVENT_RECONFIGURE)
    gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (trans))->route.consumer_completes = false;
#endif
  return cuv::keep_reconfigure (trans, event) || GST_BASE_TRANSFORM_CLASS (parent_class)->src_event (trans, event);
}

void
gst_cuda_vision_filter_class_add_templates (GstElementClass *klass, const gchar *cuda_formats,
    const gchar *system_formats)
{
  cuv::add_pad_templates (klass, cuda_formats, system_formats);
}

gboolean
gst_cuda_vision_filter_stream_continues (GstCudaVisionFilter *self)
{
  return gst_cuda_vision_filter_impl (self)->stream_continues;
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
  p->impl->owner = GST_OBJECT (self);
  GstPad *sink = GST_BASE_TRANSFORM_SINK_PAD (self);
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    base_chain = GST_PAD_CHAINFUNC (sink);
    g_once_init_leave (&once, 1);
  }
  gst_pad_set_chain_function (sink, GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_chain));
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

static cuv::FilterSettings *
filter_settings (GObject *object)
{
  return &gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (object))->settings;
}

/* ---- context ---- */

static void
gst_cuda_vision_filter_set_context (GstElement *element, GstContext *context)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (element));
  gst_cuda_handle_set_context (element, context, priv->device (), &priv->route.context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

/* The context is taken at NULL to READY, before an element upstream (a decoder opens then) asks
 * its neighbours for one (docs/design.md, "One CUDA context a device"). */
static GstStateChangeReturn
gst_cuda_vision_filter_change_state (GstElement *element, GstStateChange transition)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (element));
  if (transition == GST_STATE_CHANGE_NULL_TO_READY) {
    const cuv::FilterSettings now = priv->now ();
    cuv::take_context_early (element, now.device_id, now.backend, priv->route);
  }
  return GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
}

/* ---- frames in flight (cuvoutput.h) ---- */

void
gst_cuda_vision_filter_drain_frames (GstCudaVisionFilter *self)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  priv->output.drain (self, priv->route);
}

static GstFlowReturn
gst_cuda_vision_filter_generate_output (GstBaseTransform *trans, GstBuffer **outbuf)
{
  GstCudaVisionFilter *self = GST_CUDA_VISION_FILTER (trans);
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  return priv->output.generate (self, priv->route, priv->frames_in_flight (),
      GST_BASE_TRANSFORM_CLASS (parent_class)->generate_output, outbuf);
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
  if (cuv::caps_result_empty (query, direction))
    GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction, query);
  cuv::complete_answer (query, direction, priv->route, priv->frames_in_flight ());
  return TRUE;
}

/* What the element keeps between frames goes (its release), with its context current. */
static void
release_operation (GstCudaVisionFilter *self, cuv::Route &route)
{
  GstCudaVisionFilterClass *klass = GST_CUDA_VISION_FILTER_GET_CLASS (self);
  if (!klass->release)
    return;
#if CUV_HAVE_CUDA
  cuv::ContextGuard guard (route.context, cuv::ContextGuard::kNoInjectedFault);
#else
  (void) route;
#endif
  klass->release (self);
}

/* Decides the backend; every failure a user must see is an element message naming the cause. */
static gboolean
gst_cuda_vision_filter_start (GstBaseTransform *trans)
{
  GstCudaVisionFilter *self = GST_CUDA_VISION_FILTER (trans);
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  const cuv::FilterSettings now = priv->now ();
  priv->route.warned_other_context = false;
  GstCudaVisionFilterClass *klass = GST_CUDA_VISION_FILTER_GET_CLASS (self);
  priv->route.temporal.configure (klass->temporal, klass->temporal_luma);
  priv->route.op = cuv::Operation{klass->transform_cpu, klass->transform_cuda, klass->writes_frame, klass->begin_results,
      klass->frame_finished, priv->route.temporal.keeps_frames (), klass->host_results != FALSE};

  bool cuda_memory_possible = false;
  const bool ok = cuv::open_backend (GST_ELEMENT (trans), now.device_id, now.backend, priv->route, &cuda_memory_possible);
  priv->cuda_memory_possible = cuda_memory_possible;
  return ok;
}

static gboolean
gst_cuda_vision_filter_stop (GstBaseTransform *trans)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (trans));
  priv->output.drop (GST_CUDA_VISION_FILTER (trans), priv->route);
  priv->route.finish_last_frame ();
  /* nothing of the element's is in use on the GPU any more: the subclass frees what it keeps */
  release_operation (GST_CUDA_VISION_FILTER (trans), priv->route);
  priv->route.temporal.stop ();
  priv->output.drop_pool ();
  priv->route.close ();
  priv->cuda_memory_possible = true;
  return TRUE;
}

/* ---- caps ---- */

/* Both memories, and the order the output is fixated in (cuvnegotiation.h). */
static GstCaps *
gst_cuda_vision_filter_transform_caps (GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
    GstCaps *filter)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (trans));
  GstCaps *ret = cuv::transform_caps (caps, filter, priv->cuda_memory_possible,
      GST_CUDA_VISION_FILTER_GET_CLASS (trans)->keeps_caps);
  GST_DEBUG_OBJECT (trans, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
      direction == GST_PAD_SINK ? "sink" : "src", caps, ret);
  return ret;
}

static GstCaps *
gst_cuda_vision_filter_fixate_caps (GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
    GstCaps *othercaps)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (trans));
  if (direction == GST_PAD_SINK)
    othercaps = cuv::output_order (caps, othercaps, GST_CUDA_VISION_FILTER_GET_CLASS (trans)->keeps_caps,
        priv->route.use_cuda);
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
  /* refused caps leave no state: a buffer that still comes is not negotiated, never processed
   * with the last caps' state or with what the subclass only half set */
  const auto refuse = [priv] {
    priv->route.set_state (nullptr);
    return FALSE;
  };
  std::shared_ptr<CapsState> state = cuv::caps_state_for (GST_ELEMENT (self), incaps, outcaps);
  if (!state)
    return refuse ();
  const auto release = [self, priv] { release_operation (self, priv->route); };
  if (!cuv::context_for_caps (GST_ELEMENT (self), priv->device (), priv->route, *state, release))
    return refuse ();
  bool same = state->in_cuda_caps == state->out_cuda_caps && gst_video_info_is_equal (&state->in_info, &state->out_info);
  gst_base_transform_set_in_place (trans, klass->supports_in_place && same);
  priv->output.drop_pool ();
  /* the same frames in another memory (downstream switching between CUDA and system memory) go
   * on as one stream: the previous frame is handed on (docs/design.md, "Temporal elements") */
  std::shared_ptr<CapsState> old = priv->route.state ();
  priv->stream_continues = old && gst_video_info_is_equal (&old->in_info, &state->in_info) &&
      gst_video_info_is_equal (&old->out_info, &state->out_info);
  if (priv->route.temporal.caps_changed (GST_OBJECT (self), old ? &old->previous : nullptr, priv->stream_continues))
    state->take_previous (*old);
  old.reset ();
  priv->route.set_state (state);
  if (klass->set_info && !klass->set_info (self, &state->in_info, &state->out_info))
    return refuse ();
  /* a live source's frames wait for no next frame unless the user says so (max-frames-in-flight);
   * without an answer, upstream counts as live */
  const bool live = cuv::upstream_is_live (GST_BASE_TRANSFORM_SINK_PAD (trans));
  GST_OBJECT_LOCK (self);
  priv->upstream_live = live;
  GST_OBJECT_UNLOCK (self);
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
  const guint held = (priv->route.temporal.keeps_frames () ? 1 : 0) + 1;
  /* in place or passthrough (no decide_query), the parent forwards the query downstream, and
   * upstream's buffers go on downstream: downstream's pool where it gave one, else ours (also
   * where downstream does not answer: a base sink without propose_allocation, appsink 1.22) */
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->propose_allocation (trans, decide_query, query) && decide_query)
    return FALSE;
  return cuv::propose_allocation (priv->route, query, held, gst_base_transform_is_passthrough (trans), !decide_query);
}

static gboolean
gst_cuda_vision_filter_decide_allocation (GstBaseTransform *trans, GstQuery *query)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (trans));
  if (!cuv::decide_allocation (GST_OBJECT (trans), priv->route, query))
    return FALSE;
  return GST_BASE_TRANSFORM_CLASS (parent_class)->decide_allocation (trans, query);
}

/* ---- processing ---- */

/* A flush or a gap forgets a temporal element's previous frame (cuvtemporal.h). */
static gboolean
gst_cuda_vision_filter_sink_event (GstBaseTransform *trans, GstEvent *event)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (GST_CUDA_VISION_FILTER (trans));
  /* a serialized event (EOS, caps, segment, gap, ...) comes after the frame in flight */
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
    priv->output.drop (GST_CUDA_VISION_FILTER (trans), priv->route);
  else if (GST_EVENT_IS_SERIALIZED (event))
    gst_cuda_vision_filter_drain_frames (GST_CUDA_VISION_FILTER (trans));
  std::shared_ptr<CapsState> state = priv->route.state ();
  priv->route.temporal.event (GST_OBJECT (trans), state ? &state->previous : nullptr, event);
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

static void
gst_cuda_vision_filter_before_transform (GstBaseTransform *trans, GstBuffer *buffer)
{
  GstClockTime ts = gst_segment_to_stream_time (&trans->segment, GST_FORMAT_TIME, GST_BUFFER_PTS (buffer));
  if (GST_CLOCK_TIME_IS_VALID (ts))
    gst_object_sync_values (GST_OBJECT (trans), ts);
}

/* A frame's path (docs/design.md, "A frame's path"): here, then the backend chosen at start
 * (cuvcpuroute.cpp or cuvcudaroute.cpp), which hands the element's operation its cuv::FrameJob;
 * @inbuf == @outbuf in place. */
static GstFlowReturn
gst_cuda_vision_filter_process (GstCudaVisionFilter *self, GstBuffer *inbuf, GstBuffer *outbuf)
{
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  cuv::Route &route = priv->route;
  std::shared_ptr<CapsState> state = route.state ();
  if (!state) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("Received a buffer before caps were negotiated"), (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  /* the frame's task, made by the output step around GstBaseTransform's generate_output */
  cuv::FrameTask *task = priv->output.task ();
  g_return_val_if_fail (task != nullptr, GST_FLOW_ERROR);
  route.temporal.begin_buffer (GST_OBJECT (self), state->previous, inbuf);
  task->threads = route.use_cuda ? 1 : priv->n_threads (); /* the CPU backend's bands */
  task->ran = true;
  GstFlowReturn ret;
#if CUV_HAVE_CUDA
  /* upstream analysers' results go onto the output unless the CUDA route hands them on */
  task->upstream_results = cuv::carried_results (inbuf);
  if (route.use_cuda)
    ret = cuv::process_cuda (self, route, *task, state, inbuf, outbuf);
  else
#endif
    ret = cuv::process_cpu (self, route, *task, *state, inbuf, outbuf);
  route.temporal.end_buffer (ret == GST_FLOW_OK);
  if (ret == GST_FLOW_OK && !task->left_in_flight)
    cuv::Output::frame_done (self, route, *task, outbuf);
  return ret;
}

static GstFlowReturn
gst_cuda_vision_filter_transform (GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer *outbuf)
{
  return gst_cuda_vision_filter_process (GST_CUDA_VISION_FILTER (trans), inbuf, outbuf);
}

/* In place, a shared input is written into a buffer of our own (cuvoutput.cpp says why). */
static GstFlowReturn
gst_cuda_vision_filter_prepare_output_buffer (GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer **outbuf)
{
  GstCudaVisionFilter *self = GST_CUDA_VISION_FILTER (trans);
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  std::shared_ptr<CapsState> state = priv->route.state ();
  GstCudaVisionFilterClass *klass = GST_CUDA_VISION_FILTER_GET_CLASS (self);
  /* first an analyser's results value, with the settings the frame takes: writes_frame answers
   * for this frame */
  const cuv::FrameResults *results = priv->output.begin_results (self, priv->route, inbuf);
  const bool only_reads = klass->keeps_caps && !(klass->writes_frame && klass->writes_frame (self, results));
  if (!gst_base_transform_is_in_place (trans) || gst_base_transform_is_passthrough (trans) || only_reads ||
      (gst_buffer_is_writable (inbuf) && gst_buffer_is_all_memory_writable (inbuf)) || !state)
    return GST_BASE_TRANSFORM_CLASS (parent_class)->prepare_output_buffer (trans, inbuf, outbuf);

  return priv->output.own_buffer (self, priv->route, *state, inbuf, outbuf);
}

static GstFlowReturn
gst_cuda_vision_filter_transform_ip (GstBaseTransform *trans, GstBuffer *buf)
{
  GstCudaVisionFilter *self = GST_CUDA_VISION_FILTER (trans);
  GstCudaVisionFilterImpl *priv = gst_cuda_vision_filter_impl (self);
  return gst_cuda_vision_filter_process (self, priv->output.input_of (buf), buf);
}


static void
gst_cuda_vision_filter_class_init (GstCudaVisionFilterClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->finalize = gst_cuda_vision_filter_finalize;
  cuv::install_filter_properties (gobject_class, filter_settings);

  element_class->set_context = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_set_context);
  element_class->change_state = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_change_state);

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
  trans_class->src_event = GST_DEBUG_FUNCPTR (gst_cuda_vision_filter_src_event);
  cuv::install_renegotiation (trans_class);

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_VISION_FILTER, static_cast<GstPluginAPIFlags> (0));
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_VISION_BACKEND, static_cast<GstPluginAPIFlags> (0));
  gst_cuda_memory_init_once ();
}
