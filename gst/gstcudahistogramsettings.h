/* gst-cudavision: cudahistogram's properties: the values a frame runs with and their
 * declarations (common/element/cuvsettings.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib-object.h>

#include "kernels/histogram/histogram.h"

/* the properties' values, under the object lock (common/element/cuvsettings.h) */
struct HistogramSettings {
  guint bins = 256;
  guint roi[4] = {0, 0, 0, 0}; /* x, y, width, height */
  bool overlay = false;
  cuv::OverlayCorner position = cuv::OverlayCorner::TopRight;
  guint overlay_size = 25;
  bool tensor_meta = false;
};
static_assert (sizeof (cuv::OverlayCorner) == sizeof (gint), "enum properties are int fields");

#define GST_TYPE_CUDA_HISTOGRAM_POSITION (gst_cuda_histogram_position_get_type ())
GType gst_cuda_histogram_position_get_type (void);

/* class_init: the properties, with their values in the HistogramSettings @settings gives. */
void gst_cuda_histogram_install_properties (GObjectClass *gobject_class, HistogramSettings *(*settings) (GObject *object));
