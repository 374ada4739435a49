/* cudasobel and cudaenhance as elements, on the CPU backend (runs everywhere): output against the
 * kernels' CPU reference and against videobalance, padded strides, passthrough, bad input, state
 * cycling, property changes while buffers flow, and the errors a missing GPU gives.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tests/check/cuvcheck.h"
#include "kernels/enhance/enhance.h"
#include "kernels/sobel/sobel.h"

using namespace cuvcheck;

static const GstVideoFormat kSobelFormats[] = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx,
    GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YUY2,
    GST_VIDEO_FORMAT_UYVY, GST_VIDEO_FORMAT_P010_10LE};
static const GstVideoFormat kEnhanceFormats[] = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx,
    GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY,
    GST_VIDEO_FORMAT_P010_10LE};
static const cuvtest::Size kSizes[] = {{1, 1}, {2, 2}, {3, 3}, {17, 13}, {641, 479}};

/* The element's output equals the reference run directly on the same input. */
GST_START_TEST (test_sobel_cpu_matches_reference)
{
  uint32_t seed = 1;
  for (GstVideoFormat f : kSobelFormats) {
    for (cuvtest::Size s : kSizes) {
      s.w = width_for (f, s.w);
      for (int pad : {0, 64}) {
        for (const char *mode : {"color", "luma"}) {
          GstVideoInfo info = info_for (f, s.w, s.h);
          GstBuffer *in = make_buffer (info, pad, seed++);
          std::string launch = std::string ("cudasobel backend=cpu scale=1.5 mode=") + mode;
          GstBuffer *out = run_once (launch, info, in);
          fail_unless (out != nullptr, "%s gave no buffer", launch.c_str ());

          /* the reference on a copy of the input */
          GstBuffer *ref = gst_buffer_new_allocate (nullptr, GST_VIDEO_INFO_SIZE (&info), nullptr);
          GstVideoFrame vin, vref;
          fail_unless (gst_video_frame_map (&vin, &info, in, GST_MAP_READ));
          fail_unless (gst_video_frame_map (&vref, &info, ref, GST_MAP_WRITE));
          cuv::PixelLayout l;
          fail_unless (gst_cuda_vision_layout_from_format (f, &l));
          cuv::sobel_reference (gst_cuda_vision_frame_from_video_frame (&vin, l), gst_cuda_vision_frame_from_video_frame (&vref, l),
              {g_str_equal (mode, "luma") ? cuv::SobelMode::Luma : cuv::SobelMode::Color, 1.5f, 0});
          gst_video_frame_unmap (&vref);
          gst_video_frame_unmap (&vin);

          std::string what = launch + " " + gst_video_format_to_string (f) + " " + std::to_string (s.w) + "x" +
              std::to_string (s.h) + " pad " + std::to_string (pad);
          fail_unless_equals_int_hex (buffer_diff (out, ref, info, what), 0);
          gst_buffer_unref (ref);
          gst_buffer_unref (out);
          gst_buffer_unref (in);
        }
      }
    }
  }
}
GST_END_TEST;

/* A bound of 2 per channel would do; the arithmetic is videobalance's, so 0 is what we expect. */
GST_START_TEST (test_enhance_matches_videobalance)
{
  const char *values[] = {"contrast=1.4", "contrast=0.6 brightness=0.15 saturation=1.6 hue=0.25",
      "contrast=2.0 brightness=-0.4 saturation=0.0 hue=-0.9", "hue=0.5", "saturation=2.0"};
  uint32_t seed = 100;
  int worst = 0;
  for (GstVideoFormat f : kEnhanceFormats) {
    /* videobalance does not take P010 (test_reference holds it to enhance.h's expressions) */
    if (f == GST_VIDEO_FORMAT_P010_10LE)
      continue;
    for (cuvtest::Size s : {cuvtest::Size{1, 1}, cuvtest::Size{17, 13}, cuvtest::Size{320, 241}}) {
      s.w = width_for (f, s.w);
      for (const char *v : values) {
        GstVideoInfo info = info_for (f, s.w, s.h);
        GstBuffer *in = make_buffer (info, 0, seed++);
        GstBuffer *vb_in = gst_buffer_copy_deep (in);
        GstBuffer *want = run_once (std::string ("videobalance ") + v, info, vb_in);
        GstBuffer *got = run_once (std::string ("cudaenhance backend=cpu ") + v, info, in);
        fail_unless (want && got);
        std::string what = std::string (v) + " " + gst_video_format_to_string (f) + " " + std::to_string (s.w) + "x" +
            std::to_string (s.h);
        int d = buffer_diff (got, want, info, what);
        fail_unless (d >= 0 && d <= 2, "%s: differs from videobalance by %d", what.c_str (), d);
        worst = MAX (worst, d);
        gst_buffer_unref (want);
        gst_buffer_unref (got);
        gst_buffer_unref (vb_in);
        gst_buffer_unref (in);
      }
    }
  }
  GST_INFO ("largest difference to videobalance: %d", worst);
}
GST_END_TEST;

