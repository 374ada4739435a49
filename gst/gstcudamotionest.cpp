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

#include "gst/gstcudamotionestframe.h"
#include "gst/gstcudamotionmeta.h"

#include <algorithm>
#include <cstddef>
#include <gst/video/video.h>
#include <memory>
#include <mutex>
#include <vector>

#include "common/results/cuvanalytics.h"
#include "common/base/cuvcolor.h"
#include "common/base/cuvcpupool.h"
#include "common/base/cuvenum.h"
#include "common/element/cuvsettings.h"
#include "kernels/motion/motion.h"
#include "kernels/motion/motion_draw.h"

GST_DEBUG_CATEGORY (gst_cuda_motionest_debug);
#define GST_CAT_DEFAULT gst_cuda_motionest_debug

/* The values are cuv::MotionBlock's. */

/* the units a band of the interval's statistics counts (gst_cuda_motionest_add_to_interval) */
constexpr int kVoteBandUnits = 1 << 16;

struct _GstCudaMotionest {
  GstCudaVisionAnalyser parent;
  GstCudaMotionestImpl *impl;
};

#define MOTIONEST_CUDA_FORMATS "{ RGBA, BGRA, RGBx, BGRx, NV12, I420, YUY2, UYVY, P010_10LE }"
#define MOTIONEST_SYSTEM_FORMATS "{ RGBA, BGRA, RGBx, BGRx, NV12, I420, YUY2, UYVY, GRAY8, P010_10LE }"

static_assert (sizeof (GstCudaMotionVector) == sizeof (cuv::MotionVector) &&
        offsetof (GstCudaMotionVector, cost) == offsetof (cuv::MotionVector, cost),
    "the public record is the kernels' record");


#define gst_cuda_motionest_parent_class parent_class
G_DEFINE_TYPE (GstCudaMotionest, gst_cuda_motionest, GST_TYPE_CUDA_VISION_ANALYSER);
GST_ELEMENT_REGISTER_DEFINE (cudamotionest, "cudamotionest", GST_RANK_NONE, GST_TYPE_CUDA_MOTIONEST);



/* the frame's work: gstcudamotionestframe.cpp */
static GstFlowReturn
gst_cuda_motionest_transform_cpu (GstCudaVisionFilter *filter, const cuv::FrameJob *job)
{
  return motionest::search_cpu (filter, GST_CUDA_MOTIONEST (filter)->impl, job);
}

#if CUV_HAVE_CUDA
static GstFlowReturn
gst_cuda_motionest_transform_cuda (GstCudaVisionFilter *filter, const cuv::FrameJob *job)
{
  return motionest::search_cuda (filter, GST_CUDA_MOTIONEST (filter)->impl, job);
}
#endif

static gboolean
gst_cuda_motionest_writes_frame (GstCudaVisionFilter *, const cuv::FrameResults *results)
{
  return results && static_cast<const MotionFrame *> (results)->settings.draw != GST_CUDA_MOTIONEST_DRAW_NONE;
}

static cuv::FrameResults *
gst_cuda_motionest_new_results (GstCudaVisionAnalyser *)
{
  return new MotionFrame ();
}

/* keeps_caps: the base class works in place unless downstream takes only the other memory. The
 * value may be an earlier frame's: what it still holds goes. */
static void
gst_cuda_motionest_begin_frame (GstCudaVisionAnalyser *analyser, GstBuffer *, cuv::FrameResults *results)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  auto *frame = static_cast<MotionFrame *> (results);
  frame->settings = cuv::snapshot (analyser, impl->settings);
  frame->grid = cuv::motion_grid (frame->settings.block, impl->width, impl->height);
  frame->processed = false;
  frame->vectors = nullptr;
  frame->votes = nullptr;
  frame->block.reset ();
}

/* ---- results ---- */

static gboolean
gst_cuda_motionest_end_frame (GstCudaVisionAnalyser *, cuv::FrameResults *results)
{
  return static_cast<const MotionFrame *> (results)->processed;
}

static void
gst_cuda_motionest_reset_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  if (impl->count_used) {
    impl->count.units = impl->count.moving = 0;
    std::fill (impl->count.votes.begin (), impl->count.votes.end (), 0u);
  }
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
 * kVoteBandUnits on the shared workers (common/base/cuvcpupool.h), each with votes of its own, where a
 * frame has more (4K's 518,400 4x4 units; docs/performance-log.md, "The analysers with their default
 * properties"). */
static void
gst_cuda_motionest_add_to_interval (GstCudaVisionAnalyser *analyser, const cuv::FrameResults *results)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  const auto *frame = static_cast<const MotionFrame *> (results);
  const int n = frame->vectors ? frame->grid.count () : 0;
  const int range = static_cast<int> (frame->settings.range);
  cuv::MotionTally *count = &impl->count;
  impl->count_used = true;
  if (n == 0)
    return;
  count->units += n;
  if (frame->votes) {
    cuv::motion_tally_add (count, *frame->votes, range);
    return;
  }
  std::mutex lock;
  cuv::parallel_bands (n, std::clamp (n / kVoteBandUnits, 1, cuv::cpu_cores ()), [&] (int begin, int end) {
    auto votes = std::make_unique<cuv::MotionVotes> ();
    cuv::motion_votes_cpu (frame->vectors + begin, end - begin, frame->settings.motion_threshold, votes.get ());
    std::lock_guard<std::mutex> lk (lock);
    cuv::motion_tally_add (count, *votes, range);
  });
}

