/* cudamotionest's work on each frame, apart from its GObject code (gstcudamotionest.cpp): the
 * state a frame updates, the luma, search and drawing on the CPU and on CUDA, and the statistics
 * of a message interval. The element file calls these and installs them as its vfuncs; they call
 * nothing of it. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <mutex>
#include <vector>

#include "cuvbytespool.h"
#include "cuvcolor.h"
#include "cuvcuda.h"
#include "gstcudamotionest.h"
#include "motion.h"
#include "motion_draw.h"

typedef enum {
  GST_CUDA_MOTIONEST_DRAW_NONE,
  GST_CUDA_MOTIONEST_DRAW_ARROWS,
  GST_CUDA_MOTIONEST_DRAW_COLOR,
} GstCudaMotionestDraw;

#define GST_TYPE_CUDA_MOTIONEST_DRAW (gst_cuda_motionest_draw_get_type ())
GType gst_cuda_motionest_draw_get_type (void);
/* The values are cuv::MotionBlock's. */
#define GST_TYPE_CUDA_MOTIONEST_BLOCK_SIZE (gst_cuda_motionest_block_size_get_type ())
GType gst_cuda_motionest_block_size_get_type (void);

struct MotionSettings {
  cuv::MotionBlock block = cuv::MotionBlock::Variable;
  guint range = 16;
  guint penalty = 16;
  guint motion_threshold = 16;
  GstCudaMotionestDraw draw = GST_CUDA_MOTIONEST_DRAW_NONE;
  bool regions = false;
  guint min_region_area = 256;
  bool tensor_meta = false;
};

/* Whether a unit with vector @v moves: a non-zero vector whose SAD per pixel is below
 * @threshold (a worse match is noise or occlusion). */
inline bool
gst_cuda_motionest_unit_moves (const cuv::MotionVector &v, guint threshold)
{
  return (v.dx != 0 || v.dy != 0) && v.cost < static_cast<guint64> (threshold) * v.width * v.height;
}

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
  cuv::MotionReference cpu_reference; /* the previous luma plane with its edges repeated */
  /* host blocks the vectors land in and the meta takes without a copy (page-locked for CUDA) */
  std::shared_ptr<cuv::BytesPool> vector_pool;
  cuv::BytesPool::Block *vector_block = nullptr; /* this frame's, until the meta takes it */
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
  std::vector<guint32> votes = std::vector<guint32> (kVotesSide * kVotesSide);
  std::vector<uint8_t> moving_units; /* the regions' mask, a byte a unit */

  ~GstCudaMotionestImpl ()
  {
    if (vector_block)
      cuv::BytesPool::give_back (vector_block);
  }
};

struct _GstCudaMotionest {
  GstCudaVisionAnalyser parent;
  GstCudaMotionestImpl *impl;
};

/* filter vfuncs */
GstFlowReturn gst_cuda_motionest_transform_cpu (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out);
#if CUV_HAVE_CUDA
GstFlowReturn gst_cuda_motionest_transform_cuda (GstCudaVisionFilter *filter, const cuv::Frame *in, const cuv::Frame *out,
    cudaStream_t stream);
/* Frees the device buffers (caps change, stop). */
void gst_cuda_motionest_release_buffers (GstCudaMotionestImpl *impl);
#endif

/* Gives back this frame's vector block and drops the pool (caps change, stop); blocks still in
 * metas downstream go back to the old pool, which lives until the last one does. */
void gst_cuda_motionest_release_vectors (GstCudaMotionestImpl *impl);

/* analyser vfuncs */
void gst_cuda_motionest_reset_interval (GstCudaVisionAnalyser *analyser);
void gst_cuda_motionest_add_to_interval (GstCudaVisionAnalyser *analyser);
void gst_cuda_motionest_frame_results (GstCudaVisionAnalyser *analyser, GstStructure *meta);
void gst_cuda_motionest_attach_metas (GstCudaVisionAnalyser *analyser, GstBuffer *buf);
void gst_cuda_motionest_interval_results (GstCudaVisionAnalyser *analyser, cuv::ResultWriter *write);
