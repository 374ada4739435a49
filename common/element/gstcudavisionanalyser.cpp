/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/element/gstcudavisionanalyser.h"
#include "common/element/cuvsettings.h"

#include <memory>

#include "common/results/cuvreport.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

#define DEFAULT_POST_MESSAGES TRUE
#define DEFAULT_INTERVAL 0

namespace {

/* the properties' values, under the object lock (cuvsettings.h) */
struct AnalyserSettings {
  bool post_messages = DEFAULT_POST_MESSAGES;
  guint64 interval = DEFAULT_INTERVAL;
};

struct AnalyserImpl {
  AnalyserSettings settings;

  /* streaming thread only: the interval so far, and the frames' results values, reused */
  cuv::IntervalClock clock;
  cuv::FrameResultsPool values;
};

}  // namespace

struct GstCudaVisionAnalyserPrivate {
  AnalyserImpl *impl;
};

#define gst_cuda_vision_analyser_parent_class parent_class
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (GstCudaVisionAnalyser, gst_cuda_vision_analyser, GST_TYPE_CUDA_VISION_FILTER);

static AnalyserImpl *
analyser_impl (GstCudaVisionAnalyser *self)
{
  return static_cast<GstCudaVisionAnalyserPrivate *> (gst_cuda_vision_analyser_get_instance_private (self))->impl;
}

void
gst_cuda_vision_analyser_reset_interval (GstCudaVisionAnalyser *self)
{
  analyser_impl (self)->clock.reset ();
  GST_CUDA_VISION_ANALYSER_GET_CLASS (self)->reset_interval (self);
}

/* ---- per frame ---- */

/* The frame's results value, with this frame's settings, is made before the base class chooses
 * the output buffer (GstBaseTransform calls prepare_output_buffer before transform or
 * transform_ip, for every buffer; the base class's asks here first): whether the element draws on
 * the frame (writes_frame) decides between sharing the input's memory and a buffer of its own
 * (cuvoutput.cpp). Chosen on the last frame's settings, the first frame that draws, and the first
 * after draw or overlay is turned on, would write into memory that upstream still holds, which
 * GStreamer then copies as a whole (and GStreamer 1.22 copies an I420 frame of odd height in CUDA
 * memory without its V plane). */
static std::shared_ptr<cuv::FrameResults>
gst_cuda_vision_analyser_begin_results (GstCudaVisionFilter *filter, GstBuffer *inbuf)
{
  GstCudaVisionAnalyser *self = GST_CUDA_VISION_ANALYSER (filter);
  GstCudaVisionAnalyserClass *klass = GST_CUDA_VISION_ANALYSER_GET_CLASS (self);
  AnalyserImpl *impl = analyser_impl (self);
  std::shared_ptr<cuv::FrameResults> results = impl->values.take ([self, klass] { return klass->new_results (self); });
  const AnalyserSettings now = cuv::snapshot (self, impl->settings);
  results->post_messages = now.post_messages;
  results->interval = now.interval;
  if (klass->begin_frame)
    klass->begin_frame (self, inbuf, results.get ());
  return results;
}

/* The interval's message, on the streaming thread, as level and videoanalyse post (docs/design.md,
 * "Analysers"); the interval starts over. */
static void
post_interval (GstCudaVisionAnalyser *self)
{
  GstCudaVisionAnalyserClass *klass = GST_CUDA_VISION_ANALYSER_GET_CLASS (self);
  AnalyserImpl *impl = analyser_impl (self);
  GstStructure *s = impl->clock.new_structure (klass->message_name, GST_BASE_TRANSFORM (self)->segment);
  gst_structure_set (s, "frames", G_TYPE_UINT, impl->clock.frames (), nullptr);
  klass->interval_results (self, s);
  cuv::post_in_turn (GST_ELEMENT (self), gst_message_new_element (GST_OBJECT (self), s));
  gst_cuda_vision_analyser_reset_interval (self);
}

/* The frame's results @r: the meta on @buf and, when the interval is complete, the message. */
static void
publish (GstCudaVisionAnalyser *self, GstBuffer *buf, cuv::FrameResults *r)
{
  GstCudaVisionAnalyserClass *klass = GST_CUDA_VISION_ANALYSER_GET_CLASS (self);
  AnalyserImpl *impl = analyser_impl (self);
  if (GstStructure *meta = cuv::custom_meta_structure (buf, klass->meta_name, GST_OBJECT_NAME (self)))
    klass->frame_results (self, r, meta);
  if (klass->attach_metas)
    klass->attach_metas (self, r, buf);
  if (!r->post_messages) {
    gst_cuda_vision_analyser_reset_interval (self);
    return;
  }
  klass->add_to_interval (self, r);
  if (impl->clock.add (GST_BUFFER_PTS (buf), GST_BUFFER_DURATION (buf), r->interval))
    post_interval (self);
}

/* After the frame's work completed: its results value, published on the buffer that leaves (or
 * on the results that follow the frame, cuvresultsmeta.h). */