static void
gst_cuda_motionest_frame_results (GstCudaVisionAnalyser *, cuv::FrameResults *results, GstStructure *meta)
{
  auto *frame = static_cast<MotionFrame *> (results);
  const cuv::MotionGrid &g = frame->grid;
  /* the meta takes this frame's block as it is; a copy only while all blocks are downstream */
  GBytes *bytes = frame->block.take (frame->vectors, static_cast<gsize> (g.count ()) * sizeof (cuv::MotionVector));
  gst_structure_set (meta, "block-size", G_TYPE_STRING, block_size_nick (frame->settings.block), "search-range", G_TYPE_UINT,
      frame->settings.range, "columns", G_TYPE_UINT, static_cast<guint> (g.cols), "rows", G_TYPE_UINT,
      static_cast<guint> (g.rows), "unit", G_TYPE_UINT, static_cast<guint> (g.unit), "vectors", G_TYPE_BYTES, bytes,
      "first-frame", G_TYPE_BOOLEAN, frame->first_frame, nullptr);
  g_bytes_unref (bytes);
}

/* With `tensor-meta` (GStreamer 1.26+ builds): the vectors as a tensor "cudamotionest-vectors",
 * INT8 [rows, columns, 2] of (dx, dy) per unit (docs/results.md). With `regions`: the 8-connected
 * regions of moving units (cuv::motion_unit_moves) of at least min-region-area pixels, each as a
 * GstVideoRegionOfInterestMeta "motion" with a "detection" parameter holding its confidence (the
 * region's own moving units over its box's units) and as an object detection of type "motion"
 * (cuvanalytics.h, docs/results.md). */
static void
gst_cuda_motionest_attach_metas (GstCudaVisionAnalyser *analyser, cuv::FrameResults *results, GstBuffer *buf)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  const auto *frame = static_cast<const MotionFrame *> (results);
  const cuv::MotionGrid &g = frame->grid;
  if (!frame->vectors || g.count () == 0)
    return;
#if HAVE_GST_TENSOR_META
  static const GQuark id = g_quark_from_static_string ("cudamotionest-vectors");
  if (frame->settings.tensor_meta) {
    std::vector<int8_t> field = cuv::motion_vector_field (frame->vectors, g.count ());
    GBytes *bytes = g_bytes_new (field.data (), field.size ());
    cuv::attach_tensor (buf, id, cuv::TensorType::Int8, {static_cast<gsize> (g.rows), static_cast<gsize> (g.cols), 2}, bytes);
    g_bytes_unref (bytes);
  }
#endif
  if (!frame->settings.regions || frame->first_frame)
    return;
  static const GQuark motion = g_quark_from_static_string ("motion");
  cuv::attach_regions (buf, motion, cuv::motion_regions (frame->vectors, g, frame->settings.motion_threshold,
      frame->settings.min_region_area, &impl->regions));
}

static void
gst_cuda_motionest_interval_results (GstCudaVisionAnalyser *analyser, GstStructure *s)
{
  const cuv::MotionTally *count = &GST_CUDA_MOTIONEST (analyser)->impl->count;
  int dx, dy;
  cuv::motion_global_vector (*count, &dx, &dy);
  const double units = count->units ? static_cast<double> (count->units) : 1.0;
  gst_structure_set (s, "units", G_TYPE_UINT64, count->units, "mean-magnitude", G_TYPE_DOUBLE,
      cuv::motion_summed_magnitude (*count) / units, "moving-ratio", G_TYPE_DOUBLE, static_cast<double> (count->moving) / units,
      "global-dx", G_TYPE_INT, dx, "global-dy", G_TYPE_INT, dy, nullptr);
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
  motionest::release_buffers (impl);
  return TRUE;
}

/* After the base class has finished the frames in flight (its stop). */
static void
gst_cuda_motionest_release (GstCudaVisionFilter *filter)
{
  motionest::release_buffers (GST_CUDA_MOTIONEST (filter)->impl);
}

/* ---- properties ---- */

static MotionSettings *
gst_cuda_motionest_settings (GObject *object)
{
  return &GST_CUDA_MOTIONEST (object)->impl->settings;
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
  gobject_class->finalize = gst_cuda_motionest_finalize;
  gst_cuda_motionest_install_properties (gobject_class, gst_cuda_motionest_settings);
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
  analyser_class->new_results = GST_DEBUG_FUNCPTR (gst_cuda_motionest_new_results);
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
