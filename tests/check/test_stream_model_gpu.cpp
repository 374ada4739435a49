/* The streams between elements (common/cuda/cuvsync.h, docs/design.md "Synchronisation"): frames that
 * cross from one element to the next without a host wait on GStreamer 1.24+ arrive whole, byte
 * for byte as the CPU backend makes them, wherever they go next:
 * - a chain of our elements in CUDA memory, and how often the host waits in it (none between our
 *   elements on 1.24+, where the memory carries its stream; on 1.22 one a frame, at the chain's
 *   end, where cudaenhance waits before its push, or, with a frame in flight, when the next frame
 *   has been queued: cudasobel hands its frame on unfinished with its stream in a meta);
 * - the chain of four, where the host waits once a frame, with a frame in flight and without:
 *   cudahistogram's results follow the frame to cudaheatmap, which puts them on the buffer it
 *   pushes;
 * - a slow analyser's results that follow its frame directly, through queues and through
 *   cudasobel: every frame that leaves carries them, and the messages all come, in order;
 * - a first element whose stream is held up on the GPU (CUV_TEST_DELAY), into the next: the
 *   next one reads the finished frame, also with a leaky queue that drops frames between them;
 * - a tee into two of our elements and into cudadownload;
 * - nvh264dec's frames (another element's stream) into the chain.
 * The same tests run under compute-sanitizer's racecheck and synccheck (tools/gpu-run.sh).
 * Exits 77 without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <algorithm>

#include "tests/check/cuvcheck.h"
#include "tests/common/cuvplugin.h"

using namespace cuvcheck;

namespace {


std::string chain (const char *backend, int in_flight = -1)
{
  const std::string props = std::string (" backend=") + backend + " max-frames-in-flight=" + std::to_string (in_flight);
  return "cudasobel" + props + " ! cudaenhance contrast=1.4 saturation=1.3" + props;
}

std::string source (const char *format, int frames, int w, int h)
{
  return std::string ("videotestsrc num-buffers=") + std::to_string (frames) + " pattern=ball ! video/x-raw,format=" +
      format + ",width=" + std::to_string (w) + ",height=" + std::to_string (h) + " ! ";
}

/* Every frame of @got equals the one of @ref; both are released. */
void expect_same (std::vector<GstBuffer *> &got, std::vector<GstBuffer *> &ref, size_t frames, const GstVideoInfo &info,
    const std::string &what)
{
  fail_unless_equals_int (got.size (), frames);
  fail_unless_equals_int (ref.size (), frames);
  for (size_t i = 0; i < frames; i++) {
    fail_unless_equals_int (buffer_diff (got[i], ref[i], info, what + " frame " + std::to_string (i)), 0);
    gst_buffer_unref (got[i]);
    gst_buffer_unref (ref[i]);
  }
  got.clear ();
  ref.clear ();
}

long hook (const char *name)
{
  auto fn = reinterpret_cast<long (*) ()> (cuvtest::plugin_symbol (name));
  fail_unless (fn != nullptr, "the cudavision plugin's %s hook", name);
  return fn ();
}

/* the host's waits before a push or for another stream, and those for a frame in flight */
long host_waits ()
{
  return hook ("cuv_host_waits");
}

long in_flight_waits ()
{
  return hook ("cuv_in_flight_waits");
}

}  // namespace

/* cudaupload ! cudasobel ! cudaenhance ! cudadownload, against the CPU backend; the host's waits
 * in our elements counted over the run. */
