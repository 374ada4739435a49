/* gst-cudavision: a GstAllocator of page-locked host memory, for the pools an element offers where
 * a side of it is system memory (issue 17): upstream writes its frames straight into memory that
 * the copy engine reads, and our system-memory output is written by the copy engine, so each
 * upload and download is one DMA without the driver's staging through its own pinned buffers.
 * GStreamer's CUDA library has no such allocator (1.22 to 1.26 pin only their own staging).
 *
 * The memory is system memory to everyone else (mapping gives the host pointer; no caps feature);
 * it is allocated with cudaHostAllocPortable on the element's context and freed with that
 * context current, from whichever thread drops the last buffer, after the element may have
 * stopped: the allocator holds the context. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include "cuvcuda.h"

namespace cuv {

#if CUV_HAVE_CUDA
/* A new pinned allocator of @ctx (it holds a reference to @ctx); a new reference. */
GstAllocator *pinned_allocator (GstCudaContext *ctx);
/* A video buffer pool for page-locked memory (its config names pinned_allocator ()'s): a start
 * that fails part way frees the buffers it made; a new reference. */
GstBufferPool *pinned_pool_new ();
/* Whether @mem is page-locked memory from a pinned allocator. */
bool is_pinned (GstMemory *mem);
#endif

}  // namespace cuv
