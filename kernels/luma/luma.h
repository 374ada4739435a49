/* gst-cudavision: the luma plane of a frame, for elements that analyse luma only.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * RGBA/BGRA/RGBx/BGRx: BT.601 luma, luma_bt601 (); GRAY8, NV12, I420: the Y plane, copied;
 * YUY2, UYVY: the Y bytes of the packed plane; P010: each Y sample's high byte. */
#pragma once

#include "kernels/base/image.h"

#if CUV_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace cuv {

/* @out has @in's width and height. */
void luma_plane_cpu (const Frame &in, const Plane &out);

#if CUV_HAVE_CUDA
/* Launches on @stream (or copies the Y plane); does not synchronize. */
cudaError_t luma_plane_cuda (const Frame &in, const Plane &out, cudaStream_t stream);
#endif

}  // namespace cuv
