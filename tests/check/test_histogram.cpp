/* cudahistogram on the CPU backend: its meta and messages against counts made in this test, the
 * frame left untouched without the overlay, the overlay, intervals, ROI clipping, an empty ROI,
 * bins changed while playing, post-messages off, a bus handler that holds a message. Runs without
 * a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>

#include "tests/check/cuvcheck.h"
#include "gst/gstcudahistogrammeta.h"
#include "kernels/histogram/histogram.h"

using namespace cuvcheck;

static const GstVideoFormat kFormats[] = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx,
    GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_YUY2,
    GST_VIDEO_FORMAT_UYVY, GST_VIDEO_FORMAT_P010_10LE};

/* Counts written out here, from the mapped frame: luma by the formula, bins by their range. */
struct Count {
  std::vector<guint64> bins;
  guint64 sum_r = 0, sum_g = 0, sum_b = 0, sum_y = 0;
  guint64 pixels = 0;
};

static Count
count_frame (GstBuffer *buf, const GstVideoInfo &info, int nbins, int x0, int y0, int w, int h)
{
  Count c;
  c.bins.assign (nbins, 0);
  GstVideoFrame f;
  GstVideoInfo i = info;
  fail_unless (gst_video_frame_map (&f, &i, buf, GST_MAP_READ));
  const bool rgb = GST_VIDEO_INFO_IS_RGB (&info);
  const GstVideoFormat fmt = GST_VIDEO_INFO_FORMAT (&info);
  const bool bgr = fmt == GST_VIDEO_FORMAT_BGRA || fmt == GST_VIDEO_FORMAT_BGRx;
  for (int y = y0; y < y0 + h; y++) {
    const guint8 *row = static_cast<const guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (&f, 0)) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&f, 0);
    for (int x = x0; x < x0 + w; x++) {
      int l;
      if (rgb) {
        int r = row[4 * x + (bgr ? 2 : 0)], g = row[4 * x + 1], b = row[4 * x + (bgr ? 0 : 2)];
        l = (77 * r + 150 * g + 29 * b) / 256;
        c.sum_r += r;
        c.sum_g += g;
        c.sum_b += b;
      } else if (fmt == GST_VIDEO_FORMAT_YUY2 || fmt == GST_VIDEO_FORMAT_UYVY) {
        l = row[2 * x + (fmt == GST_VIDEO_FORMAT_UYVY)]; /* Y0 U Y1 V, U Y0 V Y1 */
      } else if (fmt == GST_VIDEO_FORMAT_P010_10LE) {
        l = (row[2 * x] | row[2 * x + 1] << 8) >> 8; /* a 16-bit sample's top 8 bits */
      } else {
        l = row[x];
      }
      c.bins[l * nbins / 256]++;
      c.sum_y += l;
      c.pixels++;
    }
  }
  gst_video_frame_unmap (&f);
  return c;
}

/* The counts of a meta (GBytes of guint64) or a message (GstValueArray of guint64); each in its
 * own type only. */
static std::vector<guint64>
histogram_field (const GstStructure *s)
{
  std::vector<guint64> v;
  const GValue *a = gst_structure_get_value (s, "histogram");
  fail_unless (a != nullptr, "no histogram field");
  const bool meta = !gst_structure_has_name (s, "cudahistogram");
  if (meta) {
    fail_unless (G_VALUE_HOLDS (a, G_TYPE_BYTES), "the meta's histogram is not GBytes");
    gsize size = 0;
    auto data = static_cast<const guint64 *> (g_bytes_get_data (static_cast<GBytes *> (g_value_get_boxed (a)), &size));
    fail_unless (size % sizeof (guint64) == 0);
    v.assign (data, data + size / sizeof (guint64));
    return v;
  }
  fail_unless (GST_VALUE_HOLDS_ARRAY (a), "the message's histogram is not a GstValueArray");
  for (guint i = 0; i < gst_value_array_get_size (a); i++)
    v.push_back (g_value_get_uint64 (gst_value_array_get_value (a, i)));
  return v;
}

