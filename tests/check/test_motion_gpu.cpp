/* cudamotionest on the CUDA backend against the CPU backend, frame by frame over moving content:
 * every format, sizes from 1x1 (an empty grid) to 1920x1080, system and CUDA memory on both pads
 * (where it works in place), each draw mode and block size; H.264 decoded by
 * nvh264dec straight into cudamotionest.
 * Exits 77 without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tests/check/cuvcheck.h"
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
  return s;
}

int
main (int argc, char **argv)
{
  return run_gpu_suite (argc, argv, cudamotionest_gpu_suite, "cudamotionest_gpu", __FILE__);
}
