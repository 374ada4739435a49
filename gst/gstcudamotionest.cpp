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
 * an empty grid. The first frame after start, a flush, a gap, a caps change (not one of memory
 * only) or a DISCONT buffer has no previous frame: all its vectors are (0, 0) at cost 0.
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
#include "common/cuvsettings.h"
#include "kernels/copy.h"
#include "kernels/luma.h"
#include "kernels/motion.h"
#include "kernels/motion_draw.h"

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
/* blocks of vectors in metas downstream at once before the element copies instead */
constexpr unsigned kVectorBlocksOut = 8;

struct GstCudaMotionestImpl {
  std::mutex lock;
  MotionSettings settings;

  /* streaming thread only */
  MotionSettings frame;
  cuv::MotionGrid grid{};
  int width = 0;
  int height = 0;
  cuv::MotionPalette palette;
  bool first_frame = false;                   /* searched against itself: no previous frame */
  const cuv::MotionVector *vectors = nullptr; /* this frame's, on the host once processed */
  bool processed = false;                     /* vectors are this frame's (NULL for an empty grid) */
  /* host blocks the vectors land in and the meta takes without a copy (page-locked for CUDA) */
  cuv::BytesTarget vector_target;
  std::vector<cuv::MotionVector> cpu_vectors;
  cuv::MotionReference cpu_reference; /* the previous luma plane with its edges repeated */
#if CUV_HAVE_CUDA
  cuv::CudaBuffer device_vectors;
  cuv::CudaBuffer pinned_vectors;
  cuv::CudaBuffer device_table;
  cuv::CudaBuffer pinned_table;
  int device_table_range = 0;
  /* the frame's votes, counted on the GPU where the frame adds to the interval */
  cuv::ResultBuffers<cuv::MotionVotes, cuv::MotionVotes> votes;
#endif
  const cuv::MotionVotes *frame_votes = nullptr; /* this frame's, on the host; NULL: count the vectors */
  /* the message interval's sums (each interval has its own: a message may still read the last
   * one's on the messages' thread), and whether a frame went in */
  std::shared_ptr<cuv::MotionTally> count = std::make_shared<cuv::MotionTally> ();
  bool count_used = false;
  std::vector<uint8_t> moving_units; /* the regions' mask, a byte a unit */
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

/* Where this frame's vectors go on the host: a block the meta takes without a copy (page-locked
 * memory of @ctx, or plain memory without one; sized for 4x4 units, the densest grid), or
 * @fallback while all blocks are downstream. NULL when a block's memory could not be had. */
static uint8_t *
vector_target (GstCudaMotionestImpl *impl, GstCudaContext *ctx, uint8_t *fallback)
{
  const cuv::MotionGrid densest = cuv::motion_grid (cuv::MotionBlock::B4, impl->width, impl->height);
  const size_t bytes = std::max<size_t> (1, densest.count ()) * sizeof (cuv::MotionVector);
  return impl->vector_target.acquire (ctx, bytes, kVectorBlocksOut, fallback);
}

/* After the search: the vectors are this frame's (on the host once the frame is finished). */
static GstFlowReturn
searched (GstCudaMotionestImpl *impl, const cuv::MotionVector *vectors, const cuv::Plane *prev)
{
  impl->vectors = vectors;
  impl->processed = true;
  impl->first_frame = prev == nullptr;
  return GST_FLOW_OK;
}

/* Without a previous frame the frame is searched against itself: (0, 0) at cost 0 everywhere. */
static GstFlowReturn
gst_cuda_motionest_transform_cpu (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (filter)->impl;
  cuv::Plane cur;
  const cuv::Plane *prev;
  gst_cuda_vision_filter_luma_planes (filter, &cur, &prev);
  cuv::luma_plane_cpu (*in, cur);
  /* a buffer of our own for a shared input (common/cuvoutput.cpp): the frame first */
  if (in->planes[0].data != out->planes[0].data)
    cuv::copy_frame_cpu (*in, *out);
  impl->cpu_vectors.resize (std::max (1, impl->grid.count ()));
  auto *vectors = reinterpret_cast<cuv::MotionVector *> (
      vector_target (impl, nullptr, reinterpret_cast<uint8_t *> (impl->cpu_vectors.data ())));
  const cuv::MotionParams params = motion_params (impl);
  cuv::motion_prepare_reference (prev ? *prev : cur, params.range, &impl->cpu_reference);
  cuv::parallel_bands (cuv::motion_search_block_rows (params.block, cur.height),
      gst_cuda_vision_filter_get_n_threads (filter), [&] (int begin, int end) {
        cuv::motion_search_rows_cpu (cur, impl->cpu_reference, params, vectors, begin, end);
      });
  if (impl->frame.draw == GST_CUDA_MOTIONEST_DRAW_ARROWS) {
    cuv::motion_arrows_cpu (vectors, impl->grid, impl->palette.arrows, *out);
  } else if (impl->frame.draw == GST_CUDA_MOTIONEST_DRAW_COLOR) {
    cuv::motion_palette_wheel (&impl->palette, static_cast<int> (impl->frame.range));
    const cuv::MotionPalette &p = impl->palette;
    cuv::motion_wheel_cpu (vectors, impl->grid, p.table.data (), p.table_range, p.black, *out);
  }
  return searched (impl, vectors, prev);
}

#if CUV_HAVE_CUDA
/* Device buffers for this caps: the vectors (sized for 4x4 units, the densest grid) and their
 * pinned copy, the colour table. */
static cudaError_t
gst_cuda_motionest_ensure_buffers (GstCudaMotionestImpl *impl, GstCudaContext *ctx)
{
  if (impl->device_vectors)
    return cudaSuccess;
  const cuv::MotionGrid densest = cuv::motion_grid (cuv::MotionBlock::B4, impl->width, impl->height);
  const size_t vector_bytes = std::max<size_t> (1, densest.count ()) * sizeof (cuv::MotionVector);
  const size_t table_bytes = static_cast<size_t> (kVotesSide) * kVotesSide * sizeof (uint32_t);
  cudaError_t err = impl->device_vectors.allocate (ctx, cuv::CudaBuffer::Kind::Device, vector_bytes);
  if (err == cudaSuccess)
    err = impl->pinned_vectors.allocate (ctx, cuv::CudaBuffer::Kind::Pinned, vector_bytes);
  if (err == cudaSuccess)
    err = impl->device_table.allocate (ctx, cuv::CudaBuffer::Kind::Device, table_bytes);
  if (err == cudaSuccess)
    err = impl->pinned_table.allocate (ctx, cuv::CudaBuffer::Kind::Pinned, table_bytes);
  impl->device_table_range = 0;
  return err;
}
#endif

/* Frees what the element keeps for this caps (caps change, stop). */
static void
gst_cuda_motionest_release_buffers (GstCudaMotionestImpl *impl)
{
#if CUV_HAVE_CUDA
  impl->device_vectors.reset ();
  impl->pinned_vectors.reset ();
  impl->device_table.reset ();
  impl->pinned_table.reset ();
  impl->device_table_range = 0;
  impl->votes.reset ();
  impl->frame_votes = nullptr;
#endif
  impl->vector_target.release ();
}

#if CUV_HAVE_CUDA
/* The colour table on the device. The pinned copy is rewritten only after the base class has
 * synchronized the stream of the frame that last uploaded it. */
static cudaError_t
gst_cuda_motionest_upload_table (GstCudaMotionestImpl *impl, cudaStream_t stream)
{
  cuv::motion_palette_wheel (&impl->palette, static_cast<int> (impl->frame.range));
  const cuv::MotionPalette &p = impl->palette;
  if (impl->device_table_range == p.table_range)
    return cudaSuccess;
  const size_t bytes = p.table.size () * sizeof (uint32_t);
  memcpy (impl->pinned_table.data (), p.table.data (), bytes);
  impl->device_table_range = p.table_range;
  return cudaMemcpyAsync (impl->device_table.data (), impl->pinned_table.data (), bytes, cudaMemcpyHostToDevice, stream);
}

/* The drawing on the device, as draw says. */
static bool
draw_cuda (GstCudaMotionest *self, const cuv::MotionVector *dvec, const cuv::Frame &out, cudaStream_t stream)
{
  GstCudaMotionestImpl *impl = self->impl;
  const cuv::MotionPalette &p = impl->palette;
  if (impl->frame.draw == GST_CUDA_MOTIONEST_DRAW_ARROWS)
    return CUV_CUDA_OK (self, cuv::motion_arrows_cuda (dvec, impl->grid, p.arrows, out, stream));
  if (impl->frame.draw == GST_CUDA_MOTIONEST_DRAW_COLOR)
    return CUV_CUDA_OK (self, gst_cuda_motionest_upload_table (impl, stream)) &&
        CUV_CUDA_OK (self, cuv::motion_wheel_cuda (dvec, impl->grid, reinterpret_cast<const uint32_t *> (impl->device_table.data ()),
                               p.table_range, p.black, out, stream));
  return true;
}

/* The interval's votes on the GPU, only for frames that add to it: counting every unit's vector
 * on the host took most of the frame's time with messages on (docs/performance.md). */
static bool
count_votes_cuda (GstCudaMotionest *self, const cuv::MotionVector *dvec, cudaStream_t stream)
{
  GstCudaMotionestImpl *impl = self->impl;
  impl->frame_votes = nullptr;
  if (impl->grid.count () == 0 || !gst_cuda_vision_analyser_frame_posts_messages (GST_CUDA_VISION_ANALYSER (self)))
    return true;
  if (!CUV_CUDA_OK (self, impl->votes.ensure (gst_cuda_vision_filter_get_context (GST_CUDA_VISION_FILTER (self)), stream)) ||
      !CUV_CUDA_OK (self, cuv::motion_votes_cuda (dvec, impl->grid.count (), static_cast<int> (impl->frame.range),
                              impl->frame.motion_threshold, impl->votes.to (), stream)))
    return false;
  impl->frame_votes = &impl->votes.host ();
  return true;
}

static GstFlowReturn
gst_cuda_motionest_transform_cuda (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out,
    cudaStream_t stream)
{
  GstCudaMotionest *self = GST_CUDA_MOTIONEST (filter);
  GstCudaMotionestImpl *impl = self->impl;
  GstCudaContext *ctx = gst_cuda_vision_filter_get_context (filter);
  cuv::Plane cur;
  const cuv::Plane *prev;
  if (!CUV_CUDA_OK (self, gst_cuda_motionest_ensure_buffers (impl, ctx)) ||
      !gst_cuda_vision_filter_luma_planes (filter, &cur, &prev)) {
    gst_cuda_motionest_release_buffers (impl);
    return GST_FLOW_ERROR;
  }
  auto dvec = reinterpret_cast<cuv::MotionVector *> (impl->device_vectors.data ());
  const size_t vector_bytes = static_cast<size_t> (impl->grid.count ()) * sizeof (cuv::MotionVector);
  uint8_t *host_vectors = vector_target (impl, ctx, impl->pinned_vectors.data ());
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
      !count_votes_cuda (self, dvec, stream) || !draw_cuda (self, dvec, *out, stream))
    return GST_FLOW_ERROR;
  /* the base class waits for the stream once, after this; then the vectors are on the host */
  return searched (impl, reinterpret_cast<const cuv::MotionVector *> (host_vectors), prev);
}
#endif

