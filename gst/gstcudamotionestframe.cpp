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
motion_params (const GstCudaMotionestImpl *impl)
{
  return cuv::MotionParams{impl->frame_settings.block, static_cast<int> (impl->frame_settings.range), static_cast<int> (impl->frame_settings.penalty)};
}

/* The bytes of a frame's vectors at most: 4x4 units, the densest grid. */
size_t
densest_vector_bytes (const GstCudaMotionestImpl *impl)
{
  const cuv::MotionGrid densest = cuv::motion_grid (cuv::MotionBlock::B4, impl->width, impl->height);
  return std::max<size_t> (1, densest.count ()) * sizeof (cuv::MotionVector);
}

/* Where this frame's vectors go on the host: a block the meta takes without a copy (page-locked
 * memory of @ctx, or plain memory without one), or @fallback while all blocks are downstream.
 * NULL when a block's memory could not be had. */
uint8_t *
vector_target (GstCudaMotionestImpl *impl, GstCudaContext *ctx, uint8_t *fallback)
{
  return impl->vector_target.acquire (ctx, densest_vector_bytes (impl), kVectorBlocksOut, fallback);
}

/* After the search: the vectors are this frame's (on the host once the frame is finished). */
GstFlowReturn
searched (GstCudaMotionestImpl *impl, const cuv::MotionVector *vectors, const cuv::Plane *prev)
{
  impl->vectors = vectors;
  impl->processed = true;
  impl->first_frame = prev == nullptr;
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
  cuv::luma_plane_cpu (*in, cur);
  /* a buffer of our own for a shared input (common/route/cuvoutput.cpp): the frame first */
  if (in->planes[0].data != out->planes[0].data)
    cuv::copy_frame_cpu (*in, *out);
  impl->cpu_vectors.resize (std::max (1, impl->grid.count ()));
  auto *vectors = reinterpret_cast<cuv::MotionVector *> (
      vector_target (impl, nullptr, reinterpret_cast<uint8_t *> (impl->cpu_vectors.data ())));
  const cuv::MotionParams params = motion_params (impl);
  cuv::motion_prepare_reference (prev ? *prev : cur, params.range, &impl->cpu_reference);
  cuv::parallel_bands (cuv::motion_search_block_rows (params.block, cur.height),
      job->threads, [&] (int begin, int end) {
        cuv::motion_search_rows_cpu (cur, impl->cpu_reference, params, vectors, begin, end);
      });
  if (impl->frame_settings.draw == GST_CUDA_MOTIONEST_DRAW_ARROWS) {
    cuv::motion_arrows_cpu (vectors, impl->grid, impl->palette.arrows, *out);
  } else if (impl->frame_settings.draw == GST_CUDA_MOTIONEST_DRAW_COLOR) {
    cuv::motion_palette_wheel (&impl->palette, static_cast<int> (impl->frame_settings.range));
    const cuv::MotionPalette &p = impl->palette;
    cuv::motion_wheel_cpu (vectors, impl->grid, p.table.data (), p.table_range, p.black, *out);
  }
  return searched (impl, vectors, prev);
}

#if CUV_HAVE_CUDA
/* Device buffers for this caps: the vectors (sized for 4x4 units, the densest grid) and their
 * pinned fallback, a slot for each frame kept, the colour table. */
static cudaError_t
gst_cuda_motionest_ensure_buffers (GstCudaMotionestImpl *impl, GstCudaContext *ctx)
{
  if (impl->device_vectors)
    return cudaSuccess;
  const size_t vector_bytes = densest_vector_bytes (impl);
  const size_t table_bytes = static_cast<size_t> (kVotesSide) * kVotesSide * sizeof (uint32_t);
  cudaError_t err = impl->device_vectors.allocate (ctx, cuv::CudaBuffer::Kind::Device, vector_bytes);
  if (err == cudaSuccess)
    err = impl->pinned_vectors.allocate (ctx, cuv::CudaBuffer::Kind::Pinned, vector_bytes * G_N_ELEMENTS (impl->kept));
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
  impl->frame_votes = nullptr;
#endif
  for (MotionFrame &k : impl->kept) {
    if (k.block)
      cuv::BytesPool::give_back (k.block);
    k = MotionFrame{};
  }
  impl->vector_target.release ();
}

#if CUV_HAVE_CUDA
/* The colour table on the device, when the range changed. From pageable memory: the driver has
 * taken the bytes when the call returns, so the table may change while the copy is queued behind
 * frames that have not been waited for (frames in flight). */
