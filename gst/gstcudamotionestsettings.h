/* gst-cudavision: cudamotionest's properties: the values a frame runs with and their
 * declarations (common/element/cuvsettings.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib-object.h>

#include "common/element/cuvanalyserregions.h"
#include "kernels/motion/motion.h"

typedef enum {
  GST_CUDA_MOTIONEST_DRAW_NONE,
  GST_CUDA_MOTIONEST_DRAW_ARROWS,
  GST_CUDA_MOTIONEST_DRAW_COLOR,
} GstCudaMotionestDraw;

/* the properties' values, under the object lock; `regions` and `min-region-area` as every
 * analyser that attaches regions has them (common/element/cuvanalyserregions.h) */
struct MotionSettings : cuv::RegionSettings {
  cuv::MotionBlock block = cuv::MotionBlock::Variable;
  guint range = 16;
  guint penalty = 16;
  guint motion_threshold = 16;
  GstCudaMotionestDraw draw = GST_CUDA_MOTIONEST_DRAW_NONE;
  bool tensor_meta = false;
};
static_assert (sizeof (cuv::MotionBlock) == sizeof (gint) && sizeof (GstCudaMotionestDraw) == sizeof (gint),
    "enum properties are int fields");

#define GST_TYPE_CUDA_MOTIONEST_DRAW (gst_cuda_motionest_draw_get_type ())
GType gst_cuda_motionest_draw_get_type (void);
#define GST_TYPE_CUDA_MOTIONEST_BLOCK_SIZE (gst_cuda_motionest_block_size_get_type ())
GType gst_cuda_motionest_block_size_get_type (void);

/* class_init: the properties, with their values in the MotionSettings @settings gives. */
void gst_cuda_motionest_install_properties (GObjectClass *gobject_class, MotionSettings *(*settings) (GObject *object));
