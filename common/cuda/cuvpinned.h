/* gst-cudavision: a GstAllocator of page-locked host memory, for the pools an element offers where
 * a side of it is system memory (docs/design.md, "Data flow"): upstream writes its frames straight into memory that
 * the copy engine reads, and our system-memory output is written by the copy engine, so each
 * upload and download is one DMA without the driver's staging through its own pinned buffers.
 * GStreamer's CUDA library has no such allocator (1.22 to 1.26 pin only their own staging).
 *
 * The memory is system memory to everyone else (mapping gives the host pointer; no caps feature);
 * it is allocated with cudaHostAllocPortable on the element's context and freed with that
 * context current once the last buffer holding it goes, after the element may have stopped (the
 * allocator holds the context), on cuv::free_host_later ()'s thread, since cudaFreeHost waits
 * for the whole device. Unregistering others' memory (below) waits for the device too; it happens
 * when their owner frees the memory, which the owner does on its own thread.
 *
 * System memory that is not ours (upstream ignored our pool: v4l2src's, a decoder's, appsrc's
 * buffers) is page-locked in place (cudaHostRegister) once the same memory comes a second time,
 * as a source that recycles a few buffers sends it, and stays so until that memory is freed: a
 * registration costs about as much as one pageable copy, and each copy after it runs at pinned
 * speed. Memory that its owner page-locked (cudaHostAlloc'd, or registered by another library)
 * goes up as it is. Memory seen once (a new buffer every frame), a block that the driver will
 * not lock (one that shares a page with a block locked before, a mapping of a device) and one
 * past 4 GiB locked in all go up through our staging (cuvhostcopy.h), or for a frame under 4 MB
 * by the driver's pageable copy. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include "common/base/cuvcuda.h"

namespace cuv {

#if CUV_HAVE_CUDA
/* A new pinned allocator of @ctx (it holds a reference to @ctx); a new reference. */
GstAllocator *pinned_allocator (GstCudaContext *ctx);
/* A video buffer pool for page-locked memory (its config names pinned_allocator ()'s): a start
 * that fails part way frees the buffers it made; a new reference. */
GstBufferPool *pinned_pool_new ();
/* Whether every memory of @buf is page-locked, after page-locking those of them that are system
 * memory seen before and not yet (see above; at most kMaxRegisteredBytes in all, on @ctx). */
bool lock_pages (GstCudaContext *ctx, GstBuffer *buf);
/* Whether @mem is page-locked memory from a pinned allocator. */
bool is_pinned (GstMemory *mem);
#endif

}  // namespace cuv