GST_START_TEST (test_chain_waits_only_where_the_version_says)
{
  const int frames = 30;
  for (const char *format : {"RGBA", "NV12"}) {
    GstVideoInfo info = info_for (gst_video_format_from_string (format), 641, 479);
    for (int in_flight : {0, 1}) {
      auto ref = collect (source (format, frames, 641, 479) + chain ("cpu") + " ! video/x-raw ! appsink name=sink sync=false");
      const long before = host_waits (), before_in_flight = in_flight_waits ();
      /* CUDA memory into cudadownload, which would take system memory too (and our element would
       * then download the frame itself, waiting for it) */
      auto got = collect (source (format, frames, 641, 479) + "cudaupload ! " + chain ("cuda", in_flight) +
          " ! video/x-raw(memory:CUDAMemory) ! cudadownload ! video/x-raw ! appsink name=sink sync=false");
      const long waits = host_waits () - before, late = in_flight_waits () - before_in_flight;
      g_printerr ("%s, max-frames-in-flight=%d: %ld host waits before a push and %ld for a frame in flight, in "
          "cudasobel and cudaenhance over %d frames\n", format, in_flight, waits, late, frames);
      expect_same (got, ref, frames, info, std::string ("chain ") + format);
#if GST_CHECK_VERSION(1, 24, 0)
      fail_unless_equals_int (waits, 0);
      fail_unless_equals_int (late, 0);
#else
      fail_unless_equals_int (waits, in_flight ? 0 : frames);
      fail_unless_equals_int (late, in_flight ? frames : 0);
#endif
    }
  }
}
GST_END_TEST;

/* The chain of four (docs/performance.md), in place where the caps allow: cudaenhance works in
 * place, where GStreamer decides no allocation for it, and hands its frame on unfinished to
 * cudahistogram all the same (1.22: downstream's answer forwarded to its ALLOCATION query).
 * cudahistogram reads its results on the host, but pushes at once: its results follow the frame,
 * and cudaheatmap, which waits anyway (its own results, then cudadownload), puts them on the
 * buffer it pushes. The host waits once a frame, on every version, and the histogram's meta is
 * the CPU backend's. */
GST_START_TEST (test_chain_of_four_waits_once_a_frame)
{
  const int frames = 30;
  /* cudaheatmap writes RGBA for NV12 */
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 641, 479);
  /* max-frames-in-flight 0, and the default (-1: a frame in flight, as the source is not live) */
  for (const int in_flight : {0, -1}) {
    const std::string props = " max-frames-in-flight=" + std::to_string (in_flight) + " backend=";
    auto chain_on = [&] (const std::string &backend) {
      return "cudasobel" + props + backend + " ! cudaenhance contrast=1.4" + props + backend + " ! cudahistogram" + props +
          backend + " ! cudaheatmap" + props + backend;
    };
    auto ref = collect (source ("NV12", frames, 641, 479) + chain_on ("cpu") + " ! video/x-raw ! appsink name=sink sync=false");
    const long before = host_waits (), before_in_flight = in_flight_waits ();
    auto got = collect (source ("NV12", frames, 641, 479) + "cudaupload ! " + chain_on ("cuda") +
        " ! video/x-raw(memory:CUDAMemory) ! cudadownload ! video/x-raw ! appsink name=sink sync=false");
    const long waits = host_waits () - before, late = in_flight_waits () - before_in_flight;
    g_printerr ("chain of four, NV12, max-frames-in-flight=%d: %ld host waits before a push and %ld for a frame in "
        "flight over %d frames\n", in_flight, waits, late, frames);
    for (size_t i = 0; i < got.size () && i < ref.size (); i++)
      fail_unless (same_meta (got[i], ref[i], "CudaHistogramMeta"), "chain of four frame %zu: histogram meta differs", i);
    expect_same (got, ref, frames, info, "chain of four");
    /* with a frame in flight, cudaheatmap waits for it when the next is queued, and publishes the
     * histogram's results then; at EOS, which reaches cudahistogram first, it publishes the last
     * frame's itself */
    fail_unless_equals_int (waits, in_flight ? 1 : frames);
    fail_unless_equals_int (late, in_flight ? frames : 0);
  }
}
GST_END_TEST;

/* Each frame's own PTS picks its reference (a leaky queue drops some): every frame that came out
 * equals the reference frame of its timestamp. */
void expect_each_as_its_reference (std::vector<GstBuffer *> &got, std::vector<GstBuffer *> &ref, const GstVideoInfo &info,
    const std::string &what)
{
  fail_unless (!got.empty (), "%s: no frame came out", what.c_str ());
  for (GstBuffer *g : got) {
    auto match = std::find_if (ref.begin (), ref.end (), [g] (GstBuffer *r) { return GST_BUFFER_PTS (r) == GST_BUFFER_PTS (g); });
    fail_unless (match != ref.end (), "%s: a frame at %" GST_TIME_FORMAT " has no reference", what.c_str (),
        GST_TIME_ARGS (GST_BUFFER_PTS (g)));
    fail_unless_equals_int (buffer_diff (g, *match, info, what + " at " + std::to_string (GST_BUFFER_PTS (g))), 0);
  }
  for (GstBuffer *b : got)
    gst_buffer_unref (b);
  for (GstBuffer *b : ref)
    gst_buffer_unref (b);
  got.clear ();
  ref.clear ();
}

