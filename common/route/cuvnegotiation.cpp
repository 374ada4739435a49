/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/route/cuvnegotiation.h"
#include "common/cuda/cuvsync.h"
#include "common/cuda/cuvpinned.h"

#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudamemory.h>

#include "common/base/cuvcuda.h"
#include "common/base/cuvmetaquery.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

namespace cuv {

bool
caps_are_cuda (GstCaps *caps)
{
  GstCapsFeatures *f = gst_caps_get_features (caps, 0);
  return f && gst_caps_features_contains (f, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
}

GstCaps *
both_memories (GstCaps *caps, bool cuda_possible, GstCaps *filter)
{
  GstCaps *ret = gst_caps_new_empty ();
  for (int pass = cuda_possible ? 0 : 1; pass < 2; pass++) {
    const gchar *feature = pass == 0 ? GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY : GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY;
    for (guint i = 0; i < gst_caps_get_size (caps); i++) {
      GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
      ret = gst_caps_merge_structure_full (ret, s, gst_caps_features_new (feature, nullptr));
    }
  }
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, ret, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (ret);
    ret = tmp;
  }
  return ret;
}

GstCaps *
memory_first (GstCaps *caps, bool cuda)
{
  if (gst_caps_is_any (caps))
    return gst_caps_ref (caps);
  GstCaps *ret = gst_caps_new_empty ();
  for (int pass = 0; pass < 2; pass++) {
    for (guint i = 0; i < gst_caps_get_size (caps); i++) {
      GstCapsFeatures *f = gst_caps_get_features (caps, i);
      const bool in_cuda = f && gst_caps_features_contains (f, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
      if (in_cuda == (cuda == (pass == 0)))
        gst_caps_append_structure_full (ret, gst_structure_copy (gst_caps_get_structure (caps, i)),
            f ? gst_caps_features_copy (f) : nullptr);
    }
  }
  return ret;
}

/* A fixed format that no kernel handles is a user's mistake: say which formats work. */
void
post_unsupported_format (GstElement *element, GstCaps *caps)
{
  GstPadTemplate *templ = gst_element_class_get_pad_template (GST_ELEMENT_GET_CLASS (element), "sink");
  GstCaps *tcaps = gst_pad_template_get_caps (templ);
  const gchar *format = gst_structure_get_string (gst_caps_get_structure (caps, 0), "format");
  const GValue *formats = gst_structure_get_value (gst_caps_get_structure (tcaps, gst_caps_get_size (tcaps) - 1), "format");
  gchar *list = formats ? gst_value_serialize (formats) : g_strdup ("?");
  if (!gst_caps_can_intersect (caps, tcaps)) {
    GST_ELEMENT_ERROR (element, CORE, NEGOTIATION,
        ("%s does not support the format %s; it takes %s, in system or CUDA memory",
            GST_ELEMENT_NAME (element), format ? format : "(none)", list),
        ("refused caps %" GST_PTR_FORMAT, caps));
  }
  g_free (list);
  gst_caps_unref (tcaps);
}

#if CUV_HAVE_CUDA
/* Puts the page-locked allocator of @context first among @query's allocation params (keeping the
 * first's params): an upstream element that keeps its own pool but takes an allocator (a decoder)
 * uses the first, and GstBaseTransform's decide_allocation sets its pool's allocator from it. */
static void
offer_pinned_allocator (GstQuery *query, GstCudaContext *context)
{
  GstAllocator *alloc = pinned_allocator (context);
  GstAllocationParams params;
  gst_allocation_params_init (&params);
  if (gst_query_get_n_allocation_params (query) > 0) {
    gst_query_parse_nth_allocation_param (query, 0, nullptr, &params);
    gst_query_set_nth_allocation_param (query, 0, alloc, &params);
  } else {
    gst_query_add_allocation_param (query, alloc, &params);
  }
  gst_object_unref (alloc);
}
#endif

GstBufferPool *
make_pool (GstCudaContext *context, GstCaps *caps, const GstVideoInfo *info, guint min, guint max, guint *size,
    GstCudaStream *stream, bool pinned)
{
  bool cuda = caps_are_cuda (caps) && context;
#if CUV_HAVE_CUDA
  GstBufferPool *pool = cuda ? gst_cuda_buffer_pool_new (context)
      : pinned && context    ? pinned_pool_new ()
                             : gst_video_buffer_pool_new ();
#else
  GstBufferPool *pool = cuda ? gst_cuda_buffer_pool_new (context) : gst_video_buffer_pool_new ();
#endif
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (info), min, max);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
#if CUV_HAVE_CUDA
  if (cuda) {
    pool_config_set_stream (config, stream);
  } else if (pinned && context) {
    GstAllocator *alloc = pinned_allocator (context);
    gst_buffer_pool_config_set_allocator (config, alloc, nullptr);
    gst_object_unref (alloc);
  }
#else
  (void) stream;
  (void) pinned;
#endif
  if (!gst_buffer_pool_set_config (pool, config)) {
    gst_object_unref (pool);
    return nullptr;
  }
  /* a CUDA pool pads rows; the size it settled on is what buffers take */
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_params (config, nullptr, size, nullptr, nullptr);
  gst_structure_free (config);
  return pool;
}

bool
propose_allocation (GstCudaContext *context, GstQuery *query, guint held, GstCudaStream *stream, bool pinned)
{
  GstCaps *caps;
  gst_query_parse_allocation (query, &caps, nullptr);
  GstVideoInfo info;
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return false;
  if (gst_query_get_n_allocation_pools (query) == 0) {
    guint size = 0;
    GstBufferPool *pool = make_pool (context, caps, &info, held, 0, &size, stream, pinned);
    if (!pool)
      return false;
    gst_query_add_allocation_pool (query, pool, size, held, 0);
    gst_object_unref (pool);
#if CUV_HAVE_CUDA
    /* downstream's allocator stays first where it gave one (in place, buffers go on to it) */
    if (pinned && context && !caps_are_cuda (caps) && gst_query_get_n_allocation_params (query) == 0)
      offer_pinned_allocator (query, context);
#endif
  }
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, nullptr);
  return true;
}

