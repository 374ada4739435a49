/* Frames with a known moving or changing window, and the regions an analyser attached for it
 * (ROI metas and, with GStreamer's analytics library, object detections): what the motion and
 * noise map tests share.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "config.h"

#include <gst/check/gstcheck.h>
#include <gst/video/video.h>
#if HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

namespace cuvcheck {

/* Byte @channel of the texture at (@x, @y): a hash of the position, texture without repeats. */
inline guint8
texture_byte (guint32 x, guint32 y, guint32 channel)
{
  guint32 v = x * 73856093u ^ y * 19349663u ^ channel * 83492791u;
  v ^= v >> 13;
  v *= 0x5bd1e995u;
  return static_cast<guint8> (v >> 24);
}

/* The frame's timestamps for the @index'th frame at 30 fps. */
inline GstBuffer *
stamped (GstBuffer *buf, int index)
{
  GST_BUFFER_PTS (buf) = index * (GST_SECOND / 30);
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  return buf;
}

/* A still textured frame with a window (@wx, @wy, @ww x @wh) whose own texture is moved so that
 * window (x, y) = texture (x + @ox, y + @oy): only the window's content moves. */
inline GstBuffer *
window_frame (const GstVideoInfo &info, int wx, int wy, int ww, int wh, int ox, int oy, int index)
{
  GstBuffer *buf = gst_buffer_new_allocate (nullptr, GST_VIDEO_INFO_SIZE (&info), nullptr);
  GstVideoFrame f;
  GstVideoInfo i = info;
  fail_unless (gst_video_frame_map (&f, &i, buf, GST_MAP_WRITE));
  const bool rgb = GST_VIDEO_INFO_IS_RGB (&info);
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (&f); p++) {
    guint8 *data = static_cast<guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (&f, p));
    const int stride = GST_VIDEO_FRAME_PLANE_STRIDE (&f, p);
    const int h = GST_VIDEO_FRAME_COMP_HEIGHT (&f, p == 0 ? 0 : 1);
    if (p > 0) {
      /* chroma plain grey (NV12: plane 1 is component 1's pairs; I420: plane p is component p) */
      for (int y = 0; y < h; y++)
        memset (data + y * stride, 128, GST_VIDEO_FRAME_COMP_WIDTH (&f, p) * GST_VIDEO_FRAME_COMP_PSTRIDE (&f, p));
      continue;
    }
    /* YUY2/UYVY: two bytes a pixel, its Y and one of its pair's U and V; P010: a 16-bit sample */
    const GstVideoFormat fmt = GST_VIDEO_INFO_FORMAT (&info);
    const int bpp = rgb ? 4
        : fmt == GST_VIDEO_FORMAT_YUY2 || fmt == GST_VIDEO_FORMAT_UYVY || fmt == GST_VIDEO_FORMAT_P010_10LE ? 2
                                                                                                          : 1;
    for (int y = 0; y < h; y++) {
      for (int x = 0; x < GST_VIDEO_INFO_WIDTH (&info) * bpp; x++) {
        const int px = x / bpp;
        const bool in = px >= wx && px < wx + ww && y >= wy && y < wy + wh;
        data[y * stride + x] = in ? texture_byte (px + ox + 1000, y + oy + 1000, x % bpp) : texture_byte (px, y, x % bpp);
      }
    }
  }
  gst_video_frame_unmap (&f);
  return stamped (buf, index);
}

struct Box {
  guint x, y, w, h;
  double confidence;
};

/* The ROI metas of @type on @buf, with their "detection" confidence. */
inline std::vector<Box>
rois (GstBuffer *buf, const char *type)
{
  std::vector<Box> boxes;
  gpointer state = nullptr;
  while (GstMeta *m = gst_buffer_iterate_meta_filtered (buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    auto *roi = reinterpret_cast<GstVideoRegionOfInterestMeta *> (m);
    if (roi->roi_type != g_quark_from_string (type))
      continue;
    GstStructure *d = gst_video_region_of_interest_meta_get_param (roi, "detection");
    double c = -1;
    fail_unless (d && gst_structure_get_double (d, "confidence", &c), "a %s ROI without its confidence", type);
    boxes.push_back (Box{roi->x, roi->y, roi->w, roi->h, c});
  }
  return boxes;
}

#if HAVE_GST_ANALYTICS
/* The object detections of @type in @buf's analytics relation meta. */
inline std::vector<Box>
detections (GstBuffer *buf, const char *type)
{
  std::vector<Box> boxes;
  GstAnalyticsRelationMeta *rmeta = gst_buffer_get_analytics_relation_meta (buf);
  if (!rmeta)
    return boxes;
  gpointer state = nullptr;
  GstAnalyticsMtd mtd;
  while (gst_analytics_relation_meta_iterate (rmeta, &state, gst_analytics_od_mtd_get_mtd_type (), &mtd)) {
    GstAnalyticsODMtd *od = reinterpret_cast<GstAnalyticsODMtd *> (&mtd);
    fail_unless (gst_analytics_od_mtd_get_obj_type (od) == g_quark_from_string (type));
    gint x, y, w, h;
    gfloat c;
    fail_unless (gst_analytics_od_mtd_get_location (od, &x, &y, &w, &h, &c));
    boxes.push_back (Box{static_cast<guint> (x), static_cast<guint> (y), static_cast<guint> (w), static_cast<guint> (h), c});
  }
  return boxes;
}
#endif

/* One region of @type on @buf: its box within @d pixels of @window on every side, its confidence
 * in (@min_confidence, 1], and (with the analytics library) one object detection of @type with the
 * ROI's box and confidence. */
inline void
check_one_region (GstBuffer *buf, const char *type, const Box &window, int d, double min_confidence, const std::string &what)
{
  const std::vector<Box> found = rois (buf, type);
  fail_unless (found.size () == 1, "%s: %zu %s regions, not 1", what.c_str (), found.size (), type);
  const Box &b = found[0];
  const auto near = [d] (guint a, guint b) { return std::abs (static_cast<int> (a) - static_cast<int> (b)) <= d; };
  fail_unless (near (b.x, window.x) && near (b.y, window.y) && near (b.x + b.w, window.x + window.w) &&
          near (b.y + b.h, window.y + window.h),
      "%s: box %u,%u %ux%u not within %d pixels of %u,%u %ux%u", what.c_str (), b.x, b.y, b.w, b.h, d, window.x, window.y,
      window.w, window.h);
  fail_unless (b.confidence > min_confidence && b.confidence <= 1.0, "%s: confidence %f", what.c_str (), b.confidence);
#if HAVE_GST_ANALYTICS
  const std::vector<Box> dets = detections (buf, type);
  fail_unless (dets.size () == 1, "%s: %zu %s detections, not 1", what.c_str (), dets.size (), type);
  fail_unless (dets[0].x == b.x && dets[0].y == b.y && dets[0].w == b.w && dets[0].h == b.h &&
          std::abs (dets[0].confidence - b.confidence) < 1e-6,
      "%s: the detection is not the ROI's box", what.c_str ());
#endif
}

/* No region of @type on @buf, as ROI or as detection. */
inline void
check_no_region (GstBuffer *buf, const char *type, const std::string &what)
{
  fail_unless (rois (buf, type).empty (), "%s: a %s ROI", what.c_str (), type);
#if HAVE_GST_ANALYTICS
  fail_unless (detections (buf, type).empty (), "%s: a %s detection", what.c_str (), type);
#endif
}

}  // namespace cuvcheck
