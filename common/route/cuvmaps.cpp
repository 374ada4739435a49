/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GstCudaVisionFilter's per-frame route: the maps and the plane copies (cuvmaps.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/cuda/gstcudamemory.h>

#include "common/route/cuvmaps.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

static void
post_map_error (GstCudaVisionFilter *self, GstBuffer *buf, const GstVideoInfo *info, const char *side)
{
  GST_ELEMENT_ERROR (self, STREAM, FORMAT,
      ("The %s buffer does not hold the %dx%d %s frame its caps describe", side, GST_VIDEO_INFO_WIDTH (info),
          GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_NAME (info)),
      ("buffer of %" G_GSIZE_FORMAT " bytes, the caps need %" G_GSIZE_FORMAT " bytes (or its video meta is wrong)",
          gst_buffer_get_size (buf), GST_VIDEO_INFO_SIZE (info)));
}

/* gst_video_frame_map () of one side, as device memory when @device, with its planes checked
 * against the memory; @view gets the kernel view. Posts the error a user sees. */
static bool
map_frame (GstCudaVisionFilter *self, GstVideoFrame *vf, const GstVideoInfo *info, cuv::PixelLayout layout,
    GstBuffer *buf, GstMapFlags flags, bool device, const char *side, cuv::Frame *view)
{
  if (device)
    flags = static_cast<GstMapFlags> (flags | GST_MAP_CUDA);
  if (!cuv::map_caps_frame (vf, info, buf, flags)) {
    post_map_error (self, buf, info, side);
    return false;
  }
  *view = gst_cuda_vision_frame_from_video_frame (vf, layout);
  if (!cuv::planes_fit (vf, *view)) {
    gst_video_frame_unmap (vf);
    post_map_error (self, buf, info, side);
    return false;
  }
  return true;
}

bool
cuv::output_written (const Route &route, GstCudaVisionFilter *self, const FrameTask &task, bool in_place)
{
  return !in_place || !route.op.writes_frame || route.op.writes_frame (self, task.results.get ());
}

static GstMapFlags
in_map_flags (bool in_place, bool writes)
{
  return in_place && writes ? GST_MAP_READWRITE : GST_MAP_READ;
}

cuv::MappedFrames::MappedFrames (GstCudaVisionFilter *self, const CapsState &st, GstBuffer *inbuf, GstBuffer *outbuf,
    bool writes, bool in_dev, bool out_dev)
    : in_place_ (inbuf == outbuf)
{
  if (!map_frame (self, &vin_, &st.in_info, st.in_layout, inbuf, in_map_flags (in_place_, writes), in_dev, "input",
          &in))
    return;
  if (in_place_) {
    out = in;
  } else if (!map_frame (self, &vout_, &st.out_info, st.out_layout, outbuf, GST_MAP_WRITE, out_dev, "output", &out)) {
    gst_video_frame_unmap (&vin_);
    return;
  }
  ok_ = true;
}

cuv::MappedFrames::~MappedFrames ()
{
  if (!ok_)
    return;
  if (!in_place_)
    gst_video_frame_unmap (&vout_);
  gst_video_frame_unmap (&vin_);
}

#if CUV_HAVE_CUDA
cuv::Frame
cuv::padded_frame (const GstVideoInfo *info, PixelLayout layout, int align, uint8_t *data)
{
  int pitches[3] = {0, 0, 0};
  const int w = GST_VIDEO_INFO_WIDTH (info), h = GST_VIDEO_INFO_HEIGHT (info);
  for (int p = 0; p < cuv::layout_n_planes (layout); p++)
    pitches[p] = cuv::min_pitch (layout, w, p, align);
  return cuv::make_frame (layout, w, h, data, pitches);
}

GstCudaContext *
cuv::memory_context (GstBuffer *buf)
{
  if (gst_buffer_n_memory (buf) != 1)
    return nullptr;
  GstMemory *mem = gst_buffer_peek_memory (buf, 0);
  return gst_is_cuda_memory (mem) ? GST_CUDA_MEMORY_CAST (mem)->context : nullptr;
}

bool
cuv::is_device_buffer (const Route &route, GstBuffer *buf)
{
  return route.context && memory_context (buf) == route.context;
}

cudaError_t
cuv::copy_planes_async (const Frame &src, const Frame &dst, cudaMemcpyKind kind, cudaStream_t stream)
{
  for (int p = 0; p < src.n_planes; p++) {
    size_t row = static_cast<size_t> (src.planes[p].width) * cuv::plane_sample_bytes (src.layout, p);
    cudaError_t err = cudaMemcpy2DAsync (dst.planes[p].data, dst.planes[p].pitch, src.planes[p].data, src.planes[p].pitch,
        row, src.planes[p].height, kind, stream);
    if (err != cudaSuccess)
      return err;
  }
  return cudaSuccess;
}
#endif