static void
gst_cuda_vision_analyser_frame_finished (GstCudaVisionFilter *filter, GstBuffer *outbuf, cuv::FrameResults *results)
{
  GstCudaVisionAnalyser *self = GST_CUDA_VISION_ANALYSER (filter);
  if (results && GST_CUDA_VISION_ANALYSER_GET_CLASS (self)->end_frame (self, results))
    publish (self, outbuf, results);
}

/* ---- where an interval starts over ---- */

static gboolean
gst_cuda_vision_analyser_set_caps (GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  gboolean ok = GST_BASE_TRANSFORM_CLASS (parent_class)->set_caps (trans, incaps, outcaps);
  if (!ok || !gst_cuda_vision_filter_stream_continues (GST_CUDA_VISION_FILTER (trans)))
    gst_cuda_vision_analyser_reset_interval (GST_CUDA_VISION_ANALYSER (trans));
  return ok;
}

/* Every message is on the bus before EOS goes on: the frames in flight publish theirs first, and
 * an interval that the stream ended before it was complete is posted with the frames it has, as
 * level posts its last. */
static gboolean
gst_cuda_vision_analyser_sink_event (GstBaseTransform *trans, GstEvent *event)
{
  GstCudaVisionAnalyser *self = GST_CUDA_VISION_ANALYSER (trans);
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
    gst_cuda_vision_analyser_reset_interval (self);
  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS) {
    gst_cuda_vision_filter_drain_frames (GST_CUDA_VISION_FILTER (trans));
    if (analyser_impl (self)->clock.frames () > 0)
      post_interval (self);
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

/* The values go once the base class has dropped the frames (and results) that held them. */
static gboolean
gst_cuda_vision_analyser_stop (GstBaseTransform *trans)
{
  gst_cuda_vision_analyser_reset_interval (GST_CUDA_VISION_ANALYSER (trans));
  const gboolean ok = GST_BASE_TRANSFORM_CLASS (parent_class)->stop (trans);
  analyser_impl (GST_CUDA_VISION_ANALYSER (trans))->values.clear ();
  return ok;
}

/* ---- properties ---- */

/* Installed once, on this class (class_init): a subclass's own table holds only its own. */
static AnalyserSettings *
analyser_settings (GObject *object)
{
  return &analyser_impl (GST_CUDA_VISION_ANALYSER (object))->settings;
}

static void
install_properties (GObjectClass *gobject_class)
{
  cuv::Properties p (gobject_class, analyser_settings);
  const GParamFlags flags = cuv::kMutablePlaying;
  /**
   * GstCudaVisionAnalyser:post-messages:
   *
   * Post an element message, named as the element, on the bus every #GstCudaVisionAnalyser:interval
   * (the element's documentation lists its fields).
   */
  p.add (&AnalyserSettings::post_messages,
      g_param_spec_boolean ("post-messages", "Post messages",
          "Post an element message named as the element on the bus every interval", DEFAULT_POST_MESSAGES, flags));
  /**
   * GstCudaVisionAnalyser:interval:
   *
   * Nanoseconds of stream per message; 0 posts one per frame. A message's results cover the
   * frames of its interval (the element's documentation says how each field sums them).
   */
  /* at most G_MAXINT64 (292 years): "-1" deserializes to 2^64-1, which is then out of range and
   * a warning instead of a silent "never" */
  p.add (&AnalyserSettings::interval,
      g_param_spec_uint64 ("interval", "Interval",
          "Nanoseconds of stream between messages (0 = every frame); a message's results cover the frames of its interval",
          0, G_MAXINT64, DEFAULT_INTERVAL, flags));
}

void
gst_cuda_vision_analyser_class_set_results (GstCudaVisionAnalyserClass *klass, const gchar *message_name,
    const gchar *meta_name)
{
  klass->message_name = message_name;
  klass->meta_name = meta_name;
  cuv::register_custom_meta (meta_name);
}

/* ---- GObject ---- */

static void
gst_cuda_vision_analyser_init (GstCudaVisionAnalyser *self)
{
  static_cast<GstCudaVisionAnalyserPrivate *> (gst_cuda_vision_analyser_get_instance_private (self))->impl =
      new AnalyserImpl ();
}

static void
gst_cuda_vision_analyser_finalize (GObject *object)
{
  auto p = static_cast<GstCudaVisionAnalyserPrivate *> (
      gst_cuda_vision_analyser_get_instance_private (GST_CUDA_VISION_ANALYSER (object)));
  delete p->impl;
  p->impl = nullptr;
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_cuda_vision_analyser_class_init (GstCudaVisionAnalyserClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  gobject_class->finalize = gst_cuda_vision_analyser_finalize;
  install_properties (gobject_class);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_cuda_vision_analyser_set_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_vision_analyser_sink_event);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_vision_analyser_stop);
  /* the meta and the messages read each frame's results on the host */
  GST_CUDA_VISION_FILTER_CLASS (klass)->host_results = TRUE;
  GST_CUDA_VISION_FILTER_CLASS (klass)->begin_results = GST_DEBUG_FUNCPTR (gst_cuda_vision_analyser_begin_results);
  GST_CUDA_VISION_FILTER_CLASS (klass)->frame_finished = GST_DEBUG_FUNCPTR (gst_cuda_vision_analyser_frame_finished);
}
