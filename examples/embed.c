/* Embedding cudavision elements in an application: a pipeline whose cudaenhance saturation is
 * changed while it plays, and whose frames are counted at the sink. An application may run as
 * many such pipelines as it likes: our elements share one CUDA context a device across them, and a
 * decoder such as nvh264dec upstream of them in each pipeline takes it too (docs/design.md, "One
 * CUDA context a device"), so nothing needs setting for that.
 *   GST_PLUGIN_PATH=build/gst build/examples/cudavision-embed
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/gst.h>

static GstPadProbeReturn
count_frame (GstPad *pad, GstPadProbeInfo *info G_GNUC_UNUSED, gpointer user_data)
{
  guint *frames = user_data;
  GstElement *enhance = g_object_get_data (G_OBJECT (pad), "enhance");
  if (++*frames == 30) {
    /* saturation, like every cudaenhance value, may change while PLAYING */
    g_object_set (enhance, "saturation", 0.0, NULL);
    g_print ("frame 30: saturation set to 0 (grey from the next frame on)\n");
  }
  return GST_PAD_PROBE_OK;
}

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch ("videotestsrc num-buffers=60 ! video/x-raw,format=NV12,width=640,height=360 ! "
      "cudasobel mode=luma ! cudaenhance name=enhance contrast=1.3 saturation=1.5 ! fakesink name=sink", &err);
  if (!pipe) {
    g_printerr ("could not build the pipeline: %s (is GST_PLUGIN_PATH set to the build's gst/ folder?)\n", err->message);
    g_clear_error (&err);
    return 1;
  }
  GstElement *enhance = gst_bin_get_by_name (GST_BIN (pipe), "enhance");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  guint frames = 0;
  g_object_set_data (G_OBJECT (pad), "enhance", enhance);
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_frame, &frames, NULL);

  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  int rc = 0;
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gst_message_parse_error (msg, &err, NULL);
    g_printerr ("error: %s\n", err->message);
    g_clear_error (&err);
    rc = 1;
  } else {
    g_print ("%u frames through cudasobel ! cudaenhance\n", frames);
  }
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pad);
  gst_object_unref (sink);
  gst_object_unref (enhance);
  gst_object_unref (pipe);
  return rc;
}
