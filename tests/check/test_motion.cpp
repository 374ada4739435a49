/* cudamotionest on the CPU backend: known shifts found for every interior block (RGBA and NV12,
 * every block size), read through the public accessor; the first frame; frames smaller than a
 * block; partial blocks; the draw modes; search-range changed while flowing; resets on a flush, a
 * DISCONT buffer and a caps change; interval messages; a live pipeline. Runs without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <algorithm>
#include <cmath>
#include <map>
#include <cstring>
#include <random>

#include "config.h"

#include <gst/video/video.h>
#include "tests/check/cuvcheck.h"
#include "tests/check/cuvmotioncheck.h"
#include "tests/check/cuvregions.h"
#include "gst/gstcudamotionmeta.h"

using namespace cuvcheck;



static gboolean
first_frame (GstBuffer *buf)
{
  gboolean v = FALSE;
  fail_unless (gst_structure_get_boolean (gst_cuda_motion_meta_get_structure (buf), "first-frame", &v));
  return v;
}

/* Every vector is (0, 0) at cost 0 */
static bool
all_still (GstBuffer *buf)
{
  Vectors r = vectors_of (buf);
  for (guint i = 0; i < r.cols * r.rows; i++)
    if (r.v[i].dx || r.v[i].dy || r.v[i].cost)
      return false;
  return r.v != nullptr;
}

/* The units whose block finds its content inside the frame have (dx, dy) at cost 0. */
static void
expect_shift (GstBuffer *buf, int w, int h, int search, int dx, int dy, const std::string &what)
{
  Vectors r = vectors_of (buf);
  fail_unless (r.v != nullptr, "%s: no vectors", what.c_str ());
  int checked = 0, wrong = 0;
  for (guint uy = 0; uy < r.rows; uy++) {
    for (guint ux = 0; ux < r.cols; ux++) {
      const int bx = ux * r.unit / search * search, by = uy * r.unit / search * search;
      if (bx + dx < 0 || by + dy < 0 || bx + dx + search > w || by + dy + search > h)
        continue;
      const GstCudaMotionVector &m = r.v[uy * r.cols + ux];
      checked++;
      wrong += !(m.dx == dx && m.dy == dy && m.cost == 0);
    }
  }
  fail_unless (checked > 0 && wrong == 0, "%s: %d of %d interior units without the shift (%d, %d)", what.c_str (), wrong,
      checked, dx, dy);
}

GST_START_TEST (test_known_shifts_every_block_size)
{
  const struct {
    const char *props;
    int search;
    guint unit;
  } modes[] = {{"", 8, 4}, {"block-size=4x4", 4, 4}, {"block-size=8x8", 8, 8}, {"block-size=16x16", 16, 16}};
  for (GstVideoFormat format : {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_GRAY8,
           GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY, GST_VIDEO_FORMAT_P010_10LE}) {
    GstVideoInfo info = info_for (format, 96, 64);
    for (const auto &m : modes) {
      const std::string launch = std::string ("cudamotionest backend=cpu search-range=8 ") + m.props;
      GstHarness *h = harness (launch, info);
      GstBuffer *out = push_pull (h, texture_frame (info, 0, 0, 0));
      fail_unless (first_frame (out) && all_still (out), "%s: the first frame has vectors", launch.c_str ());
      Vectors r = vectors_of (out);
      fail_unless_equals_int (r.unit, m.unit);
      fail_unless_equals_int (r.cols, 96 / m.search * (m.search / m.unit));
      gst_buffer_unref (out);
      /* each frame is the texture moved by a new shift; the vector is the step from the last one */
      const int shifts[][2] = {{2, 0}, {2 + 7, -8}, {2 + 7 - 8, -8 + 7}, {1 - 3, -1 + 2}};
      int px = 0, py = 0;
      for (int k = 0; k < 4; k++) {
        out = push_pull (h, texture_frame (info, shifts[k][0], shifts[k][1], k + 1));
        fail_if (first_frame (out));
        expect_shift (out, 96, 64, m.search, shifts[k][0] - px, shifts[k][1] - py,
            launch + " " + gst_video_format_to_string (format) + " step " + std::to_string (k));
        px = shifts[k][0];
        py = shifts[k][1];
        gst_buffer_unref (out);
      }
      gst_harness_teardown (h);
    }
  }
}
GST_END_TEST;

