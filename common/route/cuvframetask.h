/* gst-cudavision: one frame's task, a value: what GstCudaVisionFilter knows of the frame it is
 * making, from GstBaseTransform's generate_output (cuv::Output::generate, which makes it) to the
 * push. The base class hands it down the frame's path (docs/design.md, "A frame's path"): the
 * backend's route fills in how the frame ended, and the output step reads it back in the same
 * call. Nothing of it outlives the frame: what a frame in flight keeps is the route's InFlight,
 * and its results value goes on with it.
 * Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include <memory>

#include "common/results/cuvframeresults.h"
#include "common/results/cuvresultsmeta.h"

namespace cuv {

struct FrameTask {
  /* Output::generate: whether the route may leave the frame in flight (max-frames-in-flight) */
  bool may_leave_in_flight = false;
  /* the base class: the CPU backend's bands for the frame (n-threads, resolved; 1 on CUDA) */
  int threads = 1;
  /* the base class: the element ran on the frame (false: GstBaseTransform passed it through) */
  bool ran = false;
  /* the route: the frame stayed in flight (the route's InFlight holds its buffers) */
  bool left_in_flight = false;
  /* Output::own_buffer, in place on a shared input: the input the frame is written from, and the
   * buffer of ours it goes into (Output::input_of) */
  GstBuffer *shared_input = nullptr;
  GstBuffer *shared_input_output = nullptr;
  /* Output::begin_results, before the output buffer is chosen: an analyser's results value for
   * the frame (cuvframeresults.h), which the transform fills in and frame_finished publishes;
   * the route's frame in flight or the results that follow the frame take it on */
  std::shared_ptr<FrameResults> results;
#if CUV_HAVE_CUDA
  /* the base class: the results the input carries from upstream analysers */
  Results upstream_results;
  /* the CUDA route: whether they go on with the output unfinished (else onto it, once the host
   * has waited for results_waited, or for their own streams) */
  bool hand_on_results = false;
  cudaStream_t results_waited = nullptr;
  /* the CUDA route: this frame's own results where they follow the frame (cuvresultsmeta.h) */
  std::shared_ptr<PendingResults> own_results;
#endif
};

}  // namespace cuv
