/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-cudamotionest
 * @title: cudamotionest
 *
 * Block motion estimation on the GPU: each block of the frame's luma (the Y plane of NV12, I420
 * and GRAY8; the Y bytes of YUY2 and UYVY; each Y sample's top 8 bits for P010_10LE; BT.601
 * luma of RGBA, BGRA, RGBx and BGRx) is searched in the previous frame's luma at every integer
 * displacement (dx, dy) in [-R, R-1] x [-R, R-1], R = `search-range`; the one with
 * the lowest sum of absolute differences (SAD) wins, reference pixels outside the frame clamped to
 * the edge. Ties go to the smallest |dx| + |dy|, then the smallest dy, then the smallest dx, so
 * the GPU and the CPU backend give the same vectors. A vector (dx, dy) points from the block to
 * where its content was: the content moved by (-dx, -dy).
 *
 * `block-size=variable` (the default) searches 8x8 macroblocks once and keeps, for each, one 8x8
 * vector, two 8x4, two 4x8 or four 4x4 vectors, whichever costs least: cost = the summed SADs plus
 * `partition-penalty` for each vector beyond the first.
 *
 * Blocks tile the frame from its top-left corner and only whole blocks are searched: pixels of a
 * partial block at the right or bottom edge have no vector, and a frame smaller than one block has
 * an empty grid. The first frame after start, a flush, a caps change (not one of memory only) or a
 * DISCONT buffer has no previous frame: all its vectors are (0, 0) at cost 0.
 *
 * Every buffer carries a GstCustomMeta "CudaMotionMeta" with the grid and one 8-byte record per
 * unit (gstcudamotionmeta.h has the layout and a C accessor); with `regions`, each moving region
 * also as a GstVideoRegionOfInterestMeta "motion" and (GStreamer 1.24+ builds) an object detection
 * in the GstAnalyticsRelationMeta; with `tensor-meta` (GStreamer 1.26+ builds), the vector field
 * as a GstTensorMeta tensor "cudamotionest-vectors". If the #GstCudaMotionest:post-messages
 * property is %TRUE, an element message named `cudamotionest` is posted after each interval of
 * stream time given by the #GstCudaMotionest:interval property (0: every frame). Its
 * structure contains these fields:
 *
 * * #GstClockTime `timestamp`: the timestamp of the first buffer of the interval.
 * * #GstClockTime `stream-time`: the stream time of that buffer.
 * * #GstClockTime `running-time`: the running time of that buffer.
 * * #GstClockTime `duration`: the stream time the interval covers.
 * * #guint `frames`: the frames of the interval.
 * * #guint64 `units`: the grid units of the interval's frames.
 * * #gdouble `mean-magnitude`: the mean vector length over those units, in pixels.
 * * #gdouble `moving-ratio`: the share of units whose vector is not (0, 0) and whose block's SAD
 *   per pixel is below `motion-threshold`.
 * * #gint `global-dx`, `global-dy`: the most common vector of the interval.
 *
 * `draw=none` passes the frame through untouched (in place, read only); `arrows` draws each
 * block's vector on the frame, `color` replaces the frame with a colour-wheel flow image.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 -m videotestsrc pattern=ball num-buffers=30 ! cudaupload ! cudamotionest ! cudadownload ! fakesink
 * ]| Prints the global motion and the share of moving blocks of each frame.
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=NV12 ! cudamotionest draw=arrows block-size=16x16 ! videoconvert ! autovideosink
 * ]| A webcam with its motion vectors drawn.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gst/gstcudamotionest.h"

#include "gst/gstcudamotionmeta.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <gst/video/video.h>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "common/cuvanalytics.h"
#include "common/cuvbytespool.h"
#include "common/cuvcolor.h"
#include "common/cuvcpupool.h"
#include "common/cuvcuda.h"
#include "common/cuvenum.h"
#include "common/cuvresults.h"
#include "kernels/copy.h"
#include "kernels/luma.h"
#include "kernels/motion.h"
#include "kernels/motion_draw.h"
#include "kernels/regions.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_motionest_debug);
#define GST_CAT_DEFAULT gst_cuda_motionest_debug

typedef enum {
  GST_CUDA_MOTIONEST_DRAW_NONE,
  GST_CUDA_MOTIONEST_DRAW_ARROWS,
  GST_CUDA_MOTIONEST_DRAW_COLOR,
} GstCudaMotionestDraw;

#define GST_TYPE_CUDA_MOTIONEST_DRAW (gst_cuda_motionest_draw_get_type ())
static GType gst_cuda_motionest_draw_get_type (void);
/* The values are cuv::MotionBlock's. */
#define GST_TYPE_CUDA_MOTIONEST_BLOCK_SIZE (gst_cuda_motionest_block_size_get_type ())
static GType gst_cuda_motionest_block_size_get_type (void);

struct MotionSettings {
  cuv::MotionBlock block = cuv::MotionBlock::Variable;
  guint range = 16;
  guint penalty = 16;
  guint motion_threshold = 16;
  GstCudaMotionestDraw draw = GST_CUDA_MOTIONEST_DRAW_NONE;
  bool regions = false;
  guint min_region_area = 256;
  bool tensor_meta = false;
};

/* votes for the global vector: one per candidate of the largest range */
constexpr int kVotesSide = cuv::kMotionVotesSide;
/* the units a band of the interval's statistics counts (count_vectors) */
constexpr int kVoteBandUnits = 1 << 16;
/* An interval's sums, added on the streaming thread (gst_cuda_motionest_add_to_interval) and read
 * by its message on the messages' thread: each interval has its own, so the streaming thread never
 * touches one that a message may still read. */
struct MotionCount {
  guint64 units = 0;
  guint64 moving = 0;
  std::vector<guint32> votes = std::vector<guint32> (kVotesSide * kVotesSide);
};