/* Frames smaller than one block: an empty grid, the frame passes; partial blocks are left out. */
GST_START_TEST (test_small_frames_and_partial_blocks)
{
  const struct {
    int w, h;
    const char *props;
    guint cols, rows;
  } cases[] = {{1, 1, "", 0, 0}, {7, 7, "", 0, 0}, {3, 3, "block-size=4x4", 0, 0}, {15, 40, "block-size=16x16", 0, 2},
      {21, 13, "block-size=8x8", 2, 1}, {21, 13, "", 4, 2}, {17, 13, "block-size=4x4", 4, 3}};
  for (const auto &k : cases) {
    GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, k.w, k.h);
    for (const char *draw : {"none", "arrows", "color"}) {
      const std::string launch = std::string ("cudamotionest backend=cpu draw=") + draw + " " + k.props;
      GstHarness *h = harness (launch, info);
      for (int i = 0; i < 3; i++) {
        GstBuffer *out = push_pull (h, texture_frame (info, i, -i, i));
        fail_unless (out != nullptr);
        Vectors r = vectors_of (out);
        fail_unless (r.cols == k.cols && r.rows == k.rows, "%s %dx%d: grid %ux%u", launch.c_str (), k.w, k.h, r.cols, r.rows);
        fail_unless ((r.v == nullptr) == (k.cols * k.rows == 0));
        gst_buffer_unref (out);
      }
      gst_harness_teardown (h);
    }
  }
}
GST_END_TEST;

/* draw=none: the bytes pass untouched; arrows: some pixels change; color: the first frame is black. */
GST_START_TEST (test_draw_modes)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 64, 48);
  GstBuffer *a = texture_frame (info, 0, 0, 0), *b = texture_frame (info, 3, -2, 1);
  for (const char *draw : {"none", "arrows", "color"}) {
    GstHarness *h = harness (std::string ("cudamotionest backend=cpu search-range=4 draw=") + draw, info);
    GstBuffer *first = push_pull (h, gst_buffer_copy_deep (a));
    GstBuffer *second = push_pull (h, gst_buffer_copy_deep (b));
    const int d1 = buffer_diff (first, a, info, "first"), d2 = buffer_diff (second, b, info, "second");
    if (g_str_equal (draw, "none")) {
      fail_unless (d1 == 0 && d2 == 0, "draw=none changed the frame");
    } else if (g_str_equal (draw, "arrows")) {
      fail_unless (d1 == 0, "arrows drawn on the first frame, which has no motion");
      fail_unless (d2 > 0, "no arrows drawn on a moving frame");
    } else {
      GstMapInfo map;
      fail_unless (gst_buffer_map (first, &map, GST_MAP_READ));
      bool black = true;
      for (gsize i = 0; i < map.size; i += 4)
        black = black && map.data[i] == 0 && map.data[i + 1] == 0 && map.data[i + 2] == 0 && map.data[i + 3] == 255;
      gst_buffer_unmap (first, &map);
      fail_unless (black, "color: the first frame (no motion) is not black");
      fail_unless (d2 > 0);
    }
    gst_buffer_unref (first);
    gst_buffer_unref (second);
    gst_harness_teardown (h);
  }
  gst_buffer_unref (a);
  gst_buffer_unref (b);
}
GST_END_TEST;

