/* gst-cudavision: uploads from, and downloads into, pageable host memory that we cannot page-lock
 * (docs/design.md, "Data flow": a new malloc'd frame every time, as an appsrc application makes them).
 *
 * The driver's own pageable copy stages the frame through its pinned buffers with one CPU thread
 * (2.4 ms for a 3840x2160 RGBA frame on the H100 machine, a quarter of the link's speed), and
 * page-locking a block that comes once costs more than it saves. Here the frame is cut into
 * bands of rows of about 2 MB, which a few threads of a process-wide pool and the streaming thread
 * copy into a page-locked staging frame, and each band's DMA is queued as soon as it is there, so
 * the copy engine runs behind the CPU copies (0.95 ms for that frame with 6 threads; bench_upload,
 * docs/performance-log.md). A download into such memory (an element that works in place on it) is
 * one DMA into the staging frame, then the same threads copy it out, band by band.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "common/base/cuvcuda.h"
#include "kernels/base/image.h"

namespace cuv {

#if CUV_HAVE_CUDA
/* Whether a staged copy beats the driver's pageable copy for @frame: a frame of a few bands, on a
 * machine with cores to spare for the copy. */
bool staged_copy_pays (const Frame &frame);

/* Copies @src (host memory) into @stage (page-locked, laid out as @dst) on the pool's threads and
 * the calling thread, and queues each band's copy from @stage into @dst (device memory) on
 * @stream as soon as the band is in @stage; returns once every band is queued (the first error
 * of those calls if one failed, after the CPU copies have ended). The caller's CUDA context must be
 * current. @stage is read until @stream passes the copies, and must not be written before. */
cudaError_t upload_staged (const Frame &src, const Frame &stage, const Frame &dst, cudaStream_t stream);

/* Copies @stage (page-locked, holding a frame downloaded already) into @dst (host memory, laid out
 * as the frame) on the pool's threads and the calling thread; returns when it is there. */
void copy_out_staged (const Frame &stage, const Frame &dst);
#endif

}  // namespace cuv
