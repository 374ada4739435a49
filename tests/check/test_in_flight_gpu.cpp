/* Frames in flight (max-frames-in-flight, common/route/cuvoutput.cpp): a frame whose buffer
 * leaves when the next one has been queued on the GPU still leaves whole, in order, with its
 * results, and at the right moments:
 * - the chain of four with results (cudahistogram, cudaheatmap) in both memory types, against the
 *   CPU backend, bytes and meta, frame by frame;
 * - analysers that queue the next frame before they wait for the last (cudamotionest,
 *   cudahistogram): bytes, meta and messages, the CPU backend's, in order;
 * - a caps change between frames: every frame leaves with its own caps, none is lost;
 * - a flushing seek while a frame is in flight: the frames of the new segment, in order, and no
 *   error, for analysers and for elements that queue the next frame before they wait for the last
 *   (their uploads from system memory overlap the last frame's download);
 * - the latency query reports the frame that is held.
 * Exits 77 without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/app/gstappsrc.h>

#include "tests/check/cuvcheck.h"

using namespace cuvcheck;

namespace {

std::string chain_of_four (const char *backend, int in_flight)
{
  const std::string props = std::string (" backend=") + backend + " max-frames-in-flight=" + std::to_string (in_flight);
  return "cudasobel" + props + " ! cudaenhance contrast=1.4" + props + " ! cudahistogram" + props +
      " ! cudaheatmap blend=0.5" + props;
}

}  // namespace

GST_START_TEST (test_chain_in_flight_equals_cpu)
{
  const int frames = 20;
  for (const char *format : {"RGBA", "NV12"}) {
    const std::string source = std::string ("videotestsrc num-buffers=") + std::to_string (frames) +
        " pattern=ball ! video/x-raw,format=" + format + ",width=321,height=242 ! ";
    /* cudaheatmap writes RGBA for NV12 */
    GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 321, 242);
    auto ref = collect (source + chain_of_four ("cpu", 0) + " ! video/x-raw ! appsink name=sink sync=false");
    for (bool cuda_memory : {false, true}) {
      const std::string up = cuda_memory ? "cudaupload ! " : "";
      const std::string down = cuda_memory ? " ! video/x-raw(memory:CUDAMemory) ! cudadownload" : "";
      auto got = collect (source + up + chain_of_four ("cuda", 1) + down + " ! video/x-raw ! appsink name=sink sync=false");
      const std::string what = std::string (format) + (cuda_memory ? " in CUDA memory" : " in system memory");
      fail_unless_equals_int (got.size (), frames);
      for (int i = 0; i < frames; i++) {
        const std::string frame = what + ", frame " + std::to_string (i);
        fail_unless_equals_int (buffer_diff (got[i], ref[i], info, frame), 0);
        fail_unless_equals_uint64 (GST_BUFFER_PTS (got[i]), GST_BUFFER_PTS (ref[i]));
        fail_unless (same_meta (got[i], ref[i], "CudaHistogramMeta"), "histogram meta of %s", frame.c_str ());
        fail_unless (same_meta (got[i], ref[i], "CudaHeatmapMeta"), "heat map meta of %s", frame.c_str ());
        gst_buffer_unref (got[i]);
      }
    }
    for (GstBuffer *b : ref)
      gst_buffer_unref (b);
  }
}
GST_END_TEST;

/* The buffers that reach the appsink "sink" of @launch, and the messages named @name. */
static std::vector<GstBuffer *>
run_with_messages (const std::string &launch, const char *name, std::vector<GstMessage *> *messages)
{
  /* no context set by hand, as an application runs it */
  GstElement *pipe = new_pipeline (launch, false);
  fail_unless (pipe != nullptr, "cannot parse %s", launch.c_str ());
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  std::vector<GstBuffer *> out = pull_all (sink);
  gst_object_unref (sink);
  *messages = pop_element_messages (pipe, name);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  return out;
}

/* An analyser queues its next frame before it waits for the one in flight, which then publishes
 * from its own results value (common/route/cuvinflight.h: queues_ahead): each frame still
 * leaves with its own meta and bytes, the CPU backend's, and its message, in order, equal to the
 * CPU backend's. The appsink keeps every buffer, so past eight frames cudamotionest's vectors
 * land in its fallback slots, which two frames then use at once. */