/* A shift of 6 is outside R = 4 and inside R = 8, which applies from the next frame. */
GST_START_TEST (test_search_range_change_while_flowing)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 96, 64);
  GstHarness *h = harness ("cudamotionest backend=cpu search-range=4 block-size=8x8", info);
  gst_buffer_unref (push_pull (h, texture_frame (info, 0, 0, 0)));
  GstBuffer *out = push_pull (h, texture_frame (info, 6, 0, 1));
  Vectors r = vectors_of (out);
  for (guint i = 0; i < r.cols * r.rows; i++)
    fail_unless (r.v[i].dx >= -4 && r.v[i].dx < 4, "a vector beyond R = 4");
  gst_buffer_unref (out);
  {
    /* gst_harness_find_element gives a reference */
    GstElement *element = gst_harness_find_element (h, "cudamotionest");
    g_object_set (element, "search-range", 8u, nullptr);
    gst_object_unref (element);
  }
  out = push_pull (h, texture_frame (info, 12, 0, 2));
  expect_shift (out, 96, 64, 8, 6, 0, "after search-range=8");
  guint range = 0;
  fail_unless (gst_structure_get_uint (gst_cuda_motion_meta_get_structure (out), "search-range", &range));
  fail_unless_equals_int (range, 8);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_flush_discont_and_caps_change_reset)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_NV12, 64, 48);
  GstHarness *h = harness ("cudamotionest backend=cpu search-range=6", info);
  gst_buffer_unref (push_pull (h, texture_frame (info, 0, 0, 0)));
  GstBuffer *out = push_pull (h, texture_frame (info, 4, 2, 1));
  expect_shift (out, 64, 48, 8, 4, 2, "before the resets");
  gst_buffer_unref (out);

  push_flush (h);
  out = push_pull (h, texture_frame (info, 0, 0, 2));
  fail_unless (first_frame (out) && all_still (out), "a flush did not reset");
  gst_buffer_unref (out);

  GstBuffer *d = texture_frame (info, 4, 0, 3);
  GST_BUFFER_FLAG_SET (d, GST_BUFFER_FLAG_DISCONT);
  out = push_pull (h, d);
  fail_unless (first_frame (out) && all_still (out), "a DISCONT buffer did not reset");
  gst_buffer_unref (out);
  out = push_pull (h, texture_frame (info, 0, 0, 4));
  expect_shift (out, 64, 48, 8, -4, 0, "after DISCONT");
  gst_buffer_unref (out);

  GstVideoInfo small = info_for (GST_VIDEO_FORMAT_NV12, 32, 16);
  gst_harness_set_src_caps_str (h, caps_for (small).c_str ());
  out = push_pull (h, texture_frame (small, 2, 0, 5));
  fail_unless (first_frame (out) && all_still (out), "a caps change did not reset");
  Vectors r = vectors_of (out);
  fail_unless (r.cols == 8 && r.rows == 4);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* interval = two frames: a message per two frames with the global vector, the moving share and
 * the mean length; the meta of two identical runs is identical. */
