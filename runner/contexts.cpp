/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/contexts.h"

#include <mutex>
#include <vector>

namespace cuvrun {

namespace {

/* GST_CUDA_CONTEXT_TYPE and its device field (gst/cuda/gstcudautils.h), by their documented
 * names: the runner needs no CUDA headers to pass a context on */
constexpr const char *kCudaContextType = "gst.cuda.context";
constexpr const char *kDeviceField = "cuda-device-id";

std::mutex g_lock;
std::vector<GstContext *> g_contexts; /* the first announced for each device */

guint device_of (GstContext *context)
{
  guint device = 0;
  gst_structure_get_uint (gst_context_get_structure (context), kDeviceField, &device);
  return device;
}

void keep (GstMessage *m)
{
  GstContext *context = nullptr;
  gst_message_parse_have_context (m, &context);
  if (!gst_context_has_context_type (context, kCudaContextType)) {
    gst_context_unref (context);
    return;
  }
  std::lock_guard<std::mutex> lk (g_lock);
  for (GstContext *c : g_contexts)
    if (device_of (c) == device_of (context)) {
      gst_context_unref (context);
      return;
    }
  g_contexts.push_back (context);
}

/* Every kept context, in the order kept: the element takes the first of a device it accepts
 * (gst_cuda_handle_set_context keeps the first that fits its cuda-device-id). */
void answer (GstMessage *m)
{
  const gchar *type = nullptr;
  if (!gst_message_parse_context_type (m, &type) || g_strcmp0 (type, kCudaContextType) != 0)
    return;
  std::vector<GstContext *> kept;
  {
    std::lock_guard<std::mutex> lk (g_lock);
    for (GstContext *c : g_contexts)
      kept.push_back (gst_context_ref (c));
  }
  for (GstContext *c : kept) {
    gst_element_set_context (GST_ELEMENT (GST_MESSAGE_SRC (m)), c);
    gst_context_unref (c);
  }
}

GstBusSyncReply on_sync (GstBus *, GstMessage *m, gpointer)
{
  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_NEED_CONTEXT)
    answer (m);
  else if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_HAVE_CONTEXT)
    keep (m);
  return GST_BUS_PASS;
}

}  // namespace

void share_cuda_contexts (GstElement *pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  gst_bus_set_sync_handler (bus, on_sync, nullptr, nullptr);
  gst_object_unref (bus);
}

void drop_cuda_contexts ()
{
  std::lock_guard<std::mutex> lk (g_lock);
  for (GstContext *c : g_contexts)
    gst_context_unref (c);
  g_contexts.clear ();
}

}  // namespace cuvrun
