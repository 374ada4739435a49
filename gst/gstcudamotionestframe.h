/* gst-cudavision: cudamotionest's state and its frame on both backends, the luma plane searched
 * against the previous one's, the vectors on the host, drawn as `draw` says and, where the frame
 * adds to a message, counted on the GPU (the element, gstcudamotionest.cpp, holds the
 * properties, the results and the caps). Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <memory>
#include <vector>

#include "common/results/cuvbytespool.h"
#include "common/base/cuvcuda.h"
#include "common/results/cuvresults.h"
#include "common/element/gstcudavisionanalyser.h"
#include "kernels/motion/motion.h"
#include "kernels/motion/motion_draw.h"
#include "gst/gstcudamotionestsettings.h"

GST_DEBUG_CATEGORY_EXTERN (gst_cuda_motionest_debug);


/* One frame's results, a value (common/results/cuvframeresults.h): what the search found and what
 * publishing reads, which may be after the next two frames were processed (docs/design.md,
 * "Results that follow the frame"). */
struct MotionFrame : cuv::FrameResults {
  MotionSettings settings; /* the frame's copy of the settings */
  cuv::MotionGrid grid{};
  bool first_frame = false;                   /* searched against itself: no previous frame */
  const cuv::MotionVector *vectors = nullptr; /* on the host once processed: in block, or a fallback slot */
  bool processed = false;                     /* vectors are this frame's (NULL for an empty grid) */
  const cuv::MotionVotes *votes = nullptr;    /* on the host, counted on the GPU; NULL: count the vectors */
  cuv::BytesBlock block;                      /* the vectors' block, until the meta takes it */
};

/* the frames whose results may be unpublished at once: this one and two before it, each with a
 * slot of its own in the fallback and the votes' memory */
constexpr int kFrameSlots = 3;

struct GstCudaMotionestImpl {
  MotionSettings settings; /* the properties, under the object lock (common/element/cuvsettings.h) */

  /* streaming thread only */
  int width = 0;
  int height = 0;
  cuv::MotionPalette palette;
  /* host blocks the vectors land in and the meta takes without a copy (page-locked for CUDA) */
  cuv::BytesTarget vector_target;
  std::vector<cuv::MotionVector> cpu_vectors;
  cuv::MotionReference cpu_reference; /* the previous luma plane with its edges repeated */
#if CUV_HAVE_CUDA
  cuv::CudaBuffer device_vectors;
  /* where the vectors land while all blocks are downstream: kFrameSlots slots */
  cuv::CudaBuffer pinned_vectors;
  int pinned_slot = 0;
  cuv::CudaBuffer device_table;
  int device_table_range = 0;
  /* the frames' votes, counted on the GPU where the frame adds to the interval */
  cuv::ResultBuffers<cuv::MotionVotes, cuv::MotionVotes> votes;
#endif
  /* the message interval's sums, and whether a frame went in (only then are they zeroed again) */
  cuv::MotionTally count;
  bool count_used = false;
  cuv::RegionScratch regions; /* the regions' mask (a byte a unit) and boxes */
};

namespace motionest {

/* The element's transform_cpu: the frame's search (a frame without a previous luma plane is
 * searched against itself: (0, 0) at cost 0 everywhere), then the drawing, into the frame's
 * value (job->results). */
GstFlowReturn search_cpu (GstCudaVisionFilter *filter, GstCudaMotionestImpl *impl, const cuv::FrameJob *job);

#if CUV_HAVE_CUDA
/* The element's transform_cuda: the same on the job's stream; the vectors are on the host once
 * the base class has waited for it. */
GstFlowReturn search_cuda (GstCudaVisionFilter *filter, GstCudaMotionestImpl *impl, const cuv::FrameJob *job);
#endif

/* Frees what the element keeps for the caps (a caps change, stop). */
void release_buffers (GstCudaMotionestImpl *impl);

}  // namespace motionest