struct GstCudaMotionestImpl {
  std::mutex lock;
  MotionSettings settings;

  /* streaming thread only */
  MotionSettings frame;
  cuv::MotionGrid grid{};
  cuv::PixelLayout layout = cuv::PixelLayout::RGBA;
  cuv::ColorMatrix matrix{};
  int width = 0;
  int height = 0;
  int luma_pitch = 0;
  int current = 0;        /* the luma buffer this frame goes into */
  bool have_previous = false;
  bool first_frame = false;
  const cuv::MotionVector *vectors = nullptr; /* this frame's, on the host once processed */
  bool processed = false;                     /* vectors are this frame's (NULL for an empty grid) */
  cuv::ArrowColors arrow_colors{};
  uint32_t black = 0;
  std::vector<uint32_t> table;                /* colour wheel for table_range */
  int table_range = 0;
  std::vector<uint8_t> cpu_luma[2];
  std::vector<cuv::MotionVector> cpu_vectors;
  cuv::MotionReference cpu_reference; /* the previous luma plane with its edges repeated */
  /* host blocks the vectors land in and the meta takes without a copy (page-locked for CUDA) */
  std::shared_ptr<cuv::BytesPool> vector_pool;
  cuv::BytesPool::Block *vector_block = nullptr; /* this frame's, until the meta takes it */
#if CUV_HAVE_CUDA
  cuv::CudaBuffer luma[2];
  cuv::CudaBuffer device_vectors;
  cuv::CudaBuffer pinned_vectors;
  cuv::CudaBuffer device_table;
  cuv::CudaBuffer pinned_table;
  int device_table_range = 0;
  /* the frame's votes, counted on the GPU where the frame adds to the interval */
  cuv::ResultBuffers<cuv::MotionVotes, cuv::MotionVotes> votes;
#endif
  const cuv::MotionVotes *frame_votes = nullptr; /* this frame's, on the host; NULL: count the vectors */
  /* the message interval's sums, and whether a frame went in */
  std::shared_ptr<MotionCount> count = std::make_shared<MotionCount> ();
  bool count_used = false;
  std::vector<uint8_t> moving_units; /* the regions' mask, a byte a unit */

  ~GstCudaMotionestImpl ()
  {
    if (vector_block)
      cuv::BytesPool::give_back (vector_block);
  }
};

struct _GstCudaMotionest {
  GstCudaVisionAnalyser parent;
  GstCudaMotionestImpl *impl;
};

#define MOTIONEST_CUDA_FORMATS "{ RGBA, BGRA, RGBx, BGRx, NV12, I420, YUY2, UYVY, P010_10LE }"
#define MOTIONEST_SYSTEM_FORMATS "{ RGBA, BGRA, RGBx, BGRx, NV12, I420, YUY2, UYVY, GRAY8, P010_10LE }"

static_assert (sizeof (GstCudaMotionVector) == sizeof (cuv::MotionVector) &&
        offsetof (GstCudaMotionVector, cost) == offsetof (cuv::MotionVector, cost),
    "the public record is the kernels' record");

enum {
  PROP_0,
  PROP_BLOCK_SIZE,
  PROP_SEARCH_RANGE,
  PROP_PARTITION_PENALTY,
  PROP_MOTION_THRESHOLD,
  PROP_DRAW,
  PROP_REGIONS,
  PROP_MIN_REGION_AREA,
  PROP_TENSOR_META,
};

static const MotionSettings kDefaults;

#define gst_cuda_motionest_parent_class parent_class
G_DEFINE_TYPE (GstCudaMotionest, gst_cuda_motionest, GST_TYPE_CUDA_VISION_ANALYSER);
GST_ELEMENT_REGISTER_DEFINE (cudamotionest, "cudamotionest", GST_RANK_NONE, GST_TYPE_CUDA_MOTIONEST);

static GType
gst_cuda_motionest_draw_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_MOTIONEST_DRAW_NONE, "The frame passes through unchanged", "none"},
    {GST_CUDA_MOTIONEST_DRAW_ARROWS, "Each block's vector drawn as an arrow on the frame", "arrows"},
    {GST_CUDA_MOTIONEST_DRAW_COLOR, "The frame replaced by a colour-wheel flow image", "color"},
    {0, nullptr, nullptr},
  };
  return cuv::enum_type (&type, "GstCudaMotionestDraw", values);
}

static GType
gst_cuda_motionest_block_size_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {static_cast<gint> (cuv::MotionBlock::B4), "4x4 blocks", "4x4"},
    {static_cast<gint> (cuv::MotionBlock::B8), "8x8 blocks", "8x8"},
    {static_cast<gint> (cuv::MotionBlock::B16), "16x16 blocks", "16x16"},
    {static_cast<gint> (cuv::MotionBlock::Variable),
        "8x8 macroblocks, split into 8x4, 4x8 or 4x4 blocks where that costs less", "variable"},
    {0, nullptr, nullptr},
  };
  return cuv::enum_type (&type, "GstCudaMotionestBlockSize", values);
}

/* ---- per frame ---- */

static cuv::MotionParams
motion_params (const GstCudaMotionestImpl *impl)
{
  return cuv::MotionParams{impl->frame.block, static_cast<int> (impl->frame.range), static_cast<int> (impl->frame.penalty)};
}

/* The colour wheel for this frame's range (rebuilt when the range changes). */
static void
gst_cuda_motionest_update_table (GstCudaMotionestImpl *impl)
{
  const int range = static_cast<int> (impl->frame.range);
  if (impl->table_range == range)
    return;
  impl->table = cuv::motion_color_table (range, impl->layout, impl->matrix.kr, impl->matrix.kb, impl->matrix.full_range);
  impl->table_range = range;
}

