/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuvtemporal.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

void
cuv::Temporal::forget (GstObject *self, const Route &route, const char *why)
{
  GST_DEBUG_OBJECT (self, "%s: forgetting the previous frame", why);
  if (std::shared_ptr<CapsState> state = route.state ())
    state->previous.reset ();
  luma_planes_.forget ();
}

void
cuv::Temporal::caps_changed (GstObject *self, const Route &route, CapsState &state, CapsState *old,
    bool stream_continues)
{
  if (!temporal_ || !old)
    return;
  if (!stream_continues) {
    forget (self, route, "new caps");
    return;
  }
  GST_DEBUG_OBJECT (self, "new caps, the same frames: keeping the previous frame");
  state.take_previous (*old);
}

void
cuv::Temporal::event (GstObject *self, const Route &route, GstEvent *event)
{
  if (temporal_ && (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP || GST_EVENT_TYPE (event) == GST_EVENT_GAP))
    forget (self, route, GST_EVENT_TYPE_NAME (event));
}

void
cuv::Temporal::begin_buffer (GstObject *self, const Route &route, GstBuffer *inbuf)
{
  if (temporal_ && GST_BUFFER_IS_DISCONT (inbuf))
    forget (self, route, "DISCONT");
}

void
cuv::Temporal::stop ()
{
  luma_planes_.release ();
}

bool
cuv::Temporal::luma_planes (GstObject *self, const Route &route, Plane *current, const Plane **previous)
{
  std::shared_ptr<CapsState> state = route.state ();
  const int width = GST_VIDEO_INFO_WIDTH (&state->in_info);
  const int height = GST_VIDEO_INFO_HEIGHT (&state->in_info);
#if CUV_HAVE_CUDA
  if (route.use_cuda)
    return CUV_CUDA_OK (self, luma_planes_.begin_device (route.context, width, height, current, previous));
#endif
  (void) self;
  luma_planes_.begin_host (width, height, current, previous);
  return true;
}