static double
field_double (const GstStructure *s, const char *name)
{
  double d = -1;
  fail_unless (gst_structure_get_double (s, name, &d), "field %s missing", name);
  return d;
}

static void
check_results (const GstStructure *s, const Count &c, bool rgb, const std::string &what)
{
  fail_unless (histogram_field (s) == c.bins, "%s: histogram differs from the direct count", what.c_str ());
  guint64 pixels = 0;
  fail_unless (gst_structure_get_uint64 (s, "pixels", &pixels) && pixels == c.pixels, "%s: pixels", what.c_str ());
  double n = c.pixels ? static_cast<double> (c.pixels) : 1.0;
  fail_unless (field_double (s, "luma-mean") == c.sum_y / n, "%s: luma-mean", what.c_str ());
  fail_unless (gst_structure_has_field (s, "r-mean") == rgb, "%s: r-mean is there for RGB only", what.c_str ());
  if (rgb)
    fail_unless (field_double (s, "r-mean") == c.sum_r / n && field_double (s, "g-mean") == c.sum_g / n &&
            field_double (s, "b-mean") == c.sum_b / n,
        "%s: channel means", what.c_str ());
}

GST_START_TEST (test_meta_and_message_match_direct_count)
{
  const cuvtest::Size sizes[] = {{1, 1}, {2, 2}, {3, 3}, {17, 13}, {641, 479}};
  uint32_t seed = 3;
  for (GstVideoFormat fmt : kFormats) {
    for (cuvtest::Size sz : sizes) {
      sz.w = width_for (fmt, sz.w);
      for (int pad : {0, 36}) {
        GstVideoInfo info = info_for (fmt, sz.w, sz.h);
        const int roi_x = sz.w / 4, roi_y = sz.h / 3;
        std::string launch = "cudahistogram backend=cpu bins=32 roi-x=" + std::to_string (roi_x) + " roi-y=" + std::to_string (roi_y);
        BusHarness bh (launch.c_str ());
        gst_harness_set_src_caps_str (bh.h, caps_for (info).c_str ());
        GstBuffer *in = make_buffer (info, pad, seed++);
        Count c = count_frame (in, info, 32, roi_x, roi_y, sz.w - roi_x, sz.h - roi_y);
        GstBuffer *out = gst_harness_push_and_pull (bh.h, in);
        std::string what = launch + " " + gst_video_format_to_string (fmt) + " " + std::to_string (sz.w) + "x" +
            std::to_string (sz.h) + " pad " + std::to_string (pad);
        fail_unless (out != nullptr, "%s: no output", what.c_str ());
        const GstStructure *meta = gst_cuda_histogram_meta_get_structure (out);
        fail_unless (meta != nullptr, "%s: no CudaHistogramMeta", what.c_str ());
        check_results (meta, c, GST_VIDEO_INFO_IS_RGB (&info), what + " (meta)");
        guint64 counts[256];
        fail_unless_equals_int (gst_cuda_histogram_meta_get_counts (out, counts, 256), 32);
        std::vector<GstMessage *> msgs = element_messages_at_eos (bh.h, bh.bus);
        fail_unless_equals_int (msgs.size (), 1);
        GstMessage *msg = msgs[0];
        const GstStructure *s = gst_message_get_structure (msg);
        fail_unless (gst_structure_has_name (s, "cudahistogram"));
        for (const char *f : {"timestamp", "stream-time", "running-time", "duration"})
          fail_unless (gst_structure_has_field_typed (s, f, G_TYPE_UINT64), "%s: field %s", what.c_str (), f);
        check_results (s, c, GST_VIDEO_INFO_IS_RGB (&info), what + " (message)");
        gst_message_unref (msg);
        gst_buffer_unref (out);
      }
    }
  }
}
GST_END_TEST;

