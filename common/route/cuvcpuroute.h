/* gst-cudavision: the CPU backend's frame in GstCudaVisionFilter's per-frame route: the element's
 * transform_cpu on the mapped frames, a temporal element's previous frame on the host, and CUDA
 * memory of the element's context copied through host memory. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include "common/route/cuvframetask.h"
#include "common/route/cuvroute.h"

namespace cuv {

/* One frame on the CPU backend, from the base class's process (gstcudavisionfilter.cpp), which
 * checked the caps state @st and filled in @task's bands and upstream results. */
GstFlowReturn process_cpu (GstCudaVisionFilter *self, Route &route, FrameTask &task, CapsState &st, GstBuffer *inbuf,
    GstBuffer *outbuf);

}  // namespace cuv
