/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudanoisemap-frame.h"

#include <algorithm>

#include "cuvanalytics.h"
#include "cuvcpupool.h"
#include "regions.h"

GType
gst_cuda_noisemap_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_NOISEMAP_MODE_MAP, "A black image with the changed pixels in the colour", "map"},
    {GST_CUDA_NOISEMAP_MODE_OVERLAY, "The frame with the changed pixels painted in the colour", "overlay"},
    {0, nullptr, nullptr},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaNoisemapMode", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GstFlowReturn
gst_cuda_noisemap_transform_cpu (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (filter)->impl;
  const cuv::Frame *prev = gst_cuda_vision_filter_previous_frame (filter);
  impl->first_frame = prev == nullptr;
  const cuv::Frame &before = prev ? *prev : *in;
  /* each pixel alone (with its 2x2 chroma): bands of row pairs, their counts added */
  impl->cpu_result = cuv::sum_over_row_pairs<cuv::DiffStats> (in->height,
      cuv::light_bands (gst_cuda_vision_filter_get_n_threads (filter), *in),
      [&] (int y0, int y1) {
        cuv::DiffStats band;
        cuv::noisemap_cpu (cuv::frame_rows (*in, y0, y1), cuv::frame_rows (before, y0, y1), cuv::frame_rows (*out, y0, y1),
            impl->params, &band);
        return band;
      },
      cuv::add_band_stats);
  impl->result = &impl->cpu_result;
  impl->tiles = nullptr;
  if (impl->frame.regions && prev) {
    /* bands of tile rows, each writing its own rows of counts */
    const int cols = cuv::noise_tile_cols (in->width), rows = cuv::noise_tile_rows (in->height);
    impl->cpu_tiles.resize (static_cast<size_t> (cols) * rows);
    cuv::parallel_bands (rows, cuv::light_bands (gst_cuda_vision_filter_get_n_threads (filter), *in), [&] (int r0, int r1) {
      const int y0 = r0 * cuv::kNoiseTile, y1 = std::min (in->height, r1 * cuv::kNoiseTile);
      cuv::noisemap_tiles_reference (cuv::frame_rows (*in, y0, y1), cuv::frame_rows (*prev, y0, y1), impl->params.threshold,
          impl->cpu_tiles.data () + static_cast<size_t> (r0) * cols);
    });
    impl->tiles = impl->cpu_tiles.data ();
  }
  return GST_FLOW_OK;
}

#if CUV_HAVE_CUDA
GstFlowReturn
gst_cuda_noisemap_transform_cuda (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out,
    cudaStream_t stream)
{
  GstCudaNoisemap *self = GST_CUDA_NOISEMAP (filter);
  GstCudaNoisemapImpl *impl = self->impl;
  if (!CUV_CUDA_OK (self, impl->results.ensure (gst_cuda_vision_filter_get_context (filter), stream)))
    return GST_FLOW_ERROR;
  const cuv::Frame *prev = gst_cuda_vision_filter_previous_frame (filter);
  impl->first_frame = prev == nullptr;
  if (!CUV_CUDA_OK (self, cuv::noisemap_cuda (*in, prev ? *prev : *in, *out, impl->params, impl->results.to (),
          stream))) {
    impl->results.reset ();
    return GST_FLOW_ERROR;
  }
  impl->result = &impl->results.host ();
  impl->tiles = nullptr;
  if (impl->frame.regions && prev) {
    const size_t bytes = static_cast<size_t> (cuv::noise_tile_cols (in->width)) *
        cuv::noise_tile_rows (in->height) * sizeof (uint16_t);
    GstCudaContext *ctx = gst_cuda_vision_filter_get_context (filter);
    if (impl->device_tiles.size () != bytes) {
      impl->device_tiles.reset ();
      impl->pinned_tiles.reset ();
      if (!CUV_CUDA_OK (self, impl->device_tiles.allocate (ctx, cuv::CudaBuffer::Kind::Device, bytes)) ||
          !CUV_CUDA_OK (self, impl->pinned_tiles.allocate (ctx, cuv::CudaBuffer::Kind::Pinned, bytes))) {
        impl->device_tiles.reset ();
        return GST_FLOW_ERROR;
      }
    }
    auto counts = reinterpret_cast<uint16_t *> (impl->device_tiles.data ());
    /* the base class waits for the stream once, after this; then the counts are on the host */
    if (!CUV_CUDA_OK (self, cuv::noisemap_tiles_cuda (*in, *prev, impl->params.threshold, counts, stream)) ||
        !CUV_CUDA_OK (self, cudaMemcpyAsync (impl->pinned_tiles.data (), counts, bytes, cudaMemcpyDeviceToHost, stream)))
      return GST_FLOW_ERROR;
    impl->tiles = reinterpret_cast<const uint16_t *> (impl->pinned_tiles.data ());
  }
  return GST_FLOW_OK;
}
#endif

