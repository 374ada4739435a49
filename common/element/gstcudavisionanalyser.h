/* gst-cudavision: GstCudaVisionAnalyser, the base class of the elements that measure frames and
 * report what they measured (docs/design.md, "Analysers"; docs/results.md).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * It owns how results leave an element: the `post-messages` and `interval` properties, a
 * GstCustomMeta on every buffer with the frame's results, and an element message per interval
 * with `level`'s timing fields (timestamp, stream-time, running-time, duration), then `frames`,
 * then the interval's results, built and posted on the streaming thread as upstream's level and
 * videoanalyse post theirs, all before EOS goes on. The interval starts over on a flush, a caps change, at stop and
 * whenever post-messages is off. A frame's results are a value (common/results/cuvframeresults.h),
 * a struct of the subclass's derived from cuv::FrameResults: made before the frame's output
 * buffer is chosen, filled in by the transform (cuv::FrameJob::results), published when the
 * frame's work is complete, which may be after the next frames were processed (docs/design.md,
 * "Frames in flight", "Results that follow the frame"). So the value holds everything publishing
 * reads of the frame (the settings it took among them), and the memory it points into (a kernel's
 * results in page-locked memory) is not written again by the next two frames
 * (cuv::ResultBuffers::next_slot). The element keeps only what spans frames: the interval's sums,
 * what the caps fix (set_caps publishes every frame before set_info), caches. A subclass says what
 * its results are:
 *
 *   klass->new_results = my_new_results;           // an empty value of the element's type
 *   klass->end_frame = my_end_frame;               // whether this frame gave results
 *   klass->frame_results = my_frame_results;       // this frame's fields into the meta
 *   klass->add_to_interval = my_add_to_interval;   // add this frame to the sums
 *   klass->interval_results = my_interval_results; // what writes the sums into the message
 *   klass->reset_interval = my_reset_interval;     // forget the sums
 *   gst_cuda_vision_analyser_class_set_results (klass, "cudafoo", "CudaFooMeta");
 *
 * Its own set_property/get_property see only its own properties: the base installs
 * `post-messages` and `interval` once, on its own class, and GObject hands them to the base's
 * set_property/get_property. The operation
 * itself is the base class's transform_cpu/transform_cuda, as for any element. */
#pragma once

#include "common/element/gstcudavisionfilter.h"
#include "common/results/cuvframeresults.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_VISION_ANALYSER (gst_cuda_vision_analyser_get_type ())
G_DECLARE_DERIVABLE_TYPE (GstCudaVisionAnalyser, gst_cuda_vision_analyser, GST, CUDA_VISION_ANALYSER,
    GstCudaVisionFilter)

struct _GstCudaVisionAnalyserClass {
  GstCudaVisionFilterClass parent_class;

  /* A new, empty results value of the element's own type (derived from cuv::FrameResults); the
   * base class keeps the values and reuses each once its frame was published or dropped. */
  cuv::FrameResults *(*new_results) (GstCudaVisionAnalyser *self);

  /* Optional. Streaming thread, before the frame's output buffer is chosen (prepare_output_buffer):
   * copy the settings the frame uses into @results, writes_frame's among them, and reset what
   * end_frame reads (the value may be one of an earlier frame). @results->post_messages: whether
   * this frame adds to the interval and its messages (`post-messages` as the frame took it), so
   * that the element computes the interval's sums only then. */
  void (*begin_frame) (GstCudaVisionAnalyser *self, GstBuffer *inbuf, cuv::FrameResults *results);

  /* After the frame was processed (on the GPU too): finish its @results; FALSE when it gave none
   * (nothing is published). */
  gboolean (*end_frame) (GstCudaVisionAnalyser *self, cuv::FrameResults *results);

  /* This frame's @results, into the structure of its meta. */
  void (*frame_results) (GstCudaVisionAnalyser *self, cuv::FrameResults *results, GstStructure *meta);

  /* Optional. This frame's @results as GStreamer's own metas on @buf (writable), after its custom
   * meta: regions of interest, analytics metadata. */
  void (*attach_metas) (GstCudaVisionAnalyser *self, cuv::FrameResults *results, GstBuffer *buf);

  /* Adds this frame's @results to the interval's sums (only while post-messages is on). */
  void (*add_to_interval) (GstCudaVisionAnalyser *self, const cuv::FrameResults *results);

  /* Writes the interval's results into its message @s, after the timing fields and `frames`, on
   * the streaming thread, which then posts it: from the sums (and what the element noted of the
   * frames it added), as no frame's value is at hand at EOS. */
  void (*interval_results) (GstCudaVisionAnalyser *self, GstStructure *s);

  /* Forgets the interval's sums. */
  void (*reset_interval) (GstCudaVisionAnalyser *self);

  /* set by gst_cuda_vision_analyser_class_set_results () */
  const gchar *message_name;
  const gchar *meta_name;

  gpointer _gst_reserved[GST_PADDING];
};

/* In the subclass's class_init: the message's structure name (the element's name) and the custom
 * meta's name (registered here). The base class installs `post-messages` and `interval` on
 * itself, once, and handles them (docs/design.md, "Analysers"). */
void gst_cuda_vision_analyser_class_set_results (GstCudaVisionAnalyserClass *klass, const gchar *message_name,
    const gchar *meta_name);

/* Streaming thread: starts the interval over now (e.g. when the frames' results stop adding up). */
void gst_cuda_vision_analyser_reset_interval (GstCudaVisionAnalyser *self);

G_END_DECLS