/* A buffer that others hold too is not writable: cudaenhance, which works in place, then writes
 * into a buffer of its own (the base class's prepare_output_buffer) and leaves the input as it
 * was; the bytes equal those of the in-place run on a writable buffer. */
GST_START_TEST (test_enhance_on_shared_buffers)
{
  check_shared_input ("cudaenhance backend=cpu contrast=1.4 saturation=1.3 hue=0.1",
      {kEnhanceFormats, kEnhanceFormats + G_N_ELEMENTS (kEnhanceFormats)}, 300, true);
}
GST_END_TEST;

GST_START_TEST (test_enhance_passthrough_at_defaults)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 64, 48);
  GstHarness *h = gst_harness_new_parse ("cudaenhance backend=cpu");
  gst_harness_set_src_caps_str (h, caps_for (info).c_str ());
  /* same caps on both pads (on a GPU machine CUDA memory would otherwise be preferred downstream) */
  gst_harness_set_sink_caps_str (h, caps_for (info).c_str ());
  GstBuffer *in = make_buffer (info, 0, 5);
  GstBuffer *out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out == in, "defaults must pass the buffer through untouched");
  gst_buffer_unref (out);

  /* a change while playing leaves passthrough and processes the next buffer */
  GstElement *e = gst_harness_find_element (h, "cudaenhance");
  g_object_set (e, "contrast", 1.5, NULL);
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out != in);
  fail_unless (buffer_diff (out, in, info, "contrast 1.5 vs input") > 0, "contrast=1.5 changed nothing");
  gst_buffer_unref (out);
  gst_object_unref (e);
  gst_buffer_unref (in);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_unsupported_format_is_not_negotiated)
{
  for (const char *name : {"cudasobel", "cudaenhance"}) {
    BusHarness b ((std::string (name) + " backend=cpu").c_str ());
    gst_harness_set_src_caps_str (b.h, "video/x-raw,format=Y444,width=64,height=48,framerate=30/1");
    GstVideoInfo info = info_for (GST_VIDEO_FORMAT_Y444, 64, 48);
    fail_unless_equals_int (gst_harness_push (b.h, make_buffer (info, 0, 1)), GST_FLOW_NOT_NEGOTIATED);
    GstMessage *msg = wait_error (b.bus);
    fail_unless (error_is (msg, GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION, "does not support the format Y444"),
        "%s: no readable negotiation error", name);
    gst_message_unref (msg);
  }
}
GST_END_TEST;

GST_START_TEST (test_short_buffer_is_an_error)
{
  for (const char *launch : {"cudasobel backend=cpu", "cudaenhance backend=cpu contrast=1.2"}) {
    BusHarness b (launch);
    GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 64, 48);
    gst_harness_set_src_caps_str (b.h, caps_for (info).c_str ());
    GstBuffer *small = gst_buffer_new_allocate (nullptr, 100, nullptr);
    fail_unless_equals_int (gst_harness_push (b.h, small), GST_FLOW_ERROR);
    GstMessage *msg = wait_error (b.bus);
    fail_unless (error_is (msg, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT, "does not hold the 64x48 RGBA frame"),
        "%s: no readable error for a short buffer", launch);
    gst_message_unref (msg);
  }
}
GST_END_TEST;

