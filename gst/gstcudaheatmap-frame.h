/* cudaheatmap's work on each frame, apart from its GObject code (gstcudaheatmap.cpp): the state a
 * frame updates, the difference and the colour map on the CPU and on CUDA, and the results of a
 * frame and of a message interval. The element file calls these and installs them as its vfuncs;
 * they call nothing of it. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <mutex>

#include "cuvcolor.h"
#include "cuvcuda.h"
#include "cuvresults.h"
#include "gstcudaheatmap.h"
#include "heatmap.h"

#define GST_TYPE_CUDA_HEATMAP_COLORMAP (gst_cuda_heatmap_colormap_get_type ())
GType gst_cuda_heatmap_colormap_get_type (void);

struct HeatmapSettings {
  cuv::Colormap colormap = cuv::Colormap::Sine;
  double gain = 1.0;
  double blend = 1.0;
};

struct GstCudaHeatmapImpl {
  std::mutex lock;
  HeatmapSettings settings;

  /* streaming thread only */
  HeatmapSettings frame;
  cuv::PixelLayout out_layout = cuv::PixelLayout::RGBA;
  cuv::YuvToRgb yuv{};
  guint64 pixels = 0;
  /* the colour table and what it was built for */
  uint32_t table[cuv::kHeatmapTableSize];
  bool table_valid = false;
  cuv::Colormap table_map = cuv::Colormap::Sine;
  double table_gain = 0;
  cuv::PixelLayout table_layout = cuv::PixelLayout::RGBA;
  bool device_table_stale = true;
  const cuv::DiffStats *result = nullptr;
  cuv::DiffStats cpu_result{};
  bool first_frame = false;
#if CUV_HAVE_CUDA
  cuv::CudaBuffer device_table;
  cuv::ResultBuffers<cuv::DiffStats, cuv::DiffStats> results;
#endif
  /* the message interval's sums */
  guint64 sum_difference = 0;
  guint64 sum_pixels = 0;
  guint max_difference = 0;
};

struct _GstCudaHeatmap {
  GstCudaVisionAnalyser parent;
  GstCudaHeatmapImpl *impl;
};

/* filter vfuncs */
GstFlowReturn gst_cuda_heatmap_transform_cpu (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out);
#if CUV_HAVE_CUDA
GstFlowReturn gst_cuda_heatmap_transform_cuda (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out,
    cudaStream_t stream);
#endif

/* analyser vfuncs */
gboolean gst_cuda_heatmap_end_frame (GstCudaVisionAnalyser *analyser);
void gst_cuda_heatmap_frame_results (GstCudaVisionAnalyser *analyser, GstStructure *meta);
void gst_cuda_heatmap_add_to_interval (GstCudaVisionAnalyser *analyser);
void gst_cuda_heatmap_interval_results (GstCudaVisionAnalyser *analyser, cuv::ResultWriter *write);
void gst_cuda_heatmap_reset_interval (GstCudaVisionAnalyser *analyser);