GST_START_TEST (test_interval_messages)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 64, 48);
  BusHarness bh ("cudamotionest backend=cpu search-range=8 block-size=8x8 interval=66666666");
  gst_harness_set_src_caps_str (bh.h, caps_for (info).c_str ());
  gst_harness_set_sink_caps_str (bh.h, "video/x-raw");
  std::vector<GstBuffer *> outs;
  for (int i = 0; i < 4; i++)
    outs.push_back (push_pull (bh.h, texture_frame (info, 3 * i, -i, i)));
  std::vector<GstMessage *> msgs = element_messages_at_eos (bh.h, bh.bus);
  fail_unless_equals_int (msgs.size (), 2);
  for (int k = 0; k < 2; k++) {
    GstMessage *msg = msgs[k];
    fail_unless (msg != nullptr, "message %d missing", k);
    const GstStructure *s = gst_message_get_structure (msg);
    fail_unless (gst_structure_has_name (s, "cudamotionest"));
    guint frames = 0;
    guint64 units = 0;
    GstClockTime ts = 0, dur = 0;
    gint gdx = 0, gdy = 0;
    gdouble moving = 0, magnitude = 0;
    fail_unless (gst_structure_get (s, "frames", G_TYPE_UINT, &frames, "units", G_TYPE_UINT64, &units, "timestamp",
        G_TYPE_UINT64, &ts, "duration", G_TYPE_UINT64, &dur, "global-dx", G_TYPE_INT, &gdx, "global-dy", G_TYPE_INT, &gdy,
        "moving-ratio", G_TYPE_DOUBLE, &moving, "mean-magnitude", G_TYPE_DOUBLE, &magnitude, nullptr));
    fail_unless_equals_int (frames, 2);
    fail_unless_equals_uint64 (units, 2 * 8 * 6);
    fail_unless_equals_uint64 (ts, k * 2 * (GST_SECOND / 30));
    fail_unless_equals_uint64 (dur, 2 * (GST_SECOND / 30));
    /* the first interval: the first frame's 48 still units outvote the second frame's */
    fail_unless (k == 0 ? gdx == 0 && gdy == 0 : gdx == 3 && gdy == -1, "global vector (%d, %d)", gdx, gdy);
    /* the first interval holds the first frame (no motion): at most half its units move */
    fail_unless (k == 0 ? moving > 0.3 && moving <= 0.5 : moving > 0.6, "moving-ratio %f", moving);
    fail_unless (magnitude > 0.0 && magnitude <= std::sqrt (10.0), "mean-magnitude %f", magnitude);
    expect_interval_definition (s, units, std::vector<GstBuffer *> (outs.begin () + 2 * k, outs.begin () + 2 * k + 2));
    gst_message_unref (msg);
  }
  /* the same input again gives the same meta */
  GstHarness *h = harness ("cudamotionest backend=cpu search-range=8 block-size=8x8", info);
  for (int i = 0; i < 4; i++) {
    GstBuffer *again = push_pull (h, texture_frame (info, 3 * i, -i, i));
    fail_unless (same_meta (again, outs[i], GST_CUDA_MOTION_META_NAME), "frame %d: meta differs between runs", i);
    gst_buffer_unref (again);
    gst_buffer_unref (outs[i]);
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

/* With its default interval (every frame), the messages leave from the messages' thread while
 * the frames go on: each message holds its own frame's vectors, in order (each frame moves by
 * another vector, so a count of another frame's vectors gives another global vector). */
GST_START_TEST (test_interval_messages_every_frame_in_order)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_NV12, 320, 240);
  BusHarness bh ("cudamotionest backend=cpu search-range=4 block-size=8x8");
  gst_harness_set_src_caps_str (bh.h, caps_for (info).c_str ());
  gst_harness_set_sink_caps_str (bh.h, "video/x-raw");
  constexpr int kFrames = 24;
  std::vector<GstBuffer *> outs;
  for (int i = 0; i < kFrames; i++)
    outs.push_back (push_pull (bh.h, texture_frame (info, (i % 3) * (i % 2 ? 1 : -1) + i / 12, i % 4 - 2, i)));
  std::vector<GstMessage *> msgs = element_messages_at_eos (bh.h, bh.bus);
  fail_unless_equals_int (msgs.size (), kFrames);
  for (int k = 0; k < kFrames; k++) {
    const GstStructure *s = gst_message_get_structure (msgs[k]);
    guint frames = 0;
    guint64 units = 0;
    GstClockTime ts = 0;
    fail_unless (gst_structure_get (s, "frames", G_TYPE_UINT, &frames, "units", G_TYPE_UINT64, &units, "timestamp",
        G_TYPE_UINT64, &ts, nullptr));
    fail_unless_equals_int (frames, 1);
    fail_unless_equals_uint64 (units, 40 * 30);
    fail_unless_equals_uint64 (ts, k * (GST_SECOND / 30));
    expect_interval_definition (s, units, std::vector<GstBuffer *> (outs.begin () + k, outs.begin () + k + 1));
    gst_message_unref (msgs[k]);
  }
  for (GstBuffer *b : outs)
    gst_buffer_unref (b);
}
GST_END_TEST;

/* A frame of more units than one band of the interval's statistics counts (131,072 and more:
 * 2048x1088 in 4x4 blocks is 139,264): the bands' votes and moving count add up to the
 * definition. */
GST_START_TEST (test_interval_messages_in_bands)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_NV12, 2048, 1088);
  BusHarness bh ("cudamotionest backend=cpu search-range=2 block-size=4x4 interval=66666666");
  gst_harness_set_src_caps_str (bh.h, caps_for (info).c_str ());
  gst_harness_set_sink_caps_str (bh.h, "video/x-raw");
  std::vector<GstBuffer *> outs;
  for (int i = 0; i < 2; i++)
    outs.push_back (push_pull (bh.h, texture_frame (info, 2 * i, -i, i)));
  std::vector<GstMessage *> msgs = element_messages_at_eos (bh.h, bh.bus);
  fail_unless_equals_int (msgs.size (), 1);
  const GstStructure *s = gst_message_get_structure (msgs[0]);
  guint64 units = 0;
  fail_unless (gst_structure_get (s, "units", G_TYPE_UINT64, &units, nullptr));
  fail_unless_equals_uint64 (units, 2 * 512 * 272);
  expect_interval_definition (s, units, outs);
  gst_message_unref (msgs[0]);
  for (GstBuffer *b : outs)
    gst_buffer_unref (b);
}
GST_END_TEST;

