/* Built against the installed headers only (pkg-config gst-cudavision-1.0), as an application
 * outside the tree would be: runs the four analysers on a moving ball and reads every result
 * through the installed accessors. Exits 0 when every frame carried all four metas and the
 * ball's motion shows in the vectors, the noise map and the heat map.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/cudavision/gstcudavision.h>
#include <stdio.h>

typedef struct {
  guint frames, complete, moving_vectors, changed_frames;
  gdouble largest_difference;
} Seen;

static void
on_frame (GstElement *sink, GstBuffer *buf, GstPad *pad, gpointer data)
{
  Seen *seen = data;
  guint64 counts[256], changed = 0;
  gdouble mean = 0, variance = 0, ratio = 0, difference = 0;
  guint max = 0, columns = 0, rows = 0, unit = 0;
  (void) sink;
  (void) pad;
  seen->frames++;
  const guint bins = gst_cuda_histogram_meta_get_counts (buf, counts, 256);
  const gboolean luma = gst_cuda_histogram_meta_get_luma (buf, &mean, &variance);
  const GstCudaMotionVector *v = gst_cuda_motion_meta_get_vectors (buf, &columns, &rows, &unit);
  const gboolean heat = gst_cuda_heatmap_meta_get_difference (buf, &difference, &max);
  const gboolean noise = gst_cuda_noisemap_meta_get_changed (buf, &changed, &ratio);
  if (bins == 256 && luma && v && heat && noise)
    seen->complete++;
  for (guint i = 0; v && i < columns * rows; i++)
    seen->moving_vectors += v[i].dx != 0 || v[i].dy != 0;
  seen->changed_frames += changed > 0;
  seen->largest_difference = MAX (seen->largest_difference, difference);
}

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch ("videotestsrc num-buffers=10 pattern=ball ! "
      "video/x-raw,format=RGBA,width=160,height=120 ! cudahistogram ! cudamotionest ! cudaheatmap ! cudanoisemap ! "
      "fakesink name=sink signal-handoffs=true", &err);
  if (!pipe) {
    fprintf (stderr, "read_results: %s\n", err->message);
    return 1;
  }
  Seen seen = {0};
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  g_signal_connect (sink, "handoff", G_CALLBACK (on_frame), &seen);
  gst_object_unref (sink);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  const gboolean eos = msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
  if (msg)
    gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  printf ("read_results: %u frames, %u with all four metas, %u moving vectors, %u frames with changed pixels, "
      "largest mean difference %.2f\n", seen.frames, seen.complete, seen.moving_vectors, seen.changed_frames,
      seen.largest_difference);
  return eos && seen.frames == 10 && seen.complete == 10 && seen.moving_vectors > 0 && seen.changed_frames > 0 &&
      seen.largest_difference > 0 ? 0 : 1;
}
