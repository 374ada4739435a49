/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/route/cuvprevious.h"

#include <algorithm>
#include <utility>

#include <gst/cuda/gstcudamemory.h>

#include "kernels/base/copy.h"
#include "common/route/cuvframe.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

namespace cuv {

namespace {

/* Rows packed at @align bytes in one block of @store-able size. */
Frame packed_shape (const Frame &like, int align, uint8_t *base)
{
  int pitches[3] = {0, 0, 0};
  for (int p = 0; p < like.n_planes; p++)
    pitches[p] = min_pitch (like.layout, like.width, p, align);
  return make_frame (like.layout, like.width, like.height, base, pitches);
}

}  // namespace

void
PreviousFrame::reset ()
{
  end ();
  gst_clear_buffer (&held_);
  gst_clear_object (&checked_pool_);
  kind_ = Kind::None;
}

void
PreviousFrame::take (PreviousFrame &from)
{
  g_return_if_fail (!mapped_ && !from.mapped_);
  reset ();
  kind_ = std::exchange (from.kind_, Kind::None);
  held_ = std::exchange (from.held_, nullptr);
  view_ = from.view_;
  std::swap (checked_pool_, from.checked_pool_);
  pool_ok_ = from.pool_ok_;
  /* a moved vector or device buffer keeps its storage, which view_ points into */
  host_ = std::move (from.host_);
#if CUV_HAVE_CUDA
  device_ = std::move (from.device_);
#endif
}

const Frame *
PreviousFrame::begin (const GstVideoInfo *info, PixelLayout layout, bool device)
{
  if (kind_ == Kind::View)
    return &view_;
  if (kind_ != Kind::Held)
    return nullptr;
  const int flags = device ? GST_MAP_READ | GST_MAP_CUDA : GST_MAP_READ;
  if (!map_caps_frame (&map_, info, held_, static_cast<GstMapFlags> (flags))) {
    GST_WARNING ("could not map the previous frame again; starting over from this one");
    reset ();
    return nullptr;
  }
  mapped_ = true;
  view_ = gst_cuda_vision_frame_from_video_frame (&map_, layout);
  return &view_;
}

void
PreviousFrame::end ()
{
  if (mapped_)
    gst_video_frame_unmap (&map_);
  mapped_ = false;
  /* a buffer replaced while the GPU still read it goes back upstream only now, after the sync */
  if (kind_ != Kind::Held)
    gst_clear_buffer (&held_);
}

void
PreviousFrame::set_view (const Frame &view)
{
  view_ = view;
  kind_ = Kind::View;
  if (!mapped_)
    gst_clear_buffer (&held_);
}

bool
PreviousFrame::can_hold (GstObject *owner, GstBuffer *buf)
{
  GstBufferPool *pool = buf->pool;
  if (!pool)
    return true;
  if (pool != checked_pool_) {
    GstStructure *config = gst_buffer_pool_get_config (pool);
    guint min = 0, max = 0;
    gst_buffer_pool_config_get_params (config, nullptr, nullptr, &min, &max);
    gst_structure_free (config);
    pool_ok_ = max == 0;
    gst_object_replace (reinterpret_cast<GstObject **> (&checked_pool_), GST_OBJECT (pool));
    if (!pool_ok_)
      GST_INFO_OBJECT (owner, "upstream's pool %" GST_PTR_FORMAT " is bounded (%u..%u buffers): keeping a copy of the "
          "previous frame instead of holding one of its buffers", pool, min, max);
  }
  return pool_ok_;
}

void
PreviousFrame::hold (GstBuffer *buf)
{
  g_return_if_fail (!mapped_);
  gst_buffer_replace (&held_, buf);
  kind_ = Kind::Held;
}

void
PreviousFrame::keep_view (const Frame &view)
{
  set_view (view);
}

void
PreviousFrame::keep_host_copy (const Frame &view)
{
  const Frame shape = packed_shape (view, 4, nullptr);
  host_.resize (frame_bytes (shape));
  Frame copy = packed_shape (view, 4, host_.data ());
  copy_frame_cpu (view, copy);
  set_view (copy);
}

#if CUV_HAVE_CUDA
cudaError_t
PreviousFrame::keep_device_copy (GstCudaContext *ctx, const Frame &view, cudaStream_t stream)
{
  const Frame shape = packed_shape (view, 256, nullptr);
  if (!device_ || device_.size () != frame_bytes (shape)) {
    cudaError_t err = device_.allocate (ctx, CudaBuffer::Kind::Device, frame_bytes (shape));
    if (err != cudaSuccess)
      return err;
  }
  Frame copy = packed_shape (view, 256, device_.data ());
  cudaError_t err = copy_frame_cuda (view, copy, stream);
  if (err == cudaSuccess)
    set_view (copy);
  return err;
}
#endif

bool
PreviousLuma::shaped (int width, int height, bool device)
{
  if (planes_[0].data && width == width_ && height == height_ && device == device_)
    return true;
  release ();
  width_ = width;
  height_ = height;
  device_ = device;
  return false;
}

void
PreviousLuma::hand_out (Plane *current, const Plane **previous)
{
  begun_ = true;
  *current = planes_[current_];
  previous_ = planes_[current_ ^ 1];
  *previous = have_previous_ ? &previous_ : nullptr;
}

/* Rows aligned to 256 bytes, as the staging buffers' (cuvroute.cpp). */
static int
luma_pitch (int width)
{
  return (width + 255) / 256 * 256;
}

void
PreviousLuma::begin_host (int width, int height, Plane *current, const Plane **previous)
{
  if (!shaped (width, height, false)) {
    for (int i = 0; i < 2; i++) {
      host_[i].resize (std::max<size_t> (1, static_cast<size_t> (luma_pitch (width)) * height));
      planes_[i] = Plane{host_[i].data (), luma_pitch (width), width, height};
    }
  }
  hand_out (current, previous);
}

#if CUV_HAVE_CUDA
cudaError_t
PreviousLuma::begin_device (GstCudaContext *ctx, int width, int height, Plane *current, const Plane **previous)
{
  if (!shaped (width, height, true)) {
    for (int i = 0; i < 2; i++) {
      const size_t bytes = std::max<size_t> (1, static_cast<size_t> (luma_pitch (width)) * height);
      const cudaError_t err = device_planes_[i].allocate (ctx, CudaBuffer::Kind::Device, bytes);
      if (err != cudaSuccess) {
        release ();
        return err;
      }
      planes_[i] = Plane{device_planes_[i].data (), luma_pitch (width), width, height};
    }
  }
  hand_out (current, previous);
  return cudaSuccess;
}
#endif

void
PreviousLuma::end (bool ok)
{
  if (!begun_)
    return;
  begun_ = false;
  have_previous_ = ok;
  if (ok)
    current_ ^= 1;
}

void
PreviousLuma::release ()
{
  for (int i = 0; i < 2; i++) {
    host_[i] = std::vector<uint8_t> ();
#if CUV_HAVE_CUDA
    device_planes_[i].reset ();
#endif
    planes_[i] = Plane{};
  }
  width_ = height_ = 0;
  current_ = 0;
  begun_ = false;
  have_previous_ = false;
}

}  // namespace cuv
