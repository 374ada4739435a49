/* gst-cudavision: the maps of GstCudaVisionFilter's per-frame route: both buffers of a frame mapped
 * as the kernels' views (device views of CUDA memory of the element's context), checked against
 * the memory; which memory a buffer is; the plane copies between a device view and a host view.
 * Used by both backends' frames (cuvcpuroute.h, cuvcudaroute.h). Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include "common/route/cuvframetask.h"
#include "common/route/cuvroute.h"

namespace cuv {

/* Whether this frame's output is written, so mapped for writing: out of place always; in place
 * where the element writes the frame (its class's writes_frame says so per frame, from the
 * task's results value). */
bool output_written (const Route &route, GstCudaVisionFilter *self, const FrameTask &task, bool in_place);

/* Both buffers of one frame mapped (map_frame), as device memory where @in_dev / @out_dev; in
 * place the output is the input's mapping, read-write when the element @writes. Unmapped when it
 * goes; ok () is false when a map failed (the error is posted). */
class MappedFrames {
 public:
  MappedFrames (GstCudaVisionFilter *self, const CapsState &st, GstBuffer *inbuf, GstBuffer *outbuf, bool writes,
      bool in_dev, bool out_dev);
  ~MappedFrames ();
  MappedFrames (const MappedFrames &) = delete;
  MappedFrames &operator= (const MappedFrames &) = delete;

  bool ok () const { return ok_; }
  Frame in{}, out{}; /* the kernels' views of the mapped frames */

 private:
  bool in_place_;
  bool ok_ = false;
  GstVideoFrame vin_, vout_;
};

#if CUV_HAVE_CUDA
/* @info's frame in @layout at @data, rows padded to @align bytes (@data NULL: only the shape,
 * for cuv::frame_bytes). */
Frame padded_frame (const GstVideoInfo *info, PixelLayout layout, int align, uint8_t *data);

/* The context of @buf's memory when it is one CUDA memory, else NULL. */
GstCudaContext *memory_context (GstBuffer *buf);
/* Whether @buf is CUDA memory of the route's context. */
bool is_device_buffer (const Route &route, GstBuffer *buf);

/* Queues a copy of every plane between a device view and a host view on @stream. From pageable
 * host memory the driver stages the rows and returns once it has them; into pageable memory it
 * returns when the copy is done; pinned memory is one DMA each way. */
cudaError_t copy_planes_async (const Frame &src, const Frame &dst, cudaMemcpyKind kind, cudaStream_t stream);
#endif

}  // namespace cuv
