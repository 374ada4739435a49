/* The streams between elements (common/cuvsync.h, docs/design.md "Synchronisation"): frames that
 * cross from one element to the next without a host wait on GStreamer 1.24+ arrive whole, byte
 * for byte as the CPU backend makes them, wherever they go next:
 * - a chain of our elements in CUDA memory, and how often the host waits in it (none between our
 *   elements on 1.24+; two a frame on 1.22, where every element waits before its push, or, with a
 *   frame in flight, when the next frame has been queued);
 * - a tee into two of our elements and into cudadownload;
 * - nvh264dec's frames (another element's stream) into the chain.
 * The same tests run under compute-sanitizer's racecheck and synccheck (tools/gpu-run.sh).
 * Exits 77 without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
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
      fail_unless_equals_int (waits, in_flight ? 0 : 2 * frames);
      fail_unless_equals_int (late, in_flight ? 2 * frames : 0);
#endif
    }
  }
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
  tcase_add_test (tc, test_tee_into_our_elements_and_cudadownload);
  tcase_add_test (tc, test_decoder_into_chain);
  return s;
}

int
main (int argc, char **argv)
{
  return run_gpu_suite (argc, argv, stream_model_suite, "stream_model_gpu", __FILE__);
}
