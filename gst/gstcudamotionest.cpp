/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-cudamotionest
 * @title: cudamotionest
 *
 * Block motion estimation on the GPU: each block of the frame's luma (the Y plane of NV12, I420
 * and GRAY8; BT.601 luma of RGBA, BGRA, RGBx and BGRx) is searched in the previous frame's luma at
 * every integer displacement (dx, dy) in [-R, R-1] x [-R, R-1], R = `search-range`; the one with
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
 * an empty grid. The first frame after start, a flush, a caps change or a DISCONT buffer has no
 * previous frame: all its vectors are (0, 0) at cost 0.
 *
 * Every buffer carries a GstCustomMeta "CudaMotionMeta" with the grid and one 8-byte record per
 * unit (gstcudamotionmeta.h has the layout and a C accessor). With `post-messages` on, an element
 * message `cudamotionest` is posted every `interval` nanoseconds with timestamp, stream-time,
 * running-time, duration (as `level` names them), frames, units, mean-magnitude (mean vector
 * length in pixels), moving-ratio (share of units whose vector is non-zero and whose SAD per pixel
 * is below `motion-threshold`) and global-dx, global-dy (the most common vector).
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

#include "gstcudamotionest.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <vector>

#include "cuvcolor.h"
#include "gstcudamotionmeta.h"
#include "luma.h"
#include "motion_draw.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_motionest_debug);
#define GST_CAT_DEFAULT gst_cuda_motionest_debug

#define MOTIONEST_CUDA_FORMATS "{ RGBA, BGRA, RGBx, BGRx, NV12, I420 }"
#define MOTIONEST_SYSTEM_FORMATS "{ RGBA, BGRA, RGBx, BGRx, NV12, I420, GRAY8 }"

static_assert (sizeof (GstCudaMotionVector) == sizeof (cuv::MotionVector) &&
        offsetof (GstCudaMotionVector, cost) == offsetof (cuv::MotionVector, cost),
    "the public record is the kernels' record");

typedef enum {
  GST_CUDA_MOTIONEST_DRAW_NONE,
  GST_CUDA_MOTIONEST_DRAW_ARROWS,
  GST_CUDA_MOTIONEST_DRAW_COLOR,
} GstCudaMotionestDraw;

#define GST_TYPE_CUDA_MOTIONEST_DRAW (gst_cuda_motionest_draw_get_type ())
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
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaMotionestDraw", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

/* The values are cuv::MotionBlock's. */
#define GST_TYPE_CUDA_MOTIONEST_BLOCK_SIZE (gst_cuda_motionest_block_size_get_type ())
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
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaMotionestBlockSize", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

enum {
  PROP_0,
  PROP_BLOCK_SIZE,
  PROP_SEARCH_RANGE,
  PROP_PARTITION_PENALTY,
  PROP_MOTION_THRESHOLD,
  PROP_DRAW,
};

struct MotionSettings {
  cuv::MotionBlock block = cuv::MotionBlock::Variable;
  guint range = 16;
  guint penalty = 16;
  guint motion_threshold = 16;
  GstCudaMotionestDraw draw = GST_CUDA_MOTIONEST_DRAW_NONE;
};

static const MotionSettings kDefaults;

/* votes for the global vector: one per candidate of the largest range */
constexpr int kVotesSide = 2 * cuv::kMotionMaxRange;

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
#if CUV_HAVE_CUDA
  cuv::CudaBuffer luma[2];
  cuv::CudaBuffer device_vectors;
  cuv::CudaBuffer pinned_vectors;
  cuv::CudaBuffer device_table;
  cuv::CudaBuffer pinned_table;
  int device_table_range = 0;
#endif
  /* the message interval's sums */
  guint64 units = 0;
  guint64 moving = 0;
  double magnitude = 0;
  std::vector<guint32> votes = std::vector<guint32> (kVotesSide * kVotesSide);
};

struct _GstCudaMotionest {
  GstCudaVisionAnalyser parent;
  GstCudaMotionestImpl *impl;
};

