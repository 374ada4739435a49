/* cudahistogram's work on each frame, apart from its GObject code (gstcudahistogram.cpp): the
 * state a frame updates, the histogram and the overlay on the CPU and on CUDA, the results of a
 * frame and the sums of a message interval. The element file calls these and installs them as its
 * vfuncs; they call nothing of it. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <mutex>

#include "cuvresults.h"
#include "gstcudahistogram.h"
#include "histogram.h"

#define GST_TYPE_CUDA_HISTOGRAM_POSITION (gst_cuda_histogram_position_get_type ())
GType gst_cuda_histogram_position_get_type (void);

struct HistogramSettings {
  guint bins = 256;
  guint roi[4] = {0, 0, 0, 0}; /* x, y, width, height */
  bool overlay = false;
  cuv::OverlayCorner position = cuv::OverlayCorner::TopRight;
  guint overlay_size = 25;
  bool tensor_meta = false;
};

struct GstCudaHistogramImpl {
  std::mutex lock;
  HistogramSettings settings;

  /* streaming thread only */
  HistogramSettings frame;     /* this frame's copy of the settings */
  cuv::Roi roi{};              /* clipped */
  int width = 0;
  int height = 0;
  bool rgb = false;
  guint warned_roi[6] = {G_MAXUINT, 0, 0, 0, 0, 0}; /* the ROI and frame size last warned about */
  const cuv::HistogramResult *result = nullptr;     /* this frame's, on the host once processed */
  cuv::HistogramResult cpu_result{};
#if CUV_HAVE_CUDA
  cuv::ResultBuffers<cuv::HistogramPartials, cuv::HistogramResult> results;
#endif
  /* the message interval's sums */
  cuv::HistogramResult sum{};
  guint64 sum_pixels = 0;
  guint sum_bins = 0;
};

struct _GstCudaHistogram {
  GstCudaVisionAnalyser parent;
  GstCudaHistogramImpl *impl;
};

/* filter vfuncs */
GstFlowReturn gst_cuda_histogram_transform_cpu (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out);
#if CUV_HAVE_CUDA
GstFlowReturn gst_cuda_histogram_transform_cuda (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out,
    cudaStream_t stream);
#endif

/* analyser vfuncs */
gboolean gst_cuda_histogram_end_frame (GstCudaVisionAnalyser *analyser);
void gst_cuda_histogram_frame_results (GstCudaVisionAnalyser *analyser, GstStructure *meta);
void gst_cuda_histogram_add_to_interval (GstCudaVisionAnalyser *analyser);
void gst_cuda_histogram_interval_results (GstCudaVisionAnalyser *analyser, cuv::ResultWriter *write);
void gst_cuda_histogram_reset_interval (GstCudaVisionAnalyser *analyser);
#if HAVE_GST_TENSOR_META
void gst_cuda_histogram_attach_metas (GstCudaVisionAnalyser *analyser, GstBuffer *buf);
#endif
