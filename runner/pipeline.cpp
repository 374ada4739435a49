/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/pipeline.h"

#include <mosquitto.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace cuvrun {

namespace {

/* GLib's warnings and criticals while a description is parsed: GObject clamps a value out of a
 * property's range and only warns. */
std::string *captured = nullptr;

void capture_log (const gchar *, GLogLevelFlags level, const gchar *message, gpointer)
{
  if (captured && (level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR)) && captured->empty ())
    *captured = message;
}

void on_pad_added (GstElement *, GstPad *pad, gpointer queue)
{
  GstCaps *caps = gst_pad_get_current_caps (pad);
  if (!caps)
    caps = gst_pad_query_caps (pad, nullptr);
  const bool video = caps && !gst_caps_is_empty (caps) &&
      g_str_has_prefix (gst_structure_get_name (gst_caps_get_structure (caps, 0)), "video/");
  if (caps)
    gst_caps_unref (caps);
  GstPad *sinkpad = gst_element_get_static_pad (GST_ELEMENT (queue), "sink");
  if (video && !gst_pad_is_linked (sinkpad))
    gst_pad_link (pad, sinkpad);
  gst_object_unref (sinkpad);
}

void on_source_setup (GstElement *, GstElement *source, gpointer camera)
{
  const auto *c = static_cast<const CameraConfig *> (camera);
  GObjectClass *klass = G_OBJECT_GET_CLASS (source);
  if (!c->username.empty () && g_object_class_find_property (klass, "user-id"))
    g_object_set (source, "user-id", c->username.c_str (), nullptr);
  if (!c->password.empty () && g_object_class_find_property (klass, "user-pw"))
    g_object_set (source, "user-pw", c->password.c_str (), nullptr);
}

/* What a camera's pipeline may hold (docs/fleet.md, "What a pipeline may hold"): our analysers
 * and the transforms a site puts around them, none of which reads or writes anything but the
 * frames that pass through it. A source, a sink that writes, anything with a location, a URI or a
 * device is refused, and so is whatever is not named here. */
const char *const kAllowed[] = {
  /* ours */
  "cudasobel", "cudaenhance", "cudahistogram", "cudaheatmap", "cudanoisemap", "cudamotionest",
  /* GStreamer's CUDA memory and conversions */
  "cudaupload", "cudadownload", "cudaconvert", "cudascale", "cudaconvertscale",
  /* frames: format, size, rate, orientation, crop, balance, interlacing */
  "videoconvert", "videoscale", "videoconvertscale", "videorate", "videoflip", "videocrop", "videobox",
  "aspectratiocrop", "videobalance", "deinterlace",
  /* plumbing: caps (`video/x-raw,...` in the text), queues, a tee's branches and their ends, ( ) */
  "capsfilter", "queue", "tee", "fakesink", "bin",
};

bool allowed (const char *factory)
{
  for (const char *a : kAllowed)
    if (std::strcmp (a, factory) == 0)
      return true;
  return false;
}

/* Every element of @bin (recursively) is on the list; @error names the first that is not. */
bool analysis_only (GstElement *bin, std::string *error)
{
  bool ok = true;
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (bin));
  GValue item = G_VALUE_INIT;
  while (ok && gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    GstElement *e = GST_ELEMENT (g_value_get_object (&item));
    GstElementFactory *f = gst_element_get_factory (e);
    const char *factory = f ? GST_OBJECT_NAME (f) : G_OBJECT_TYPE_NAME (e);
    if (!allowed (factory)) {
      *error = std::string ("element '") + factory + "' (" + GST_OBJECT_NAME (e) +
          ") is not allowed in a camera's pipeline, which analyses the camera's frames and nothing else: "
          "docs/fleet.md lists the elements it may hold";
      ok = false;
    } else if (std::strcmp (factory, "fakesink") == 0) {
      gboolean dump = FALSE;
      g_object_get (e, "dump", &dump, nullptr);
      if (dump) {
        *error = std::string ("element 'fakesink' (") + GST_OBJECT_NAME (e) + ") with dump=true would write every frame to the log";
        ok = false;
      }
    }
    g_value_reset (&item);
  }
  g_value_unset (&item);
  gst_iterator_free (it);
  return ok;
}

}  // namespace

GstElement *parse_analysis_bin (const std::string &description, std::string *error)
{
  std::string warning;
  captured = &warning;
  const GLogFunc previous = g_log_set_default_handler (capture_log, nullptr);
  GError *err = nullptr;
  GstElement *bin = gst_parse_bin_from_description_full (description.c_str (), TRUE, nullptr,
      GST_PARSE_FLAG_FATAL_ERRORS, &err);
  g_log_set_default_handler (previous, nullptr);
  captured = nullptr;
  if (!bin) {
    *error = err ? err->message : "does not parse";
    g_clear_error (&err);
    return nullptr;
  }
  gst_object_ref_sink (bin);
  if (!warning.empty ()) {
    *error = warning;
    gst_object_unref (bin);
    return nullptr;
  }
  if (!analysis_only (bin, error)) {
    gst_object_unref (bin);
    return nullptr;
  }
  return bin;
}

void set_cuda_device (GstElement *bin, int device)
{
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (bin));
  GValue item = G_VALUE_INIT;
  while (gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    GObject *e = G_OBJECT (g_value_get_object (&item));
    if (g_object_class_find_property (G_OBJECT_GET_CLASS (e), "cuda-device-id"))
      g_object_set (e, "cuda-device-id", device, nullptr);
    g_value_reset (&item);
  }
  g_value_unset (&item);
  gst_iterator_free (it);
}

