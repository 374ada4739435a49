/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "common/element/gstcudavisionanalyser.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_NOISEMAP (gst_cuda_noisemap_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaNoisemap, gst_cuda_noisemap, GST, CUDA_NOISEMAP, GstCudaVisionAnalyser)

GST_ELEMENT_REGISTER_DECLARE (cudanoisemap);

G_END_DECLS
