/* gst-cudavision: the frames in flight of GstCudaVisionFilter's per-frame route (docs/design.md,
 * "Frames in flight"): a CUDA frame's end once its work is queued (the host's wait, the memory's
 * sync flag, a temporal element's previous frame), the frames left in flight waited for in order,
 * and dropped at a flush or stop. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include "common/route/cuvroute.h"

namespace cuv {

#if CUV_HAVE_CUDA
/* How the host waits for a frame at its end: not at all (the consumer waits, or the host has
 * waited already), now (before the push), or for the frame in flight's done event. */
enum class Wait { None, Now, InFlight };

/* What a frame on the CUDA backend does after its work was queued: the host's wait (@wait), the
 * memory's sync flag, the previous frame of a temporal element, the error message. */
GstFlowReturn close_cuda_frame (GstCudaVisionFilter *self, Route &route, const Route::InFlight &f, bool ok, Wait wait);
#endif

/* Whether a frame is in flight. */
bool has_frame_in_flight (const Route &route);
/* Whether the element queues a frame before it waits for the one in flight (the base class's
 * generate_output): an element on the CUDA backend that keeps no previous frame (not temporal);
 * an analyser publishes the frame in flight from the frame's own results value, and its next
 * launch writes its results elsewhere (cuv::ResultBuffers::next_slot). Its upload from
 * system memory then runs on a second stream into the other of two staging buffers, while the
 * last frame's kernel and download run on the first: frame N+1 goes up the PCIe link while frame
 * N comes down. */
bool queues_ahead (const Route &route);
/* Waits for the oldest frame in flight and does what its frame leaves to do (the previous frame,
 * the memory's sync flag); gives its output buffer to @out (NULL when there was none) and its
 * results value to @results (Route::InFlight::own). Posts an element error on failure. */
GstFlowReturn finish_in_flight (GstCudaVisionFilter *self, Route &route, GstBuffer **out,
    std::shared_ptr<FrameResults> *results);
/* At a flush or stop: waits for the frames in flight, and drops them. */
void drop_in_flight (GstCudaVisionFilter *self, Route &route);

}  // namespace cuv
