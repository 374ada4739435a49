/* gst-cudavision: the entry of GstCudaVisionFilter's per-frame route: a frame to the backend chosen
 * at start (the CPU backend's frame, cuvcpuroute.h; the CUDA backend's, cuvcudaroute.h), which
 * calls the element's operation (cuv::Operation, cuvroute.h) and calls back nothing of the base
 * class. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include "common/cuvroute.h"

namespace cuv {

/* One frame through the element's operation on the backend chosen at start: maps the buffers,
 * stages system memory for the CUDA backend, keeps a temporal element's previous frame, and
 * synchronizes as cuvsync.h says before returning. @in == @out works in place. Posts an element
 * error on failure. With route.may_leave_in_flight, a frame that the host would wait for is left
 * in flight instead (route.left_in_flight is then true): its work is queued, and the route holds
 * references to @in and @out until finish_in_flight (). */
GstFlowReturn process_frame (GstCudaVisionFilter *self, Route &route, GstBuffer *in, GstBuffer *out);

}  // namespace cuv
