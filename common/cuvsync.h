/* gst-cudavision: where the host and the CUDA streams wait for each other (DESIGN.md rule 5). The
 * per-frame route (cuvroute.cpp) calls these at the two points a frame crosses an element's
 * boundary; the 1.22 and 1.24+ rules live here and nowhere else.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include "cuvcuda.h"

#if CUV_HAVE_CUDA
namespace cuv {

/* Before our stream reads @mem, CUDA memory of our context that another element wrote. Since
 * GStreamer 1.24 the memory carries the stream it was written on and may still be in flight:
 * gst_cuda_memory_sync () waits for it. On 1.22 the writer finished before it pushed. */
void wait_for_writer (GstMemory *mem);

/* Before a buffer leaves the element: the element's work on @stream is complete, so any reader,
 * on any stream or on the host, sees the whole frame (GStreamer 1.22's contract).
 *
 * How the host waits: cudaStreamSynchronize, which spins while the context has fewer contexts than
 * the machine has cores (CUDA's default scheduling), unless CUV_HOST_WAIT=block is in the
 * environment: then @event (made with cudaEventBlockingSync) is recorded on @stream and the thread
 * sleeps until it completes. A tuning knob for many pipelines in one process, where spinning
 * threads can outnumber the cores (docs/performance.md). */
cudaError_t finish_before_push (cudaStream_t stream, cudaEvent_t event);

}  // namespace cuv
#endif