/* A live source: every frame arrives (a small search, so the CPU backend keeps up). */
GST_START_TEST (test_live_source)
{
  auto frames = collect ("videotestsrc is-live=true pattern=pinwheel horizontal-speed=2 num-buffers=60 ! "
      "video/x-raw,format=NV12,width=320,height=240,framerate=30/1 ! cudamotionest backend=cpu block-size=16x16 "
      "search-range=4 draw=arrows ! appsink name=sink sync=true");
  fail_unless_equals_int (frames.size (), 60);
  for (GstBuffer *b : frames)
    gst_buffer_unref (b);
}
GST_END_TEST;

/* The CPU backend's bands (n-threads) change nothing: frames and vectors of 1, 2, 3 and 7 bands
 * are the same bytes, for every block mode, on a frame whose block rows do not divide evenly. */
GST_START_TEST (test_threads_give_the_same_output)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, 328, 250);
  for (const char *block : {"variable", "4x4", "8x8", "16x16"}) {
    std::vector<GstBuffer *> want;
    for (int threads : {1, 2, 3, 7}) {
      const std::string launch = "videotestsrc num-buffers=4 pattern=ball motion=sweep ! video/x-raw,format=NV12,width=328,"
          "height=250 ! cudamotionest backend=cpu search-range=9 draw=arrows block-size=" + std::string (block) +
          " n-threads=" + std::to_string (threads) + " ! appsink name=sink sync=false";
      std::vector<GstBuffer *> got = collect (launch);
      fail_unless_equals_int (got.size (), 4);
      if (want.empty ()) {
        want = got;
        continue;
      }
      for (size_t i = 0; i < got.size (); i++) {
        fail_unless_equals_int (buffer_diff (got[i], want[i], info, launch), 0);
        guint c1 = 0, r1 = 0, u1 = 0, c2 = 0, r2 = 0, u2 = 0;
        const GstCudaMotionVector *a = gst_cuda_motion_meta_get_vectors (got[i], &c1, &r1, &u1);
        const GstCudaMotionVector *b = gst_cuda_motion_meta_get_vectors (want[i], &c2, &r2, &u2);
        fail_unless (a && b && c1 == c2 && r1 == r2 && u1 == u2 && c1 * r1 > 0, "%s: no vectors", launch.c_str ());
        fail_unless (std::memcmp (a, b, sizeof (*a) * c1 * r1) == 0, "%s: frame %zu: other vectors than one band's",
            launch.c_str (), i);
        gst_buffer_unref (got[i]);
      }
    }
    for (GstBuffer *b : want)
      gst_buffer_unref (b);
  }
}
GST_END_TEST;

/* On buffers that others hold too: drawing, the frame is copied into a buffer of the element's
 * pool and drawn on there; with draw=none the output shares the input's memory (no copy). */
GST_START_TEST (test_shared_buffers)
{
  const std::vector<GstVideoFormat> formats = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420};
  check_shared_input ("cudamotionest backend=cpu search-range=4 draw=arrows", formats, 600, true);
  check_shared_input ("cudamotionest backend=cpu search-range=4 draw=color", formats, 700, true);
  check_shared_input ("cudamotionest backend=cpu search-range=4", formats, 800, false);
}
GST_END_TEST;

using Copies = std::vector<std::vector<guint8>>;

/* fakesink's handoff: the buffer's vectors, copied into the Copies at @data */
static void
copy_vectors (GstElement *, GstBuffer *buf, GstPad *, gpointer data)
{
  guint cols = 0, rows = 0, unit = 0;
  const GstCudaMotionVector *v = gst_cuda_motion_meta_get_vectors (buf, &cols, &rows, &unit);
  const auto *bytes = reinterpret_cast<const guint8 *> (v);
  static_cast<Copies *> (data)->emplace_back (bytes, bytes + static_cast<size_t> (cols) * rows * sizeof (GstCudaMotionVector));
}