/* Without the overlay the frame is untouched and the buffer keeps its memory (no copy). */
GST_START_TEST (test_frame_passes_unchanged)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 64, 48);
  GstHarness *h = gst_harness_new_parse ("cudahistogram backend=cpu");
  gst_harness_set_src_caps_str (h, caps_for (info).c_str ());
  GstBuffer *in = make_buffer (info, 0, 5);
  GstBuffer *copy = gst_buffer_copy_deep (in);
  GstMemory *mem = gst_buffer_peek_memory (in, 0);
  GstBuffer *out = gst_harness_push_and_pull (h, in);
  fail_unless (out != nullptr);
  fail_unless (gst_buffer_peek_memory (out, 0) == mem, "the frame's memory was replaced");
  fail_unless_equals_int (buffer_diff (out, copy, info, "passthrough"), 0);
  gst_buffer_unref (out);
  gst_buffer_unref (copy);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* The overlay is the CPU reference's drawing, inside its rectangle only. */
GST_START_TEST (test_overlay_draws_reference)
{
  for (GstVideoFormat fmt : kFormats) {
    GstVideoInfo info = info_for (fmt, 320, 240);
    GstHarness *h = gst_harness_new_parse ("cudahistogram backend=cpu overlay=true overlay-position=bottom-right overlay-size=40 bins=50");
    gst_harness_set_src_caps_str (h, caps_for (info).c_str ());
    GstBuffer *in = make_buffer (info, 0, 9);
    GstBuffer *want = gst_buffer_copy_deep (in);
    GstBuffer *out = gst_harness_push_and_pull (h, in);
    fail_unless (out != nullptr);
    /* the expected frame, drawn by the reference */
    cuv::PixelLayout layout;
    fail_unless (gst_cuda_vision_layout_from_format (fmt, &layout));
    GstVideoFrame vf;
    fail_unless (gst_video_frame_map (&vf, &info, want, GST_MAP_READWRITE));
    cuv::Frame f = gst_cuda_vision_frame_from_video_frame (&vf, layout);
    cuv::HistogramResult r;
    cuv::histogram_reference (f, {0, 0, 320, 240}, 50, &r);
    cuv::histogram_overlay_cpu (f, cuv::histogram_overlay_rect (320, 240, cuv::OverlayCorner::BottomRight, 40), 50, r, 320 * 240);
    gst_video_frame_unmap (&vf);
    fail_unless_equals_int (buffer_diff (out, want, info, "overlay"), 0);
    gst_buffer_unref (want);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* interval = 90 ms at 30 frames/s: a message every 3 frames (99.99 ms), histograms summed. */
/* On buffers that others hold too: with the overlay, the frame is copied into a buffer of the
 * element's pool and drawn on there; without, the output shares the input's memory (no copy). */
GST_START_TEST (test_shared_buffers)
{
  const std::vector<GstVideoFormat> formats (kFormats, kFormats + G_N_ELEMENTS (kFormats));
  check_shared_input ("cudahistogram backend=cpu bins=32 overlay=true", formats, 400, true);
  check_shared_input ("cudahistogram backend=cpu bins=32", formats, 500, false);
}
GST_END_TEST;

GST_START_TEST (test_interval_sums_frames)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_GRAY8, 40, 30);
  BusHarness bh ("cudahistogram backend=cpu bins=8 interval=90000000");
  gst_harness_set_src_caps_str (bh.h, caps_for (info).c_str ());
  /* the sums of frames 0-2, 3-5, 6-8 and, posted at EOS as level posts its last interval, of frame
   * 9 alone; all before EOS */
  std::vector<std::vector<guint64>> sums (4, std::vector<guint64> (8, 0));
  for (int i = 0; i < 10; i++) {
    GstBuffer *in = make_buffer (info, 0, 100 + i);
    GST_BUFFER_PTS (in) = i * GST_SECOND / 30;
    Count c = count_frame (in, info, 8, 0, 0, 40, 30);
    for (int k = 0; k < 8; k++)
      sums[i / 3][k] += c.bins[k];
    gst_buffer_unref (gst_harness_push_and_pull (bh.h, in));
  }
  std::vector<GstMessage *> msgs = element_messages_at_eos (bh.h, bh.bus);
  fail_unless_equals_int (msgs.size (), 4);
  for (size_t m = 0; m < msgs.size (); m++) {
    const GstStructure *s = gst_message_get_structure (msgs[m]);
    const guint in_interval = m < 3 ? 3 : 1;
    guint frames = 0;
    guint64 ts = 0, dur = 0;
    fail_unless (gst_structure_get_uint (s, "frames", &frames) && frames == in_interval, "message %zu: %u frames", m, frames);
    fail_unless (gst_structure_get_uint64 (s, "timestamp", &ts) && ts == static_cast<guint64> (3 * m * GST_SECOND / 30),
        "message %zu: timestamp %" G_GUINT64_FORMAT, m, ts);
    fail_unless (gst_structure_get_uint64 (s, "duration", &dur) && dur == in_interval * (GST_SECOND / 30),
        "message %zu: duration %" G_GUINT64_FORMAT, m, dur);
    fail_unless (histogram_field (s) == sums[m], "interval %zu: the histogram is not the sum of its frames", m);
    gst_message_unref (msgs[m]);
  }
}
GST_END_TEST;

