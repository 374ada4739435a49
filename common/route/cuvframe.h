/* gst-cudavision: GStreamer video frames as the kernels' views (cuv::Frame, kernels/base/image.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/video/video.h>

#include "kernels/base/image.h"

G_BEGIN_DECLS

/* The kernel view of a mapped frame (host or device pointers, as mapped). */
cuv::Frame gst_cuda_vision_frame_from_video_frame (const GstVideoFrame *frame, cuv::PixelLayout layout);

/* The layout of @format, FALSE when no kernel handles it. */
gboolean gst_cuda_vision_layout_from_format (GstVideoFormat format, cuv::PixelLayout *layout);

G_END_DECLS

namespace cuv {

/* gst_video_frame_map () of the frame @info describes. A video meta that differs from @info (a
 * buffer of the size before or after a caps change, as input-selector hands on when it switches
 * between sizes): smaller or of another format is FALSE, not gst_video_frame_map ()'s critical;
 * larger, the frame is its top-left corner of @info's size, as the caps say, where
 * gst_video_frame_map () would take the meta's size, which nothing else the element keeps has. */
bool map_caps_frame (GstVideoFrame *vf, const GstVideoInfo *info, GstBuffer *buf, GstMapFlags flags);

/* Whether every plane of @f, the view of the mapped @vf, lies inside the memory mapped for it with
 * rows at least a row apart: a video meta can describe planes its buffer does not hold, and
 * gst_video_frame_map () does not check that. */
bool planes_fit (const GstVideoFrame *vf, const Frame &f);

}  // namespace cuv