#define gst_cuda_motionest_parent_class parent_class
G_DEFINE_TYPE (GstCudaMotionest, gst_cuda_motionest, GST_TYPE_CUDA_VISION_ANALYSER);
GST_ELEMENT_REGISTER_DEFINE (cudamotionest, "cudamotionest", GST_RANK_NONE, GST_TYPE_CUDA_MOTIONEST);

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

static gboolean
gst_cuda_motionest_writes_frame (GstCudaVisionFilter *filter)
{
  return GST_CUDA_MOTIONEST (filter)->impl->frame.draw != GST_CUDA_MOTIONEST_DRAW_NONE;
}

/* A luma plane of this caps at @base. */
static cuv::Plane
luma_plane (const GstCudaMotionestImpl *impl, uint8_t *base)
{
  return cuv::Plane{base, impl->luma_pitch, impl->width, impl->height};
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
  impl->cpu_vectors.resize (impl->grid.count ());
  /* without a previous frame the frame is searched against itself: (0, 0) at cost 0 everywhere */
  cuv::motion_search_cpu (cur, prev, motion_params (impl), impl->cpu_vectors.data ());
  if (impl->frame.draw == GST_CUDA_MOTIONEST_DRAW_ARROWS) {
    cuv::motion_arrows_cpu (impl->cpu_vectors.data (), impl->grid, impl->arrow_colors, *out);
  } else if (impl->frame.draw == GST_CUDA_MOTIONEST_DRAW_COLOR) {
    gst_cuda_motionest_update_table (impl);
    cuv::motion_wheel_cpu (impl->cpu_vectors.data (), impl->grid, impl->table.data (), impl->table_range, impl->black,
        *out);
  }
  impl->vectors = impl->cpu_vectors.data ();
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
  if (!CUV_CUDA_OK (self, cuv::luma_plane_cuda (*in, cur, stream)) ||
      !CUV_CUDA_OK (self, cuv::motion_search_cuda (cur, prev, motion_params (impl), dvec, stream)) ||
      (vector_bytes && !CUV_CUDA_OK (self, cudaMemcpyAsync (impl->pinned_vectors.data (), dvec, vector_bytes,
                            cudaMemcpyDeviceToHost, stream))))
    return GST_FLOW_ERROR;
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
  impl->vectors = reinterpret_cast<const cuv::MotionVector *> (impl->pinned_vectors.data ());
  impl->processed = true;
  impl->first_frame = !impl->have_previous;
  impl->have_previous = true;
  impl->current ^= 1;
  return GST_FLOW_OK;
}
#endif

/* ---- results ---- */

static void
gst_cuda_motionest_reset_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  impl->units = 0;
  impl->moving = 0;
  impl->magnitude = 0;
  std::fill (impl->votes.begin (), impl->votes.end (), 0);
}

/* Forgets the previous frame (DESIGN.md rule 8), saying @why in the debug log. */
static void
gst_cuda_motionest_reset (GstCudaMotionest *self, const char *why)
{
  GstCudaMotionestImpl *impl = self->impl;
  GST_DEBUG_OBJECT (self, "%s: forgetting the previous frame", why);
  impl->have_previous = false;
}

static const char *
block_size_nick (cuv::MotionBlock b)
{
  GEnumValue *v = g_enum_get_value (G_ENUM_CLASS (g_type_class_peek (GST_TYPE_CUDA_MOTIONEST_BLOCK_SIZE)),
      static_cast<gint> (b));
  return v ? v->value_nick : "?";
}

/* Adds this frame's vectors to the interval's statistics. */
static void
gst_cuda_motionest_add_to_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  const int n = impl->grid.count ();
  const guint thr = impl->frame.motion_threshold;
  for (int i = 0; i < n; i++) {
    const cuv::MotionVector &v = impl->vectors[i];
    const bool still = v.dx == 0 && v.dy == 0;
    impl->magnitude += std::sqrt (static_cast<double> (v.dx * v.dx + v.dy * v.dy));
    /* cost per pixel below the threshold: cost < threshold * pixels of the block */
    impl->moving += !still && v.cost < static_cast<guint64> (thr) * v.width * v.height;
    impl->votes[(v.dy + cuv::kMotionMaxRange) * kVotesSide + v.dx + cuv::kMotionMaxRange]++;
  }
  impl->units += n;
}