static gboolean
gst_cuda_motionest_writes_frame (GstCudaVisionFilter *filter)
{
  return GST_CUDA_MOTIONEST (filter)->impl->frame.draw != GST_CUDA_MOTIONEST_DRAW_NONE;
}

/* keeps_caps: the base class works in place unless downstream takes only the other memory. */
static void
gst_cuda_motionest_begin_frame (GstCudaVisionAnalyser *analyser, GstBuffer *)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  {
    std::lock_guard<std::mutex> lk (impl->lock);
    impl->frame = impl->settings;
  }
  impl->grid = cuv::motion_grid (impl->frame.block, impl->width, impl->height);
  impl->processed = false;
}

/* ---- results ---- */

static gboolean
gst_cuda_motionest_end_frame (GstCudaVisionAnalyser *analyser)
{
  return GST_CUDA_MOTIONEST (analyser)->impl->processed;
}

/* A new interval counts into sums of its own; the last one's stay with the message that still
 * reads them. */
static void
gst_cuda_motionest_reset_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  if (impl->count_used)
    impl->count = std::make_shared<cuv::MotionTally> ();
  impl->count_used = false;
}

static const char *
block_size_nick (cuv::MotionBlock b)
{
  GEnumValue *v = g_enum_get_value (G_ENUM_CLASS (g_type_class_peek (GST_TYPE_CUDA_MOTIONEST_BLOCK_SIZE)),
      static_cast<gint> (b));
  return v ? v->value_nick : "?";
}

