/* gst-cudavision: what a temporal element keeps of the previous frame, and the one place where it
 * is forgotten (docs/design.md, "Temporal elements"). The route (cuvroute.h) holds a Temporal,
 * which the base class (gstcudavisionfilter.cpp) calls at start, for each caps change, event and
 * buffer, and at stop; a temporal element keeps the previous input frame (PreviousFrame, in the
 * route's caps state, kept by the backends' routes) or, with `temporal_luma`, its luma plane
 * (PreviousLuma, kept here). Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include "common/base/cuvcuda.h"
#include "common/route/cuvprevious.h"

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

  /* A caps change, before the new caps state replaces the old one, whose previous frame is
   * @old (NULL before the first caps): true where the new caps describe the same frames in
   * another memory, and the new state takes the previous frame over (CapsState::take_previous);
   * otherwise what was kept is forgotten. */
  bool caps_changed (GstObject *self, PreviousFrame *old, bool stream_continues);
  /* A serialized or flush event, once the frames in flight have been pushed or dropped, with the
   * caps state's previous frame (NULL before caps): FLUSH_STOP and GAP forget what was kept. */
  void event (GstObject *self, PreviousFrame *previous, GstEvent *event);
  /* An input buffer, before the route processes it: a DISCONT buffer forgets what was kept. */
  void begin_buffer (GstObject *self, PreviousFrame &previous, GstBuffer *inbuf);
  /* After the route processed it (@ok: without error): the luma planes swap. */
  void end_buffer (bool ok) { luma_planes_.end (ok); }
  /* At stop, once the GPU is done with the last frame: forgets, and frees the planes. */
  void stop ();

  /* For a temporal_luma element's job (keeps_luma): this frame's plane and the previous one
   * (PreviousLuma) for frames of @width x @height, on the device of @context for the CUDA
   * backend (@device). FALSE (logged) when device memory could not be had. */
  bool keeps_luma () const { return luma_; }
  bool luma_planes (GstObject *self, GstCudaContext *context, bool device, int width, int height, Plane *current,
      const Plane **previous);

 private:
  /* The one place: the previous frame of the caps state and the luma plane go. */
  void forget (GstObject *self, PreviousFrame *previous, const char *why);

  bool temporal_ = false;
  bool luma_ = false;
  PreviousLuma luma_planes_;
};

}  // namespace cuv
