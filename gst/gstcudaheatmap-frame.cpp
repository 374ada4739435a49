/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudaheatmap-frame.h"

#include <algorithm>
#include <cmath>

#include "cuvcpupool.h"

GType
gst_cuda_heatmap_colormap_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {static_cast<gint> (cuv::Colormap::Sine), "Blue (no change), green (half), red (full)", "sine"},
    {static_cast<gint> (cuv::Colormap::Jet), "Dark blue, cyan, yellow, dark red (MATLAB's jet)", "jet"},
    {static_cast<gint> (cuv::Colormap::Inferno), "Black, purple, orange, pale yellow (matplotlib's inferno)", "inferno"},
    {static_cast<gint> (cuv::Colormap::Gray), "Black (no change) to white (full)", "gray"},
    {0, nullptr, nullptr},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaHeatmapColormap", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static cuv::HeatmapParams
heatmap_params (GstCudaHeatmapImpl *impl, const uint32_t *table)
{
  return cuv::HeatmapParams{table, static_cast<int> (std::lrint (impl->frame.blend * 256.0)), impl->yuv};
}

GstFlowReturn
gst_cuda_heatmap_transform_cpu (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out)
{
  GstCudaHeatmapImpl *impl = GST_CUDA_HEATMAP (filter)->impl;
  const cuv::Frame *prev = gst_cuda_vision_filter_previous_frame (filter);
  impl->first_frame = prev == nullptr;
  const cuv::Frame &before = prev ? *prev : *in;
  const cuv::HeatmapParams params = heatmap_params (impl, impl->table);
  /* each pixel alone (with its 2x2 chroma): bands of row pairs, their statistics added */
  impl->cpu_result = cuv::sum_over_row_pairs<cuv::DiffStats> (in->height,
      cuv::light_bands (gst_cuda_vision_filter_get_n_threads (filter), *in),
      [&] (int y0, int y1) {
        cuv::DiffStats band;
        cuv::heatmap_cpu (cuv::frame_rows (*in, y0, y1), cuv::frame_rows (before, y0, y1), cuv::frame_rows (*out, y0, y1),
            params, &band);
        return band;
      },
      cuv::add_band_stats);
  impl->result = &impl->cpu_result;
  return GST_FLOW_OK;
}

#if CUV_HAVE_CUDA
GstFlowReturn
gst_cuda_heatmap_transform_cuda (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out,
    cudaStream_t stream)
{
  GstCudaHeatmap *self = GST_CUDA_HEATMAP (filter);
  GstCudaHeatmapImpl *impl = self->impl;
  GstCudaContext *ctx = gst_cuda_vision_filter_get_context (filter);
  if (!impl->device_table && !CUV_CUDA_OK (self, impl->device_table.allocate (ctx, cuv::CudaBuffer::Kind::Device,
          sizeof (impl->table))))
    return GST_FLOW_ERROR;
  if (!CUV_CUDA_OK (self, impl->results.ensure (ctx, stream)))
    return GST_FLOW_ERROR;
  /* ordered on the stream before the kernel; the host table is not touched until the next frame */
  if (impl->device_table_stale) {
    if (!CUV_CUDA_OK (self, cudaMemcpyAsync (impl->device_table.data (), impl->table, sizeof (impl->table),
            cudaMemcpyHostToDevice, stream)))
      return GST_FLOW_ERROR;
    impl->device_table_stale = false;
  }
  const cuv::Frame *prev = gst_cuda_vision_filter_previous_frame (filter);
  impl->first_frame = prev == nullptr;
  const auto *table = reinterpret_cast<const uint32_t *> (impl->device_table.data ());
  if (!CUV_CUDA_OK (self, cuv::heatmap_cuda (*in, prev ? *prev : *in, *out, heatmap_params (impl, table),
          impl->results.to (), stream))) {
    impl->results.reset ();
    return GST_FLOW_ERROR;
  }
  impl->result = &impl->results.host ();
  return GST_FLOW_OK;
}
#endif

/* ---- results ---- */

static void
set_results (GstStructure *s, guint64 pixels, guint64 sum, guint max)
{
  gst_structure_set (s, "pixels", G_TYPE_UINT64, pixels, "mean-difference", G_TYPE_DOUBLE,
      pixels ? static_cast<double> (sum) / static_cast<double> (pixels) : 0.0, "max-difference", G_TYPE_UINT, max,
      nullptr);
}

gboolean
gst_cuda_heatmap_end_frame (GstCudaVisionAnalyser *analyser)
{
  return GST_CUDA_HEATMAP (analyser)->impl->result != nullptr;
}

void
gst_cuda_heatmap_frame_results (GstCudaVisionAnalyser *analyser, GstStructure *meta)
{
  GstCudaHeatmapImpl *impl = GST_CUDA_HEATMAP (analyser)->impl;
  set_results (meta, impl->pixels, impl->result->sum_difference, impl->result->max_difference);
  gst_structure_set (meta, "first-frame", G_TYPE_BOOLEAN, impl->first_frame, nullptr);
}

void
gst_cuda_heatmap_add_to_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaHeatmapImpl *impl = GST_CUDA_HEATMAP (analyser)->impl;
  impl->sum_difference += impl->result->sum_difference;
  impl->sum_pixels += impl->pixels;
  impl->max_difference = std::max (impl->max_difference, impl->result->max_difference);
}

void
gst_cuda_heatmap_interval_results (GstCudaVisionAnalyser *analyser, cuv::ResultWriter *write)
{
  GstCudaHeatmapImpl *impl = GST_CUDA_HEATMAP (analyser)->impl;
  *write = [pixels = impl->sum_pixels, sum = impl->sum_difference, max = impl->max_difference] (GstStructure *s) {
    set_results (s, pixels, sum, max);
  };
}

void
gst_cuda_heatmap_reset_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaHeatmapImpl *impl = GST_CUDA_HEATMAP (analyser)->impl;
  impl->sum_difference = 0;
  impl->sum_pixels = 0;
  impl->max_difference = 0;
}

