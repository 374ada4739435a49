/* gst-cudavision: GstCudaVisionFilter, the base class of every cudavision element.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * It owns everything that is not the operation itself: the `cuda-device-id` and `backend`
 * properties, the GstCudaContext shared with GStreamer's CUDA elements, a stream from the
 * context's pool, both memory types on both pads (CUDA memory first), pinned staging when a side
 * is system memory, the output pools and the allocation proposal, and the waits of
 * docs/design.md, "Synchronisation". A subclass gives its formats and implements transform_cpu and
 * transform_cuda on one frame's cuv::FrameJob (host views for the CPU backend, device views for
 * the CUDA backend). */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>

#include <memory>

#include "common/route/cuvbackend.h"
#include "common/base/cuvcuda.h"
#include "common/route/cuvframe.h"
#include "common/route/cuvframejob.h"
#include "kernels/base/image.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_VISION_FILTER (gst_cuda_vision_filter_get_type ())
G_DECLARE_DERIVABLE_TYPE (GstCudaVisionFilter, gst_cuda_vision_filter, GST, CUDA_VISION_FILTER,
    GstBaseTransform)

struct _GstCudaVisionFilterClass {
  GstBaseTransformClass parent_class;

  /* TRUE when transform_cpu/transform_cuda accept in == out; the base class then works in place
   * whenever both pads carry the same caps. Acts in set_caps (gstcudavisionfilter.cpp). */
  gboolean supports_in_place;

  /* Optional, for in-place elements: FALSE when the coming frame is only read (an analysis that
   * draws nothing), as the settings in its @results value say (begin_results; NULL without one).
   * The buffer is then mapped for reading only, so shared memory is not copied, and a staged
   * frame is not copied back. Unset means TRUE. Asked in prepare_output_buffer
   * (gstcudavisionfilter.cpp) and for each frame's maps and download (cuvmaps.cpp, cuvcudaroute.cpp). */
  gboolean (*writes_frame) (GstCudaVisionFilter *self, const cuv::FrameResults *results);

  /* TRUE for analysers that pass the frame through in place (drawing on it at most): the output
   * keeps the input's caps, memory type included, wherever downstream takes them, so the base
   * class works in place; where downstream takes only the other memory, the element writes the
   * frame into it (out of place). Acts in transform_caps, fixate_caps and prepare_output_buffer
   * (gstcudavisionfilter.cpp). */
  gboolean keeps_caps;

  /* TRUE for elements that compare each frame with the one before (docs/design.md, "Temporal elements"): the base
   * class keeps the previous input frame (see cuvprevious.h) and hands it to the transform in its
   * job (cuv::FrameJob::previous). Such elements work out of place. Acts in set_caps,
   * propose_allocation and sink_event (gstcudavisionfilter.cpp: the previous frame handed on,
   * one buffer more asked of upstream, forgotten in one place, cuv::Temporal, at a caps change of
   * the frames, FLUSH_STOP, a gap, a DISCONT buffer and stop) and for each frame (cuvcpuroute.cpp,
   * cuvcudaroute.cpp, cuvinflight.cpp: the previous frame kept, the host's wait, no queuing ahead). */
  gboolean temporal;

  /* With temporal: what the base class keeps of the previous frame is its luma plane, which the
   * transform writes for each frame (cuv::FrameJob::luma and previous_luma), instead of the
   * frame itself: the element holds no upstream buffer and may work in place (cudamotionest).
   * Forgotten where the previous frame is (docs/design.md, "Temporal elements"). */
  gboolean temporal_luma;

  /* TRUE when the transform leaves results that the element reads on the host after the frame
   * (GstCudaVisionAnalyser sets it): the base class then always waits for the frame's stream
   * before the push. Otherwise, from CUDA memory into CUDA memory on GStreamer 1.24+, the
   * consumer waits (cuvsync.h). Acts for each frame (cuvcudaroute.cpp, cuvinflight.cpp: the host's
   * wait, no queuing ahead). */
  gboolean host_results;

  /* Optional: called from set_caps with the negotiated infos, once the frames in flight have
   * left (their work finished, their buffers pushed with the old caps): it may free or resize
   * anything the element keeps (docs/design.md, "A frame's lifetime"). */
  gboolean (*set_info) (GstCudaVisionFilter *self, const GstVideoInfo *in_info,
      const GstVideoInfo *out_info);

  /* Optional: at stop, once every frame in flight is finished or dropped and the GPU is done
   * with the last frame's streams: frees what the operation keeps between frames (device
   * buffers, tables, results). The context is still the element's, and current. A subclass never frees such
   * things in its own GstBaseTransform::stop, which runs before the base class has finished the
   * frames. */
  void (*release) (GstCudaVisionFilter *self);

  /* The operation on host views, in @job->threads bands. */
  GstFlowReturn (*transform_cpu) (GstCudaVisionFilter *self, const cuv::FrameJob *job);

  /* The operation on device views: launches on @job->stream, with @job->context current, and
   * does not synchronize. Return GST_FLOW_ERROR on a CUDA failure (checked with CUV_CUDA_OK);
   * the base class posts the error message. */
  GstFlowReturn (*transform_cuda) (GstCudaVisionFilter *self, const cuv::FrameJob *job);

  /* Optional (GstCudaVisionAnalyser sets it): streaming thread, first thing for each frame,
   * before its output buffer is chosen: the frame's results value (cuvframeresults.h), which the
   * frame's task owns, the transform fills in (cuv::FrameJob::results) and frame_finished
   * publishes, then or later: with host_results, an element that is not temporal queues its next
   * frame before it waits for the one in flight (docs/design.md, "Frames in flight"), and its
   * results may follow the frame to the next of our elements ("Results that follow the frame"),
   * so a frame's value may be published after the next two frames were processed. */
  std::shared_ptr<cuv::FrameResults> (*begin_results) (GstCudaVisionFilter *self, GstBuffer *inbuf);

  /* Optional: after a frame's work is complete (on the GPU too), before its buffer @outbuf goes
   * downstream, which may be when the next frame has been queued (max-frames-in-flight), or
   * after it went (its results following it); @results: the frame's value (begin_results; NULL
   * without one). GstCudaVisionAnalyser publishes the frame's results here. Streaming thread. */
  void (*frame_finished) (GstCudaVisionFilter *self, GstBuffer *outbuf, cuv::FrameResults *results);

  gpointer _gst_reserved[GST_PADDING];
};

/* Adds sink and src templates: CUDA memory in @cuda_formats first, system memory in
 * @system_formats second (caps format lists such as "{ RGBA, NV12 }"). The lists differ where
 * GStreamer's CUDA allocator lacks a format (1.22 has no GRAY8). */
void gst_cuda_vision_filter_class_add_templates (GstElementClass *klass, const gchar *cuda_formats,
    const gchar *system_formats);

/* Inside set_info (and after the parent's set_caps): whether the new caps describe the frames
 * the last ones did, only in another memory on a pad (downstream switching between CUDA and
 * system memory): the stream goes on, and what the element keeps from frame to frame stays. */
gboolean gst_cuda_vision_filter_stream_continues (GstCudaVisionFilter *self);

/* Streaming thread, before a serialized event goes on: the frames in flight are finished and
 * pushed (the base class does it for every serialized event; a subclass that must act after
 * them and before the event calls it first). */
void gst_cuda_vision_filter_drain_frames (GstCudaVisionFilter *self);

/* Passthrough when @identity and both pads carry the same caps; call on property changes and from
 * set_info. */
void gst_cuda_vision_filter_update_passthrough (GstCudaVisionFilter *self, gboolean identity);

G_END_DECLS
