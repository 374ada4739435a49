/* gst-cudavision: where the host and the CUDA streams wait for each other (docs/design.md, "Synchronisation"). The
 * per-frame route (cuvcpuroute.cpp, cuvcudaroute.cpp, cuvinflight.cpp) calls these at the two
 * points a frame crosses an element's boundary, and the allocation code (cuvnegotiation.cpp)
 * hands streams along with pools (cuvstream.h: the stream memory and pools carry, per version);
 * the 1.22 and 1.24+ rules live here and nowhere else (docs/design.md, "Synchronisation").
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include "common/base/cuvcuda.h"
#include "common/cuda/cuvstream.h"
#include "common/cuda/cuvstreampool.h"

#if CUV_HAVE_CUDA

namespace cuv {

/* ---- negotiation: whether a frame may leave before it is finished ---- */

/* In propose_allocation: this element orders its work after a frame's writer on the GPU. On 1.22
 * the query says so (cuvstreammeta.h); on 1.24+ the pools carry streams instead, and this does
 * nothing. */
void offer_to_follow_writers (GstQuery *query);
/* In decide_allocation: whether what reads our output (downstream's answer in @query) follows its
 * writer on the GPU (1.22; on 1.24+ false: the memory's stream tells). */
bool consumer_follows_writers (GstQuery *query);

/* ---- per frame ---- */

/* The stream @inbuf's frame was written on by one of our elements, which pushed it without a host
 * wait (1.22: the stream meta, when it is one of @ours's pool), else NULL (and always on 1.24+,
 * where memory carries its stream). The frame then runs on it. */
cudaStream_t stream_of_writer (GstBuffer *inbuf, const StreamLease &ours);
/* Before the host, or a stream other than the one it carries, reads @buf (1.22): waits for the
 * writer that pushed it unfinished. Nothing on 1.24+ (wait_for_writer). */
void before_others_read (GstBuffer *buf);

/* Before @reader reads @mem, CUDA memory of our context that another element wrote. Since
 * GStreamer 1.24 the memory carries the stream it was written on and may still be in flight
 * (GST_CUDA_MEMORY_TRANSFER_NEED_SYNC): when that stream is not @reader, @reader waits for it on
 * the GPU (@event recorded on the writer's stream, cudaStreamWaitEvent on @reader's); without a
 * @reader (a host copy follows) gst_cuda_memory_sync () waits on the host, as upstream's CUDA
 * elements do. On @reader itself, stream order suffices. On 1.22 the writer finished before it
 * pushed. Returns the CUDA error of the GPU-side wait. */
cudaError_t wait_for_writer (GstMemory *mem, GstCudaStream *reader, cudaEvent_t event);

/* 1.22, instead of finish_before_push (): @outbuf (CUDA memory, writable) leaves before its frame,
 * queued on @stream of @ours's pool, is finished; it carries @stream to the next element of ours,
 * which runs on it, and holds @inbuf until a host wait passes it. Whether the consumer follows is
 * consumer_follows_writers ()'s answer. */
void hand_on_unfinished (GstBuffer *outbuf, GstBuffer *inbuf, const StreamLease &ours, cudaStream_t stream);
/* After a host wait for @stream (finish_before_push, finish_in_flight): @outbuf's frame and the
 * frames it read (@inbuf when out of place, and those before it) are finished, so the buffers
 * their metas hold may go back to their pools without a wait (1.22). */
void frame_passed (GstBuffer *outbuf, GstBuffer *inbuf, cudaStream_t stream);

/* Before a buffer leaves the element: the element's work on @stream is complete, so any reader,
 * on any stream or on the host, sees the whole frame (GStreamer 1.22's contract).
 *
 * How the host waits: cudaStreamSynchronize, which spins while the context has fewer contexts than
 * the machine has cores (CUDA's default scheduling), unless CUV_HOST_WAIT is in the environment:
 * with `block` @event (made with cudaEventBlockingSync) is recorded on @stream and the thread
 * sleeps until it completes; with `yield` the thread asks the stream (or event) whether it is done
 * and yields its core between two questions. Tuning knobs for many pipelines in one process,
 * where spinning threads can outnumber the cores (docs/performance-log.md). */
cudaError_t finish_before_push (cudaStream_t stream, cudaEvent_t event);

/* Frames in flight (the base class's max-frames-in-flight): instead of finish_before_push (), a
 * frame's end is marked on @stream with @done, and the host waits for it with finish_in_flight ()
 * when the next frame has been queued (or at a drain), so the GPU never waits for the host. Those
 * waits are counted apart from the others (cuv_in_flight_waits). */
cudaError_t mark_in_flight (cudaStream_t stream, cudaEvent_t done);
cudaError_t finish_in_flight (cudaEvent_t done);
/* Before a frame runs on another stream than the last frame did (1.24+, where the stream follows
 * the memory): the last frame's work on @stream is complete, so what the element keeps between
 * frames is not rewritten under it. A host wait, counted as the others are. */
cudaError_t finish_last_frame (cudaStream_t stream);

/* After finish_before_push () on CUDA memory that carries a stream: nothing is pending on it, so
 * a consumer need not wait (1.24+: clears GST_CUDA_MEMORY_TRANSFER_NEED_SYNC, which our write map
 * set). */
void mark_finished (GstMemory *mem);

}  // namespace cuv
#endif