/* An analyser (cudahistogram, cudamotionest) named "slow" holds its stream 20 ms before each frame
 * (main () sets CUV_TEST_DELAY) and pushes before its results are on the host, into cudaenhance directly,
 * through a queue (another thread puts the results on, once the histogram has published them),
 * through a leaky queue that drops frames, and through cudasobel, which hands them on. Every
 * frame that comes out carries the analyser's meta of its own timestamp, the CPU backend's; the
 * analyser posts one message a frame, dropped frames' too, in order; directly, the host waits
 * once a frame on 1.22. */
GST_START_TEST (test_results_follow_a_slow_analysers_frame)
{
  const int frames = 12;
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 320, 240);
  const std::pair<const char *, const char *> analysers[] = {{"cudahistogram", "CudaHistogramMeta"},
      {"cudamotionest", "CudaMotionMeta"}};
  for (const auto &a : analysers) {
    const char *analyser = a.first, *meta = a.second;
    for (const char *between : {"", "queue ! ", "queue leaky=downstream max-size-buffers=1 ! ", "cudasobel backend=%s ! "}) {
      auto launch = [&] (const char *backend) {
        std::string b = between;
        if (size_t at = b.find ("%s"); at != std::string::npos)
          b.replace (at, 2, backend);
        const bool cuda = g_str_equal (backend, "cuda");
        /* the reference has every frame: a leaky queue drops on a slow CPU run too */
        if (!cuda && strstr (between, "leaky"))
          b = "queue ! ";
        return source ("RGBA", frames, 320, 240) + (cuda ? "cudaupload ! " : "") +
            analyser + " name=slow max-frames-in-flight=0 backend=" + backend + " ! " + b +
            "cudaenhance contrast=1.4 max-frames-in-flight=0 backend=" + backend +
            (cuda ? " ! video/x-raw(memory:CUDAMemory) ! cudadownload" : "") + " ! video/x-raw ! appsink name=sink sync=false";
      };
      const std::string what = std::string ("slow ") + analyser + " ! " + between + "cudaenhance";
      auto ref = collect (launch ("cpu"));
      fail_unless_equals_int (ref.size (), frames);
      const long before = host_waits ();
      GstElement *pipe = new_pipeline (launch ("cuda"), false);
      fail_unless (pipe != nullptr);
      fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
      GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
      auto got = pull_all (sink);
      gst_object_unref (sink);
      const long waits = host_waits () - before;
      auto messages = pop_element_messages (pipe, analyser);
      gst_element_set_state (pipe, GST_STATE_NULL);
      gst_object_unref (pipe);
      g_printerr ("%s: %zu of %d frames, %zu messages, %ld host waits\n", what.c_str (), got.size (), frames,
          messages.size (), waits);
      fail_unless_equals_int (messages.size (), frames);
      GstClockTime last = 0;
      for (GstMessage *m : messages) {
        GstClockTime ts = GST_CLOCK_TIME_NONE;
        fail_unless (gst_structure_get_clock_time (gst_message_get_structure (m), "timestamp", &ts));
        fail_unless (ts >= last, "%s: messages out of order", what.c_str ());
        last = ts;
        gst_message_unref (m);
      }
      if (!strstr (between, "leaky"))
        fail_unless_equals_int (got.size (), frames);
      /* on 1.24+ this direct case counted two a frame on the H100 (the chain of four: one); see
       * docs/performance-log.md */
#if GST_CHECK_VERSION(1, 24, 0)
      if (!*between)
        fail_unless (waits <= 2 * frames, "%s: %ld host waits over %d frames", what.c_str (), waits, frames);
#else
      if (!*between)
        fail_unless_equals_int (waits, frames);
#endif
      for (GstBuffer *g : got) {
        auto match = std::find_if (ref.begin (), ref.end (), [g] (GstBuffer *r) { return GST_BUFFER_PTS (r) == GST_BUFFER_PTS (g); });
        fail_unless (match != ref.end ());
        fail_unless (same_meta (g, *match, meta), "%s: the analyser's meta at %" GST_TIME_FORMAT " differs",
            what.c_str (), GST_TIME_ARGS (GST_BUFFER_PTS (g)));
      }
      expect_each_as_its_reference (got, ref, info, what);
    }
  }
}
GST_END_TEST;

