/* gst-cudavision: the CUDA context an element runs on, one a device for the process by default.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An element takes the context its neighbours or the application give (GStreamer's GstContext
 * sharing, as gst_cuda_ensure_element_context () asks for it: the peers downstream and upstream,
 * then a need-context message). Where none is given, it does not make a context of its own, as
 * upstream's elements do, but takes the process's one for the device, made by the first element
 * that asks and kept while any element holds it; the element then announces it (a have-context
 * message), so that its pipeline hands it to the decoder and the others that ask after. Many
 * pipelines in one process then share one context a device, and the GPU is not time-sliced
 * between contexts (docs/design.md, "One CUDA context a device"). */
#pragma once

#include <gst/gst.h>

#if CUV_HAVE_CUDA
#include <gst/cuda/gstcudacontext.h>

namespace cuv {

/* Sets *@context (when NULL) to the context the neighbours or the application give @element for
 * @device_id (-1: any), else to the process's context for the device (device 0 for -1), which
 * @element then announces. Returns whether *@context is set. */
bool ensure_shared_context (GstElement *element, int device_id, GstCudaContext **context);

/* Whether @context is the process's context of its device: no one gave it. */
bool is_process_context (GstCudaContext *context);

/* The context upstream answers a context query with (a new reference), or NULL. */
GstCudaContext *upstream_context (GstElement *element);

}  // namespace cuv
#endif