GST_START_TEST (test_analysers_queued_ahead_equal_cpu)
{
  const int frames = 24;
  struct Case {
    const char *element;
    const char *props;
    const char *meta;
  };
  const Case cases[] = {
    {"cudamotionest", " draw=arrows", "CudaMotionMeta"},
    {"cudamotionest", " block-size=8x8", "CudaMotionMeta"},
    {"cudahistogram", " overlay=true", "CudaHistogramMeta"},
  };
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_NV12, 321, 242);
  const std::string source = "videotestsrc num-buffers=" + std::to_string (frames) +
      " pattern=ball ! video/x-raw,format=NV12,width=321,height=242 ! ";
  for (const Case &c : cases) {
    std::vector<GstMessage *> ref_messages;
    auto ref = run_with_messages (source + c.element + c.props + " backend=cpu ! appsink name=sink sync=false",
        c.element, &ref_messages);
    fail_unless_equals_int (ref.size (), frames);
    fail_unless_equals_int (ref_messages.size (), frames);
    for (bool cuda_memory : {false, true}) {
      const std::string up = cuda_memory ? "cudaupload ! " : "";
      const std::string down = cuda_memory ? " ! cudadownload" : "";
      const std::string what = std::string (c.element) + c.props + (cuda_memory ? " in CUDA memory" : " in system memory");
      std::vector<GstMessage *> messages;
      auto got = run_with_messages (source + up + c.element + c.props + " backend=cuda max-frames-in-flight=1" + down +
          " ! video/x-raw ! appsink name=sink sync=false", c.element, &messages);
      fail_unless_equals_int (got.size (), frames);
      fail_unless_equals_int (messages.size (), frames);
      for (int i = 0; i < frames; i++) {
        const std::string frame = what + ", frame " + std::to_string (i);
        fail_unless_equals_int (buffer_diff (got[i], ref[i], info, frame), 0);
        fail_unless_equals_uint64 (GST_BUFFER_PTS (got[i]), GST_BUFFER_PTS (ref[i]));
        fail_unless (same_meta (got[i], ref[i], c.meta), "the meta of %s", frame.c_str ());
        const GstStructure *a = gst_message_get_structure (messages[i]), *b = gst_message_get_structure (ref_messages[i]);
        fail_unless (gst_structure_is_equal (a, b), "the message of %s: %" GST_PTR_FORMAT " against %" GST_PTR_FORMAT,
            frame.c_str (), a, b);
        gst_buffer_unref (got[i]);
        gst_message_unref (messages[i]);
      }
    }
    for (int i = 0; i < frames; i++) {
      gst_buffer_unref (ref[i]);
      gst_message_unref (ref_messages[i]);
    }
  }
}
GST_END_TEST;

/* Three frames of one size, then three of another, through appsrc; what leaves, in order. */
static std::vector<GstBuffer *>
run_caps_change (const char *backend, const GstVideoInfo infos[2])
{
  GstElement *pipe = new_pipeline (std::string ("appsrc name=src format=time ! cudaenhance contrast=1.4 backend=") +
      backend + " max-frames-in-flight=1 ! video/x-raw ! appsink name=sink sync=false");
  fail_unless (pipe != nullptr);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  for (int i = 0; i < 6; i++) {
    const GstVideoInfo &info = infos[i / 3];
    if (i % 3 == 0) {
      GstCaps *caps = gst_video_info_to_caps (&info);
      gst_app_src_set_caps (GST_APP_SRC (src), caps);
      gst_caps_unref (caps);
    }
    GstBuffer *buf = make_buffer (info, 0, 100 + i);
    GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
    GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src), buf), GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  std::vector<GstBuffer *> out;
  while (GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 10 * GST_SECOND)) {
    GstVideoInfo info;
    fail_unless (gst_video_info_from_caps (&info, gst_sample_get_caps (sample)));
    const GstVideoInfo &want = infos[out.size () / 3];
    fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&info), GST_VIDEO_INFO_WIDTH (&want));
    fail_unless_equals_int (GST_VIDEO_INFO_HEIGHT (&info), GST_VIDEO_INFO_HEIGHT (&want));
    out.push_back (gst_buffer_ref (gst_sample_get_buffer (sample)));
    gst_sample_unref (sample);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipe);
  return out;
}

GST_START_TEST (test_caps_change_with_frame_in_flight)
{
  const GstVideoInfo infos[2] = {info_for (GST_VIDEO_FORMAT_RGBA, 64, 48), info_for (GST_VIDEO_FORMAT_RGBA, 81, 61)};
  auto got = run_caps_change ("cuda", infos);
  auto ref = run_caps_change ("cpu", infos);
  fail_unless_equals_int (got.size (), 6);
  fail_unless_equals_int (ref.size (), 6);
  for (int i = 0; i < 6; i++) {
    fail_unless_equals_uint64 (GST_BUFFER_PTS (got[i]), i * GST_SECOND / 30);
    fail_unless_equals_int (buffer_diff (got[i], ref[i], infos[i / 3], "frame " + std::to_string (i)), 0);
    gst_buffer_unref (got[i]);
    gst_buffer_unref (ref[i]);
  }
}
GST_END_TEST;

/* Paused, a flushing seek to [1 s, 2 s) of a 30 fps source, then to the end: the 30 frames of
 * the segment, in order, each with its histogram where @meta names it. */
