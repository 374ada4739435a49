/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "common/element/gstcudavisionanalyser.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_MOTIONEST (gst_cuda_motionest_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaMotionest, gst_cuda_motionest, GST, CUDA_MOTIONEST, GstCudaVisionAnalyser)

GST_ELEMENT_REGISTER_DECLARE (cudamotionest);

G_END_DECLS