/* Adds this frame's vectors to the interval's sums. On the CUDA backend the GPU counted them
 * (count_votes_cuda, launched with the search), and the streaming thread adds the range's votes.
 * On the CPU backend, whose search takes far longer, the vectors are counted here: in bands of
 * kVoteBandUnits on the shared workers (common/cuvcpupool.h), each with votes of its own, where a
 * frame has more (4K's 518,400 4x4 units; docs/performance.md, "The analysers with their default
 * properties"). */
static void
gst_cuda_motionest_add_to_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  const int n = impl->vectors ? impl->grid.count () : 0;
  const int range = static_cast<int> (impl->frame.range);
  cuv::MotionTally *count = impl->count.get ();
  impl->count_used = true;
  if (n == 0)
    return;
  count->units += n;
  if (impl->frame_votes) {
    cuv::motion_tally_add (count, *impl->frame_votes, range);
    return;
  }
  std::mutex lock;
  cuv::parallel_bands (n, std::clamp (n / kVoteBandUnits, 1, cuv::cpu_cores ()), [&] (int begin, int end) {
    auto votes = std::make_unique<cuv::MotionVotes> ();
    cuv::motion_votes_cpu (impl->vectors + begin, end - begin, impl->frame.motion_threshold, votes.get ());
    std::lock_guard<std::mutex> lk (lock);
    cuv::motion_tally_add (count, *votes, range);
  });
}

