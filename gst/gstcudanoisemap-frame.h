/* cudanoisemap's work on each frame, apart from its GObject code (gstcudanoisemap.cpp): the state a
 * frame updates, the changed pixels (map or overlay) on the CPU and on CUDA, and the results of a
 * frame and of a message interval. The element file calls these and installs them as its vfuncs;
 * they call nothing of it. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <mutex>
#include <vector>

#include "cuvcolor.h"
#include "cuvcuda.h"
#include "cuvresults.h"
#include "gstcudanoisemap.h"
#include "noisemap.h"

typedef enum {
  GST_CUDA_NOISEMAP_MODE_MAP,
  GST_CUDA_NOISEMAP_MODE_OVERLAY,
} GstCudaNoisemapMode;

#define GST_TYPE_CUDA_NOISEMAP_MODE (gst_cuda_noisemap_mode_get_type ())
GType gst_cuda_noisemap_mode_get_type (void);

struct NoisemapSettings {
  guint threshold = 20;
  GstCudaNoisemapMode mode = GST_CUDA_NOISEMAP_MODE_MAP;
  guint color = 0xffff0000; /* ARGB */
  bool regions = false;
  guint min_region_area = 256;
};

struct GstCudaNoisemapImpl {
  std::mutex lock;
  NoisemapSettings settings;

  /* streaming thread only */
  NoisemapSettings frame;
  cuv::NoisemapParams params{};
  cuv::PixelLayout layout = cuv::PixelLayout::RGBA;
  cuv::ColorMatrix matrix{};
  guint64 pixels = 0;
  int width = 0, height = 0;
  guint bits_per_pixel = 32;
  /* with `regions`: the noisy pixels of each tile (noisemap.h), on the host once the frame is done */
  const uint16_t *tiles = nullptr;
  std::vector<uint16_t> cpu_tiles;
  std::vector<uint8_t> changing_tiles; /* the regions' mask, a byte a tile */
  const cuv::DiffStats *result = nullptr;
  cuv::DiffStats cpu_result{};
  bool first_frame = false;
#if CUV_HAVE_CUDA
  cuv::ResultBuffers<cuv::DiffStats, cuv::DiffStats> results;
  cuv::CudaBuffer device_tiles;
  cuv::CudaBuffer pinned_tiles;
#endif
  /* the message interval's sums */
  guint64 sum_changed = 0;
  guint64 sum_pixels = 0;
};

struct _GstCudaNoisemap {
  GstCudaVisionAnalyser parent;
  GstCudaNoisemapImpl *impl;
};

/* filter vfuncs */
GstFlowReturn gst_cuda_noisemap_transform_cpu (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out);
#if CUV_HAVE_CUDA
GstFlowReturn gst_cuda_noisemap_transform_cuda (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out,
    cudaStream_t stream);
#endif

/* analyser vfuncs */
gboolean gst_cuda_noisemap_end_frame (GstCudaVisionAnalyser *analyser);
void gst_cuda_noisemap_frame_results (GstCudaVisionAnalyser *analyser, GstStructure *meta);
void gst_cuda_noisemap_add_to_interval (GstCudaVisionAnalyser *analyser);
void gst_cuda_noisemap_interval_results (GstCudaVisionAnalyser *analyser, cuv::ResultWriter *write);
void gst_cuda_noisemap_reset_interval (GstCudaVisionAnalyser *analyser);
void gst_cuda_noisemap_attach_metas (GstCudaVisionAnalyser *analyser, GstBuffer *buf);
