/* gst-cudavision: one frame's work as the base class hands it to the element's operation
 * (GstCudaVisionFilterClass's transform_cpu and transform_cuda): everything the operation needs
 * for the frame comes in the job, so that it reads nothing back from the base class while it
 * runs (docs/design.md, "A frame's path").
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "common/base/cuvcuda.h"
#include "common/results/cuvframeresults.h"
#include "kernels/base/image.h"

namespace cuv {

struct FrameJob {
  /* the views: host pointers for transform_cpu, device pointers for transform_cuda; in == out
   * in place */
  const Frame *in = nullptr;
  const Frame *out = nullptr;
  /* a temporal element's previous input, in the memory @in is in, with its layout and size; NULL
   * for the first frame after start, a flush, a gap, a caps change (not one of memory only) or a
   * DISCONT buffer */
  const Frame *previous = nullptr;
  /* a temporal_luma element's: the plane this frame's luma goes into (the input's size), and the
   * previous frame's (NULL as @previous is); they swap when the transform returns GST_FLOW_OK */
  Plane luma{};
  const Plane *previous_luma = nullptr;
  /* the element's context, current during transform_cuda; NULL on the CPU backend without a GPU */
  GstCudaContext *context = nullptr;
  /* transform_cuda: the stream the work is launched on, never synchronized by the operation */
  cudaStream_t stream = nullptr;
  /* transform_cpu: the bands to split the frame into (n-threads resolved: 1 or more), for
   * cuv::parallel_bands () (cuvcpupool.h) */
  int threads = 1;
  /* an analyser's: this frame's results value (cuvframeresults.h), the element's own type, which
   * the transform fills in; NULL for an element without results */
  FrameResults *results = nullptr;
};

}  // namespace cuv
