/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudanoisemap-frame.h"

#include "cuvcpupool.h"

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