/* The meta takes the block the vectors were computed into, without a copy (common/results/cuvbytespool.h):
 * a block stays intact while a buffer downstream holds its meta, even after the element is gone,
 * and 20 held buffers (more than the pool's 8 blocks) carry what a run that drops each buffer at
 * once sees. */
GST_START_TEST (test_vectors_outlive_the_element)
{
  const std::string launch = "videotestsrc num-buffers=20 pattern=ball ! video/x-raw,format=NV12,width=96,height=64 ! "
      "cudamotionest backend=cpu block-size=4x4 search-range=8 ! ";
  /* each frame's vectors copied out while the sink holds the buffer, then the buffer dropped */
  Copies copied;
  GstElement *pipe = new_pipeline (launch + "fakesink name=sink signal-handoffs=true");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  g_signal_connect (sink, "handoff", G_CALLBACK (copy_vectors), &copied);
  gst_object_unref (sink);
  GstBus *bus = gst_element_get_bus (pipe);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      static_cast<GstMessageType> (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);

  /* every buffer held to the end, read after the pipeline and the element are gone */
  auto held = collect (launch + "appsink name=sink sync=false");
  fail_unless_equals_int (held.size (), 20);
  fail_unless_equals_int (copied.size (), 20);
  for (size_t i = 0; i < held.size (); i++) {
    Vectors r = vectors_of (held[i]);
    const size_t n = static_cast<size_t> (r.cols) * r.rows * sizeof (GstCudaMotionVector);
    fail_unless (n > 0 && n == copied[i].size (), "frame %zu: %zu bytes of vectors, %zu before", i, n, copied[i].size ());
    fail_unless (memcmp (r.v, copied[i].data (), n) == 0, "frame %zu: the vectors changed while the buffer was held", i);
  }
  for (GstBuffer *b : held)
    gst_buffer_unref (b);
}
GST_END_TEST;





/* regions=true: content moving inside a known window gives one region, as a ROI meta and (with
 * GStreamer's analytics library) an object detection, whose box lies within one block of the
 * window; none on the first frame, none with regions=false, none below min-region-area. On both
 * backends where there is a GPU. */
GST_START_TEST (test_regions)
{
  const guint W = 128, H = 96, wx = 40, wy = 32, ww = 48, wh = 32;
  const struct {
    const char *props;
    int block;
  } modes[] = {{"block-size=8x8", 8}, {"block-size=16x16", 16}, {"", 8}};
  std::vector<std::string> backends = {"cpu"};
  if (cuvtest::have_gpu ())
    backends.push_back ("cuda");
  for (const std::string &backend : backends) {
    for (GstVideoFormat format : {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12}) {
      GstVideoInfo info = info_for (format, W, H);
      for (const auto &m : modes) {
        const std::string launch = "cudamotionest backend=" + backend + " search-range=8 regions=true " + m.props;
        const std::string what = launch + " " + gst_video_format_to_string (format);
        GstHarness *h = harness (launch, info);
        GstBuffer *out = push_pull (h, window_frame (info, wx, wy, ww, wh, 0, 0, 0));
        check_no_region (out, "motion", what + ": the first frame");
        gst_buffer_unref (out);
        for (int k = 1; k <= 3; k++) {
          out = push_pull (h, window_frame (info, wx, wy, ww, wh, 2 * k, k, k));
          check_one_region (out, "motion", Box{wx, wy, ww, wh, 0}, m.block, 0.5, what + " frame " + std::to_string (k));
          gst_buffer_unref (out);
        }
        /* a region smaller than min-region-area is left out; regions=false attaches none */
        GstElement *e = gst_harness_find_element (h, "cudamotionest");
        g_object_set (e, "min-region-area", ww * wh * 2, nullptr);
        out = push_pull (h, window_frame (info, wx, wy, ww, wh, 8, 4, 4));
        check_no_region (out, "motion", what + ": below min-region-area");
        gst_buffer_unref (out);
        g_object_set (e, "min-region-area", 0, "regions", FALSE, nullptr);
        out = push_pull (h, window_frame (info, wx, wy, ww, wh, 10, 5, 5));
        check_no_region (out, "motion", what + ": regions=false");
        gst_buffer_unref (out);
        gst_object_unref (e);
        gst_harness_teardown (h);
      }
    }
  }
}
GST_END_TEST;

