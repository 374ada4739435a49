/* gst-cudavision: what a temporal element keeps of the previous frame, and the one place where it
 * is forgotten (docs/design.md, "Temporal elements"). The base class (gstcudavisionfilter.cpp)
 * owns a Temporal and calls it at start, for each caps change, event and buffer, and at stop; a
 * temporal element keeps the previous input frame (PreviousFrame, in the route's caps state, kept
 * by cuvroute.cpp) or, with `temporal_luma`, its luma plane (PreviousLuma, kept here). Not
 * installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include "common/cuvprevious.h"
#include "common/cuvroute.h"

namespace cuv {

class Temporal {
 public:
  /* At start, from the element's class: whether it is temporal, and keeps only luma planes. */
  void configure (bool temporal, bool luma)
  {
    temporal_ = temporal;
    luma_ = temporal && luma;
  }
  /* Whether the route keeps whole frames (cuv::Operation's `temporal`). */
  bool keeps_frames () const { return temporal_ && !luma_; }

  /* A caps change: where the new caps describe the same frames in another memory, @state takes
   * the previous frame over from @old; otherwise what was kept is forgotten. Before @state
   * replaces @old in the route. */
  void caps_changed (GstObject *self, const Route &route, CapsState &state, CapsState *old, bool stream_continues);
  /* A serialized or flush event, once the frames in flight have been pushed or dropped:
   * FLUSH_STOP and GAP forget what was kept. */
  void event (GstObject *self, const Route &route, GstEvent *event);
  /* An input buffer, before the route processes it: a DISCONT buffer forgets what was kept. */
  void begin_buffer (GstObject *self, const Route &route, GstBuffer *inbuf);
  /* After the route processed it (@ok: without error): the luma planes swap. */
  void end_buffer (bool ok) { luma_planes_.end (ok); }
  /* At stop, once the GPU is done with the last frame: forgets, and frees the planes. */
  void stop ();

  /* For a temporal_luma element's transform: this frame's plane and the previous one
   * (PreviousLuma), on the device for the CUDA backend (@route.use_cuda). FALSE (logged) when
   * device memory could not be had. */
  bool luma_planes (GstObject *self, const Route &route, Plane *current, const Plane **previous);

 private:
  /* The one place: the previous frame of the route's caps state and the luma plane go. */
  void forget (GstObject *self, const Route &route, const char *why);

  bool temporal_ = false;
  bool luma_ = false;
  PreviousLuma luma_planes_;
};

}  // namespace cuv
