/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The stream a frame was written on, from one of our elements to the next (cuvstreammeta.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuvstreammeta.h"

#if CUV_HAVE_CUDA
#include <atomic>
#include <new>

#include "common/cuvstreampool.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

namespace cuv {

namespace {

struct StreamMeta {
  GstMeta meta;
  std::shared_ptr<StreamPool> pool; /* keeps the stream (and its context) alive */
  cudaStream_t stream;
  GstBuffer *reads;               /* the buffer the frame read, held until the stream has passed it */
  std::atomic<bool> finished;     /* a host wait has passed the frame's work */
};

StreamMeta *
find (GstBuffer *buf)
{
  return buf ? reinterpret_cast<StreamMeta *> (gst_buffer_get_meta (buf, stream_meta_api_type ())) : nullptr;
}

/* A host wait for @stream has passed @m's frame, and the frames before it on @stream that it
 * holds the buffers of. */
void
mark_passed (StreamMeta *m, cudaStream_t stream)
{
  for (; m && m->stream == stream; m = find (m->reads))
    if (m->finished.exchange (true, std::memory_order_acq_rel))
      break;
}

/* Waits on the host for the meta's stream, where the frame's work may still be pending. */
void
finish_on_host (StreamMeta *m)
{
  if (m->finished.load (std::memory_order_acquire) || !m->pool)
    return;
  ContextGuard guard (m->pool->context ());
  GST_LOG ("the host waits for stream %p before the host or another stream may use its buffers", m->stream);
  count_host_wait ();
  if (!guard.ok () || cudaStreamSynchronize (m->stream) != cudaSuccess)
    GST_ERROR ("could not wait for CUDA stream %p: its buffers go back to their pools anyway", m->stream);
  mark_passed (m, m->stream);
}

gboolean
meta_init (GstMeta *meta, gpointer, GstBuffer *)
{
  StreamMeta *m = reinterpret_cast<StreamMeta *> (meta);
  new (&m->pool) std::shared_ptr<StreamPool> ();
  m->stream = nullptr;
  m->reads = nullptr;
  new (&m->finished) std::atomic<bool> (true);
  return TRUE;
}

/* A buffer dropped before a host wait passed its frame (a leaky queue, a flush): its frame and
 * the buffers it read may still be in use on the GPU. */
void
meta_free (GstMeta *meta, GstBuffer *)
{
  StreamMeta *m = reinterpret_cast<StreamMeta *> (meta);
  finish_on_host (m);
  gst_clear_buffer (&m->reads);
  m->pool.~shared_ptr ();
  m->finished.~atomic ();
}

const GstMetaInfo *
meta_info ()
{
  static const GstMetaInfo *info = [] {
    return gst_meta_register (stream_meta_api_type (), "CuvStreamMeta", sizeof (StreamMeta), meta_init, meta_free,
        nullptr);
  }();
  return info;
}

}  // namespace

GType
stream_meta_api_type ()
{
  static GType type = [] {
    /* the meta says where the memory's content is written: one that replaces the memory drops it */
    static const gchar *tags[] = {GST_META_TAG_MEMORY_STR, nullptr};
    return gst_meta_api_type_register ("CuvStreamMetaAPI", tags);
  }();
  return type;
}

bool
query_reads_stream_meta (GstQuery *query)
{
  return gst_query_find_allocation_meta (query, stream_meta_api_type (), nullptr);
}

void
add_stream_meta_to_query (GstQuery *query)
{
  if (!query_reads_stream_meta (query))
    gst_query_add_allocation_meta (query, stream_meta_api_type (), nullptr);
}

cudaStream_t
carried_stream (GstBuffer *buf, const std::shared_ptr<StreamPool> &pool)
{
  StreamMeta *m = find (buf);
  return m && m->pool == pool ? m->stream : nullptr;
}

void
hand_on_stream (GstBuffer *outbuf, GstBuffer *inbuf, const std::shared_ptr<StreamPool> &pool, cudaStream_t stream)
{
  StreamMeta *m = find (outbuf);
  if (!m)
    m = reinterpret_cast<StreamMeta *> (gst_buffer_add_meta (outbuf, meta_info (), nullptr));
  if (!m)
    return;
  if (inbuf != outbuf && m->reads != inbuf) {
    /* what the meta held before (a buffer of a pool that kept metas) */
    finish_on_host (m);
    gst_buffer_replace (&m->reads, inbuf);
  }
  if (m->pool != pool)
    m->pool = pool;
  m->stream = stream;
  m->finished.store (false, std::memory_order_release);
}

void
stream_meta_finished (GstBuffer *buf, GstBuffer *inbuf, cudaStream_t stream)
{
  mark_passed (find (buf), stream);
  if (inbuf != buf)
    mark_passed (find (inbuf), stream);
}

void
wait_for_stream_meta (GstBuffer *buf)
{
  if (StreamMeta *m = find (buf))
    finish_on_host (m);
}

}  // namespace cuv
#endif
