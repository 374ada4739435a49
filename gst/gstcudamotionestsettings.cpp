/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gst/gstcudamotionestsettings.h"

#include <gst/gst.h>

#include "common/base/cuvenum.h"
#include "common/element/cuvsettings.h"

GType
gst_cuda_motionest_draw_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_MOTIONEST_DRAW_NONE, "The frame passes through unchanged", "none"},
    {GST_CUDA_MOTIONEST_DRAW_ARROWS, "Each block's vector drawn as an arrow on the frame", "arrows"},
    {GST_CUDA_MOTIONEST_DRAW_COLOR, "The frame replaced by a colour-wheel flow image", "color"},
    {0, nullptr, nullptr},
  };
  return cuv::enum_type (&type, "GstCudaMotionestDraw", values);
}

GType
gst_cuda_motionest_block_size_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {static_cast<gint> (cuv::MotionBlock::B4), "4x4 blocks", "4x4"},
    {static_cast<gint> (cuv::MotionBlock::B8), "8x8 blocks", "8x8"},
    {static_cast<gint> (cuv::MotionBlock::B16), "16x16 blocks", "16x16"},
    {static_cast<gint> (cuv::MotionBlock::Variable),
        "8x8 macroblocks, split into 8x4, 4x8 or 4x4 blocks where that costs less", "variable"},
    {0, nullptr, nullptr},
  };
  return cuv::enum_type (&type, "GstCudaMotionestBlockSize", values);
}

/* The properties: one declaration each (common/element/cuvsettings.h). */
void
gst_cuda_motionest_install_properties (GObjectClass *gobject_class, MotionSettings *(*settings) (GObject *object))
{
  static const MotionSettings kDefaults;
  const GParamFlags flags = cuv::kMutablePlaying;
  cuv::Properties p (gobject_class, settings);

  /**
   * GstCudaMotionest:block-size:
   *
   * The blocks searched; `variable` splits 8x8 macroblocks where that costs less.
   */
  p.add (&MotionSettings::block,
      g_param_spec_enum ("block-size", "Block size",
          "Size of the blocks searched; variable: 8x8 macroblocks, split into 8x4, 4x8 or 4x4 where that costs less",
          GST_TYPE_CUDA_MOTIONEST_BLOCK_SIZE, static_cast<gint> (kDefaults.block), flags));
  /**
   * GstCudaMotionest:search-range:
   *
   * R: every displacement in [-R, R-1] x [-R, R-1] is tried (16: a 32x32 window).
   */
  p.add (&MotionSettings::range,
      g_param_spec_uint ("search-range", "Search range",
          "R: every displacement in [-R, R-1] x [-R, R-1] pixels is tried (16 = a 32x32 window)", 1,
          cuv::kMotionMaxRange, kDefaults.range, flags));
  /**
   * GstCudaMotionest:partition-penalty:
   *
   * With variable blocks: SAD added for each vector of a macroblock beyond the first.
   */
  p.add (&MotionSettings::penalty,
      g_param_spec_uint ("partition-penalty", "Partition penalty",
          "With block-size=variable: SAD added for each vector of a macroblock beyond the first (higher keeps 8x8)",
          0, 65535, kDefaults.penalty, static_cast<GParamFlags> (flags | GST_PARAM_CONTROLLABLE)));
  /**
   * GstCudaMotionest:motion-threshold:
   *
   * For moving-ratio: a block with a non-zero vector moves when its SAD per pixel is below this.
   */
  p.add (&MotionSettings::motion_threshold,
      g_param_spec_uint ("motion-threshold", "Motion threshold",
          "A block with a non-zero vector counts as moving in moving-ratio when its SAD per pixel is below this "
          "(a worse match is noise or occlusion)",
          0, 255, kDefaults.motion_threshold, static_cast<GParamFlags> (flags | GST_PARAM_CONTROLLABLE)));
  /**
   * GstCudaMotionest:draw:
   *
   * `none`: the frame passes unchanged; `arrows`: vectors drawn on it; `color`: a flow image.
   */
  p.add (&MotionSettings::draw,
      g_param_spec_enum ("draw", "Draw",
          "none: the frame passes unchanged; arrows: each block's vector drawn on the frame; color: the frame replaced "
          "by a colour-wheel flow image (hue = direction, brightness = length)",
          GST_TYPE_CUDA_MOTIONEST_DRAW, kDefaults.draw, flags));
  /**
   * GstCudaMotionest:regions:
   *
   * Attach the moving regions to each buffer: a GstVideoRegionOfInterestMeta of type "motion"
   * each and, where GStreamer's analytics library is there (1.24+), an object detection of type
   * "motion" in its GstAnalyticsRelationMeta, which `objectdetectionoverlay` draws.
   */
  /**
   * GstCudaMotionest:min-region-area:
   *
   * With `regions`: the least moving area, in pixels, that a region needs to be attached.
   */
  cuv::add_region_properties (p,
      "Attach each region of moving blocks (8-connected, moving as in motion-threshold) as a "
      "GstVideoRegionOfInterestMeta \"motion\" and, with GStreamer 1.24+, an object detection \"motion\" in the "
      "analytics relation meta; confidence: the region's own moving blocks over its box's area",
      "With regions=true: the least area of moving blocks, in pixels, that a region needs to be attached "
      "(smaller ones are left out as noise)");
#if HAVE_GST_TENSOR_META
  /**
   * GstCudaMotionest:tensor-meta:
   *
   * Attach each frame's vector field as a tensor "cudamotionest-vectors" of INT8, dimensions
   * [rows, columns, 2] (dx, dy of each unit, as in the meta's vectors), in the buffer's
   * GstTensorMeta. Only where the plugin was built with GStreamer 1.26 or later.
   */
  p.add (&MotionSettings::tensor_meta,
      g_param_spec_boolean ("tensor-meta", "Tensor meta",
          "Attach the vector field as a GstTensorMeta tensor \"cudamotionest-vectors\" (INT8, dimensions "
          "[rows, columns, 2]: dx, dy of each unit)",
          kDefaults.tensor_meta, flags));
#endif
}
