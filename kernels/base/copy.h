/* gst-cudavision: plane-by-plane frame copy, for elements that must output their input unchanged.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "kernels/base/image.h"

#if CUV_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace cuv {

void copy_frame_cpu (const Frame &src, const Frame &dst);

#if CUV_HAVE_CUDA
/* Copies every plane on @stream (device to device); does not synchronize. */
cudaError_t copy_frame_cuda (const Frame &src, const Frame &dst, cudaStream_t stream);
#endif

}  // namespace cuv
