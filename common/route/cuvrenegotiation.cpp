/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/route/cuvrenegotiation.h"

#include "common/base/cuvcuda.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

bool
cuv::caps_result_empty (GstQuery *query, GstPadDirection direction)
{
  if (GST_QUERY_TYPE (query) != GST_QUERY_CAPS || direction != GST_PAD_SINK)
    return false;
  GstCaps *result = nullptr;
  gst_query_parse_caps_result (query, &result);
  return result && gst_caps_is_empty (result);
}

namespace {

GstFlowReturn (*base_submit) (GstBaseTransform *, gboolean, GstBuffer *) = nullptr;
/* refusals in a row after which the element gives up and tells upstream */
constexpr int kMaxRefusalsInARow = 4;
/* submissions of one frame whose output could not be negotiated */
constexpr int kMaxSubmissions = 4;
GQuark refusals_quark;

/* Negotiates the output again where its pad is marked, twice where the first try loses a race
 * with the next caps change downstream; false when both fail. */
bool
renegotiate_output (GstBaseTransform *trans)
{
  for (int attempt = 0; attempt < 2; attempt++) {
    if (!gst_pad_needs_reconfigure (trans->srcpad) || gst_base_transform_reconfigure (trans))
      return true;
    GST_INFO_OBJECT (trans, "renegotiating the output failed (try %d)", attempt + 1);
  }
  return false;
}

/* Set on the element where its next frame is a DISCONT: the frame came as one (chain_surviving_refusals
 * takes the flag off while GstBaseTransform has it), or the frame before it never reached the
 * element (submit). */
GQuark
discont_quark ()
{
  static const GQuark quark = g_quark_from_static_string ("cuv-next-frame-discont");
  return quark;
}

/* GstBaseTransform drops a frame whose output it cannot negotiate: a reference kept until the
 * base has the frame (then dropped, so that the frame is writable in place again) submits it
 * once more after renegotiating */
GstFlowReturn
submit (GstBaseTransform *trans, gboolean is_discont, GstBuffer *input)
{
  /* a frame before this one never reached the element: this one starts the stream anew, as at
   * any DISCONT, so that a temporal element never compares two frames that were not neighbours
   * (docs/design.md, "Renegotiation") */
  if (g_object_steal_qdata (G_OBJECT (trans), discont_quark ())) {
    input = gst_buffer_make_writable (input);
    GST_BUFFER_FLAG_SET (input, GST_BUFFER_FLAG_DISCONT);
    is_discont = TRUE;
  }
  renegotiate_output (trans);
  GstBuffer *again = gst_buffer_ref (input);
  GstFlowReturn ret = base_submit (trans, is_discont, input);
  for (int n = 1; ret == GST_FLOW_NOT_NEGOTIATED && n < kMaxSubmissions && gst_pad_has_current_caps (trans->sinkpad);
       n++) {
    gst_pad_mark_reconfigure (trans->srcpad);
    if (renegotiate_output (trans))
      ret = base_submit (trans, is_discont, gst_buffer_ref (again));
  }
  /* the element never saw this frame: the next one is a DISCONT */
  if (ret == GST_FLOW_NOT_NEGOTIATED) {
    GST_WARNING_OBJECT (trans, "the output could not be negotiated in %d submissions: the frame at %" GST_TIME_FORMAT
        " is lost before the element processed it, and the next one is a DISCONT", kMaxSubmissions,
        GST_TIME_ARGS (GST_BUFFER_PTS (again)));
    g_object_set_qdata (G_OBJECT (trans), discont_quark (), GINT_TO_POINTER (1));
  }
  gst_buffer_unref (again);
  return ret;
}

}  // namespace

bool
cuv::keep_reconfigure (GstBaseTransform *trans, GstEvent *event)
{
  if (GST_EVENT_TYPE (event) != GST_EVENT_RECONFIGURE || !gst_pad_has_current_caps (trans->sinkpad))
    return false;
  GST_DEBUG_OBJECT (trans, "RECONFIGURE from downstream: the next frame renegotiates the output");
  gst_event_unref (event);
  return true;
}

GstFlowReturn
cuv::chain_surviving_refusals (GstPadChainFunction base_chain, GstPad *pad, GstObject *parent, GstBuffer *buffer)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (parent);
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    refusals_quark = g_quark_from_static_string ("cuv-refusals-in-a-row");
    g_once_init_leave (&once, 1);
  }
  /* GstBaseTransform marks a DISCONT input's flag on the next buffer its generate_output gives it,
   * which, for a frame held in flight and pushed from elsewhere (a caps change's drain), is a
   * later frame that the element did not start anew on; submit () sets the flag again on the
   * frame itself, whose output then carries it (docs/design.md, "Frames in flight") */
  if (GST_BUFFER_IS_DISCONT (buffer)) {
    buffer = gst_buffer_make_writable (buffer);
    GST_BUFFER_FLAG_UNSET (buffer, GST_BUFFER_FLAG_DISCONT);
    g_object_set_qdata (G_OBJECT (trans), discont_quark (), GINT_TO_POINTER (1));
  }
  const GstFlowReturn ret = base_chain (pad, parent, buffer);
  int refusals = GPOINTER_TO_INT (g_object_get_qdata (G_OBJECT (pad), refusals_quark));
  if (ret != GST_FLOW_NOT_NEGOTIATED || !gst_pad_has_current_caps (pad)) {
    if (refusals && ret == GST_FLOW_OK)
      g_object_set_qdata (G_OBJECT (pad), refusals_quark, nullptr);
    return ret;
  }
  g_object_set_qdata (G_OBJECT (pad), refusals_quark, GINT_TO_POINTER (++refusals));
  gst_pad_mark_reconfigure (trans->srcpad);
  if (refusals <= kMaxRefusalsInARow && renegotiate_output (trans)) {
    /* GstBaseTransform's word for a frame lost to a caps change */
    GST_ELEMENT_WARNING (trans, STREAM, FORMAT, ("not negotiated"),
        ("downstream refused the caps it had taken a moment before: a frame lost, the output renegotiated"));
    return GST_FLOW_OK;
  }
  /* upstream's turn: a source retries a not-negotiated push while its pad is marked */
  gst_pad_push_event (trans->sinkpad, gst_event_new_reconfigure ());
  return ret;
}

void
cuv::install_renegotiation (GstBaseTransformClass *klass)
{
  base_submit = klass->submit_input_buffer;
  klass->submit_input_buffer = GST_DEBUG_FUNCPTR (submit);
}