/* The most common vector of the interval; ties go to the candidate the search prefers. */
static void
global_vector (const GstCudaMotionestImpl *impl, int *dx, int *dy)
{
  guint32 best = 0;
  uint32_t best_tb = UINT32_MAX;
  *dx = *dy = 0;
  for (int y = -cuv::kMotionMaxRange; y < cuv::kMotionMaxRange; y++) {
    for (int x = -cuv::kMotionMaxRange; x < cuv::kMotionMaxRange; x++) {
      const guint32 c = impl->votes[(y + cuv::kMotionMaxRange) * kVotesSide + x + cuv::kMotionMaxRange];
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
  GBytes *bytes = g_bytes_new (impl->vectors, static_cast<gsize> (g.count ()) * sizeof (cuv::MotionVector));
  gst_structure_set (meta, "block-size", G_TYPE_STRING, block_size_nick (impl->frame.block), "search-range", G_TYPE_UINT,
      impl->frame.range, "columns", G_TYPE_UINT, static_cast<guint> (g.cols), "rows", G_TYPE_UINT,
      static_cast<guint> (g.rows), "unit", G_TYPE_UINT, static_cast<guint> (g.unit), "vectors", G_TYPE_BYTES, bytes,
      "first-frame", G_TYPE_BOOLEAN, impl->first_frame, nullptr);
  g_bytes_unref (bytes);
}

static void
gst_cuda_motionest_interval_results (GstCudaVisionAnalyser *analyser, GstStructure *message)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  int dx, dy;
  global_vector (impl, &dx, &dy);
  const double units = impl->units ? static_cast<double> (impl->units) : 1.0;
  gst_structure_set (message, "units", G_TYPE_UINT64, impl->units, "mean-magnitude", G_TYPE_DOUBLE,
      impl->magnitude / units, "moving-ratio", G_TYPE_DOUBLE, static_cast<double> (impl->moving) / units, "global-dx",
      G_TYPE_INT, dx, "global-dy", G_TYPE_INT, dy, nullptr);
}

/* keeps_caps: the base class always works in place. */
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

static gboolean
gst_cuda_motionest_stop (GstBaseTransform *trans)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (trans)->impl;
#if CUV_HAVE_CUDA
  gst_cuda_motionest_release_buffers (impl);
#endif
  impl->processed = false;
  gst_cuda_motionest_reset (GST_CUDA_MOTIONEST (trans), "stop");
  return GST_BASE_TRANSFORM_CLASS (parent_class)->stop (trans);
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
    default:
      if (!gst_cuda_vision_analyser_set_property (object, prop_id, value))
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
    default:
      if (!gst_cuda_vision_analyser_get_property (object, prop_id, value))
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
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_motionest_stop);
  filter_class->supports_in_place = TRUE;
  filter_class->keeps_caps = TRUE;
  filter_class->writes_frame = GST_DEBUG_FUNCPTR (gst_cuda_motionest_writes_frame);
  filter_class->set_info = GST_DEBUG_FUNCPTR (gst_cuda_motionest_set_info);
  filter_class->transform_cpu = GST_DEBUG_FUNCPTR (gst_cuda_motionest_transform_cpu);
#if CUV_HAVE_CUDA
  filter_class->transform_cuda = GST_DEBUG_FUNCPTR (gst_cuda_motionest_transform_cuda);
#endif
  analyser_class->begin_frame = GST_DEBUG_FUNCPTR (gst_cuda_motionest_begin_frame);
  analyser_class->end_frame = GST_DEBUG_FUNCPTR (gst_cuda_motionest_end_frame);
  analyser_class->frame_results = GST_DEBUG_FUNCPTR (gst_cuda_motionest_frame_results);
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