bool
decide_allocation (GstObject *element, GstCudaContext *context, GstQuery *query, guint held, bool pinned,
    GstCudaStream *ours,
    GstCudaStream **downstream)
{
  *downstream = nullptr;
  GstCaps *caps;
  gst_query_parse_allocation (query, &caps, nullptr);
  GstVideoInfo info;
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return false;

  bool cuda = caps_are_cuda (caps);
  GstBufferPool *pool = nullptr;
  guint size = GST_VIDEO_INFO_SIZE (&info), min = 0, max = 0;
  bool have = gst_query_get_n_allocation_pools (query) > 0;
  if (have)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  min += held;
  if (max)
    max += held;

  /* Keep downstream's pool only when it gives the memory we write: a CUDA pool of our context,
   * or any pool for system memory. */
  if (pool && cuda && !(GST_IS_CUDA_BUFFER_POOL (pool) && GST_CUDA_BUFFER_POOL (pool)->context == context))
    gst_clear_object (&pool);
  if (pool) {
    GstStructure *config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps, MAX (size, GST_VIDEO_INFO_SIZE (&info)), min, max);
    if (gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE, nullptr))
      gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
#if CUV_HAVE_CUDA
    /* downstream's stream, when its pool carries one, is the stream we run on; else ours */
    if (cuda && !(*downstream = pool_config_stream (config)))
      pool_config_set_stream (config, ours);
#endif
    if (!gst_buffer_pool_set_config (pool, config)) {
      gst_clear_object (&pool);
#if CUV_HAVE_CUDA
      replace_stream (downstream, nullptr);
#endif
    } else {
      config = gst_buffer_pool_get_config (pool);
      gst_buffer_pool_config_get_params (config, nullptr, &size, nullptr, nullptr);
      gst_structure_free (config);
    }
  }
  [[maybe_unused]] const bool downstreams = pool != nullptr;
  if (!pool)
    pool = make_pool (context, caps, &info, min, max, &size, ours, pinned);
  if (!pool) {
    GST_ERROR_OBJECT (element, "no usable output pool for %" GST_PTR_FORMAT, caps);
    return false;
  }
#if CUV_HAVE_CUDA
  GST_DEBUG_OBJECT (element, "output pool %" GST_PTR_FORMAT " (%s), CUDA stream %p", pool,
      downstreams ? "downstream's" : "ours",
      *downstream ? static_cast<void *> (*downstream) : static_cast<void *> (ours));
  /* a page-locked pool of ours keeps its allocator only where it is the query's first param */
  if (!downstreams && pinned && context && !cuda)
    offer_pinned_allocator (query, context);
#endif
  if (have)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  return true;
}

}  // namespace cuv

void
cuv::order_caps_result (GstQuery *query, bool cuda)
{
  GstCaps *caps = nullptr;
  gst_query_parse_caps_result (query, &caps);
  if (!caps)
    return;
  GstCaps *ordered = memory_first (caps, cuda);
  gst_query_set_caps_result (query, ordered);
  gst_caps_unref (ordered);
}

void
cuv::add_frame_latency (GstQuery *query, const GstVideoInfo *info)
{
  if (GST_VIDEO_INFO_FPS_N (info) <= 0)
    return;
  const GstClockTime frame = gst_util_uint64_scale_int (GST_SECOND, GST_VIDEO_INFO_FPS_D (info), GST_VIDEO_INFO_FPS_N (info));
  gboolean live;
  GstClockTime min, max;
  gst_query_parse_latency (query, &live, &min, &max);
  gst_query_set_latency (query, live, min + frame, GST_CLOCK_TIME_IS_VALID (max) ? max + frame : max);
}

