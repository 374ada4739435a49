/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GstCudaVisionFilter's per-frame route: the backend dispatch (cuvdispatch.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuvcpuroute.h"
#include "common/cuvcudaroute.h"
#include "common/cuvdispatch.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

GstFlowReturn
cuv::process_frame (GstCudaVisionFilter *self, Route &route, GstBuffer *inbuf, GstBuffer *outbuf)
{
  std::shared_ptr<CapsState> state = route.state ();
  if (!state) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("Received a buffer before caps were negotiated"), (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  route.left_in_flight = false;
  route.processed = true;
#if CUV_HAVE_CUDA
  /* upstream analysers' results go onto the output unless the CUDA route hands them on */
  route.results = carried_results (inbuf);
  route.hand_on_results = false;
  route.results_waited = nullptr;
  route.own_results.reset ();
  if (route.use_cuda)
    return process_cuda (self, route, state, inbuf, outbuf);
#endif
  return process_cpu (self, route, *state, inbuf, outbuf);
}