/* cudasobel named "slow" holds its stream 20 ms before each frame's kernel (main () sets
 * CUV_TEST_DELAY), then hands its frame on unfinished (on 1.22, with its stream in a meta; on
 * 1.24+ in memory that carries its stream): cudaenhance must read each frame once it is written,
 * not the pool's last one. The pipelines take no context by hand, as an application's do. */
GST_START_TEST (test_next_element_reads_a_slow_writers_frame)
{
  const int frames = 12;
  for (const char *format : {"RGBA", "NV12"}) {
    GstVideoInfo info = info_for (gst_video_format_from_string (format), 320, 240);
    auto ref = collect (source (format, frames, 320, 240) + chain ("cpu") + " ! video/x-raw ! appsink name=sink sync=false");
    for (const char *between : {"", "queue ! ", "queue leaky=downstream max-size-buffers=1 ! "}) {
      const std::string launch = source (format, frames, 320, 240) +
          "cudaupload ! cudasobel name=slow backend=cuda ! " + between +
          "cudaenhance contrast=1.4 saturation=1.3 backend=cuda ! video/x-raw(memory:CUDAMemory) ! cudadownload ! "
          "video/x-raw ! appsink name=sink sync=false";
      GstElement *pipe = new_pipeline (launch, false);
      fail_unless (pipe != nullptr, "cannot parse %s", launch.c_str ());
      fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
      GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
      auto got = pull_all (sink);
      gst_object_unref (sink);
      gst_element_set_state (pipe, GST_STATE_NULL);
      gst_object_unref (pipe);
      g_printerr ("%s, slow cudasobel ! %scudaenhance: %zu of %d frames\n", format, between, got.size (), frames);
      if (!*between || g_str_equal (between, "queue ! "))
        fail_unless_equals_int (got.size (), frames);
      std::vector<GstBuffer *> refs;
      for (GstBuffer *r : ref)
        refs.push_back (gst_buffer_ref (r));
      expect_each_as_its_reference (got, refs, info, std::string ("slow writer, ") + format + ", " + between);
    }
    for (GstBuffer *r : ref)
      gst_buffer_unref (r);
  }
}
GST_END_TEST;

/* The slow writer's frames through a tee into cudahistogram, which only reads (GStreamer makes the
 * tee's shared buffer writable with a copy that shares its memory: the copy carries the stream
 * too), and into cudaenhance: each branch equals the CPU backend's, the histogram's meta too. On
 * 1.22 both branches follow their writer, so cudasobel hands its frames on: the host waits only in
 * the two branches. */
GST_START_TEST (test_tee_of_a_slow_writer_into_our_elements)
{
  const int frames = 12;
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 320, 240);
  auto launch = [&] (const char *backend) {
    const bool cuda = g_str_equal (backend, "cuda");
    const std::string down = cuda ? " ! video/x-raw(memory:CUDAMemory) ! cudadownload ! video/x-raw" : " ! video/x-raw";
    return source ("RGBA", frames, 320, 240) + (cuda ? "cudaupload ! " : "") + "cudasobel name=slow backend=" +
        backend + " max-frames-in-flight=0 ! tee name=t t. ! queue ! cudahistogram max-frames-in-flight=0 backend=" +
        backend + down + " ! appsink name=sink sync=false t. ! queue ! cudaenhance contrast=1.4 max-frames-in-flight=0 backend=" +
        backend + down + " ! appsink name=sink2 sync=false";
  };
  auto ref = collect_sinks (launch ("cpu"), {"sink", "sink2"});
  const long before = host_waits ();
  GstElement *pipe = new_pipeline (launch ("cuda"), false);
  fail_unless (pipe != nullptr);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  std::vector<std::vector<GstBuffer *>> got (2);
  const char *sinks[] = {"sink", "sink2"};
  for (int b = 0; b < 2; b++) {
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), sinks[b]);
    got[b] = pull_all (sink);
    gst_object_unref (sink);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  const long waits = host_waits () - before;
  g_printerr ("slow cudasobel ! tee into cudahistogram and cudaenhance: %ld host waits over %d frames\n", waits, frames);
  for (size_t i = 0; i < got[0].size () && i < ref[0].size (); i++)
    fail_unless (same_meta (got[0][i], ref[0][i], "CudaHistogramMeta"), "tee -> cudahistogram frame %zu: meta differs", i);
  expect_same (got[0], ref[0], frames, info, "slow writer, tee -> cudahistogram");
  expect_same (got[1], ref[1], frames, info, "slow writer, tee -> cudaenhance");
