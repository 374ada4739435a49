/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudamotionest-frame.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <gst/video/video.h>

#include "copy.h"
#include "cuvanalytics.h"
#include "cuvcpupool.h"
#include "luma.h"
#include "regions.h"

GType
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

GType
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

void
gst_cuda_motionest_release_vectors (GstCudaMotionestImpl *impl)
{
  if (impl->vector_block)
    cuv::BytesPool::give_back (impl->vector_block);
  impl->vector_block = nullptr;
  impl->vector_pool.reset ();
}

GstFlowReturn
gst_cuda_motionest_transform_cpu (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (filter)->impl;
  const size_t luma_bytes = static_cast<size_t> (impl->luma_pitch) * impl->height;
  for (auto &l : impl->cpu_luma)
    l.resize (luma_bytes);
  const cuv::Plane cur = luma_plane (impl, impl->cpu_luma[impl->current].data ());
  const cuv::Plane prev = impl->have_previous ? luma_plane (impl, impl->cpu_luma[impl->current ^ 1].data ()) : cur;
  cuv::luma_plane_cpu (*in, cur);
  /* a buffer of our own for a shared input (common/gstcudavisionfilter.cpp): the frame first */
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

void
gst_cuda_motionest_release_buffers (GstCudaMotionestImpl *impl)
{
  for (auto &l : impl->luma)
    l.reset ();
  impl->device_vectors.reset ();
  impl->pinned_vectors.reset ();
  impl->device_table.reset ();
  impl->pinned_table.reset ();
  impl->device_table_range = 0;
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

GstFlowReturn
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

void
gst_cuda_motionest_reset_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  impl->units = 0;
  impl->moving = 0;
  std::fill (impl->votes.begin (), impl->votes.end (), 0);
}

static const char *
block_size_nick (cuv::MotionBlock b)
{
  GEnumValue *v = g_enum_get_value (G_ENUM_CLASS (g_type_class_peek (GST_TYPE_CUDA_MOTIONEST_BLOCK_SIZE)),
      static_cast<gint> (b));
  return v ? v->value_nick : "?";
}

/* Adds this frame's vectors to the interval's statistics: a vote per vector and the moving
 * count; the mean length comes from the votes at the interval's end (interval_results), so the
 * loop over the vectors (518,400 at 3840x2160 with variable blocks) takes no square root. */
void
gst_cuda_motionest_add_to_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  const int n = impl->grid.count ();
  const guint thr = impl->frame.motion_threshold;
  guint64 moving = 0;
  for (int i = 0; i < n; i++) {
    const cuv::MotionVector &v = impl->vectors[i];
    moving += gst_cuda_motionest_unit_moves (v, thr);
    impl->votes[(v.dy + cuv::kMotionMaxRange) * kVotesSide + v.dx + cuv::kMotionMaxRange]++;
  }
  impl->moving += moving;
  impl->units += n;
}

/* The summed length of the interval's vectors: each candidate's length times its votes. */
static double
summed_magnitude (const GstCudaMotionestImpl *impl)
{
  static const std::vector<double> length = [] {
    std::vector<double> l (kVotesSide * kVotesSide);
    for (int y = -cuv::kMotionMaxRange; y < cuv::kMotionMaxRange; y++)
      for (int x = -cuv::kMotionMaxRange; x < cuv::kMotionMaxRange; x++)
        l[(y + cuv::kMotionMaxRange) * kVotesSide + x + cuv::kMotionMaxRange] = std::sqrt (static_cast<double> (x * x + y * y));
    return l;
  }();
  double sum = 0;
  for (size_t k = 0; k < length.size (); k++)
    sum += impl->votes[k] * length[k];
  return sum;
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

void
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

/* With `regions`: the 8-connected regions of moving units (gst_cuda_motionest_unit_moves) of
 * at least min-region-area pixels, each as a GstVideoRegionOfInterestMeta "motion" with a
 * "detection" parameter holding its confidence (the share of the box's units that move) and as an
 * object detection of type "motion" (cuvanalytics.h, docs/results.md). */
void
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
    impl->moving_units[i] = gst_cuda_motionest_unit_moves (impl->vectors[i], impl->frame.motion_threshold);
  const int unit_pixels = g.unit * g.unit;
  const int min_units = std::max (1, static_cast<int> ((impl->frame.min_region_area + unit_pixels - 1) / unit_pixels));
  static const GQuark motion = g_quark_from_static_string ("motion");
  for (const cuv::Region &r : cuv::connected_regions (impl->moving_units.data (), g.cols, g.rows, min_units)) {
    const guint x = r.x * g.unit, y = r.y * g.unit, w = r.width * g.unit, h = r.height * g.unit;
    cuv::attach_region (buf, motion, cuv::RegionBox{x, y, w, h, static_cast<double> (r.cells) / (r.width * r.height)});
  }
}

void
gst_cuda_motionest_interval_results (GstCudaVisionAnalyser *analyser, cuv::ResultWriter *write)
{
  GstCudaMotionestImpl *impl = GST_CUDA_MOTIONEST (analyser)->impl;
  int dx, dy;
  global_vector (impl, &dx, &dy);
  const double units = impl->units ? static_cast<double> (impl->units) : 1.0;
  *write = [n = impl->units, mean = summed_magnitude (impl) / units, moving = static_cast<double> (impl->moving) / units, dx,
               dy] (GstStructure *s) {
    gst_structure_set (s, "units", G_TYPE_UINT64, n, "mean-magnitude", G_TYPE_DOUBLE, mean, "moving-ratio", G_TYPE_DOUBLE,
        moving, "global-dx", G_TYPE_INT, dx, "global-dy", G_TYPE_INT, dy, nullptr);
  };
}

