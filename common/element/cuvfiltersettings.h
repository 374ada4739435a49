/* gst-cudavision: the properties every element has from GstCudaVisionFilter (cuda-device-id,
 * backend, max-frames-in-flight, n-threads): their values, and their declarations in the
 * element's property table (cuvsettings.h). Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib-object.h>

#include "common/route/cuvbackend.h"

namespace cuv {

/* the values, under the object lock */
struct FilterSettings {
  gint device_id = -1;
  GstCudaVisionBackend backend = GST_CUDA_VISION_BACKEND_AUTO;
  gint max_frames_in_flight = -1;
  guint n_threads = 0;
};
static_assert (sizeof (GstCudaVisionBackend) == sizeof (gint), "enum properties are int fields");

/* class_init: installs the four on the base class, their values in the FilterSettings that
 * @settings gives for an instance. */
void install_filter_properties (GObjectClass *klass, FilterSettings *(*settings) (GObject *object));

}  // namespace cuv
