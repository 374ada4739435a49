/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The backend decided at start (cuvbackend.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>

#include "common/route/cuvbackend.h"
#include "common/cuda/cuvcontext.h"
#include "common/cuda/cuvstreampool.h"
#include "common/base/cuvenum.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

GType
gst_cuda_vision_backend_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_VISION_BACKEND_AUTO, "CUDA when a device works, else the CPU reference (with a warning)", "auto"},
    {GST_CUDA_VISION_BACKEND_CUDA, "CUDA only: an error when no CUDA device is usable", "cuda"},
    {GST_CUDA_VISION_BACKEND_CPU, "The CPU reference implementation", "cpu"},
    {0, nullptr, nullptr},
  };
  return cuv::enum_type (&type, "GstCudaVisionBackend", values);
}

#if CUV_HAVE_CUDA
namespace {

/* Whether @device_id names a device of this machine (-1: any, where there is one). Where there
 * is none, backend=cuda fails and the others run on the CPU; an index past the last device is an
 * error unless the backend is the CPU. @usable: whether CUDA can run. */
bool
find_device (GstElement *element, int device_id, GstCudaVisionBackend backend, bool *usable)
{
  *usable = false;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount (&count);
  if (err != cudaSuccess || count == 0) {
    const gchar *why = err == cudaSuccess ? "no CUDA device found"
        : err == cudaErrorInsufficientDriver && !gst_cuda_load_library () ? "no NVIDIA driver (libcuda.so.1) could be loaded"
        : cudaGetErrorString (err);
    if (backend == GST_CUDA_VISION_BACKEND_CUDA) {
      GST_ELEMENT_ERROR (element, RESOURCE, NOT_FOUND, ("No usable CUDA device: %s", why),
          ("backend=cuda needs a working NVIDIA GPU and driver; use backend=auto or backend=cpu to run on the CPU"));
      return false;
    }
    if (backend == GST_CUDA_VISION_BACKEND_AUTO)
      GST_ELEMENT_WARNING (element, RESOURCE, NOT_FOUND, ("No usable CUDA device (%s): running on the CPU", why),
          ("backend=auto falls back to the CPU reference implementation"));
    return true;
  }
  if (device_id >= count && backend != GST_CUDA_VISION_BACKEND_CPU) {
    GST_ELEMENT_ERROR (element, RESOURCE, NOT_FOUND,
        ("cuda-device-id %d is out of range: this machine has %d CUDA device(s)", device_id, count),
        ("valid values are -1 (any device) and 0..%d", count - 1));
    return false;
  }
  *usable = device_id < count;
  return true;
}

/* The context on @device_id, shared with the neighbours where they have one; backend=cuda fails
 * without it, auto warns and runs on the CPU. */
bool
open_context (GstElement *element, int device_id, GstCudaVisionBackend backend, cuv::Route &route, bool *opened)
{
  /* libgstcuda 1.22 creates contexts through its driver loader without loading it first */
  *opened = gst_cuda_load_library () && cuv::ensure_shared_context (element, device_id, &route.context);
  if (*opened)
    return true;
  if (backend == GST_CUDA_VISION_BACKEND_CUDA) {
    GST_ELEMENT_ERROR (element, RESOURCE, NOT_FOUND, ("Could not create a CUDA context on device %d", device_id),
        ("no context was given and none could be made: is the NVIDIA driver loadable (libcuda.so.1)?"));
    return false;
  }
  if (backend == GST_CUDA_VISION_BACKEND_AUTO)
    GST_ELEMENT_WARNING (element, RESOURCE, NOT_FOUND,
        ("Could not create a CUDA context on device %d: running on the CPU", device_id), (nullptr));
  return true;
}

/* The element's stream, from its context's pool, from start to stop. */
bool
lease_stream (GstElement *element, cuv::Route &route)
{
  cudaError_t err = cudaSuccess;
  route.stream = cuv::StreamPool::for_context (route.context)->acquire (&err);
  if (route.stream)
    return true;
  GST_ELEMENT_ERROR (element, RESOURCE, FAILED, ("Could not create a CUDA stream: %s", cudaGetErrorString (err)),
      (nullptr));
  gst_clear_object (&route.context);
  return false;
}

}  // namespace
#endif