static int
count_warnings (GstBus *bus)
{
  int n = 0;
  while (GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING)) {
    n++;
    gst_message_unref (m);
  }
  return n;
}

GST_START_TEST (test_roi_clipped_and_empty)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_BGRx, 64, 48);
  {
    BusHarness bh ("cudahistogram backend=cpu roi-x=40 roi-y=30 roi-width=100 roi-height=100");
    gst_harness_set_src_caps_str (bh.h, caps_for (info).c_str ());
    for (int i = 0; i < 3; i++) {
      GstBuffer *in = make_buffer (info, 0, 20 + i);
      Count c = count_frame (in, info, 256, 40, 30, 24, 18);
      GstBuffer *out = gst_harness_push_and_pull (bh.h, in);
      check_results (gst_cuda_histogram_meta_get_structure (out), c, true, "clipped ROI");
      gst_buffer_unref (out);
    }
    fail_unless_equals_int (count_warnings (bh.bus), 1);
  }
  {
    BusHarness bh ("cudahistogram backend=cpu roi-x=64 roi-y=0");
    gst_harness_set_src_caps_str (bh.h, caps_for (info).c_str ());
    gst_bus_set_flushing (bh.bus, FALSE);
    GstBuffer *out = gst_harness_push_and_pull (bh.h, make_buffer (info, 0, 30));
    const GstStructure *s = gst_cuda_histogram_meta_get_structure (out);
    guint64 pixels = 1;
    fail_unless (gst_structure_get_uint64 (s, "pixels", &pixels) && pixels == 0);
    for (guint64 v : histogram_field (s))
      fail_unless (v == 0, "an empty ROI has an all-zero histogram");
    fail_unless_equals_int (histogram_field (s).size (), 256);
    GstMessage *w = gst_bus_pop_filtered (bh.bus, GST_MESSAGE_WARNING);
    fail_unless (w != nullptr, "no warning for an empty ROI");
    GError *err = nullptr;
    gst_message_parse_warning (w, &err, nullptr);
    fail_unless (strstr (err->message, "outside") && strstr (err->message, "empty"), "warning: %s", err->message);
    g_error_free (err);
    gst_message_unref (w);
    gst_buffer_unref (out);
  }
}
GST_END_TEST;

GST_START_TEST (test_bins_change_at_next_frame)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_NV12, 32, 32);
  GstHarness *h = gst_harness_new_parse ("cudahistogram backend=cpu bins=16");
  gst_harness_set_src_caps_str (h, caps_for (info).c_str ());
  guint64 counts[256];
  GstBuffer *out = gst_harness_push_and_pull (h, make_buffer (info, 0, 1));
  fail_unless_equals_int (gst_cuda_histogram_meta_get_counts (out, counts, 256), 16);
  gst_buffer_unref (out);
  gst_harness_set (h, "cudahistogram", "bins", 100, nullptr);
  out = gst_harness_push_and_pull (h, make_buffer (info, 0, 2));
  fail_unless_equals_int (gst_cuda_histogram_meta_get_counts (out, counts, 256), 100);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_post_messages_off)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 16, 16);
  BusHarness bh ("cudahistogram backend=cpu post-messages=false");
  gst_harness_set_src_caps_str (bh.h, caps_for (info).c_str ());
  for (int i = 0; i < 3; i++) {
    GstBuffer *out = gst_harness_push_and_pull (bh.h, make_buffer (info, 0, i));
    fail_unless (gst_cuda_histogram_meta_get_structure (out) != nullptr, "the meta is there without messages");
    gst_buffer_unref (out);
  }
  fail_unless (element_messages_at_eos (bh.h, bh.bus).empty (), "a message with post-messages=false");
}
GST_END_TEST;

