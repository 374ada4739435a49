/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * cudamotionest's frame on both backends (gstcudamotionestframe.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gst/gstcudamotionestframe.h"

#include <algorithm>

#include "common/base/cuvcpupool.h"
#include "kernels/base/copy.h"
#include "kernels/luma/luma.h"

#define GST_CAT_DEFAULT gst_cuda_motionest_debug

namespace {

/* votes for the global vector: one per candidate of the largest range */
constexpr int kVotesSide = cuv::kMotionVotesSide;
/* blocks of vectors in metas downstream at once before the element copies instead */
constexpr unsigned kVectorBlocksOut = 8;

cuv::MotionParams
motion_params (const MotionFrame *frame)
{
  return cuv::MotionParams{frame->settings.block, static_cast<int> (frame->settings.range), static_cast<int> (frame->settings.penalty)};
}

/* The bytes of a frame's vectors at most: 4x4 units, the densest grid. */
size_t
densest_vector_bytes (const GstCudaMotionestImpl *impl)
{
  const cuv::MotionGrid densest = cuv::motion_grid (cuv::MotionBlock::B4, impl->width, impl->height);
  return std::max<size_t> (1, densest.count ()) * sizeof (cuv::MotionVector);
}

/* Where this frame's vectors go on the host: a block the meta takes without a copy (page-locked
 * memory of @ctx, or plain memory without one), which the frame's value holds, or @fallback while
 * all blocks are downstream. NULL when a block's memory could not be had. */
uint8_t *
vector_target (GstCudaMotionestImpl *impl, MotionFrame *frame, GstCudaContext *ctx, uint8_t *fallback)
{
  return impl->vector_target.acquire (ctx, densest_vector_bytes (impl), kVectorBlocksOut, fallback, &frame->block);
}

/* After the search: the vectors are this frame's (on the host once the frame is finished). */
GstFlowReturn
searched (MotionFrame *frame, const cuv::MotionVector *vectors, const cuv::Plane *prev)
{
  frame->vectors = vectors;
  frame->processed = true;
  frame->first_frame = prev == nullptr;
  return GST_FLOW_OK;
}

}  // namespace

/* Without a previous frame the frame is searched against itself: (0, 0) at cost 0 everywhere. */
GstFlowReturn
motionest::search_cpu (GstCudaVisionFilter *, GstCudaMotionestImpl *impl, const cuv::FrameJob *job)
{
  const cuv::Frame *in = job->in, *out = job->out;
  const cuv::Plane &cur = job->luma;
  const cuv::Plane *prev = job->previous_luma;
  MotionFrame *frame = static_cast<MotionFrame *> (job->results);
  cuv::luma_plane_cpu (*in, cur);
  /* a buffer of our own for a shared input (common/route/cuvoutput.cpp): the frame first */
  if (in->planes[0].data != out->planes[0].data)
    cuv::copy_frame_cpu (*in, *out);
  impl->cpu_vectors.resize (std::max (1, frame->grid.count ()));
  auto *vectors = reinterpret_cast<cuv::MotionVector *> (
      vector_target (impl, frame, nullptr, reinterpret_cast<uint8_t *> (impl->cpu_vectors.data ())));
  const cuv::MotionParams params = motion_params (frame);
  cuv::motion_prepare_reference (prev ? *prev : cur, params.range, &impl->cpu_reference);
  cuv::parallel_bands (cuv::motion_search_block_rows (params.block, cur.height),
      job->threads, [&] (int begin, int end) {
        cuv::motion_search_rows_cpu (cur, impl->cpu_reference, params, vectors, begin, end);
      });
  if (frame->settings.draw == GST_CUDA_MOTIONEST_DRAW_ARROWS) {
    cuv::motion_arrows_cpu (vectors, frame->grid, impl->palette.arrows, *out);
  } else if (frame->settings.draw == GST_CUDA_MOTIONEST_DRAW_COLOR) {
    cuv::motion_palette_wheel (&impl->palette, static_cast<int> (frame->settings.range));
    const cuv::MotionPalette &p = impl->palette;
    cuv::motion_wheel_cpu (vectors, frame->grid, p.table.data (), p.table_range, p.black, *out);
  }
  return searched (frame, vectors, prev);
}

#if CUV_HAVE_CUDA
/* Device buffers for this caps: the vectors (sized for 4x4 units, the densest grid) and their
 * pinned fallback, a slot for each of kFrameSlots frames, the colour table. */
static cudaError_t
gst_cuda_motionest_ensure_buffers (GstCudaMotionestImpl *impl, GstCudaContext *ctx)
{
  if (impl->device_vectors)
    return cudaSuccess;
  const size_t vector_bytes = densest_vector_bytes (impl);
  const size_t table_bytes = static_cast<size_t> (kVotesSide) * kVotesSide * sizeof (uint32_t);
  cudaError_t err = impl->device_vectors.allocate (ctx, cuv::CudaBuffer::Kind::Device, vector_bytes);
  if (err == cudaSuccess)
    err = impl->pinned_vectors.allocate (ctx, cuv::CudaBuffer::Kind::Pinned, vector_bytes * kFrameSlots);
  if (err == cudaSuccess)
    err = impl->device_table.allocate (ctx, cuv::CudaBuffer::Kind::Device, table_bytes);
  impl->device_table_range = 0;
  return err;
}
#endif

void
motionest::release_buffers (GstCudaMotionestImpl *impl)
{
#if CUV_HAVE_CUDA
  impl->device_vectors.reset ();
  impl->pinned_vectors.reset ();
  impl->device_table.reset ();
  impl->device_table_range = 0;
  impl->votes.reset ();
#endif
  impl->vector_target.release ();
}