static void
gst_cuda_motionest_frame_results (GstCudaVisionAnalyser *analyser, GstStructure *meta)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  const cuv::MotionGrid &g = impl->grid;
  /* the meta takes this frame's block as it is; a copy only while all blocks are downstream */
  GBytes *bytes = impl->vector_target.take (impl->vectors, static_cast<gsize> (g.count ()) * sizeof (cuv::MotionVector));
  gst_structure_set (meta, "block-size", G_TYPE_STRING, block_size_nick (impl->frame.block), "search-range", G_TYPE_UINT,
      impl->frame.range, "columns", G_TYPE_UINT, static_cast<guint> (g.cols), "rows", G_TYPE_UINT,
      static_cast<guint> (g.rows), "unit", G_TYPE_UINT, static_cast<guint> (g.unit), "vectors", G_TYPE_BYTES, bytes,
      "first-frame", G_TYPE_BOOLEAN, impl->first_frame, nullptr);
  g_bytes_unref (bytes);
}

/* With `tensor-meta` (GStreamer 1.26+ builds): the vectors as a tensor "cudamotionest-vectors",
 * INT8 [rows, columns, 2] of (dx, dy) per unit (docs/results.md). With `regions`: the 8-connected
 * regions of moving units (cuv::motion_unit_moves) of at least min-region-area pixels, each as a
 * GstVideoRegionOfInterestMeta "motion" with a "detection" parameter holding its confidence (the
 * share of the box's units that move) and as an object detection of type "motion"
 * (cuvanalytics.h, docs/results.md). */
static void
gst_cuda_motionest_attach_metas (GstCudaVisionAnalyser *analyser, GstBuffer *buf)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  const cuv::MotionGrid &g = impl->grid;
  if (!impl->vectors || g.count () == 0)
    return;
#if HAVE_GST_TENSOR_META
  static const GQuark id = g_quark_from_static_string ("cudamotionest-vectors");
  if (impl->frame.tensor_meta) {
    std::vector<int8_t> field = cuv::motion_vector_field (impl->vectors, g.count ());
    GBytes *bytes = g_bytes_new (field.data (), field.size ());
    cuv::attach_tensor (buf, id, cuv::TensorType::Int8, {static_cast<gsize> (g.rows), static_cast<gsize> (g.cols), 2}, bytes);
    g_bytes_unref (bytes);
  }
#endif
  if (!impl->frame.regions || impl->first_frame)
    return;
  static const GQuark motion = g_quark_from_static_string ("motion");
  const guint unit_pixels = g.unit * g.unit;
  for (const cuv::Region &r : cuv::motion_regions (impl->vectors, g, impl->frame.motion_threshold,
           impl->frame.min_region_area, &impl->moving_units))
    cuv::attach_region (buf, motion, cuv::RegionBox{static_cast<guint> (r.x), static_cast<guint> (r.y),
        static_cast<guint> (r.width), static_cast<guint> (r.height), static_cast<double> (r.cells) * unit_pixels / (r.width * r.height)});
}