bool
cuv::open_backend (GstElement *element, int device_id, GstCudaVisionBackend backend, Route &route,
    bool *cuda_memory_possible)
{
  route.use_cuda = false;
  *cuda_memory_possible = false;
#if CUV_HAVE_CUDA
  bool usable = false;
  if (!find_device (element, device_id, backend, &usable))
    return false;
  /* the CPU backend takes a context only where CUDA memory is negotiated (set_caps) */
  if (!usable || backend == GST_CUDA_VISION_BACKEND_CPU) {
    *cuda_memory_possible = usable;
    return true;
  }
  bool opened = false;
  if (!open_context (element, device_id, backend, route, &opened))
    return false;
  if (!opened)
    return true;
  *cuda_memory_possible = true;
  if (!lease_stream (element, route))
    return false;
  route.use_cuda = true;
  GST_INFO_OBJECT (element, "CUDA backend on context %" GST_PTR_FORMAT, route.context);
  return true;
#else
  (void) device_id;
  (void) route;
  if (backend == GST_CUDA_VISION_BACKEND_CUDA) {
    GST_ELEMENT_ERROR (element, RESOURCE, NOT_FOUND, ("This build of cudavision has no CUDA kernels"),
        ("it was configured without nvcc (meson option cuda); use backend=auto or backend=cpu"));
    return false;
  }
  if (backend == GST_CUDA_VISION_BACKEND_AUTO)
    GST_ELEMENT_WARNING (element, RESOURCE, NOT_FOUND, ("This build of cudavision has no CUDA kernels: running on the CPU"),
        (nullptr));
  return true;
#endif
}

void
cuv::take_context_early (GstElement *element, int device_id, GstCudaVisionBackend backend, Route &route)
{
#if CUV_HAVE_CUDA
  int count = 0;
  if (backend == GST_CUDA_VISION_BACKEND_CPU || route.context || cudaGetDeviceCount (&count) != cudaSuccess ||
      device_id >= count || !gst_cuda_load_library ())
    return;
  cuv::ensure_shared_context (element, device_id, &route.context);
#else
  (void) element;
  (void) device_id;
  (void) backend;
  (void) route;
#endif
}

bool
cuv::ensure_context (GstElement *element, int device_id, Route &route)
{
  if (route.context)
    return true;
#if CUV_HAVE_CUDA
  if (gst_cuda_load_library () && cuv::ensure_shared_context (element, device_id, &route.context))
    return true;
#else
  (void) device_id;
#endif
  GST_ELEMENT_ERROR (element, RESOURCE, NOT_FOUND, ("Could not create a CUDA context for CUDA memory on a pad"),
      ("backend=cpu copies CUDA memory through the host, which needs the memory's CUDA context"));
  return false;
}

bool
cuv::follow_upstream_context (GstElement *element, int device_id, Route &route, const std::function<void ()> &release)
{
#if CUV_HAVE_CUDA
  /* a context that someone gave (the application, a neighbour's own) is kept */
  if (device_id >= 0 || !route.context || !is_process_context (route.context))
    return true;
  GstCudaContext *theirs = upstream_context (element);
  if (!theirs || theirs == route.context) {
    gst_clear_object (&theirs);
    return true;
  }
  gint device = -1;
  g_object_get (theirs, "cuda-device-id", &device, nullptr);
  GST_INFO_OBJECT (element, "CUDA memory of %" GST_PTR_FORMAT " (device %d) comes: moving to its context", theirs, device);
  const bool cuda = route.use_cuda;
  route.finish_last_frame ();
  release ();
  route.close ();
  route.context = theirs;
  route.warned_other_context = false;
  if (!cuda)
    return true;
  if (!lease_stream (element, route))
    return false;
  route.use_cuda = true;
  return true;
#else
  (void) element;
  (void) device_id;
  (void) route;
  (void) release;
  return true;
#endif
}

bool
cuv::context_for_caps (GstElement *element, int device_id, Route &route, const CapsState &state,
    const std::function<void ()> &release)
{
  if ((state.in_cuda_caps || state.out_cuda_caps) && !ensure_context (element, device_id, route))
    return false;
  return !state.in_cuda_caps || follow_upstream_context (element, device_id, route, release);
}