#if CUV_HAVE_CUDA
/* The colour table on the device, when the range changed. From pageable memory: the driver has
 * taken the bytes when the call returns, so the table may change while the copy is queued behind
 * frames that have not been waited for (frames in flight). */
static cudaError_t
gst_cuda_motionest_upload_table (GstCudaMotionestImpl *impl, const MotionFrame *frame, cudaStream_t stream)
{
  cuv::motion_palette_wheel (&impl->palette, static_cast<int> (frame->settings.range));
  const cuv::MotionPalette &p = impl->palette;
  if (impl->device_table_range == p.table_range)
    return cudaSuccess;
  impl->device_table_range = p.table_range;
  return cudaMemcpyAsync (impl->device_table.data (), p.table.data (), p.table.size () * sizeof (uint32_t),
      cudaMemcpyHostToDevice, stream);
}

/* The drawing on the device, as draw says. */
static bool
draw_cuda (GstCudaVisionFilter *self, GstCudaMotionestImpl *impl, const MotionFrame *frame, const cuv::MotionVector *dvec,
    const cuv::Frame &out, cudaStream_t stream)
{
  const cuv::MotionPalette &p = impl->palette;
  if (frame->settings.draw == GST_CUDA_MOTIONEST_DRAW_ARROWS)
    return CUV_CUDA_OK (self, cuv::motion_arrows_cuda (dvec, frame->grid, p.arrows, out, stream));
  if (frame->settings.draw == GST_CUDA_MOTIONEST_DRAW_COLOR)
    return CUV_CUDA_OK (self, gst_cuda_motionest_upload_table (impl, frame, stream)) &&
        CUV_CUDA_OK (self, cuv::motion_wheel_cuda (dvec, frame->grid, reinterpret_cast<const uint32_t *> (impl->device_table.data ()),
                               p.table_range, p.black, out, stream));
  return true;
}

/* The interval's votes on the GPU, only for frames that add to it: counting every unit's vector
 * on the host took most of the frame's time with messages on (docs/performance-log.md). */
static bool
count_votes_cuda (GstCudaVisionFilter *self, GstCudaMotionestImpl *impl, MotionFrame *frame, const cuv::MotionVector *dvec,
    GstCudaContext *ctx, cudaStream_t stream)
{
  frame->votes = nullptr;
  if (frame->grid.count () == 0 || !frame->post_messages)
    return true;
  if (!CUV_CUDA_OK (self, impl->votes.ensure (ctx, stream)))
    return false;
  /* each of the last kFrameSlots frames has its votes in a slot of its own */
  impl->votes.next_slot ();
  if (!CUV_CUDA_OK (self, cuv::motion_votes_cuda (dvec, frame->grid.count (), static_cast<int> (frame->settings.range),
                          frame->settings.motion_threshold, impl->votes.to (), stream))) {
    impl->votes.launch_failed ();
    return false;
  }
  frame->votes = &impl->votes.host ();
  return true;
}

GstFlowReturn
motionest::search_cuda (GstCudaVisionFilter *filter, GstCudaMotionestImpl *impl, const cuv::FrameJob *job)
{
  GstCudaVisionFilter *self = filter;
  const cuv::Frame *in = job->in, *out = job->out;
  GstCudaContext *ctx = job->context;
  cudaStream_t stream = job->stream;
  const cuv::Plane &cur = job->luma;
  const cuv::Plane *prev = job->previous_luma;
  MotionFrame *frame = static_cast<MotionFrame *> (job->results);
  if (!CUV_CUDA_OK (self, gst_cuda_motionest_ensure_buffers (impl, ctx))) {
    release_buffers (impl);
    return GST_FLOW_ERROR;
  }
  auto dvec = reinterpret_cast<cuv::MotionVector *> (impl->device_vectors.data ());
  const size_t vector_bytes = static_cast<size_t> (frame->grid.count ()) * sizeof (cuv::MotionVector);
  /* each of the last kFrameSlots frames has a fallback slot of its own */
  impl->pinned_slot = (impl->pinned_slot + 1) % kFrameSlots;
  uint8_t *fallback = impl->pinned_vectors.data () + impl->pinned_slot * densest_vector_bytes (impl);
  uint8_t *host_vectors = vector_target (impl, frame, ctx, fallback);
  if (!host_vectors) {
    /* the base class posts the error message */
    GST_ERROR_OBJECT (self, "no page-locked memory for the motion vectors (%" G_GSIZE_FORMAT " bytes)",
        impl->vector_target.block_size ());
    return GST_FLOW_ERROR;
  }
  if ((in->planes[0].data != out->planes[0].data && !CUV_CUDA_OK (self, cuv::copy_frame_cuda (*in, *out, stream))) ||
      !CUV_CUDA_OK (self, cuv::luma_plane_cuda (*in, cur, stream)) ||
      !CUV_CUDA_OK (self, cuv::motion_search_cuda (cur, prev ? *prev : cur, motion_params (frame), dvec, stream)) ||
      (vector_bytes && !CUV_CUDA_OK (self, cudaMemcpyAsync (host_vectors, dvec, vector_bytes, cudaMemcpyDeviceToHost,
                            stream))) ||
      !count_votes_cuda (self, impl, frame, dvec, ctx, stream) || !draw_cuda (self, impl, frame, dvec, *out, stream))
    return GST_FLOW_ERROR;
  /* the base class waits for the stream once, after this; then the vectors are on the host */
  return searched (frame, reinterpret_cast<const cuv::MotionVector *> (host_vectors), prev);
}
#endif

