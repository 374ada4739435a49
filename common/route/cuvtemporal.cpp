/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/route/cuvtemporal.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

void
cuv::Temporal::forget (GstObject *self, PreviousFrame *previous, const char *why)
{
  GST_DEBUG_OBJECT (self, "%s: forgetting the previous frame", why);
  if (previous)
    previous->reset ();
  luma_planes_.forget ();
}

bool
cuv::Temporal::caps_changed (GstObject *self, PreviousFrame *old, bool stream_continues)
{
  if (!temporal_ || !old)
    return false;
  if (!stream_continues) {
    forget (self, old, "new caps");
    return false;
  }
  GST_DEBUG_OBJECT (self, "new caps, the same frames: keeping the previous frame");
  return true;
}

void
cuv::Temporal::event (GstObject *self, PreviousFrame *previous, GstEvent *event)
{
  if (temporal_ && (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP || GST_EVENT_TYPE (event) == GST_EVENT_GAP))
    forget (self, previous, GST_EVENT_TYPE_NAME (event));
}

void
cuv::Temporal::begin_buffer (GstObject *self, PreviousFrame &previous, GstBuffer *inbuf)
{
  if (temporal_ && GST_BUFFER_IS_DISCONT (inbuf))
    forget (self, &previous, "DISCONT");
}

void
cuv::Temporal::stop ()
{
  luma_planes_.release ();
}

bool
cuv::Temporal::luma_planes (GstObject *self, GstCudaContext *context, bool device, int width, int height,
    Plane *current, const Plane **previous)
{
#if CUV_HAVE_CUDA
  if (device)
    return CUV_CUDA_OK (self, luma_planes_.begin_device (context, width, height, current, previous));
#endif
  (void) self;
  (void) context;
  (void) device;
  luma_planes_.begin_host (width, height, current, previous);
  return true;
}
