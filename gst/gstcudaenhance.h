/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "common/element/gstcudavisionfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_ENHANCE (gst_cuda_enhance_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaEnhance, gst_cuda_enhance, GST, CUDA_ENHANCE, GstCudaVisionFilter)

GST_ELEMENT_REGISTER_DECLARE (cudaenhance);

G_END_DECLS
