/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One CUDA context a device for the process, where no one gives one (cuvcontext.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuda/cuvcontext.h"
#include "common/base/cuvcuda.h"

#if CUV_HAVE_CUDA
#include <gst/cuda/gstcudautils.h>

#include <map>
#include <mutex>

#define GST_CAT_DEFAULT gst_cuda_vision_debug

namespace {

/* Whether a peer of one of @element's pads in @direction answered @query. */
bool
peer_query (GstElement *element, GstQuery *query, GstPadDirection direction)
{
  GstIterator *it = direction == GST_PAD_SRC ? gst_element_iterate_src_pads (element)
                                             : gst_element_iterate_sink_pads (element);
  GValue answered = G_VALUE_INIT;
  g_value_init (&answered, G_TYPE_BOOLEAN);
  const auto ask = [] (const GValue *item, GValue *result, gpointer q) -> gboolean {
    if (!gst_pad_peer_query (GST_PAD (g_value_get_object (item)), GST_QUERY (q)))
      return TRUE;
    g_value_set_boolean (result, TRUE);
    return FALSE;
  };
  while (gst_iterator_fold (it, ask, &answered, query) == GST_ITERATOR_RESYNC)
    gst_iterator_resync (it);
  gst_iterator_free (it);
  return g_value_get_boolean (&answered);
}

/* GStreamer's context sharing, as gst_cuda_ensure_element_context () runs it: downstream's,
 * upstream's, then the bins' and the application's answer to a need-context message. Each
 * answer goes through the element's set_context, which keeps a context of an acceptable device. */
void
ask_for_context (GstElement *element, GstCudaContext **context)
{
  GstQuery *query = gst_query_new_context (GST_CUDA_CONTEXT_TYPE);
  for (GstPadDirection direction : {GST_PAD_SRC, GST_PAD_SINK}) {
    if (*context || !peer_query (element, query, direction))
      continue;
    GstContext *found = nullptr;
    gst_query_parse_context (query, &found);
    if (found)
      gst_element_set_context (element, found);
  }
  gst_query_unref (query);
  if (!*context)
    gst_element_post_message (element, gst_message_new_need_context (GST_OBJECT (element), GST_CUDA_CONTEXT_TYPE));
}

std::mutex g_lock;
std::map<guint, GWeakRef> g_contexts; /* by device; weak: no context outlives its last user */

/* The process's context for @device (a new reference), made at the first call and kept while
 * anyone holds it. */
GstCudaContext *
process_context (guint device)
{
  std::lock_guard<std::mutex> lk (g_lock);
  auto it = g_contexts.find (device);
  if (it == g_contexts.end ()) {
    it = g_contexts.emplace (device, GWeakRef{}).first;
    g_weak_ref_init (&it->second, nullptr);
  }
  auto *context = static_cast<GstCudaContext *> (g_weak_ref_get (&it->second));
  if (context)
    return context;
  context = gst_cuda_context_new (device);
  if (context)
    g_weak_ref_set (&it->second, context);
  return context;
}

}  // namespace

bool
cuv::ensure_shared_context (GstElement *element, int device_id, GstCudaContext **context)
{
  if (*context)
    return true;
  ask_for_context (element, context);
  if (*context)
    return true;
  GstCudaContext *shared = process_context (device_id < 0 ? 0 : static_cast<guint> (device_id));
  if (!shared)
    return false;
  GstContext *announced = gst_context_new_cuda_context (shared);
  gst_element_set_context (element, announced);
  if (!*context)
    *context = GST_CUDA_CONTEXT (gst_object_ref (shared));
  GST_INFO_OBJECT (element, "no neighbour or application gave a CUDA context: the process's %" GST_PTR_FORMAT, shared);
  gst_element_post_message (element, gst_message_new_have_context (GST_OBJECT (element), announced));
  gst_object_unref (shared);
  return true;
}

bool
cuv::is_process_context (GstCudaContext *context)
{
  std::lock_guard<std::mutex> lk (g_lock);
  for (auto &[device, ref] : g_contexts) {
    GObject *held = G_OBJECT (g_weak_ref_get (&ref));
    const bool same = held == G_OBJECT (context);
    if (held)
      g_object_unref (held);
    if (same)
      return true;
  }
  return false;
}

GstCudaContext *
cuv::upstream_context (GstElement *element)
{
  GstQuery *query = gst_query_new_context (GST_CUDA_CONTEXT_TYPE);
  GstCudaContext *found = nullptr;
  GstContext *context = nullptr;
  if (peer_query (element, query, GST_PAD_SINK)) {
    gst_query_parse_context (query, &context);
    if (context)
      gst_structure_get (gst_context_get_structure (context), GST_CUDA_CONTEXT_TYPE, GST_TYPE_CUDA_CONTEXT, &found,
          nullptr);
  }
  gst_query_unref (query);
  return found;
}
#endif
