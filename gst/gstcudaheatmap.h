/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "common/element/gstcudavisionanalyser.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_HEATMAP (gst_cuda_heatmap_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaHeatmap, gst_cuda_heatmap, GST, CUDA_HEATMAP, GstCudaVisionAnalyser)

GST_ELEMENT_REGISTER_DECLARE (cudaheatmap);

G_END_DECLS
