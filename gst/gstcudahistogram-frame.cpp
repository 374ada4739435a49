/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudahistogram-frame.h"

#include "cuvanalytics.h"

#include "copy.h"
#include "cuvcpupool.h"
#include "cuvreport.h"

GType
gst_cuda_histogram_position_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {static_cast<gint> (cuv::OverlayCorner::TopLeft), "Top left corner", "top-left"},
    {static_cast<gint> (cuv::OverlayCorner::TopRight), "Top right corner", "top-right"},
    {static_cast<gint> (cuv::OverlayCorner::BottomLeft), "Bottom left corner", "bottom-left"},
    {static_cast<gint> (cuv::OverlayCorner::BottomRight), "Bottom right corner", "bottom-right"},
    {0, nullptr, nullptr},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaHistogramPosition", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static cuv::OverlayRect
gst_cuda_histogram_overlay_rect (GstCudaHistogramImpl *impl)
{
  return cuv::histogram_overlay_rect (impl->width, impl->height, impl->frame.position,
      static_cast<int> (impl->frame.overlay_size));
}

static guint64
roi_pixels (const cuv::Roi &roi)
{
  return static_cast<guint64> (roi.width) * static_cast<guint64> (roi.height);
}

GstFlowReturn
gst_cuda_histogram_transform_cpu (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out)
{
  GstCudaHistogramImpl *impl = GST_CUDA_HISTOGRAM (filter)->impl;
  const int threads = cuv::light_bands (gst_cuda_vision_filter_get_n_threads (filter), *in);
  if (in->planes[0].data != out->planes[0].data)
    cuv::parallel_row_pairs (in->height, threads,
        [&] (int y0, int y1) { cuv::copy_frame_cpu (cuv::frame_rows (*in, y0, y1), cuv::frame_rows (*out, y0, y1)); });
  /* bands of the region's rows, their counts and sums added */
  const cuv::Roi roi = impl->roi;
  impl->cpu_result = cuv::sum_over_bands<cuv::HistogramResult> (roi.height, threads,
      [&] (int begin, int end) {
        cuv::HistogramResult band;
        cuv::histogram_cpu (*in, cuv::Roi{roi.x, roi.y + begin, roi.width, end - begin},
            static_cast<int> (impl->frame.bins), &band);
        return band;
      },
      cuv::add_histogram);
  if (impl->frame.overlay)
    cuv::histogram_overlay_cpu (*out, gst_cuda_histogram_overlay_rect (impl), static_cast<int> (impl->frame.bins),
        impl->cpu_result, roi_pixels (impl->roi));
  impl->result = &impl->cpu_result;
  return GST_FLOW_OK;
}

#if CUV_HAVE_CUDA
GstFlowReturn
gst_cuda_histogram_transform_cuda (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out,
    cudaStream_t stream)
{
  GstCudaHistogram *self = GST_CUDA_HISTOGRAM (filter);
  GstCudaHistogramImpl *impl = self->impl;
  if (!CUV_CUDA_OK (self, impl->results.ensure (gst_cuda_vision_filter_get_context (filter), stream)))
    return GST_FLOW_ERROR;
  const cuv::HistogramResults to = impl->results.to ();
  const int bins = static_cast<int> (impl->frame.bins);
  if (in->planes[0].data != out->planes[0].data && !CUV_CUDA_OK (self, cuv::copy_frame_cuda (*in, *out, stream)))
    return GST_FLOW_ERROR;
  /* the kernel writes the results into host memory; the base class waits for the stream once,
   * after this, and then they are there */
  if (!CUV_CUDA_OK (self, cuv::histogram_cuda (*in, impl->roi, bins, to, stream)) ||
      (impl->frame.overlay && !CUV_CUDA_OK (self, cuv::histogram_overlay_cuda (*out, gst_cuda_histogram_overlay_rect (impl),
                                                bins, to.device_out, roi_pixels (impl->roi), stream)))) {
    impl->results.reset ();
    return GST_FLOW_ERROR;
  }
  impl->result = &impl->results.host ();
  return GST_FLOW_OK;
}
#endif

/* ---- results ---- */

/* The meta's counts are one GBytes (@counts_as_bytes): a transform downstream that copies the
 * meta then takes a reference, where an array of 256 GValues cost it as much as our frame's
 * whole GPU work at 1920x1080 (docs/performance.md). The message's counts stay a GstValueArray, readable as
 * it is printed (gst-launch-1.0 -m) and as a Python list. */