#if !GST_CHECK_VERSION(1, 24, 0)
  fail_unless_equals_int (waits, 2 * frames);
#endif
}
GST_END_TEST;

/* One frame into cudaenhance, into cudahistogram (in place, reading) and into cudadownload at
 * once: each branch equals its CPU reference, and the tee's frame is not changed by the branch
 * that writes. */
GST_START_TEST (test_tee_into_our_elements_and_cudadownload)
{
  const int frames = 20;
  const char *format = "RGBA";
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 320, 241);
  auto launch = [&] (const char *backend) {
    const std::string cuda = g_str_equal (backend, "cuda") ? "cudaupload ! " : "";
    const std::string down = g_str_equal (backend, "cuda") ? " ! cudadownload ! video/x-raw" : " ! video/x-raw";
    return source (format, frames, 320, 241) + cuda + "cudasobel backend=" + backend + " ! tee name=t " +
        "t. ! queue ! cudaenhance contrast=1.4 backend=" + backend + down + " ! appsink name=sink sync=false " +
        "t. ! queue ! cudahistogram overlay=true backend=" + backend + down + " ! appsink name=sink2 sync=false " +
        "t. ! queue" + down +
        " ! appsink name=sink3 sync=false";
  };
  auto ref = collect_sinks (launch ("cpu"), {"sink", "sink2", "sink3"});
  auto got = collect_sinks (launch ("cuda"), {"sink", "sink2", "sink3"});
  const char *branch[] = {"tee -> cudaenhance", "tee -> cudahistogram overlay", "tee -> cudadownload"};
  for (int b = 0; b < 3; b++)
    expect_same (got[b], ref[b], frames, info, branch[b]);
}
GST_END_TEST;

/* nvh264dec's frames (its own stream on 1.24+) straight into the chain, against the CPU backend
 * on the same decoded frames. */
GST_START_TEST (test_decoder_into_chain)
{
  const int frames = 30;
  const std::string decode = source ("I420", frames, 352, 288) + "openh264enc ! h264parse ! nvh264dec ! ";
  auto got = collect (decode + chain ("cuda") + " ! cudadownload ! video/x-raw ! appsink name=sink sync=false");
  auto ref = collect (decode + "cudadownload ! video/x-raw ! " + chain ("cpu") + " ! video/x-raw ! appsink name=sink sync=false");
  expect_same (got, ref, frames, info_for (GST_VIDEO_FORMAT_NV12, 352, 288), "nvh264dec ! chain");
}
GST_END_TEST;

static Suite *
stream_model_suite (void)
{
  Suite *s = suite_create ("stream-model-gpu");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_chain_waits_only_where_the_version_says);
  tcase_add_test (tc, test_chain_of_four_waits_once_a_frame);
  tcase_add_test (tc, test_results_follow_a_slow_analysers_frame);
  tcase_add_test (tc, test_next_element_reads_a_slow_writers_frame);
  tcase_add_test (tc, test_tee_of_a_slow_writer_into_our_elements);
  tcase_add_test (tc, test_tee_into_our_elements_and_cudadownload);
  tcase_add_test (tc, test_decoder_into_chain);
  return s;
}

int
main (int argc, char **argv)
{
  /* read when the plugin loads: the element named "slow" holds its stream 20 ms a frame */
  g_setenv ("CUV_TEST_DELAY", "slow:20000", TRUE);
  return run_gpu_suite (argc, argv, stream_model_suite, "stream_model_gpu", __FILE__);
}