bool
cuv::upstream_is_live (GstPad *sinkpad)
{
  GstQuery *latency = gst_query_new_latency ();
  gboolean live = TRUE;
  if (gst_pad_peer_query (sinkpad, latency))
    gst_query_parse_latency (latency, &live, nullptr, nullptr);
  gst_query_unref (latency);
  return live != FALSE;
}

std::shared_ptr<CapsState>
cuv::caps_state_for (GstElement *element, GstCaps *incaps, GstCaps *outcaps)
{
  auto state = std::make_shared<CapsState> ();
  if (!gst_video_info_from_caps (&state->in_info, incaps) || !gst_video_info_from_caps (&state->out_info, outcaps) ||
      !gst_cuda_vision_layout_from_format (GST_VIDEO_INFO_FORMAT (&state->in_info), &state->in_layout) ||
      !gst_cuda_vision_layout_from_format (GST_VIDEO_INFO_FORMAT (&state->out_info), &state->out_layout)) {
    GST_ERROR_OBJECT (element, "unusable caps %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, incaps, outcaps);
    return nullptr;
  }
  if (layout_is_packed422 (state->in_layout) && GST_VIDEO_INFO_WIDTH (&state->in_info) % 2) {
    GST_ELEMENT_ERROR (element, CORE, NEGOTIATION,
        ("%s takes %s frames of even width only; these are %d pixels wide", GST_ELEMENT_NAME (element),
            GST_VIDEO_INFO_NAME (&state->in_info), GST_VIDEO_INFO_WIDTH (&state->in_info)),
        ("YUY2 and UYVY pixels come in pairs"));
    return nullptr;
  }
  state->in_cuda_caps = caps_are_cuda (incaps);
  state->out_cuda_caps = caps_are_cuda (outcaps);
  return state;
}

bool
cuv::propose_allocation (Route &route, GstQuery *query, guint held, bool passthrough, bool forwarded)
{
#if CUV_HAVE_CUDA
  /* in place, GstBaseTransform decides no allocation of its own: upstream's buffers go on, and
   * downstream's answer, forwarded in @query, says whether what reads them follows their writer */
  if (forwarded) {
    route.consumer_follows = route.use_cuda && consumer_follows_writers (query);
    route.consumer_completes = route.use_cuda && query_has_meta (query, results_meta_api_type ());
  }
  /* passed through, a frame is not ours to order: downstream's answer stands */
  if (!passthrough) {
    offer_to_follow_writers (query);
    query_add_meta (query, results_meta_api_type ());
  }
  GstCudaStream *stream = route.pool_stream ();
  const bool ok = propose_allocation (route.context, query, held, stream, route.use_cuda);
  replace_stream (&stream, nullptr);
  return ok;
#else
  (void) passthrough;
  (void) forwarded;
  return propose_allocation (route.context, query, held, nullptr, false);
#endif
}

bool
cuv::decide_allocation (GstObject *element, Route &route, GstQuery *query)
{
  GstCudaStream *downstream = nullptr;
#if CUV_HAVE_CUDA
  const bool decided =
      decide_allocation (element, route.context, query, 1, route.use_cuda, route.stream.gst_stream (), &downstream);
  route.set_downstream_stream (downstream);
  route.consumer_follows = decided && route.use_cuda && consumer_follows_writers (query);
  route.consumer_completes = decided && route.use_cuda && query_has_meta (query, results_meta_api_type ());
  replace_stream (&downstream, nullptr);
  return decided;
#else
  return decide_allocation (element, route.context, query, 1, false, nullptr, &downstream);
#endif
}

GstCaps *
cuv::transform_caps (GstCaps *caps, GstCaps *filter, bool cuda_possible, bool keeps_caps)
{
  GstCaps *ret = both_memories (caps, cuda_possible, nullptr);
  if (keeps_caps)
    ret = gst_caps_merge (gst_caps_ref (caps), ret);
  if (filter) {
    GstCaps *both = ret;
    ret = gst_caps_intersect_full (filter, both, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (both);
  }
  return ret;
}

GstCaps *
cuv::output_order (GstCaps *caps, GstCaps *othercaps, bool keeps_caps, bool use_cuda)
{
  /* an analyser's output stays in its input's memory where downstream takes that (in place) */
  GstCaps *ordered = memory_first (othercaps, keeps_caps ? caps_are_cuda (caps) : use_cuda);
  gst_caps_unref (othercaps);
  return ordered;
}

void
cuv::complete_answer (GstQuery *query, GstPadDirection direction, const Route &route, bool in_flight)
{
  /* a frame in flight leaves when the next arrives: a frame's duration more */
  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY && direction == GST_PAD_SRC && in_flight) {
    if (std::shared_ptr<CapsState> state = route.state ())
      add_frame_latency (query, &state->in_info);
  }
  if (GST_QUERY_TYPE (query) == GST_QUERY_CAPS && direction == GST_PAD_SINK)
    order_caps_result (query, route.use_cuda);
}

void
cuv::add_pad_templates (GstElementClass *klass, const gchar *cuda_formats, const gchar *system_formats)
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