/* In a pipeline, two analysers: every frame's message of each, in stream order, all of them on
 * the bus before EOS, though a helper thread posts them (docs/results.md). */
GST_START_TEST (test_messages_in_order_before_eos)
{
  const int frames = 60;
  GstElement *pipe = gst_parse_launch (("videotestsrc num-buffers=" + std::to_string (frames) +
      " ! video/x-raw,format=RGBA,width=64,height=48,framerate=30/1 ! cudahistogram backend=cpu ! "
      "cudaheatmap backend=cpu ! fakesink").c_str (), nullptr);
  fail_unless (pipe != nullptr);
  GstBus *bus = gst_element_get_bus (pipe);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  std::map<std::string, std::vector<guint64>> stamps;
  bool eos = false;
  while (GstMessage *m = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
             static_cast<GstMessageType> (GST_MESSAGE_ELEMENT | GST_MESSAGE_EOS | GST_MESSAGE_ERROR))) {
    const GstMessageType type = GST_MESSAGE_TYPE (m);
    fail_unless (!eos, "a message after EOS");
    fail_if (type == GST_MESSAGE_ERROR, "an error");
    if (type == GST_MESSAGE_ELEMENT) {
      guint64 ts = 0;
      const GstStructure *s = gst_message_get_structure (m);
      fail_unless (gst_structure_get_uint64 (s, "timestamp", &ts));
      stamps[gst_structure_get_name (s)].push_back (ts);
    }
    eos = type == GST_MESSAGE_EOS;
    gst_message_unref (m);
    if (eos)
      break;
  }
  fail_unless (eos, "no EOS");
  /* nothing comes after EOS either */
  fail_unless (gst_bus_timed_pop_filtered (bus, GST_SECOND / 10, GST_MESSAGE_ELEMENT) == nullptr, "a message after EOS");
  for (const char *name : {"cudahistogram", "cudaheatmap"}) {
    const std::vector<guint64> &t = stamps[name];
    fail_unless_equals_int (t.size (), frames);
    for (int i = 0; i < frames; i++)
      fail_unless (t[i] == gst_util_uint64_scale (i, GST_SECOND, 30), "%s: message %d has timestamp %" G_GUINT64_FORMAT, name,
          i, t[i]);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}
GST_END_TEST;

/* Stopped while its messages are still being posted, a pipeline shuts down cleanly and the
 * element goes away only after its last message (the helper thread holds it). */
