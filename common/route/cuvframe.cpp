/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/route/cuvframe.h"

gboolean
gst_cuda_vision_layout_from_format (GstVideoFormat format, cuv::PixelLayout *layout)
{
  switch (format) {
    case GST_VIDEO_FORMAT_RGBA: *layout = cuv::PixelLayout::RGBA; return TRUE;
    case GST_VIDEO_FORMAT_BGRA: *layout = cuv::PixelLayout::BGRA; return TRUE;
    case GST_VIDEO_FORMAT_RGBx: *layout = cuv::PixelLayout::RGBx; return TRUE;
    case GST_VIDEO_FORMAT_BGRx: *layout = cuv::PixelLayout::BGRx; return TRUE;
    case GST_VIDEO_FORMAT_GRAY8: *layout = cuv::PixelLayout::GRAY8; return TRUE;
    case GST_VIDEO_FORMAT_NV12: *layout = cuv::PixelLayout::NV12; return TRUE;
    case GST_VIDEO_FORMAT_I420: *layout = cuv::PixelLayout::I420; return TRUE;
    case GST_VIDEO_FORMAT_YUY2: *layout = cuv::PixelLayout::YUY2; return TRUE;
    case GST_VIDEO_FORMAT_UYVY: *layout = cuv::PixelLayout::UYVY; return TRUE;
    case GST_VIDEO_FORMAT_P010_10LE: *layout = cuv::PixelLayout::P010; return TRUE;
    default: return FALSE;
  }
}

cuv::Frame
gst_cuda_vision_frame_from_video_frame (const GstVideoFrame *vf, cuv::PixelLayout layout)
{
  cuv::Frame f{};
  f.layout = layout;
  f.width = GST_VIDEO_FRAME_WIDTH (vf);
  f.height = GST_VIDEO_FRAME_HEIGHT (vf);
  f.n_planes = GST_VIDEO_FRAME_N_PLANES (vf);
  for (int p = 0; p < f.n_planes; p++) {
    /* the first component stored in plane p gives the plane's sample grid */
    int comp[GST_VIDEO_MAX_COMPONENTS];
    gst_video_format_info_component (vf->info.finfo, p, comp);
    const int width = GST_VIDEO_FRAME_COMP_WIDTH (vf, comp[0]);
    f.planes[p] = cuv::Plane{static_cast<uint8_t *> (GST_VIDEO_FRAME_PLANE_DATA (vf, p)),
        GST_VIDEO_FRAME_PLANE_STRIDE (vf, p), p == 0 ? cuv::plane0_width (layout, width) : width,
        GST_VIDEO_FRAME_COMP_HEIGHT (vf, comp[0])};
  }
  return f;
}

namespace cuv {

bool
map_caps_frame (GstVideoFrame *vf, const GstVideoInfo *info, GstBuffer *buf, GstMapFlags flags)
{
  const GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  if (meta && (meta->format != GST_VIDEO_INFO_FORMAT (info) ||
                  meta->width < static_cast<guint> (GST_VIDEO_INFO_WIDTH (info)) ||
                  meta->height < static_cast<guint> (GST_VIDEO_INFO_HEIGHT (info))))
    return false;
  GstVideoInfo i = *info;
  if (!gst_video_frame_map (vf, &i, buf, flags))
    return false;
  GST_VIDEO_INFO_WIDTH (&vf->info) = GST_VIDEO_INFO_WIDTH (info);
  GST_VIDEO_INFO_HEIGHT (&vf->info) = GST_VIDEO_INFO_HEIGHT (info);
  return true;
}

/* Whether every plane of @vf lies inside the memory mapped for it, rows apart by at least a row:
 * a video meta (a source's or an application's) can describe planes that the buffer does not
 * hold, and gst_video_frame_map () does not check that. Without a meta the mapping already
 * checked the buffer against the caps' layout. */
bool
planes_fit (const GstVideoFrame *vf, const Frame &f)
{
  if (!vf->meta)
    return true;
  for (int p = 0; p < f.n_planes; p++) {
    const cuv::Plane &pl = f.planes[p];
    const GstMapInfo &map = vf->map[p];
    const uintptr_t row = static_cast<uintptr_t> (pl.width) * cuv::plane_sample_bytes (f.layout, p);
    const uintptr_t begin = reinterpret_cast<uintptr_t> (map.data), at = reinterpret_cast<uintptr_t> (pl.data);
    if (pl.pitch < 0 || static_cast<uintptr_t> (pl.pitch) < row || at < begin ||
        at - begin + static_cast<uintptr_t> (pl.height - 1) * pl.pitch + row > map.size)
      return false;
  }
  return true;
}

}  // namespace cuv
