/* gst-cudavision: the stream a frame was written on, carried from one of our elements to the next
 * on GStreamer 1.22, where memory carries none (docs/design.md, "Synchronisation"). Not installed;
 * no element outside this plugin reads it.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An element of ours says in the ALLOCATION query that it reads this meta (propose_allocation).
 * Upstream of it, one of our elements that writes CUDA memory then pushes without waiting on the
 * host: its output buffer carries the stream the frame ran on (this meta), and the reader runs its
 * own work on that same stream, so stream order puts it after the writer's. The buffers a frame
 * read before (the writer's input, and so on up the chain) stay referenced by the meta until a
 * host wait on that stream has passed them (stream_meta_finished): no buffer goes back to its pool
 * while the GPU may still read it. A buffer dropped before that (a leaky queue, a flush) waits for
 * the stream on the host when its meta is freed. */
#pragma once

#include <gst/gst.h>

#include "common/base/cuvcuda.h"

#if CUV_HAVE_CUDA
#include <memory>

namespace cuv {

class StreamPool;

/* The meta's API type: in the ALLOCATION query (common/base/cuvmetaquery.h), the element that
 * reads our buffers says it follows this meta. */
GType stream_meta_api_type ();

/* The stream @buf's frame was written on when it came from @pool (the context's streams, ours),
 * else NULL: the reader's frame runs on it. */
cudaStream_t carried_stream (GstBuffer *buf, const std::shared_ptr<StreamPool> &pool);

/* After queuing the frame's work on @stream (of @pool) into @outbuf, writable, pushed without a
 * host wait: @outbuf carries @stream, and holds @inbuf (when it is another buffer) until a host
 * wait passes it. */
void hand_on_stream (GstBuffer *outbuf, GstBuffer *inbuf, const std::shared_ptr<StreamPool> &pool,
    cudaStream_t stream);

/* After a host wait for @stream: the frames that @buf (and @inbuf, when another buffer) read were
 * written on it, so the buffers the metas hold may go back to their pools without a wait. */
void stream_meta_finished (GstBuffer *buf, GstBuffer *inbuf, cudaStream_t stream);

/* Before the host reads @buf (a copy to the host, a buffer passed through to an element that is
 * not ours): waits for the stream of the meta it carries, if its work may be pending. */
void wait_for_stream_meta (GstBuffer *buf);

}  // namespace cuv
#endif