/* ---- results ---- */

static void
set_results (GstStructure *s, guint64 pixels, guint64 changed, guint bits_per_pixel)
{
  gst_structure_set (s, "pixels", G_TYPE_UINT64, pixels, "changed-pixels", G_TYPE_UINT64, changed, "changed-ratio",
      G_TYPE_DOUBLE, pixels ? static_cast<double> (changed) / static_cast<double> (pixels) : 0.0,
      "changed-bytes-estimate", G_TYPE_UINT64, (changed * bits_per_pixel + 7) / 8, nullptr);
}

gboolean
gst_cuda_noisemap_end_frame (GstCudaVisionAnalyser *analyser)
{
  return GST_CUDA_NOISEMAP (analyser)->impl->result != nullptr;
}

void
gst_cuda_noisemap_frame_results (GstCudaVisionAnalyser *analyser, GstStructure *meta)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (analyser)->impl;
  set_results (meta, impl->pixels, impl->result->changed, impl->bits_per_pixel);
  gst_structure_set (meta, "first-frame", G_TYPE_BOOLEAN, impl->first_frame, nullptr);
}

/* With `regions`: the 8-connected regions of changing tiles (at least a quarter of a tile's pixels
 * noisy) that hold at least min-region-area noisy pixels, each as a GstVideoRegionOfInterestMeta
 * "change" (and an object detection of that type, cuvanalytics.h) whose confidence is the share of
 * the box's pixels that changed (docs/results.md). */
void
gst_cuda_noisemap_attach_metas (GstCudaVisionAnalyser *analyser, GstBuffer *buf)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (analyser)->impl;
  if (!impl->frame.regions || impl->first_frame || !impl->tiles)
    return;
  const int t = cuv::kNoiseTile, cols = cuv::noise_tile_cols (impl->width), rows = cuv::noise_tile_rows (impl->height);
  const size_t n = static_cast<size_t> (cols) * rows;
  impl->changing_tiles.resize (n);
  uint8_t *mask = impl->changing_tiles.data ();
  /* whole tiles in one loop the compiler vectorises (4K has 32,400 tiles), then the cut ones of
   * the last column and row */
  for (size_t i = 0; i < n; i++)
    mask[i] = 4 * impl->tiles[i] >= t * t;
  const auto cut = [&] (int tx, int ty) {
    const int pixels = std::min (t, impl->width - tx * t) * std::min (t, impl->height - ty * t);
    const size_t i = static_cast<size_t> (ty) * cols + tx;
    mask[i] = impl->tiles[i] > 0 && 4 * impl->tiles[i] >= pixels;
  };
  for (int ty = 0; ty < rows; ty++)
    cut (cols - 1, ty);
  for (int tx = 0; tx < cols; tx++)
    cut (tx, rows - 1);
  static const GQuark change = g_quark_from_static_string ("change");
  for (const cuv::Region &r : cuv::connected_regions (impl->changing_tiles.data (), cols, rows, 1, impl->tiles)) {
    if (r.weight < impl->frame.min_region_area)
      continue;
    const guint x = r.x * t, y = r.y * t;
    const guint w = std::min (impl->width - static_cast<int> (x), r.width * t);
    const guint h = std::min (impl->height - static_cast<int> (y), r.height * t);
    cuv::attach_region (buf, change, cuv::RegionBox{x, y, w, h, static_cast<double> (r.weight) / (static_cast<double> (w) * h)});
  }
}

void
gst_cuda_noisemap_add_to_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (analyser)->impl;
  impl->sum_changed += impl->result->changed;
  impl->sum_pixels += impl->pixels;
}

void
gst_cuda_noisemap_interval_results (GstCudaVisionAnalyser *analyser, cuv::ResultWriter *write)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (analyser)->impl;
  *write = [pixels = impl->sum_pixels, changed = impl->sum_changed, bits = impl->bits_per_pixel] (GstStructure *s) {
    set_results (s, pixels, changed, bits);
  };
}

void
gst_cuda_noisemap_reset_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (analyser)->impl;
  impl->sum_changed = 0;
  impl->sum_pixels = 0;
}