GST_START_TEST (test_stop_while_posting)
{
  for (int i = 0; i < 20; i++) {
    GstElement *pipe = gst_parse_launch ("videotestsrc ! video/x-raw,format=GRAY8,width=16,height=16 ! "
        "cudahistogram backend=cpu ! fakesink", nullptr);
    fail_unless (pipe != nullptr);
    fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    g_usleep (2000 * (i % 5));
    fail_unless (gst_element_set_state (pipe, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
    gst_object_unref (pipe);
  }
}
GST_END_TEST;

/* A bus handler that holds the first message holds its frame, as it would behind upstream's level:
 * the message is posted on the streaming thread, so frames never run on while messages pile up
 * (docs/design.md, "Analysers"); when the handler lets go, every message comes, in order. */
struct HeldBus {
  std::mutex lock;
  std::condition_variable cond;
  bool holding = false, released = false;
  std::vector<guint64> stamps;
};

static GstBusSyncReply
hold_first_message (GstBus *, GstMessage *m, gpointer data)
{
  auto *held = static_cast<HeldBus *> (data);
  if (GST_MESSAGE_TYPE (m) != GST_MESSAGE_ELEMENT)
    return GST_BUS_PASS;
  guint64 ts = 0;
  gst_structure_get_uint64 (gst_message_get_structure (m), "timestamp", &ts);
  std::unique_lock<std::mutex> lk (held->lock);
  held->stamps.push_back (ts);
  held->holding = true;
  held->cond.notify_all ();
  /* never for ever: a test that fails still ends */
  held->cond.wait_for (lk, std::chrono::seconds (20), [held] { return held->released; });
  /* a sync handler that drops a message unrefs it */
  gst_message_unref (m);
  return GST_BUS_DROP;
}

static void
count_handoff (GstElement *, GstBuffer *, GstPad *, gpointer data)
{
  g_atomic_int_inc (static_cast<gint *> (data));
}

GST_START_TEST (test_slow_bus_holds_frames_not_messages)
{
  const int frames = 100;
  GstElement *pipe = gst_parse_launch (("videotestsrc num-buffers=" + std::to_string (frames) +
      " ! video/x-raw,format=GRAY8,width=16,height=16,framerate=30/1 ! cudahistogram backend=cpu ! "
      "fakesink name=sink signal-handoffs=true").c_str (), nullptr);
  fail_unless (pipe != nullptr);
  HeldBus held;
  gint at_sink = 0;
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  g_signal_connect (sink, "handoff", G_CALLBACK (count_handoff), &at_sink);
  gst_object_unref (sink);
  GstBus *bus = gst_element_get_bus (pipe);
  gst_bus_set_sync_handler (bus, hold_first_message, &held, nullptr);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  {
    std::unique_lock<std::mutex> lk (held.lock);
    fail_unless (held.cond.wait_for (lk, std::chrono::seconds (10), [&held] { return held.holding; }), "no message");
  }
  /* the source makes a frame in microseconds: without the bound all of them pass meanwhile */
  g_usleep (300 * 1000);
  const int passed = g_atomic_int_get (&at_sink);
  /* the held message's frame waits in the analyser: none passes (one, were it pushed first) */
  fail_unless (passed <= 1,
      "%d frames passed while the first message was held", passed);
  {
    std::lock_guard<std::mutex> lk (held.lock);
    held.released = true;
    held.cond.notify_all ();
  }
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
      static_cast<GstMessageType> (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  fail_unless (m != nullptr && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS, "no EOS once the handler let go");
  gst_message_unref (m);
  fail_unless_equals_int (g_atomic_int_get (&at_sink), frames);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_bus_set_sync_handler (bus, nullptr, nullptr, nullptr);
  std::lock_guard<std::mutex> lk (held.lock);
  fail_unless_equals_int (held.stamps.size (), frames);
  for (int i = 0; i < frames; i++)
    fail_unless (held.stamps[i] == gst_util_uint64_scale (i, GST_SECOND, 30), "message %d has timestamp %" G_GUINT64_FORMAT,
        i, held.stamps[i]);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}
GST_END_TEST;

static Suite *
cudahistogram_suite (void)
{
  Suite *s = suite_create ("cudahistogram");
  TCase *tc = tcase_create ("cpu");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_meta_and_message_match_direct_count);
  tcase_add_test (tc, test_frame_passes_unchanged);
  tcase_add_test (tc, test_overlay_draws_reference);
  tcase_add_test (tc, test_shared_buffers);
  tcase_add_test (tc, test_interval_sums_frames);
  tcase_add_test (tc, test_roi_clipped_and_empty);
  tcase_add_test (tc, test_bins_change_at_next_frame);
  tcase_add_test (tc, test_post_messages_off);
  tcase_add_test (tc, test_messages_in_order_before_eos);
  tcase_add_test (tc, test_stop_while_posting);
  tcase_add_test (tc, test_slow_bus_holds_frames_not_messages);
  return s;
}

CUV_CHECK_MAIN (cudahistogram)
