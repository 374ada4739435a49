/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The stream a frame was written on, from one of our elements to the next (cuvstreammeta.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuda/cuvstreammeta.h"

#if CUV_HAVE_CUDA
#include <atomic>
#include <new>

#include "common/cuda/cuvstreampool.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

namespace cuv {

namespace {

struct StreamMeta {
  GstMeta meta;
  std::shared_ptr<StreamPool> pool; /* keeps the stream (and its context) alive */
  cudaStream_t stream;
  /* the buffer the frame read, held until a host wait has passed it (then let go of at once) */
  std::atomic<GstBuffer *> reads;
  std::atomic<bool> finished;     /* a host wait has passed the frame's work */
};

StreamMeta *
find (GstBuffer *buf)
{
  return buf ? reinterpret_cast<StreamMeta *> (gst_buffer_get_meta (buf, stream_meta_api_type ())) : nullptr;
}

/* A host wait for @stream has passed @m's frame, and the frames before it on @stream whose buffers
 * it holds: those go back at once (not when @m's buffer does: a temporal element keeps its
 * previous frame, and a decoder's pool may be small). Two branches of a tee may pass the same
 * meta: the exchanges let one of them have each. */
void
mark_passed (StreamMeta *m, cudaStream_t stream)
{
  if (!m || m->stream != stream || m->finished.exchange (true, std::memory_order_acq_rel))
    return;
  if (GstBuffer *read = m->reads.exchange (nullptr, std::memory_order_acq_rel)) {
    mark_passed (find (read), stream);
    gst_buffer_unref (read);
  }
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
  new (&m->reads) std::atomic<GstBuffer *> (nullptr);
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
  if (GstBuffer *read = m->reads.exchange (nullptr))
    gst_buffer_unref (read);
  m->pool.~shared_ptr ();
  m->finished.~atomic ();
  m->reads.~atomic ();
}

const GstMetaInfo *meta_info ();

/* A copy of the buffer that shares its memory (gst_buffer_copy: a tee's frame made writable, one
 * that videorate repeats) is the same frame on the same stream: the copy carries the stream too,
 * and holds the buffer it was copied from until a host wait passes them. A deep copy, whose memory
 * is copied, drops the meta (GST_META_TAG_MEMORY_REFERENCE). */
gboolean
meta_transform (GstBuffer *dest, GstMeta *meta, GstBuffer *src, GQuark type, gpointer)
{
  if (!GST_META_TRANSFORM_IS_COPY (type))
    return FALSE;
  const StreamMeta *from = reinterpret_cast<const StreamMeta *> (meta);
  StreamMeta *to = reinterpret_cast<StreamMeta *> (gst_buffer_add_meta (dest, meta_info (), nullptr));
  if (!to)
    return FALSE;
  to->pool = from->pool;
  to->stream = from->stream;
  if (!from->finished.load (std::memory_order_acquire)) {
    to->reads.store (gst_buffer_ref (src), std::memory_order_release);
    to->finished.store (false, std::memory_order_release);
  }
  return TRUE;
}

const GstMetaInfo *
meta_info ()
{
  static const GstMetaInfo *info = [] {
    return gst_meta_register (stream_meta_api_type (), "CuvStreamMeta", sizeof (StreamMeta), meta_init, meta_free,
        meta_transform);
  }();
  return info;
}

}  // namespace

GType
stream_meta_api_type ()
{
  static GType type = [] {
    /* the meta says where the memory's content is written: an element that replaces the memory
     * drops it, and so does a deep copy */
    static const gchar *tags[] = {GST_META_TAG_MEMORY_STR, GST_META_TAG_MEMORY_REFERENCE_STR, nullptr};
    return gst_meta_api_type_register ("CuvStreamMetaAPI", tags);
  }();
  return type;
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
  if (inbuf != outbuf && m->reads.load () != inbuf) {
    /* what the meta held before (a buffer of a pool that kept metas) */
    finish_on_host (m);
    if (GstBuffer *old = m->reads.exchange (gst_buffer_ref (inbuf)))
      gst_buffer_unref (old);
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