static void
check_flushing_seek (const std::string &elements, const char *meta)
{
  GstElement *pipe = new_pipeline (
      "videotestsrc pattern=ball ! video/x-raw,format=RGBA,width=320,height=240,framerate=30/1 ! " + elements +
      " ! video/x-raw ! appsink name=sink sync=false");
  fail_unless (pipe != nullptr);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  fail_unless (gst_element_set_state (pipe, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (pipe, nullptr, nullptr, 10 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
  fail_unless (gst_element_seek (pipe, 1.0, GST_FORMAT_TIME,
      static_cast<GstSeekFlags> (GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE), GST_SEEK_TYPE_SET, GST_SECOND,
      GST_SEEK_TYPE_SET, 2 * GST_SECOND));
  fail_unless_equals_int (gst_element_get_state (pipe, nullptr, nullptr, 10 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  /* the checks come after the pipeline stopped: one left playing would hang the test's exit */
  int n = 0, wrong_pts = -1, no_meta = -1;
  while (GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 10 * GST_SECOND)) {
    GstBuffer *buf = gst_sample_get_buffer (sample);
    if (wrong_pts < 0 && GST_BUFFER_PTS (buf) != gst_util_uint64_scale_int (GST_SECOND, 30 + n, 30))
      wrong_pts = n;
    if (no_meta < 0 && meta && !gst_buffer_get_custom_meta (buf, meta))
      no_meta = n;
    gst_sample_unref (sample);
    n++;
  }
  const bool eos = gst_app_sink_is_eos (GST_APP_SINK (sink));
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *err = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  gst_object_unref (bus);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipe);
  fail_unless (err == nullptr, "an error after the seek");
  fail_unless_equals_int (n, 30);
  fail_unless (eos);
  fail_unless_equals_int (wrong_pts, -1);
  fail_unless_equals_int (no_meta, -1);
}

GST_START_TEST (test_flushing_seek_with_frame_in_flight)
{
  /* analysers, which wait for the frame in flight before they queue the next */
  check_flushing_seek ("cudaupload ! cudahistogram max-frames-in-flight=1 ! cudaheatmap max-frames-in-flight=1 ! "
                       "cudadownload", "CudaHistogramMeta");
  /* from system memory to system memory through elements that queue the next frame first, its
   * upload on a second stream (two frames in flight at the seek) */
  check_flushing_seek ("cudasobel max-frames-in-flight=1 ! cudaenhance contrast=1.4 max-frames-in-flight=1", nullptr);
}
GST_END_TEST;

/* The pipeline's minimum latency from a live 30 fps source through cudahistogram (a sink that
 * syncs: one that does not answers that the pipeline is not live). */
static GstClockTime
live_latency (int in_flight)
{
  GstElement *pipe = new_pipeline (
      "videotestsrc is-live=true ! video/x-raw,format=RGBA,width=64,height=48,framerate=30/1 ! "
      "cudahistogram max-frames-in-flight=" + std::to_string (in_flight) + " ! fakesink sync=true");
  fail_unless (pipe != nullptr);
  const bool started = gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE &&
      gst_element_get_state (pipe, nullptr, nullptr, 10 * GST_SECOND) == GST_STATE_CHANGE_SUCCESS;
  GstQuery *q = gst_query_new_latency ();
  const bool answered = started && gst_element_query (pipe, q);
  gboolean live = FALSE;
  GstClockTime min = 0, max = 0;
  if (answered)
    gst_query_parse_latency (q, &live, &min, &max);
  gst_query_unref (q);
  /* stopped before any check: a live pipeline left playing would hang the test's exit */
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  fail_unless (started, "the live pipeline did not start");
  fail_unless (answered, "no answer to the latency query");
  fail_unless (live, "the pipeline answers that it is not live");
  return min;
}

GST_START_TEST (test_latency_counts_the_frame_in_flight)
{
  const GstClockTime none = live_latency (0), one = live_latency (1), automatic = live_latency (-1);
  fail_unless_equals_uint64 (one - none, gst_util_uint64_scale_int (GST_SECOND, 1, 30));
  /* a live source: -1 holds no frame */
  fail_unless_equals_uint64 (automatic, none);
}
GST_END_TEST;

static Suite *
in_flight_suite (void)
{
  Suite *s = suite_create ("in-flight-gpu");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_chain_in_flight_equals_cpu);
  tcase_add_test (tc, test_analysers_queued_ahead_equal_cpu);
  tcase_add_test (tc, test_caps_change_with_frame_in_flight);
  tcase_add_test (tc, test_flushing_seek_with_frame_in_flight);
  tcase_add_test (tc, test_latency_counts_the_frame_in_flight);
  return s;
}

int
main (int argc, char **argv)
{
  return run_gpu_suite (argc, argv, in_flight_suite, "in-flight-gpu", __FILE__);
}
