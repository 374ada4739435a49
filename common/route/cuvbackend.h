/* gst-cudavision: where an element's frames are processed, decided at start: the `backend`
 * property's values, and the CUDA device, context and stream the CUDA backend runs on. The base
 * class (gstcudavisionfilter.cpp) calls it from start and set_caps. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include "common/route/cuvroute.h"

#include <functional>

G_BEGIN_DECLS

typedef enum {
  GST_CUDA_VISION_BACKEND_AUTO,
  GST_CUDA_VISION_BACKEND_CUDA,
  GST_CUDA_VISION_BACKEND_CPU,
} GstCudaVisionBackend;

#define GST_TYPE_CUDA_VISION_BACKEND (gst_cuda_vision_backend_get_type ())
GType gst_cuda_vision_backend_get_type (void);

G_END_DECLS

namespace cuv {

/* At start: the backend that @backend and @device_id (-1: any) give on this machine. The CUDA
 * backend gets the context (its neighbours', through gst_cuda_ensure_element_context, or a new
 * one) and a stream of the context's pool into @route, and route.use_cuda; the CPU backend gets
 * nothing yet (ensure_context gives it a context where a pad negotiates CUDA memory).
 * @cuda_memory_possible: whether the pads may offer CUDA memory (a context can be had). Every
 * failure a user must see is an element message naming the cause: an error where the start
 * fails (false), a warning where backend=auto falls back to the CPU. */
bool open_backend (GstElement *element, int device_id, GstCudaVisionBackend backend, Route &route,
    bool *cuda_memory_possible);

/* At NULL to READY, before an element upstream asks for one: the context of open_backend, where
 * @backend is not cpu and @device_id names a device; nothing is posted (start says what fails). */
void take_context_early (GstElement *element, int device_id, GstCudaVisionBackend backend, Route &route);

/* The CPU backend makes no CUDA context at start: it takes its neighbours' (or a new one) when a
 * pad negotiates CUDA memory, which it copies through the host. Posts the error and returns false
 * when none can be had. */
bool ensure_context (GstElement *element, int device_id, Route &route);

/* At caps of CUDA memory, with @device_id -1 and the process's context (cuvcontext.h: no one gave
 * one): the element moves to the context of the memory that comes (upstream's, another device's
 * or another context on ours), instead of copying each frame through system memory; @release frees what the element keeps on the old one, and the CUDA
 * backend leases a stream of the new context. A set cuda-device-id keeps its device. Posts the
 * error and returns false when no stream can be had. Streaming thread, with no frame in flight. */
bool follow_upstream_context (GstElement *element, int device_id, Route &route, const std::function<void ()> &release);

/* Both of the above for negotiated caps @state: a context where a pad is CUDA memory, upstream's
 * where CUDA memory comes in. False (the error posted) where the caps cannot be served. */
bool context_for_caps (GstElement *element, int device_id, Route &route, const CapsState &state,
    const std::function<void ()> &release);

}  // namespace cuv