static cudaError_t
gst_cuda_motionest_upload_table (GstCudaMotionestImpl *impl, cudaStream_t stream)
{
  cuv::motion_palette_wheel (&impl->palette, static_cast<int> (impl->frame_settings.range));
  const cuv::MotionPalette &p = impl->palette;
  if (impl->device_table_range == p.table_range)
    return cudaSuccess;
  impl->device_table_range = p.table_range;
  return cudaMemcpyAsync (impl->device_table.data (), p.table.data (), p.table.size () * sizeof (uint32_t),
      cudaMemcpyHostToDevice, stream);
}

/* The drawing on the device, as draw says. */
static bool
draw_cuda (GstCudaVisionFilter *self, GstCudaMotionestImpl *impl, const cuv::MotionVector *dvec, const cuv::Frame &out,
    cudaStream_t stream)
{
  const cuv::MotionPalette &p = impl->palette;
  if (impl->frame_settings.draw == GST_CUDA_MOTIONEST_DRAW_ARROWS)
    return CUV_CUDA_OK (self, cuv::motion_arrows_cuda (dvec, impl->grid, p.arrows, out, stream));
  if (impl->frame_settings.draw == GST_CUDA_MOTIONEST_DRAW_COLOR)
    return CUV_CUDA_OK (self, gst_cuda_motionest_upload_table (impl, stream)) &&
        CUV_CUDA_OK (self, cuv::motion_wheel_cuda (dvec, impl->grid, reinterpret_cast<const uint32_t *> (impl->device_table.data ()),
                               p.table_range, p.black, out, stream));
  return true;
}

/* The interval's votes on the GPU, only for frames that add to it: counting every unit's vector
 * on the host took most of the frame's time with messages on (docs/performance-log.md). */
static bool
count_votes_cuda (GstCudaVisionFilter *self, GstCudaMotionestImpl *impl, const cuv::MotionVector *dvec,
    GstCudaContext *ctx, cudaStream_t stream)
{
  impl->frame_votes = nullptr;
  if (impl->grid.count () == 0 || !impl->adds_to_interval)
    return true;
  if (!CUV_CUDA_OK (self, impl->votes.ensure (ctx, stream)))
    return false;
  /* each frame kept has its votes in a slot of its own (gst_cuda_motionest_keep_results) */
  impl->votes.next_slot ();
  if (!CUV_CUDA_OK (self, cuv::motion_votes_cuda (dvec, impl->grid.count (), static_cast<int> (impl->frame_settings.range),
                          impl->frame_settings.motion_threshold, impl->votes.to (), stream))) {
    impl->votes.launch_failed ();
    return false;
  }
  impl->frame_votes = &impl->votes.host ();
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
  if (!CUV_CUDA_OK (self, gst_cuda_motionest_ensure_buffers (impl, ctx))) {
    release_buffers (impl);
    return GST_FLOW_ERROR;
  }
  auto dvec = reinterpret_cast<cuv::MotionVector *> (impl->device_vectors.data ());
  const size_t vector_bytes = static_cast<size_t> (impl->grid.count ()) * sizeof (cuv::MotionVector);
  /* each frame kept has a fallback slot of its own (gst_cuda_motionest_keep_results) */
  impl->pinned_slot = (impl->pinned_slot + 1) % G_N_ELEMENTS (impl->kept);
  uint8_t *fallback = impl->pinned_vectors.data () + impl->pinned_slot * densest_vector_bytes (impl);
  uint8_t *host_vectors = vector_target (impl, ctx, fallback);
  if (!host_vectors) {
    /* the base class posts the error message */
    GST_ERROR_OBJECT (self, "no page-locked memory for the motion vectors (%" G_GSIZE_FORMAT " bytes)",
        impl->vector_target.block_size ());
    return GST_FLOW_ERROR;
  }
  if ((in->planes[0].data != out->planes[0].data && !CUV_CUDA_OK (self, cuv::copy_frame_cuda (*in, *out, stream))) ||
      !CUV_CUDA_OK (self, cuv::luma_plane_cuda (*in, cur, stream)) ||
      !CUV_CUDA_OK (self, cuv::motion_search_cuda (cur, prev ? *prev : cur, motion_params (impl), dvec, stream)) ||
      (vector_bytes && !CUV_CUDA_OK (self, cudaMemcpyAsync (host_vectors, dvec, vector_bytes, cudaMemcpyDeviceToHost,
                            stream))) ||
      !count_votes_cuda (self, impl, dvec, ctx, stream) || !draw_cuda (self, impl, dvec, *out, stream))
    return GST_FLOW_ERROR;
  /* the base class waits for the stream once, after this; then the vectors are on the host */
  return searched (impl, reinterpret_cast<const cuv::MotionVector *> (host_vectors), prev);
}
#endif

