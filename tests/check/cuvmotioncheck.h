/* What the cudamotionest tests share: a textured frame moved by a known vector, the meta's
 * vectors, and an interval message held to its definition over the frames' vectors.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gst/video/video.h>
#include "tests/check/cuvcheck.h"
#include "tests/check/cuvregions.h"
#include "gst/gstcudamotionmeta.h"

namespace cuvcheck {

/* A textured frame of @info moved so that frame (x, y) = texture (x + dx, y + dy), clamped: in
 * every plane (chroma by half the shift, so NV12/I420 luma holds the exact shift); YUY2 and UYVY
 * their Y bytes moved, their chroma the texture's unmoved; P010 its Y samples' high bytes moved,
 * the low bytes and the chroma plane the texture's unmoved. */
inline GstBuffer *
texture_frame (const GstVideoInfo &info, int dx, int dy, int index)
{
  GstBuffer *buf = gst_buffer_new_allocate (nullptr, GST_VIDEO_INFO_SIZE (&info), nullptr);
  GstVideoFrame f;
  GstVideoInfo i = info;
  fail_unless (gst_video_frame_map (&f, &i, buf, GST_MAP_WRITE));
  const GstVideoFormat format = GST_VIDEO_INFO_FORMAT (&info);
  const bool p010 = format == GST_VIDEO_FORMAT_P010_10LE;
  if (format == GST_VIDEO_FORMAT_YUY2 || format == GST_VIDEO_FORMAT_UYVY || p010) {
    const int w = GST_VIDEO_INFO_WIDTH (&info), h = GST_VIDEO_INFO_HEIGHT (&info);
    const int y_byte = format == GST_VIDEO_FORMAT_UYVY || p010;
    guint8 *data = static_cast<guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (&f, 0));
    const int stride = GST_VIDEO_FRAME_PLANE_STRIDE (&f, 0);
    for (int y = 0; y < h; y++) {
      for (int x = 0; x < (p010 ? w : (w + 1) / 2 * 2); x++) {
        const int px = std::clamp (x + dx, 0, w - 1), py = std::clamp (y + dy, 0, h - 1);
        data[y * stride + 2 * x + y_byte] = texture_byte (px, py, 0);
        data[y * stride + 2 * x + 1 - y_byte] = texture_byte (x, y, 4 + (x & 1));
      }
    }
    if (p010) {
      guint8 *uv = static_cast<guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (&f, 1));
      const int uv_stride = GST_VIDEO_FRAME_PLANE_STRIDE (&f, 1);
      for (int y = 0; y < (h + 1) / 2; y++)
        for (int x = 0; x < (w + 1) / 2 * 4; x++)
          uv[y * uv_stride + x] = texture_byte (x, y, 4 + (x & 3));
    }
    gst_video_frame_unmap (&f);
    return stamped (buf, index);
  }
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (&f); p++) {
    const int w = GST_VIDEO_FRAME_COMP_WIDTH (&f, p == 0 ? 0 : 1) * (GST_VIDEO_INFO_IS_RGB (&info) ? 4 : 1) *
        (GST_VIDEO_INFO_FORMAT (&info) == GST_VIDEO_FORMAT_NV12 && p == 1 ? 2 : 1);
    const int h = GST_VIDEO_FRAME_COMP_HEIGHT (&f, p == 0 ? 0 : 1);
    const int bpp = GST_VIDEO_INFO_IS_RGB (&info) ? 4 : GST_VIDEO_INFO_FORMAT (&info) == GST_VIDEO_FORMAT_NV12 && p == 1 ? 2 : 1;
    const int sx = p == 0 ? dx : dx / 2, sy = p == 0 ? dy : dy / 2;
    guint8 *data = static_cast<guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (&f, p));
    const int stride = GST_VIDEO_FRAME_PLANE_STRIDE (&f, p);
    for (int y = 0; y < h; y++) {
      for (int x = 0; x < w; x++) {
        const int px = std::clamp (x / bpp + sx, 0, w / bpp - 1), py = std::clamp (y + sy, 0, h - 1);
        data[y * stride + x] = texture_byte (px, py, x % bpp + p * 4);
      }
    }
  }
  gst_video_frame_unmap (&f);
  return stamped (buf, index);
}

struct Vectors {
  const GstCudaMotionVector *v;
  guint cols, rows, unit;
};

inline Vectors
vectors_of (GstBuffer *buf)
{
  Vectors r;
  fail_unless (gst_cuda_motion_meta_get_structure (buf) != nullptr, "no CudaMotionMeta on the buffer");
  r.v = gst_cuda_motion_meta_get_vectors (buf, &r.cols, &r.rows, &r.unit);
  return r;
}

/* An interval message @s (with its @units, its global vector, moving share and mean length)
 * against its definition over the vectors of the interval's frames @frames: the mean length of all
 * units' vectors, the share that move (a vector other than (0, 0) whose SAD per pixel is below
 * motion-threshold, 16), and a global vector that no other outnumbers. */
inline void
expect_interval_definition (const GstStructure *s, guint64 units, const std::vector<GstBuffer *> &frames)
{
  gint gdx = 0, gdy = 0;
  gdouble moving = 0, magnitude = 0;
  fail_unless (gst_structure_get (s, "global-dx", G_TYPE_INT, &gdx, "global-dy", G_TYPE_INT, &gdy, "moving-ratio",
      G_TYPE_DOUBLE, &moving, "mean-magnitude", G_TYPE_DOUBLE, &magnitude, nullptr));
  double length = 0;
  guint64 moves = 0, counted = 0;
  std::map<std::pair<int, int>, guint64> votes;
  for (GstBuffer *f : frames) {
    const Vectors vec = vectors_of (f);
    for (guint u = 0; u < vec.cols * vec.rows; u++) {
      const GstCudaMotionVector &v = vec.v[u];
      length += std::sqrt (static_cast<double> (v.dx * v.dx + v.dy * v.dy));
      moves += (v.dx != 0 || v.dy != 0) && v.cost < 16u * v.width * v.height;
      votes[std::make_pair (static_cast<int> (v.dx), static_cast<int> (v.dy))]++;
      counted++;
    }
  }
  fail_unless_equals_uint64 (units, counted);
  guint64 most = 0;
  for (const auto &kv : votes)
    most = std::max (most, kv.second);
  fail_unless (std::fabs (magnitude - length / units) < 1e-9, "mean-magnitude %f, the vectors give %f", magnitude,
      length / units);
  fail_unless (moving == static_cast<double> (moves) / units, "moving-ratio %f, the vectors give %f", moving,
      static_cast<double> (moves) / units);
  const guint64 global = votes[std::make_pair (gdx, gdy)];
  fail_unless (global == most, "global vector (%d, %d) has %" G_GUINT64_FORMAT " votes, another %" G_GUINT64_FORMAT, gdx,
      gdy, global, most);
}

}  // namespace cuvcheck
