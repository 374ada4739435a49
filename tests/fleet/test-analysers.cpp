/* Every element the plugin registers, as cudavision-run sees its messages: an element that posts
 * element messages (results) must be an analyser whose every message the runner takes
 * (runner/results.h), so that its results reach MQTT; an element classed as an analyser
 * ("Analyzer" in its klass) must be one; the others post none. Each element runs a few frames on
 * the CPU backend (docs/adding-an-element.md, "An analyser").
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/gst.h>

#include <cstdio>
#include <string>
#include <vector>

#include "runner/results.h"

namespace {

int failures = 0;

void expect (bool ok, const std::string &what)
{
  if (!ok) {
    failures++;
    std::fprintf (stderr, "FAIL: %s\n", what.c_str ());
  }
}

/* Runs a few frames through @factory and returns the element messages it posted. */
std::vector<GstMessage *> element_messages (const char *factory)
{
  const std::string desc = std::string ("videotestsrc num-buffers=3 ! video/x-raw,format=RGBA,width=64,height=48 ! ") +
      factory + " name=e backend=cpu ! fakesink";
  GError *err = nullptr;
  GstElement *pipeline = gst_parse_launch (desc.c_str (), &err);
  std::vector<GstMessage *> messages;
  expect (pipeline && !err, std::string (factory) + ": the pipeline builds");
  if (!pipeline)
    return messages;
  GstElement *e = gst_bin_get_by_name (GST_BIN (pipeline), "e");
  GstBus *bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  const auto types = static_cast<GstMessageType> (GST_MESSAGE_ELEMENT | GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  while (GstMessage *m = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND, types)) {
    const GstMessageType type = GST_MESSAGE_TYPE (m);
    expect (type != GST_MESSAGE_ERROR, std::string (factory) + ": runs without error");
    if (type == GST_MESSAGE_ELEMENT && GST_MESSAGE_SRC (m) == GST_OBJECT (e))
      messages.push_back (m);
    else
      gst_message_unref (m);
    if (type != GST_MESSAGE_ELEMENT)
      break;
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
  gst_object_unref (pipeline);
  return messages;
}

}  // namespace

int main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  GstPlugin *plugin = gst_plugin_load_by_name ("cudavision");
  expect (plugin != nullptr, "the cudavision plugin loads");
  if (!plugin)
    return 1;
  gst_object_unref (plugin);
  GList *features = gst_registry_get_feature_list_by_plugin (gst_registry_get (), "cudavision");
  int elements = 0, analysers = 0;
  for (GList *l = features; l; l = l->next) {
    if (!GST_IS_ELEMENT_FACTORY (l->data))
      continue;
    GstElementFactory *f = GST_ELEMENT_FACTORY (l->data);
    const char *name = GST_OBJECT_NAME (f);
    GstElement *probe = gst_element_factory_create (f, nullptr);
    const bool analyser = cuvrun::is_analyser (GST_OBJECT (probe));
    gst_object_unref (gst_object_ref_sink (probe));
    const char *klass = gst_element_factory_get_metadata (f, GST_ELEMENT_METADATA_KLASS);
    expect (!klass || !g_strrstr (klass, "Analyzer") || analyser,
        std::string (name) + ": its klass says analyser, but it does not derive from " + cuvrun::kAnalyserTypeName +
            ": its results would not reach the runner");
    std::vector<GstMessage *> messages = element_messages (name);
    bool taken = true;
    for (GstMessage *m : messages) {
      taken = taken && cuvrun::is_result (m);
      gst_message_unref (m);
    }
    expect (taken, std::string (name) + ": posts element messages that the runner does not take as results");
    expect (!analyser || !messages.empty (), std::string (name) + ": an analyser that posted no results");
    std::printf ("%s: %s, %zu results messages\n", name, analyser ? "analyser" : "not an analyser", messages.size ());
    elements++;
    analysers += analyser;
  }
  gst_plugin_feature_list_free (features);
  expect (elements >= 6 && analysers >= 4, "the plugin registers its elements and analysers");
  std::printf ("analysers: %d elements, %d analysers, %d failures\n", elements, analysers, failures);
  return failures ? 1 : 0;
}
