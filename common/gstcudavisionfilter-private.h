/* gst-cudavision: GstCudaVisionFilter's private state, shared by the base class
 * (gstcudavisionfilter.cpp) and its per-frame processing (cuvprocess.cpp). Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "cuvprevious.h"
#include "cuvstreampool.h"
#include "gstcudavisionfilter.h"

#define DEFAULT_DEVICE_ID -1
#define DEFAULT_BACKEND GST_CUDA_VISION_BACKEND_AUTO

/* What one negotiation fixes: the infos, the memory type of each side and, for the CUDA
 * backend, the staging buffers of a side that is system memory (allocated on first use). */
struct CapsState {
  GstVideoInfo in_info;
  GstVideoInfo out_info;
  cuv::PixelLayout in_layout;
  cuv::PixelLayout out_layout;
  bool in_cuda_caps = false;
  bool out_cuda_caps = false;
#if CUV_HAVE_CUDA
  /* device frame + identical pinned image, one per side */
  struct Staging {
    cuv::CudaBuffer device;
    cuv::CudaBuffer host;
    cuv::Frame device_frame{};
    cuv::Frame host_frame{};
  };
  Staging in_stage;
  Staging out_stage;
  /* a temporal element's previous staged input; it and in_stage swap after each frame */
  Staging prev_stage;
  /* the CPU backend's host copies of CUDA-memory frames */
  std::vector<uint8_t> cpu_in_host;
  std::vector<uint8_t> cpu_out_host;
#endif
  /* temporal elements only */
  cuv::PreviousFrame previous;
};

struct GstCudaVisionFilterImpl {
  std::mutex lock;
  /* properties */
  gint device_id = DEFAULT_DEVICE_ID;
  GstCudaVisionBackend backend = DEFAULT_BACKEND;

  /* from start to stop */
  GstCudaContext *context = nullptr;
  bool use_cuda = false;
  /* CUDA memory is offered on the pads until start finds that no context can be had */
  bool cuda_memory_possible = true;
#if CUV_HAVE_CUDA
  cuv::StreamLease stream;
#endif
  std::shared_ptr<CapsState> state;
  /* streaming thread: the previous frame's view while a temporal transform runs */
  const cuv::Frame *previous_view = nullptr;
};

GstCudaVisionFilterImpl *gst_cuda_vision_filter_impl (GstCudaVisionFilter *self);

/* One frame through the element's operation on the backend chosen at start: maps the buffers (as
 * device memory where they are CUDA memory of our context), stages system memory through pinned
 * buffers for the CUDA backend, and synchronizes before returning. @in == @out works in place.
 * Posts an element error on failure. */
GstFlowReturn gst_cuda_vision_filter_process (GstCudaVisionFilter *self, GstBuffer *in, GstBuffer *out);
