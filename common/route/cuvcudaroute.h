/* gst-cudavision: the CUDA backend's frame in GstCudaVisionFilter's per-frame route, in named
 * steps: the stream it runs on (choose_stream), the last frame's stream followed
 * (follow_last_frame), the maps, the input's upload into device staging where it is system memory
 * (upload), the element's transform_cuda (run), the download of a system-memory output
 * (download), and the frame's end: a host wait, none, or the frame left in flight (finish,
 * cuvinflight.h). Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include <memory>

#include "common/route/cuvframetask.h"
#include "common/route/cuvroute.h"

#if CUV_HAVE_CUDA
namespace cuv {

/* One frame on the CUDA backend, from the base class's process (gstcudavisionfilter.cpp), which
 * checked the caps @state and filled in @task's upstream results; how the frame ended goes into
 * @task (left in flight, the results handed on, its own results following it). */
GstFlowReturn process_cuda (GstCudaVisionFilter *self, Route &route, FrameTask &task,
    const std::shared_ptr<CapsState> &state, GstBuffer *inbuf, GstBuffer *outbuf);

}  // namespace cuv
#endif