static void
set_results (GstStructure *s, const cuv::HistogramResult &r, guint bins, guint64 pixels, bool rgb, const cuv::Roi &roi,
    bool counts_as_bytes)
{
  const double n = pixels ? static_cast<double> (pixels) : 1.0;
  /* variance from integer sums: n * sum(y^2) - sum(y)^2 is exact in 128 bits */
  unsigned __int128 spread = static_cast<unsigned __int128> (pixels) * r.sum_y2 -
      static_cast<unsigned __int128> (r.sum_y) * r.sum_y;
  gst_structure_set (s, "pixels", G_TYPE_UINT64, pixels, "bins", G_TYPE_UINT, bins, nullptr);
  if (counts_as_bytes) {
    GBytes *counts = g_bytes_new (r.counts, bins * sizeof (guint64));
    gst_structure_set (s, "histogram", G_TYPE_BYTES, counts, nullptr);
    g_bytes_unref (counts);
  } else {
    cuv::set_uint64_array (s, "histogram", r.counts, bins);
  }
  gst_structure_set (s, "luma-mean", G_TYPE_DOUBLE, static_cast<double> (r.sum_y) / n, "luma-variance", G_TYPE_DOUBLE,
      static_cast<double> (spread) / (n * n), nullptr);
  if (rgb)
    gst_structure_set (s, "r-mean", G_TYPE_DOUBLE, static_cast<double> (r.sum_r) / n, "g-mean", G_TYPE_DOUBLE,
        static_cast<double> (r.sum_g) / n, "b-mean", G_TYPE_DOUBLE, static_cast<double> (r.sum_b) / n, nullptr);
  gst_structure_set (s, "roi-x", G_TYPE_UINT, static_cast<guint> (roi.x), "roi-y", G_TYPE_UINT, static_cast<guint> (roi.y),
      "roi-width", G_TYPE_UINT, static_cast<guint> (roi.width), "roi-height", G_TYPE_UINT, static_cast<guint> (roi.height),
      nullptr);
}

gboolean
gst_cuda_histogram_end_frame (GstCudaVisionAnalyser *analyser)
{
  return GST_CUDA_HISTOGRAM (analyser)->impl->result != nullptr;
}

void
gst_cuda_histogram_frame_results (GstCudaVisionAnalyser *analyser, GstStructure *meta)
{
  GstCudaHistogramImpl *impl = GST_CUDA_HISTOGRAM (analyser)->impl;
  set_results (meta, *impl->result, impl->frame.bins, roi_pixels (impl->roi), impl->rgb, impl->roi, true);
}

#if HAVE_GST_TENSOR_META
/* With `tensor-meta`: the counts as a tensor "cudahistogram-counts", UINT64 [bins] (docs/results.md). */
void
gst_cuda_histogram_attach_metas (GstCudaVisionAnalyser *analyser, GstBuffer *buf)
{
  GstCudaHistogramImpl *impl = GST_CUDA_HISTOGRAM (analyser)->impl;
  if (!impl->frame.tensor_meta)
    return;
  static const GQuark id = g_quark_from_static_string ("cudahistogram-counts");
  GBytes *counts = g_bytes_new (impl->result->counts, impl->frame.bins * sizeof (guint64));
  cuv::attach_tensor (buf, id, cuv::TensorType::UInt64, {impl->frame.bins}, counts);
  g_bytes_unref (counts);
}
#endif

void
gst_cuda_histogram_add_to_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaHistogramImpl *impl = GST_CUDA_HISTOGRAM (analyser)->impl;
  /* a new bin count starts a new interval: counts of different bins do not add up */
  if (impl->sum_bins != impl->frame.bins)
    gst_cuda_vision_analyser_reset_interval (analyser);
  impl->sum_bins = impl->frame.bins;
  cuv::add_histogram (&impl->sum, *impl->result);
  impl->sum_pixels += roi_pixels (impl->roi);
}

void
gst_cuda_histogram_interval_results (GstCudaVisionAnalyser *analyser, cuv::ResultWriter *write)
{
  GstCudaHistogramImpl *impl = GST_CUDA_HISTOGRAM (analyser)->impl;
  /* the array of counts is most of a message's cost: it is built on the messenger's thread */
  *write = [sum = impl->sum, bins = impl->frame.bins, pixels = impl->sum_pixels, rgb = impl->rgb, roi = impl->roi] (
               GstStructure *s) { set_results (s, sum, bins, pixels, rgb, roi, false); };
}

void
gst_cuda_histogram_reset_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaHistogramImpl *impl = GST_CUDA_HISTOGRAM (analyser)->impl;
  impl->sum = cuv::HistogramResult{};
  impl->sum_pixels = 0;
}