#if HAVE_GST_ANALYTICS
/* Pixels of @buf that differ from @ref (same RGBA layout, packed). */
static int
changed_pixels (GstBuffer *buf, GstBuffer *ref)
{
  GstMapInfo a, b;
  fail_unless (gst_buffer_map (buf, &a, GST_MAP_READ) && gst_buffer_map (ref, &b, GST_MAP_READ));
  int n = 0;
  for (gsize i = 0; i + 4 <= std::min (a.size, b.size); i += 4)
    n += memcmp (a.data + i, b.data + i, 4) != 0;
  gst_buffer_unmap (buf, &a);
  gst_buffer_unmap (ref, &b);
  return n;
}

/* GStreamer's objectdetectionoverlay draws cudamotionest's regions: with regions=true it changes
 * the frame, with regions=false (no detections) it leaves it as it was. */
GST_START_TEST (test_objectdetectionoverlay_draws_regions)
{
  const int W = 128, H = 96, wx = 40, wy = 32, ww = 48, wh = 32;
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, W, H);
  for (bool regions : {true, false}) {
    const std::string launch = std::string ("cudamotionest backend=cpu search-range=8 block-size=8x8 regions=") +
        (regions ? "true" : "false") + " ! objectdetectionoverlay";
    GstHarness *h = harness (launch, info);
    gst_buffer_unref (push_pull (h, window_frame (info, wx, wy, ww, wh, 0, 0, 0)));
    GstBuffer *ref = window_frame (info, wx, wy, ww, wh, 2, 1, 1);
    GstBuffer *out = push_pull (h, gst_buffer_copy_deep (ref));
    const int changed = changed_pixels (out, ref);
    if (regions)
      fail_unless (changed > 0, "objectdetectionoverlay drew nothing over cudamotionest's region");
    else
      fail_unless (changed == 0, "objectdetectionoverlay changed %d pixels without regions", changed);
    gst_buffer_unref (out);
    gst_buffer_unref (ref);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;
#endif

#if HAVE_GST_TENSOR_META
/* The tensor @id in @buf's GstTensorMeta, or null. */
static const GstTensor *
tensor_of (GstBuffer *buf, const char *id)
{
  GstTensorMeta *meta = gst_buffer_get_tensor_meta (buf);
  if (!meta)
    return nullptr;
  const gint i = gst_tensor_meta_get_index_from_id (meta, g_quark_from_string (id));
  return i < 0 ? nullptr : gst_tensor_meta_get (meta, i);
}

/* tensor-meta=true: cudahistogram's counts and cudamotionest's vector field, in one chain, as the
 * two tensors of the buffer's GstTensorMeta with their documented shapes and types and the same
 * numbers as the custom metas; tensor-meta=false attaches none. */
GST_START_TEST (test_tensors)
{
  const int W = 72, H = 40;
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, W, H);
  for (bool on : {true, false}) {
    const std::string t = on ? "true" : "false";
    GstHarness *h = harness ("cudahistogram backend=cpu bins=64 tensor-meta=" + t +
        " ! cudamotionest backend=cpu block-size=8x8 search-range=8 tensor-meta=" + t, info);
    for (int k = 0; k < 3; k++) {
      GstBuffer *out = push_pull (h, window_frame (info, 16, 8, 24, 16, 2 * k, k, k));
      if (!on) {
        fail_unless (gst_buffer_get_tensor_meta (out) == nullptr, "a tensor meta with tensor-meta=false");
        gst_buffer_unref (out);
        continue;
      }
      fail_unless_equals_int (gst_buffer_get_tensor_meta (out)->num_tensors, 2);
      /* the histogram: UINT64 [bins], the meta's counts */
      const GstTensor *counts = tensor_of (out, "cudahistogram-counts");
      fail_unless (counts && counts->data_type == GST_TENSOR_DATA_TYPE_UINT64 && counts->num_dims == 1 &&
          counts->dims[0] == 64 && counts->dims_order == GST_TENSOR_DIM_ORDER_ROW_MAJOR);
      GBytes *meta_counts = nullptr;
      fail_unless (gst_structure_get (gst_custom_meta_get_structure (gst_buffer_get_custom_meta (out, "CudaHistogramMeta")),
          "histogram", G_TYPE_BYTES, &meta_counts, nullptr));
      GstMapInfo map;
      fail_unless (gst_buffer_map (counts->data, &map, GST_MAP_READ));
      fail_unless (map.size == g_bytes_get_size (meta_counts) && memcmp (map.data, g_bytes_get_data (meta_counts, nullptr), map.size) == 0,
          "frame %d: the counts tensor is not the meta's histogram", k);
      guint64 total = 0;
      for (int b = 0; b < 64; b++)
        total += reinterpret_cast<const guint64 *> (map.data)[b];
      fail_unless_equals_uint64 (total, static_cast<guint64> (W * H));
      gst_buffer_unmap (counts->data, &map);
      g_bytes_unref (meta_counts);
      /* the vectors: INT8 [rows, columns, 2], the meta's dx and dy */
      const GstTensor *vectors = tensor_of (out, "cudamotionest-vectors");
      const Vectors r = vectors_of (out);
      fail_unless (vectors && vectors->data_type == GST_TENSOR_DATA_TYPE_INT8 && vectors->num_dims == 3 &&
          vectors->dims[0] == r.rows && vectors->dims[1] == r.cols && vectors->dims[2] == 2);
      fail_unless (gst_buffer_map (vectors->data, &map, GST_MAP_READ));
      int differ = 0, moving = 0;
      for (guint i = 0; i < r.cols * r.rows; i++) {
        differ += reinterpret_cast<const gint8 *> (map.data)[2 * i] != r.v[i].dx ||
            reinterpret_cast<const gint8 *> (map.data)[2 * i + 1] != r.v[i].dy;
        moving += r.v[i].dx != 0 || r.v[i].dy != 0;
      }
      gst_buffer_unmap (vectors->data, &map);
      fail_unless (differ == 0, "frame %d: %d units of the tensor differ from the meta's vectors", k, differ);
      fail_unless (k == 0 || moving > 0, "frame %d: no unit moves, so the comparison proves little", k);
      gst_buffer_unref (out);
    }
    gst_harness_teardown (h);
  }
}
GST_END_TEST;
#endif