static void
gst_cuda_motionest_interval_results (GstCudaVisionAnalyser *analyser, cuv::ResultWriter *write)
{
  /* the message reads the interval's sums on the messages' thread; the streaming thread counts
   * into new ones from the next frame (gst_cuda_motionest_reset_interval) */
  *write = [count = GST_CUDA_MOTIONEST (analyser)->impl->count] (GstStructure *s) {
    int dx, dy;
    cuv::motion_global_vector (*count, &dx, &dy);
    const double units = count->units ? static_cast<double> (count->units) : 1.0;
    gst_structure_set (s, "units", G_TYPE_UINT64, count->units, "mean-magnitude", G_TYPE_DOUBLE,
        cuv::motion_summed_magnitude (*count) / units, "moving-ratio", G_TYPE_DOUBLE, static_cast<double> (count->moving) / units,
        "global-dx", G_TYPE_INT, dx, "global-dy", G_TYPE_INT, dy, nullptr);
  };
}

/* ---- caps and state ---- */

static gboolean
gst_cuda_motionest_set_info (GstCudaVisionFilter *filter, const GstVideoInfo *in_info, const GstVideoInfo *)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (filter)->impl;
  /* the same frames in another memory: the vectors stay (the base class keeps the luma planes) */
  if (gst_cuda_vision_filter_stream_continues (filter))
    return TRUE;
  cuv::PixelLayout layout;
  if (!gst_cuda_vision_layout_from_format (GST_VIDEO_INFO_FORMAT (in_info), &layout))
    return FALSE;
  impl->width = GST_VIDEO_INFO_WIDTH (in_info);
  impl->height = GST_VIDEO_INFO_HEIGHT (in_info);
  const cuv::ColorMatrix m = cuv::color_matrix (in_info);
  impl->palette = cuv::motion_palette (layout, m.kr, m.kb, m.full_range);
  gst_cuda_motionest_release_buffers (impl);
  return TRUE;
}

/* After the base class has finished the frames in flight (its stop). */
static void
gst_cuda_motionest_release (GstCudaVisionFilter *filter)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (filter)->impl;
  gst_cuda_motionest_release_buffers (impl);
  impl->processed = false;
}

/* ---- properties ---- */

/* each property's field in MotionSettings, by id */
static const cuv::SettingsField kFields[] = {{0}, {offsetof (MotionSettings, block)}, {offsetof (MotionSettings, range)},
    {offsetof (MotionSettings, penalty)}, {offsetof (MotionSettings, motion_threshold)}, {offsetof (MotionSettings, draw)},
    {offsetof (MotionSettings, regions)}, {offsetof (MotionSettings, min_region_area)},
    {offsetof (MotionSettings, tensor_meta)}};
static_assert (sizeof (cuv::MotionBlock) == sizeof (gint) && sizeof (GstCudaMotionestDraw) == sizeof (gint),
    "enum properties are int fields");

static void
gst_cuda_motionest_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (object)->impl;
  std::lock_guard<std::mutex> lk (impl->lock);
  if (prop_id == PROP_0 || prop_id >= G_N_ELEMENTS (kFields) || !cuv::set_settings_field (&impl->settings, kFields[prop_id], value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
gst_cuda_motionest_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (object)->impl;
  std::lock_guard<std::mutex> lk (impl->lock);
  if (prop_id == PROP_0 || prop_id >= G_N_ELEMENTS (kFields) || !cuv::get_settings_field (&impl->settings, kFields[prop_id], value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
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
  gst_cuda_vision_analyser_class_set_results (analyser_class, "cudamotionest", GST_CUDA_MOTION_META_NAME);

  gst_element_class_set_static_metadata (element_class, "CUDA motion estimation", "Filter/Analyzer/Video/Hardware",
      "Block motion vectors against the previous frame by full-search SAD, with variable block sizes, on the GPU; "
      "the vectors as buffer meta, their statistics as bus messages, optionally drawn as arrows or a flow image",
      "gst-cudavision developers");
  gst_cuda_vision_filter_class_add_templates (element_class, MOTIONEST_CUDA_FORMATS, MOTIONEST_SYSTEM_FORMATS);

  filter_class->supports_in_place = TRUE;
  filter_class->temporal = TRUE;
  filter_class->temporal_luma = TRUE;
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