bool starts_here (const CameraConfig &camera, std::string *error, std::vector<std::string> *warnings)
{
  GstElement *bin = parse_analysis_bin (camera.pipeline, error);
  if (!bin)
    return false;
  if (camera.cuda_device_id >= 0)
    set_cuda_device (bin, camera.cuda_device_id);
  /* elements are named as the config names them (the topic levels), not by the parser's counters */
  const std::map<GstObject *, std::string> names = element_topics (bin);
  GstElement *pipeline = gst_pipeline_new (nullptr);
  gst_bin_add (GST_BIN (pipeline), bin);
  gst_object_unref (bin);
  /* no element waits for data here (no sink), so the state change ends inside the call, with our
   * elements' start and its messages */
  gst_element_set_state (pipeline, GST_STATE_PAUSED);
  GstBus *bus = gst_element_get_bus (pipeline);
  error->clear ();
  while (GstMessage *m = gst_bus_pop_filtered (bus, static_cast<GstMessageType> (GST_MESSAGE_ERROR | GST_MESSAGE_WARNING))) {
    GError *err = nullptr;
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR)
      gst_message_parse_error (m, &err, nullptr);
    else
      gst_message_parse_warning (m, &err, nullptr);
    const auto named = names.find (GST_MESSAGE_SRC (m));
    const std::string text = (named != names.end () ? named->second : std::string (GST_OBJECT_NAME (GST_MESSAGE_SRC (m)))) +
        ": " + (err ? err->message : "no text");
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_WARNING)
      warnings->push_back (text);
    else if (error->empty ())
      *error = text;
    g_clear_error (&err);
    gst_message_unref (m);
  }
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  return error->empty ();
}

std::map<GstObject *, std::string> element_topics (GstElement *bin)
{
  std::map<GstObject *, std::string> topics;
  /* GStreamer numbers unnamed elements across the process (cudahistogram3 after a restart) */
  std::map<std::string, std::vector<std::pair<long, GstObject *>>> unnamed;
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (bin));
  GValue item = G_VALUE_INIT;
  while (gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    GstElement *e = GST_ELEMENT (g_value_get_object (&item));
    GstElementFactory *f = gst_element_get_factory (e);
    const char *factory = f ? GST_OBJECT_NAME (f) : "";
    const char *name = GST_OBJECT_NAME (e);
    const size_t n = std::strlen (factory);
    if (n && g_str_has_prefix (name, factory) && name[n] && std::strspn (name + n, "0123456789") == std::strlen (name + n))
      unnamed[factory].push_back ({std::atol (name + n), GST_OBJECT (e)});
    else
      topics[GST_OBJECT (e)] = name;
    g_value_reset (&item);
  }
  g_value_unset (&item);
  gst_iterator_free (it);
  for (auto &[factory, elements] : unnamed) {
    std::sort (elements.begin (), elements.end ());
    for (size_t i = 0; i < elements.size (); i++)
      topics[elements[i].second] = elements.size () == 1 ? factory : factory + "-" + std::to_string (i + 1);
  }
  return topics;
}

bool valid_topic (const std::string &topic, std::string *why)
{
  if (topic.size () > 65535) {
    *why = "longer than MQTT's 65,535 bytes";
    return false;
  }
  if (mosquitto_validate_utf8 (topic.data (), static_cast<int> (topic.size ())) != MOSQ_ERR_SUCCESS) {
    *why = "not UTF-8 without control characters";
    return false;
  }
  if (mosquitto_pub_topic_check2 (topic.data (), topic.size ()) != MOSQ_ERR_SUCCESS) {
    *why = "holds an MQTT wildcard ('+' or '#')";
    return false;
  }
  return true;
}

bool build_camera_pipeline (const CameraConfig &camera, CameraPipeline *out, std::string *error)
{
  GstElement *bin = parse_analysis_bin (camera.pipeline, error);
  if (!bin)
    return false;
  GstElement *pipeline = gst_pipeline_new (("camera-" + camera.name).c_str ());
  GstElement *source = gst_element_factory_make ("uridecodebin", "cuvrun-source");
  GstElement *queue = gst_element_factory_make ("queue", "cuvrun-queue");
  GstElement *sink = gst_element_factory_make ("fakesink", "cuvrun-sink");
  if (!source || !queue || !sink) {
    *error = "uridecodebin, queue or fakesink is missing (gst-plugins-base, GStreamer's core)";
    for (GstElement *e : {source, queue, sink, bin, pipeline})
      if (e)
        gst_object_unref (gst_object_ref_sink (e));
    return false;
  }
  GstCaps *video = gst_caps_from_string ("video/x-raw(ANY)");
  /* only the video is decoded and exposed: an audio track of a file never stops the camera */
  g_object_set (source, "uri", camera.uri.c_str (), "caps", video, "expose-all-streams", FALSE, nullptr);
  gst_caps_unref (video);
  g_object_set (queue, "max-size-buffers", 4, "max-size-bytes", 0, "max-size-time", static_cast<guint64> (0), nullptr);
  g_object_set (sink, "sync", FALSE, nullptr);
  gst_bin_add_many (GST_BIN (pipeline), source, queue, bin, sink, nullptr);
  gst_object_unref (bin); /* the pipeline holds it now */
  if (!gst_element_link_many (queue, bin, sink, nullptr)) {
    *error = "the pipeline's first element takes no video from a queue, or its last gives none to a sink";
    gst_object_unref (pipeline);
    return false;
  }
  g_signal_connect (source, "pad-added", G_CALLBACK (on_pad_added), queue);
  g_signal_connect (source, "source-setup", G_CALLBACK (on_source_setup), const_cast<CameraConfig *> (&camera));
  *out = {pipeline, queue, sink};
  return true;
}

}  // namespace cuvrun