GST_START_TEST (test_state_cycling)
{
  GstElement *pipe = gst_parse_launch (
      "videotestsrc num-buffers=3 ! video/x-raw,format=NV12,width=160,height=120 ! cudasobel backend=auto ! "
      "cudaenhance backend=auto contrast=1.3 ! fakesink",
      nullptr);
  fail_unless (pipe != nullptr);
  GstBus *bus = gst_element_get_bus (pipe);
  for (int i = 0; i < 25; i++) {
    fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
        static_cast<GstMessageType> (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    fail_unless (msg != nullptr && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS, "cycle %d did not reach EOS", i);
    gst_message_unref (msg);
    fail_unless (gst_element_set_state (pipe, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
  }
  gst_object_unref (bus);
  gst_object_unref (pipe);
}
GST_END_TEST;

/* @element with @props set before it starts, changing @prop to @value while buffers flow. */
static void
stress_properties (const char *element, std::vector<std::pair<const char *, const char *>> props, const char *prop,
    const GValue *value)
{
  GstElement *e = gst_element_factory_make (element, nullptr);
  fail_unless (e != nullptr);
  for (auto &p : props)
    gst_util_set_object_arg (G_OBJECT (e), p.first, p.second);
  GstHarness *h = gst_harness_new_with_element (e, "sink", "src");
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_BGRx, 96, 64);
  gst_harness_set_src_caps_str (h, caps_for (info).c_str ());
  GstHarnessThread *t = gst_harness_stress_property_start_full (h, prop, value, 100);
  for (int i = 0; i < 100; i++) {
    GstBuffer *out = gst_harness_push_and_pull (h, make_buffer (info, 0, i));
    fail_unless (out != nullptr);
    gst_buffer_unref (out);
  }
  gst_harness_stress_thread_stop (t);
  gst_harness_teardown (h);
  gst_object_unref (e);
}

GST_START_TEST (test_property_changes_while_flowing)
{
  GValue v = G_VALUE_INIT;
  g_value_init (&v, G_TYPE_DOUBLE);
  g_value_set_double (&v, 2.5);
  stress_properties ("cudasobel", {{"backend", "auto"}}, "scale", &v);
  g_value_set_double (&v, 1.0);
  /* toggles passthrough on and off while buffers flow */
  stress_properties ("cudaenhance", {{"backend", "auto"}, {"contrast", "1.5"}}, "contrast", &v);
  g_value_set_double (&v, 0.3);
  stress_properties ("cudaenhance", {{"backend", "auto"}}, "hue", &v);
  g_value_unset (&v);
}
GST_END_TEST;

/* Without a GPU, backend=cuda must fail at start naming the cause; with one, a device id past the
 * count must. Each machine checks the case it can produce. */
/* The CPU backend's bands (n-threads) change nothing: every element gives the same frames and
 * metas with 1, 2, 3 and 7 bands, in each layout family, on a frame of odd height. */
GST_START_TEST (test_cpu_threads_give_the_same_output)
{
  const struct {
    const char *element, *meta;
  } elements[] = {
    {"cudasobel scale=1.5", nullptr}, {"cudasobel mode=luma threshold=60", nullptr},
    {"cudaenhance contrast=1.3 saturation=1.4 brightness=0.1", nullptr}, {"cudahistogram overlay=true", "CudaHistogramMeta"},
    {"cudaheatmap blend=0.7", "CudaHeatmapMeta"}, {"cudanoisemap threshold=10 mode=overlay", "CudaNoisemapMeta"},
    {"cudamotionest draw=arrows search-range=5", "CudaMotionMeta"},
  };
  for (const char *format : {"NV12", "I420", "RGBA", "BGRx"}) {
    for (const auto &e : elements) {
      std::vector<GstBuffer *> want;
      for (int threads : {1, 2, 3, 7}) {
        const std::string launch = std::string ("videotestsrc num-buffers=3 pattern=ball ! video/x-raw,format=") + format +
            ",width=130,height=97 ! " + e.element + " backend=cpu n-threads=" + std::to_string (threads) +
            " ! appsink name=sink sync=false";
        std::vector<GstBuffer *> got = collect (launch);
        fail_unless_equals_int (got.size (), 3);
        if (want.empty ()) {
          want = got;
          continue;
        }
        /* the heat map of NV12 and I420 is RGBA */
        const bool yuv = g_str_equal (format, "NV12") || g_str_equal (format, "I420");
        GstVideoInfo info;
        gst_video_info_set_format (&info,
            g_str_has_prefix (e.element, "cudaheatmap") && yuv ? GST_VIDEO_FORMAT_RGBA : gst_video_format_from_string (format),
            130, 97);
        for (size_t i = 0; i < got.size (); i++) {
          const int diff = buffer_diff (got[i], want[i], info, launch);
          fail_unless (diff == 0, "%s: frame %zu differs by %d", launch.c_str (), i, diff);
          if (e.meta)
            fail_unless (same_meta (got[i], want[i], e.meta), "%s: frame %zu: another meta than one band's", launch.c_str (), i);
          gst_buffer_unref (got[i]);
        }
      }
      for (GstBuffer *b : want)
        gst_buffer_unref (b);
    }
  }
}
GST_END_TEST;

GST_START_TEST (test_missing_device_is_a_resource_error)
{
  GstMessage *msg;
  if (!cuvtest::have_gpu ()) {
    msg = start_error ("videotestsrc ! cudasobel backend=cuda ! fakesink");
    fail_unless (error_is (msg, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND, "No usable CUDA device") ||
        error_is (msg, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND, "no CUDA kernels"));
  } else {
    msg = start_error ("videotestsrc ! cudasobel backend=cuda cuda-device-id=4096 ! fakesink");
    fail_unless (error_is (msg, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND, "cuda-device-id 4096 is out of range"));
  }
  gst_message_unref (msg);
}
GST_END_TEST;

static Suite *
cudavision_elements_suite (void)
{
  Suite *s = suite_create ("cudavision-elements");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_sobel_cpu_matches_reference);
  tcase_add_test (tc, test_enhance_matches_videobalance);
  tcase_add_test (tc, test_enhance_on_shared_buffers);
  tcase_add_test (tc, test_enhance_passthrough_at_defaults);
  tcase_add_test (tc, test_unsupported_format_is_not_negotiated);
  tcase_add_test (tc, test_short_buffer_is_an_error);
  tcase_add_test (tc, test_state_cycling);
  tcase_add_test (tc, test_property_changes_while_flowing);
  tcase_add_test (tc, test_missing_device_is_a_resource_error);
  tcase_add_test (tc, test_cpu_threads_give_the_same_output);
  return s;
}

CUV_CHECK_MAIN (cudavision_elements)
