/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cuvsync.h"

#if CUV_HAVE_CUDA
#include <gst/cuda/gstcudamemory.h>

namespace cuv {

void wait_for_writer (GstMemory *mem)
{
#if GST_CHECK_VERSION(1, 24, 0)
  gst_cuda_memory_sync (GST_CUDA_MEMORY_CAST (mem));
#else
  (void) mem;
#endif
}

cudaError_t finish_before_push (cudaStream_t stream)
{
  return cudaStreamSynchronize (stream);
}

}  // namespace cuv
#endif