/* A luma plane of this caps at @base. */
static cuv::Plane
luma_plane (const GstCudaMotionestImpl *impl, uint8_t *base)
{
  return cuv::Plane{base, impl->luma_pitch, impl->width, impl->height};
}

/* blocks of vectors in metas downstream at once before the element copies instead */
constexpr unsigned kVectorBlocksOut = 8;

/* Where this frame's vectors go on the host: a block of the pool (page-locked memory of @ctx, or
 * plain memory without one), which the meta takes without a copy, or @fallback while all the
 * pool's blocks are still downstream. NULL when a block's page-locked memory could not be had. */
static uint8_t *
vector_target (GstCudaMotionestImpl *impl, GstCudaContext *ctx, uint8_t *fallback)
{
  const cuv::MotionGrid densest = cuv::motion_grid (cuv::MotionBlock::B4, impl->width, impl->height);
  const size_t bytes = std::max<size_t> (1, densest.count ()) * sizeof (cuv::MotionVector);
  if (impl->vector_block) {
    cuv::BytesPool::give_back (impl->vector_block);
    impl->vector_block = nullptr;
  }
  if (!impl->vector_pool || impl->vector_pool->block_size () != bytes)
    impl->vector_pool = cuv::BytesPool::make (ctx, bytes, kVectorBlocksOut);
  if (!impl->vector_pool->acquire (&impl->vector_block))
    return nullptr;
  return impl->vector_block ? cuv::BytesPool::data (impl->vector_block) : fallback;
}

/* Gives back this frame's vector block and drops the pool (caps change, stop); blocks still in
 * metas downstream go back to the old pool, which lives until the last one does. */
static void
gst_cuda_motionest_release_vectors (GstCudaMotionestImpl *impl)
{
  if (impl->vector_block)
    cuv::BytesPool::give_back (impl->vector_block);
  impl->vector_block = nullptr;
  impl->vector_pool.reset ();
}

static GstFlowReturn
gst_cuda_motionest_transform_cpu (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (filter)->impl;
  const size_t luma_bytes = static_cast<size_t> (impl->luma_pitch) * impl->height;
  for (auto &l : impl->cpu_luma)
    l.resize (luma_bytes);
  const cuv::Plane cur = luma_plane (impl, impl->cpu_luma[impl->current].data ());
  const cuv::Plane prev = impl->have_previous ? luma_plane (impl, impl->cpu_luma[impl->current ^ 1].data ()) : cur;
  cuv::luma_plane_cpu (*in, cur);
  /* a buffer of our own for a shared input (common/cuvoutput.cpp): the frame first */
  if (in->planes[0].data != out->planes[0].data)
    cuv::copy_frame_cpu (*in, *out);
  impl->cpu_vectors.resize (std::max (1, impl->grid.count ()));
  auto *vectors = reinterpret_cast<cuv::MotionVector *> (
      vector_target (impl, nullptr, reinterpret_cast<uint8_t *> (impl->cpu_vectors.data ())));
  /* without a previous frame the frame is searched against itself: (0, 0) at cost 0 everywhere */
  const cuv::MotionParams params = motion_params (impl);
  cuv::motion_prepare_reference (prev, params.range, &impl->cpu_reference);
  cuv::parallel_bands (cuv::motion_search_block_rows (params.block, cur.height),
      gst_cuda_vision_filter_get_n_threads (filter), [&] (int begin, int end) {
        cuv::motion_search_rows_cpu (cur, impl->cpu_reference, params, vectors, begin, end);
      });
  if (impl->frame.draw == GST_CUDA_MOTIONEST_DRAW_ARROWS) {
    cuv::motion_arrows_cpu (vectors, impl->grid, impl->arrow_colors, *out);
  } else if (impl->frame.draw == GST_CUDA_MOTIONEST_DRAW_COLOR) {
    gst_cuda_motionest_update_table (impl);
    cuv::motion_wheel_cpu (vectors, impl->grid, impl->table.data (), impl->table_range, impl->black, *out);
  }
  impl->vectors = vectors;
  impl->processed = true;
  impl->first_frame = !impl->have_previous;
  impl->have_previous = true;
  impl->current ^= 1;
  return GST_FLOW_OK;
}

#if CUV_HAVE_CUDA
/* Device buffers for this caps: two luma planes, the vectors (sized for 4x4 units, the densest
 * grid) and their pinned copy, the colour table. */
static cudaError_t
gst_cuda_motionest_ensure_buffers (GstCudaMotionestImpl *impl, GstCudaContext *ctx)
{
  if (impl->luma[0])
    return cudaSuccess;
  const size_t luma_bytes = static_cast<size_t> (impl->luma_pitch) * impl->height;
  const cuv::MotionGrid densest = cuv::motion_grid (cuv::MotionBlock::B4, impl->width, impl->height);
  const size_t vector_bytes = std::max<size_t> (1, densest.count ()) * sizeof (cuv::MotionVector);
  const size_t table_bytes = static_cast<size_t> (kVotesSide) * kVotesSide * sizeof (uint32_t);
  cudaError_t err = cudaSuccess;
  for (auto &l : impl->luma)
    if (err == cudaSuccess)
      err = l.allocate (ctx, cuv::CudaBuffer::Kind::Device, std::max<size_t> (1, luma_bytes));
  if (err == cudaSuccess)
    err = impl->device_vectors.allocate (ctx, cuv::CudaBuffer::Kind::Device, vector_bytes);
  if (err == cudaSuccess)
    err = impl->pinned_vectors.allocate (ctx, cuv::CudaBuffer::Kind::Pinned, vector_bytes);
  if (err == cudaSuccess)
    err = impl->device_table.allocate (ctx, cuv::CudaBuffer::Kind::Device, table_bytes);
  if (err == cudaSuccess)
    err = impl->pinned_table.allocate (ctx, cuv::CudaBuffer::Kind::Pinned, table_bytes);
  impl->device_table_range = 0;
  return err;
}

