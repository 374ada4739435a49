/* cudamotionest on the CUDA backend against the CPU backend, frame by frame over moving content:
 * every format, sizes from 1x1 (an empty grid) to 1920x1080, system and CUDA memory on both pads
 * (where it works in place), each draw mode and block size; H.264 decoded by
 * nvh264dec straight into cudamotionest; the interval messages, whose votes the GPU counts, held to
 * their definition over the frames' vectors.
 * Exits 77 without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tests/check/cuvcheck.h"
#include "tests/check/cuvmotioncheck.h"
#include "gst/gstcudamotionmeta.h"

using namespace cuvcheck;

static const char *kSource = "pattern=pinwheel horizontal-speed=3";

static void
check_motion (const char *props, std::vector<cuvtest::Size> sizes)
{
  /* YUY2 and UYVY run one wider where a size is odd (check_cuda_equals_cpu; an odd one is refused) */
  check_cuda_equals_cpu (CompareSpec{"cudamotionest", props, GST_CUDA_MOTION_META_NAME, false, true,
      {"RGBA", "BGRA", "RGBx", "BGRx", "NV12", "I420", "GRAY8", "YUY2", "UYVY", "P010_10LE"}, sizes, kSource, 3});
}

/* Three test functions of about equal length, so that meson runs them in parallel. */
GST_START_TEST (test_motionest_variable_blocks_on_every_route)
{
  check_motion ("", {{1, 1}, {7, 7}, {17, 13}, {641, 479}});
  /* the CPU reference takes about 4 s per 1920x1080 frame at R = 16: the large frame runs R = 4 */
  check_motion ("search-range=4 draw=color", {{1920, 1080}});
}
GST_END_TEST;

GST_START_TEST (test_motionest_16x16_on_every_route)
{
  check_motion ("block-size=16x16 search-range=20 draw=arrows", {{3, 3}, {33, 17}, {641, 479}});
}
GST_END_TEST;

GST_START_TEST (test_motionest_4x4_and_long_range_on_every_route)
{
  check_motion ("block-size=4x4 search-range=5 draw=color", {{17, 13}, {641, 479}});
  check_motion ("block-size=8x8 search-range=64 partition-penalty=0 draw=arrows", {{130, 70}});
}
GST_END_TEST;

/* A decoder's output straight into cudamotionest: all frames arrive, with the vectors the CPU
 * finds in the same decoded frames. */
GST_START_TEST (test_nvh264dec_into_motionest)
{
  check_nvh264dec_into (kSource, 30, "cudamotionest draw=arrows", info_for (GST_VIDEO_FORMAT_NV12, 352, 288),
      GST_CUDA_MOTION_META_NAME);
}
GST_END_TEST;

/* The messages of @props on the CUDA backend (the votes counted by the GPU), @frames frames of
 * @info each moved by another vector (up to @shift pixels), @per frames an interval: each message
 * holds its frames' vectors as their metas give them. */
static void
check_messages (const std::string &props, const GstVideoInfo &info, int frames, int per, int shift)
{
  BusHarness bh (("cudamotionest backend=cuda " + props).c_str ());
  gst_harness_set_src_caps_str (bh.h, caps_for (info).c_str ());
  gst_harness_set_sink_caps_str (bh.h, "video/x-raw");
  std::vector<GstBuffer *> outs;
  for (int i = 0; i < frames; i++)
    outs.push_back (push_pull (bh.h, texture_frame (info, (i * 7) % (2 * shift + 1) - shift, shift - (i * 5) % (2 * shift + 1), i)));
  std::vector<GstMessage *> msgs = element_messages_at_eos (bh.h, bh.bus);
  fail_unless_equals_int (msgs.size (), frames / per);
  for (size_t k = 0; k < msgs.size (); k++) {
    guint64 units = 0;
    fail_unless (gst_structure_get (gst_message_get_structure (msgs[k]), "units", G_TYPE_UINT64, &units, nullptr));
    expect_interval_definition (gst_message_get_structure (msgs[k]), units,
        std::vector<GstBuffer *> (outs.begin () + k * per, outs.begin () + (k + 1) * per));
    gst_message_unref (msgs[k]);
  }
  for (GstBuffer *b : outs)
    gst_buffer_unref (b);
}

GST_START_TEST (test_messages_hold_the_vectors)
{
  check_messages ("search-range=4 block-size=8x8", info_for (GST_VIDEO_FORMAT_NV12, 320, 240), 12, 1, 3);
  /* 19,040 units over five of the votes kernel's blocks, the largest range (its 16-bit counts) */
  check_messages ("search-range=64 block-size=4x4 interval=66666666", info_for (GST_VIDEO_FORMAT_NV12, 641, 479), 6, 2, 40);
  check_messages ("search-range=16", info_for (GST_VIDEO_FORMAT_RGBA, 1920, 1080), 3, 1, 12);
}
GST_END_TEST;

static Suite *
cudamotionest_gpu_suite (void)
{
  Suite *s = suite_create ("cudamotionest-gpu");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_motionest_variable_blocks_on_every_route);
  tcase_add_test (tc, test_motionest_16x16_on_every_route);
  tcase_add_test (tc, test_motionest_4x4_and_long_range_on_every_route);
  tcase_add_test (tc, test_nvh264dec_into_motionest);
  tcase_add_test (tc, test_messages_hold_the_vectors);
  return s;
}

int
main (int argc, char **argv)
{
  return run_gpu_suite (argc, argv, cudamotionest_gpu_suite, "cudamotionest_gpu", __FILE__);
}