/* YUY2 and UYVY of odd width are refused with an error that says why. */
GST_START_TEST (test_odd_width_packed_422_refused)
{
  for (const char *format : {"YUY2", "UYVY"}) {
    const std::string launch = std::string ("videotestsrc num-buffers=1 ! video/x-raw,format=") + format +
        ",width=7,height=8 ! cudamotionest backend=cpu ! fakesink";
    GstMessage *msg = start_error (launch.c_str ());
    fail_unless (error_is (msg, GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION, "even width"), "%s: not the odd-width error",
        launch.c_str ());
    gst_message_unref (msg);
  }
}
GST_END_TEST;

static Suite *
cudamotionest_suite (void)
{
  Suite *s = suite_create ("cudamotionest");
  TCase *tc = tcase_create ("cpu");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_known_shifts_every_block_size);
  tcase_add_test (tc, test_small_frames_and_partial_blocks);
  tcase_add_test (tc, test_draw_modes);
  tcase_add_test (tc, test_search_range_change_while_flowing);
  tcase_add_test (tc, test_flush_discont_and_caps_change_reset);
  tcase_add_test (tc, test_interval_messages);
  tcase_add_test (tc, test_interval_messages_every_frame_in_order);
  tcase_add_test (tc, test_interval_messages_in_bands);
  tcase_add_test (tc, test_live_source);
  tcase_add_test (tc, test_vectors_outlive_the_element);
  tcase_add_test (tc, test_shared_buffers);
  tcase_add_test (tc, test_threads_give_the_same_output);
  tcase_add_test (tc, test_regions);
  tcase_add_test (tc, test_odd_width_packed_422_refused);
#if HAVE_GST_TENSOR_META
  tcase_add_test (tc, test_tensors);
#endif
#if HAVE_GST_ANALYTICS
  tcase_add_test (tc, test_objectdetectionoverlay_draws_regions);
#endif
  return s;
}

CUV_CHECK_MAIN (cudamotionest)