/* Frees the device buffers (caps change, stop). */
static void
gst_cuda_motionest_release_buffers (GstCudaMotionestImpl *impl)
{
  for (auto &l : impl->luma)
    l.reset ();
  impl->device_vectors.reset ();
  impl->pinned_vectors.reset ();
  impl->device_table.reset ();
  impl->pinned_table.reset ();
  impl->device_table_range = 0;
  impl->votes.reset ();
  impl->frame_votes = nullptr;
  gst_cuda_motionest_release_vectors (impl);
}

/* The colour table on the device. The pinned copy is rewritten only after the base class has
 * synchronized the stream of the frame that last uploaded it. */
static cudaError_t
gst_cuda_motionest_upload_table (GstCudaMotionestImpl *impl, cudaStream_t stream)
{
  gst_cuda_motionest_update_table (impl);
  if (impl->device_table_range == impl->table_range)
    return cudaSuccess;
  const size_t bytes = impl->table.size () * sizeof (uint32_t);
  memcpy (impl->pinned_table.data (), impl->table.data (), bytes);
  impl->device_table_range = impl->table_range;
  return cudaMemcpyAsync (impl->device_table.data (), impl->pinned_table.data (), bytes, cudaMemcpyHostToDevice, stream);
}

static GstFlowReturn
gst_cuda_motionest_transform_cuda (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out,
    cudaStream_t stream)
{
  GstCudaMotionest *self = GST_CUDA_MOTIONEST (filter);
  GstCudaMotionestImpl *impl = self->impl;
  if (!CUV_CUDA_OK (self, gst_cuda_motionest_ensure_buffers (impl, gst_cuda_vision_filter_get_context (filter)))) {
    gst_cuda_motionest_release_buffers (impl);
    return GST_FLOW_ERROR;
  }
  const cuv::Plane cur = luma_plane (impl, impl->luma[impl->current].data ());
  const cuv::Plane prev = impl->have_previous ? luma_plane (impl, impl->luma[impl->current ^ 1].data ()) : cur;
  auto dvec = reinterpret_cast<cuv::MotionVector *> (impl->device_vectors.data ());
  const size_t vector_bytes = static_cast<size_t> (impl->grid.count ()) * sizeof (cuv::MotionVector);
  uint8_t *host_vectors = vector_target (impl, gst_cuda_vision_filter_get_context (filter), impl->pinned_vectors.data ());
  if (!host_vectors) {
    /* the base class posts the error message */
    GST_ERROR_OBJECT (self, "no page-locked memory for the motion vectors (%" G_GSIZE_FORMAT " bytes)",
        impl->vector_pool->block_size ());
    return GST_FLOW_ERROR;
  }
  if ((in->planes[0].data != out->planes[0].data && !CUV_CUDA_OK (self, cuv::copy_frame_cuda (*in, *out, stream))) ||
      !CUV_CUDA_OK (self, cuv::luma_plane_cuda (*in, cur, stream)) ||
      !CUV_CUDA_OK (self, cuv::motion_search_cuda (cur, prev, motion_params (impl), dvec, stream)) ||
      (vector_bytes && !CUV_CUDA_OK (self, cudaMemcpyAsync (host_vectors, dvec, vector_bytes, cudaMemcpyDeviceToHost,
                            stream))))
    return GST_FLOW_ERROR;
  /* the interval's votes on the GPU: counting every unit's vector on the host took most of the
   * frame's time with messages on (docs/performance.md) */
  impl->frame_votes = nullptr;
  if (impl->grid.count () > 0 && gst_cuda_vision_analyser_frame_posts_messages (GST_CUDA_VISION_ANALYSER (self))) {
    if (!CUV_CUDA_OK (self, impl->votes.ensure (gst_cuda_vision_filter_get_context (filter), stream)) ||
        !CUV_CUDA_OK (self, cuv::motion_votes_cuda (dvec, impl->grid.count (), static_cast<int> (impl->frame.range),
                                impl->frame.motion_threshold, impl->votes.to (), stream)))
      return GST_FLOW_ERROR;
    impl->frame_votes = &impl->votes.host ();
  }
  if (impl->frame.draw == GST_CUDA_MOTIONEST_DRAW_ARROWS) {
    if (!CUV_CUDA_OK (self, cuv::motion_arrows_cuda (dvec, impl->grid, impl->arrow_colors, *out, stream)))
      return GST_FLOW_ERROR;
  } else if (impl->frame.draw == GST_CUDA_MOTIONEST_DRAW_COLOR) {
    if (!CUV_CUDA_OK (self, gst_cuda_motionest_upload_table (impl, stream)) ||
        !CUV_CUDA_OK (self, cuv::motion_wheel_cuda (dvec, impl->grid,
                                reinterpret_cast<const uint32_t *> (impl->device_table.data ()), impl->table_range,
                                impl->black, *out, stream)))
      return GST_FLOW_ERROR;
  }
  /* the base class waits for the stream once, after this; then the vectors are on the host */
  impl->vectors = reinterpret_cast<const cuv::MotionVector *> (host_vectors);
  impl->processed = true;
  impl->first_frame = !impl->have_previous;
  impl->have_previous = true;
  impl->current ^= 1;
  return GST_FLOW_OK;
}
#endif

/* ---- results ---- */

/* A new interval counts into sums of its own; the last one's stay with the message that still
 * reads them. */
static void
gst_cuda_motionest_reset_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  if (impl->count_used)
    impl->count = std::make_shared<MotionCount> ();
  impl->count_used = false;
}

static const char *
block_size_nick (cuv::MotionBlock b)
{
  GEnumValue *v = g_enum_get_value (G_ENUM_CLASS (g_type_class_peek (GST_TYPE_CUDA_MOTIONEST_BLOCK_SIZE)),
      static_cast<gint> (b));
  return v ? v->value_nick : "?";
}

