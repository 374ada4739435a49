/* gst-cudavision: the YUV matrix and range of a stream, as the kernels' colour conversions take them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/video/video.h>

namespace cuv {

struct ColorMatrix {
  double kr, kb;
  bool full_range;
};

/* From @info's colorimetry; BT.601 where the matrix is unknown or RGB. */
inline ColorMatrix color_matrix (const GstVideoInfo *info)
{
  ColorMatrix m{0.299, 0.114, info->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255};
  gdouble kr, kb;
  if (gst_video_color_matrix_get_Kr_Kb (info->colorimetry.matrix, &kr, &kb)) {
    m.kr = kr;
    m.kb = kb;
  }
  return m;
}

}  // namespace cuv
