/* gst-cudavision: how analysis results leave an element (docs/design.md, "Analysers"; docs/results.md): the interval of the
 * element messages, with `level`'s timing fields, and the custom meta on each buffer.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

namespace cuv {

/* Decides when an interval of frames is complete and stamps its message the way `level` does:
 * timestamp, stream-time and running-time of the interval's first frame, duration up to the end
 * of its last. Streaming thread only. */
class IntervalClock {
 public:
  /* Forget the frames gathered so far (flush, caps change, property change). */
  void reset () { frames_ = 0; }

  /* Adds a frame; TRUE when the interval that it belongs to is complete. @interval 0 completes
   * every frame, and so does a frame without a timestamp or one stamped before the interval's
   * start (the interval then spans the frames before it). */
  bool add (GstClockTime pts, GstClockTime duration, guint64 interval);

  guint frames () const { return frames_; }

  /* A new structure named @name holding the interval's timing fields; call before reset (). */
  GstStructure *new_structure (const char *name, const GstSegment &segment) const;

 private:
  guint frames_ = 0;
  GstClockTime start_ = GST_CLOCK_TIME_NONE;
  GstClockTime end_ = GST_CLOCK_TIME_NONE;
};

/* Posts @message (taken) from @element as gst_element_post_message () does, in turn with every
 * other post of ours bound for the same top-level bin's bus: a sleeping lock keyed by that bin,
 * so that our streaming threads never spin against each other in GStreamer's bus queue
 * (docs/design.md, "Messages on one bus"). A slow sync handler holds only its own pipeline. */
gboolean post_in_turn (GstElement *element, GstMessage *message);

/* Registers a GstCustomMeta named @name (once; later calls only look it up). It has no tags, so
 * transforms that copy buffers keep it. */
void register_custom_meta (const char *name);

/* The structure of the custom meta named @name that the element named @element put on @buffer
 * (writable): the one whose `element` field is @element, added with it if there is none yet. Two
 * analysers of one type on a frame (a chain with two histograms) each keep their own, where the
 * second overwrote the first one's meta, which the buffer copy had carried down to it. */
GstStructure *custom_meta_structure (GstBuffer *buffer, const char *name, const char *element);

/* A GstValueArray of guint64 from @values. */
void set_uint64_array (GstStructure *s, const char *field, const guint64 *values, guint n);

}  // namespace cuv