/* Adds a frame's @votes of search range @range to @count. */
static void
add_votes (MotionCount *count, const cuv::MotionVotes &votes, int range)
{
  for (int dy = -range; dy < range; dy++)
    for (int dx = -range; dx < range; dx++)
      count->votes[cuv::motion_vote_index (dx, dy)] += votes.votes[cuv::motion_vote_index (dx, dy)];
  count->moving += votes.moving;
}

/* Adds @n vectors of search range @range to @count: a vote per vector and the moving count; the mean length comes from
 * the votes at the interval's end (interval_results), so the loop over the vectors (518,400 at
 * 3840x2160 with variable blocks) takes no square root. 4K's 518,400 units took 1.3 ms one by one
 * on the H100's host; bands of kVoteBandUnits on the shared workers (common/cuvcpupool.h), each
 * with votes of its own added at its end, halved that (docs/performance.md); 1080p's 129,600 stay
 * in one band. */
static void
count_vectors (MotionCount *count, const cuv::MotionVector *vectors, int n, guint thr, int range)
{
  const int bands = std::clamp (n / kVoteBandUnits, 1, cuv::cpu_cores ());
  std::mutex lock;
  cuv::parallel_bands (n, bands, [&] (int begin, int end) {
    auto votes = std::make_unique<cuv::MotionVotes> ();
    cuv::motion_votes_cpu (vectors + begin, end - begin, thr, votes.get ());
    std::lock_guard<std::mutex> lk (lock);
    add_votes (count, *votes, range);
  });
  count->units += n;
}

/* Adds this frame's vectors to the interval's sums. On the CUDA backend the GPU counted them
 * (cuv::motion_votes_cuda, launched with the search): counting every unit's vector on the host
 * was most of the frame's time with messages every frame (docs/performance.md), and the streaming
 * thread adds the range's votes. On the CPU backend, whose search takes far longer, it counts
 * them in bands (count_vectors). */
static void
gst_cuda_motionest_add_to_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  const int n = impl->vectors ? impl->grid.count () : 0;
  impl->count_used = true;
  if (n == 0)
    return;
  if (impl->frame_votes) {
    add_votes (impl->count.get (), *impl->frame_votes, static_cast<int> (impl->frame.range));
    impl->count->units += n;
  } else {
    count_vectors (impl->count.get (), impl->vectors, n, impl->frame.motion_threshold, static_cast<int> (impl->frame.range));
  }
}

/* The summed length of the interval's vectors: each candidate's length times its votes. */
static double
summed_magnitude (const MotionCount &count)
{
  static const std::vector<double> length = [] {
    std::vector<double> l (kVotesSide * kVotesSide);
    for (int y = -cuv::kMotionMaxRange; y < cuv::kMotionMaxRange; y++)
      for (int x = -cuv::kMotionMaxRange; x < cuv::kMotionMaxRange; x++)
        l[cuv::motion_vote_index (x, y)] = std::sqrt (static_cast<double> (x * x + y * y));
    return l;
  }();
  double sum = 0;
  for (size_t k = 0; k < length.size (); k++)
    sum += count.votes[k] * length[k];
  return sum;
}

/* The most common vector of the interval; ties go to the candidate the search prefers. */
static void
global_vector (const MotionCount &count, int *dx, int *dy)
{
  guint32 best = 0;
  uint32_t best_tb = UINT32_MAX;
  *dx = *dy = 0;
  for (int y = -cuv::kMotionMaxRange; y < cuv::kMotionMaxRange; y++) {
    for (int x = -cuv::kMotionMaxRange; x < cuv::kMotionMaxRange; x++) {
      const guint32 c = count.votes[cuv::motion_vote_index (x, y)];
      const uint32_t tb = cuv::motion_tie_break (x, y);
      if (c > best || (c == best && c > 0 && tb < best_tb)) {
        best = c;
        best_tb = tb;
        *dx = x;
        *dy = y;
      }
    }
  }
}

static void
gst_cuda_motionest_frame_results (GstCudaVisionAnalyser *analyser, GstStructure *meta)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  const cuv::MotionGrid &g = impl->grid;
  /* the meta takes this frame's block as it is; a copy only while all blocks are downstream */
  const gsize size = static_cast<gsize> (g.count ()) * sizeof (cuv::MotionVector);
  GBytes *bytes = impl->vector_block ? cuv::BytesPool::wrap (impl->vector_block, size) : g_bytes_new (impl->vectors, size);
  impl->vector_block = nullptr;
  gst_structure_set (meta, "block-size", G_TYPE_STRING, block_size_nick (impl->frame.block), "search-range", G_TYPE_UINT,
      impl->frame.range, "columns", G_TYPE_UINT, static_cast<guint> (g.cols), "rows", G_TYPE_UINT,
      static_cast<guint> (g.rows), "unit", G_TYPE_UINT, static_cast<guint> (g.unit), "vectors", G_TYPE_BYTES, bytes,
      "first-frame", G_TYPE_BOOLEAN, impl->first_frame, nullptr);
  g_bytes_unref (bytes);
}

#if HAVE_GST_TENSOR_META
/* With `tensor-meta`: the vectors as a tensor "cudamotionest-vectors", INT8 [rows, columns, 2]
 * of (dx, dy) per unit (docs/results.md). */
static void
attach_vector_tensor (const GstCudaMotionestImpl *impl, GstBuffer *buf)
{
  static const GQuark id = g_quark_from_static_string ("cudamotionest-vectors");
  const cuv::MotionGrid &g = impl->grid;
  const gsize n = static_cast<gsize> (g.count ());
  auto *d = static_cast<gint8 *> (g_malloc (2 * n));
  for (gsize i = 0; i < n; i++) {
    d[2 * i] = impl->vectors[i].dx;
    d[2 * i + 1] = impl->vectors[i].dy;
  }
  GBytes *bytes = g_bytes_new_take (d, 2 * n);
  cuv::attach_tensor (buf, id, cuv::TensorType::Int8, {static_cast<gsize> (g.rows), static_cast<gsize> (g.cols), 2}, bytes);
  g_bytes_unref (bytes);
}
#endif

