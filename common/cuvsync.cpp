/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cuvsync.h"

#if CUV_HAVE_CUDA
#include <gst/cuda/gstcudamemory.h>

namespace cuv {

namespace {
const bool host_wait_blocks = [] {
  const char *v = g_getenv ("CUV_HOST_WAIT");
  return v && g_str_equal (v, "block");
}();
}  // namespace

void wait_for_writer (GstMemory *mem)
{
#if GST_CHECK_VERSION(1, 24, 0)
  gst_cuda_memory_sync (GST_CUDA_MEMORY_CAST (mem));
#else
  (void) mem;
#endif
}

cudaError_t finish_before_push (cudaStream_t stream, cudaEvent_t event)
{
  if (!host_wait_blocks || !event)
    return cudaStreamSynchronize (stream);
  const cudaError_t err = cudaEventRecord (event, stream);
  return err != cudaSuccess ? err : cudaEventSynchronize (event);
}

}  // namespace cuv
#endif