/* With `regions`: the 8-connected regions of moving units (cuv::motion_unit_moves) of
 * at least min-region-area pixels, each as a GstVideoRegionOfInterestMeta "motion" with a
 * "detection" parameter holding its confidence (the share of the box's units that move) and as an
 * object detection of type "motion" (cuvanalytics.h, docs/results.md). */
static void
gst_cuda_motionest_attach_metas (GstCudaVisionAnalyser *analyser, GstBuffer *buf)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  const cuv::MotionGrid &g = impl->grid;
  if (!impl->vectors || g.count () == 0)
    return;
#if HAVE_GST_TENSOR_META
  if (impl->frame.tensor_meta)
    attach_vector_tensor (impl, buf);
#endif
  if (!impl->frame.regions || impl->first_frame)
    return;
  impl->moving_units.resize (g.count ());
  for (int i = 0; i < g.count (); i++)
    impl->moving_units[i] = cuv::motion_unit_moves (impl->vectors[i], impl->frame.motion_threshold);
  const int unit_pixels = g.unit * g.unit;
  const int min_units = std::max (1, static_cast<int> ((impl->frame.min_region_area + unit_pixels - 1) / unit_pixels));
  static const GQuark motion = g_quark_from_static_string ("motion");
  for (const cuv::Region &r : cuv::connected_regions (impl->moving_units.data (), g.cols, g.rows, min_units)) {
    const guint x = r.x * g.unit, y = r.y * g.unit, w = r.width * g.unit, h = r.height * g.unit;
    cuv::attach_region (buf, motion, cuv::RegionBox{x, y, w, h, static_cast<double> (r.cells) / (r.width * r.height)});
  }
}

static void
gst_cuda_motionest_interval_results (GstCudaVisionAnalyser *analyser, cuv::ResultWriter *write)
{
  /* the message reads the interval's sums on the messages' thread; the streaming thread counts
   * into new ones from the next frame (gst_cuda_motionest_reset_interval) */
  *write = [count = GST_CUDA_MOTIONEST (analyser)->impl->count] (GstStructure *s) {
    int dx, dy;
    global_vector (*count, &dx, &dy);
    const double units = count->units ? static_cast<double> (count->units) : 1.0;
    gst_structure_set (s, "units", G_TYPE_UINT64, count->units, "mean-magnitude", G_TYPE_DOUBLE,
        summed_magnitude (*count) / units, "moving-ratio", G_TYPE_DOUBLE, static_cast<double> (count->moving) / units,
        "global-dx", G_TYPE_INT, dx, "global-dy", G_TYPE_INT, dy, nullptr);
  };
}

static gboolean
gst_cuda_motionest_writes_frame (GstCudaVisionFilter *filter)
{
  return GST_CUDA_MOTIONEST (filter)->impl->frame.draw != GST_CUDA_MOTIONEST_DRAW_NONE;
}

/* Forgets the previous frame (docs/design.md, "Temporal elements"), saying @why in the debug log. */
static void
gst_cuda_motionest_reset (GstCudaMotionest *self, const char *why)
{
  GstCudaMotionestImpl *impl = self->impl;
  GST_DEBUG_OBJECT (self, "%s: forgetting the previous frame", why);
  impl->have_previous = false;
}

/* keeps_caps: the base class works in place unless downstream takes only the other memory. */
static void
gst_cuda_motionest_begin_frame (GstCudaVisionAnalyser *analyser, GstBuffer *buf)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  {
    std::lock_guard<std::mutex> lk (impl->lock);
    impl->frame = impl->settings;
  }
  impl->grid = cuv::motion_grid (impl->frame.block, impl->width, impl->height);
  if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DISCONT) && impl->have_previous) {
    GST_DEBUG_OBJECT (analyser, "DISCONT: forgetting the previous frame");
    impl->have_previous = false;
  }
  impl->processed = false;
}

static gboolean
gst_cuda_motionest_end_frame (GstCudaVisionAnalyser *analyser)
{
  return GST_CUDA_MOTIONEST (analyser)->impl->processed;
}

/* ---- caps and state ---- */

static gboolean
gst_cuda_motionest_set_info (GstCudaVisionFilter *filter, const GstVideoInfo *in_info, const GstVideoInfo *)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (filter)->impl;
  /* the same frames in another memory: the luma planes and vectors stay */
  if (gst_cuda_vision_filter_stream_continues (filter))
    return TRUE;
  if (!gst_cuda_vision_layout_from_format (GST_VIDEO_INFO_FORMAT (in_info), &impl->layout))
    return FALSE;
  impl->width = GST_VIDEO_INFO_WIDTH (in_info);
  impl->height = GST_VIDEO_INFO_HEIGHT (in_info);
  impl->luma_pitch = (impl->width + 255) / 256 * 256;
  impl->matrix = cuv::color_matrix (in_info);
  const cuv::ColorMatrix &m = impl->matrix;
  impl->arrow_colors.line = cuv::motion_frame_color (impl->layout, m.kr, m.kb, m.full_range, 0, 255, 0);
  impl->arrow_colors.head = cuv::motion_frame_color (impl->layout, m.kr, m.kb, m.full_range, 255, 0, 0);
  impl->black = cuv::motion_frame_color (impl->layout, m.kr, m.kb, m.full_range, 0, 0, 0);
  impl->table_range = 0;
#if CUV_HAVE_CUDA
  gst_cuda_motionest_release_buffers (impl);
#endif
  gst_cuda_motionest_release_vectors (impl);
  impl->cpu_luma[0].clear ();
  impl->cpu_luma[1].clear ();
  gst_cuda_motionest_reset (GST_CUDA_MOTIONEST (filter), "new caps");
  return TRUE;
}

static gboolean
gst_cuda_motionest_sink_event (GstBaseTransform *trans, GstEvent *event)
{
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
    gst_cuda_motionest_reset (GST_CUDA_MOTIONEST (trans), "FLUSH_STOP");
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

/* After the base class has finished the frames in flight (its stop). */
static void
gst_cuda_motionest_release (GstCudaVisionFilter *filter)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (filter)->impl;
#if CUV_HAVE_CUDA
  gst_cuda_motionest_release_buffers (impl);
#endif
  gst_cuda_motionest_release_vectors (impl);
  impl->processed = false;
  gst_cuda_motionest_reset (GST_CUDA_MOTIONEST (filter), "stop");
}

/* ---- properties ---- */

static void
gst_cuda_motionest_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (object)->impl;
  std::lock_guard<std::mutex> lk (impl->lock);
  MotionSettings &s = impl->settings;
  switch (prop_id) {
    case PROP_BLOCK_SIZE:
      s.block = static_cast<cuv::MotionBlock> (g_value_get_enum (value));
      break;
    case PROP_SEARCH_RANGE:
      s.range = g_value_get_uint (value);
      break;
    case PROP_PARTITION_PENALTY:
      s.penalty = g_value_get_uint (value);
      break;
    case PROP_MOTION_THRESHOLD:
      s.motion_threshold = g_value_get_uint (value);
      break;
    case PROP_DRAW:
      s.draw = static_cast<GstCudaMotionestDraw> (g_value_get_enum (value));
      break;
    case PROP_REGIONS:
      s.regions = g_value_get_boolean (value);
      break;
    case PROP_MIN_REGION_AREA:
      s.min_region_area = g_value_get_uint (value);
      break;
    case PROP_TENSOR_META:
      s.tensor_meta = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_cuda_motionest_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (object)->impl;
  std::lock_guard<std::mutex> lk (impl->lock);
  const MotionSettings &s = impl->settings;
  switch (prop_id) {
    case PROP_BLOCK_SIZE:
      g_value_set_enum (value, static_cast<gint> (s.block));
      break;
    case PROP_SEARCH_RANGE:
      g_value_set_uint (value, s.range);
      break;
    case PROP_PARTITION_PENALTY:
      g_value_set_uint (value, s.penalty);
      break;
    case PROP_MOTION_THRESHOLD:
      g_value_set_uint (value, s.motion_threshold);
      break;
    case PROP_DRAW:
      g_value_set_enum (value, s.draw);
      break;
    case PROP_REGIONS:
      g_value_set_boolean (value, s.regions);
      break;
    case PROP_MIN_REGION_AREA:
      g_value_set_uint (value, s.min_region_area);
      break;
    case PROP_TENSOR_META:
      g_value_set_boolean (value, s.tensor_meta);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_cuda_motionest_finalize (GObject *object)
{
  delete GST_CUDA_MOTIONEST (object)->impl;
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_cuda_motionest_class_init (GstCudaMotionestClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstCudaVisionFilterClass *filter_class = GST_CUDA_VISION_FILTER_CLASS (klass);
  GstCudaVisionAnalyserClass *analyser_class = GST_CUDA_VISION_ANALYSER_CLASS (klass);
  const auto flags = static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  gobject_class->set_property = gst_cuda_motionest_set_property;
  gobject_class->get_property = gst_cuda_motionest_get_property;
  gobject_class->finalize = gst_cuda_motionest_finalize;

  /**
   * GstCudaMotionest:block-size:
   *
   * The blocks searched; `variable` splits 8x8 macroblocks where that costs less.
   */
  g_object_class_install_property (gobject_class, PROP_BLOCK_SIZE,
      g_param_spec_enum ("block-size", "Block size",
          "Size of the blocks searched; variable: 8x8 macroblocks, split into 8x4, 4x8 or 4x4 where that costs less",
          GST_TYPE_CUDA_MOTIONEST_BLOCK_SIZE, static_cast<gint> (kDefaults.block), flags));
  /**
   * GstCudaMotionest:search-range:
   *
   * R: every displacement in [-R, R-1] x [-R, R-1] is tried (16: a 32x32 window).
   */
  g_object_class_install_property (gobject_class, PROP_SEARCH_RANGE,
      g_param_spec_uint ("search-range", "Search range",
          "R: every displacement in [-R, R-1] x [-R, R-1] pixels is tried (16 = a 32x32 window)", 1,
          cuv::kMotionMaxRange, kDefaults.range, flags));
  /**
   * GstCudaMotionest:partition-penalty:
   *
   * With variable blocks: SAD added for each vector of a macroblock beyond the first.
   */
  g_object_class_install_property (gobject_class, PROP_PARTITION_PENALTY,
      g_param_spec_uint ("partition-penalty", "Partition penalty",
          "With block-size=variable: SAD added for each vector of a macroblock beyond the first (higher keeps 8x8)",
          0, 65535, kDefaults.penalty, static_cast<GParamFlags> (flags | GST_PARAM_CONTROLLABLE)));
  /**
   * GstCudaMotionest:motion-threshold:
   *
   * For moving-ratio: a block with a non-zero vector moves when its SAD per pixel is below this.
   */
  g_object_class_install_property (gobject_class, PROP_MOTION_THRESHOLD,
      g_param_spec_uint ("motion-threshold", "Motion threshold",
          "A block with a non-zero vector counts as moving in moving-ratio when its SAD per pixel is below this "
          "(a worse match is noise or occlusion)",
          0, 255, kDefaults.motion_threshold, static_cast<GParamFlags> (flags | GST_PARAM_CONTROLLABLE)));
  /**
   * GstCudaMotionest:draw:
   *
   * `none`: the frame passes unchanged; `arrows`: vectors drawn on it; `color`: a flow image.
   */
  g_object_class_install_property (gobject_class, PROP_DRAW,
      g_param_spec_enum ("draw", "Draw",
          "none: the frame passes unchanged; arrows: each block's vector drawn on the frame; color: the frame replaced "
          "by a colour-wheel flow image (hue = direction, brightness = length)",
          GST_TYPE_CUDA_MOTIONEST_DRAW, kDefaults.draw, flags));
  /**
   * GstCudaMotionest:regions:
   *
   * Attach the moving regions to each buffer: a GstVideoRegionOfInterestMeta of type "motion"
   * each and, where GStreamer's analytics library is there (1.24+), an object detection of type
   * "motion" in its GstAnalyticsRelationMeta, which `objectdetectionoverlay` draws.
   */
  g_object_class_install_property (gobject_class, PROP_REGIONS,
      g_param_spec_boolean ("regions", "Regions",
          "Attach each region of moving blocks (8-connected, moving as in motion-threshold) as a "
          "GstVideoRegionOfInterestMeta \"motion\" and, with GStreamer 1.24+, an object detection \"motion\" in the "
          "analytics relation meta; confidence: the share of the box's blocks that move",
          kDefaults.regions, static_cast<GParamFlags> (flags | GST_PARAM_CONTROLLABLE)));
  /**
   * GstCudaMotionest:min-region-area:
   *
   * With `regions`: the least moving area, in pixels, that a region needs to be attached.
   */
  g_object_class_install_property (gobject_class, PROP_MIN_REGION_AREA,
      g_param_spec_uint ("min-region-area", "Minimum region area",
          "With regions=true: the least area of moving blocks, in pixels, that a region needs to be attached "
          "(smaller ones are left out as noise)",
          0, G_MAXINT, kDefaults.min_region_area, static_cast<GParamFlags> (flags | GST_PARAM_CONTROLLABLE)));
#if HAVE_GST_TENSOR_META
  /**
   * GstCudaMotionest:tensor-meta:
   *
   * Attach each frame's vector field as a tensor "cudamotionest-vectors" of INT8, dimensions
   * [rows, columns, 2] (dx, dy of each unit, as in the meta's vectors), in the buffer's
   * GstTensorMeta. Only where the plugin was built with GStreamer 1.26 or later.
   */
  g_object_class_install_property (gobject_class, PROP_TENSOR_META,
      g_param_spec_boolean ("tensor-meta", "Tensor meta",
          "Attach the vector field as a GstTensorMeta tensor \"cudamotionest-vectors\" (INT8, dimensions "
          "[rows, columns, 2]: dx, dy of each unit)",
          kDefaults.tensor_meta, flags));
#endif
  /**
   * GstCudaMotionest:post-messages:
   *
   * Post a `cudamotionest` element message every `interval`.
   */
  /**
   * GstCudaMotionest:interval:
   *
   * Nanoseconds of stream per message; 0 posts one per frame.
   */
  gst_cuda_vision_analyser_class_set_results (analyser_class, "cudamotionest", GST_CUDA_MOTION_META_NAME,
      "the statistics cover the frames of an interval");

  gst_element_class_set_static_metadata (element_class, "CUDA motion estimation", "Filter/Analyzer/Video/Hardware",
      "Block motion vectors against the previous frame by full-search SAD, with variable block sizes, on the GPU; "
      "the vectors as buffer meta, their statistics as bus messages, optionally drawn as arrows or a flow image",
      "gst-cudavision developers");
  gst_cuda_vision_filter_class_add_templates (element_class, MOTIONEST_CUDA_FORMATS, MOTIONEST_SYSTEM_FORMATS);

  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_motionest_sink_event);
  filter_class->supports_in_place = TRUE;
  filter_class->keeps_caps = TRUE;
  filter_class->writes_frame = GST_DEBUG_FUNCPTR (gst_cuda_motionest_writes_frame);
  filter_class->set_info = GST_DEBUG_FUNCPTR (gst_cuda_motionest_set_info);
  filter_class->release = GST_DEBUG_FUNCPTR (gst_cuda_motionest_release);
  filter_class->transform_cpu = GST_DEBUG_FUNCPTR (gst_cuda_motionest_transform_cpu);
#if CUV_HAVE_CUDA
  filter_class->transform_cuda = GST_DEBUG_FUNCPTR (gst_cuda_motionest_transform_cuda);
#endif
  analyser_class->begin_frame = GST_DEBUG_FUNCPTR (gst_cuda_motionest_begin_frame);
  analyser_class->end_frame = GST_DEBUG_FUNCPTR (gst_cuda_motionest_end_frame);
  analyser_class->frame_results = GST_DEBUG_FUNCPTR (gst_cuda_motionest_frame_results);
  analyser_class->attach_metas = GST_DEBUG_FUNCPTR (gst_cuda_motionest_attach_metas);
  analyser_class->add_to_interval = GST_DEBUG_FUNCPTR (gst_cuda_motionest_add_to_interval);
  analyser_class->interval_results = GST_DEBUG_FUNCPTR (gst_cuda_motionest_interval_results);
  analyser_class->reset_interval = GST_DEBUG_FUNCPTR (gst_cuda_motionest_reset_interval);

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_MOTIONEST_DRAW, static_cast<GstPluginAPIFlags> (0));
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_MOTIONEST_BLOCK_SIZE, static_cast<GstPluginAPIFlags> (0));
  GST_DEBUG_CATEGORY_INIT (gst_cuda_motionest_debug, "cudamotionest", 0, "CUDA motion estimation");
}

static void
gst_cuda_motionest_init (GstCudaMotionest *self)
{
  self->impl = new GstCudaMotionestImpl ();
}
