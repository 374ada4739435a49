/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuda/cuvsync.h"

#if CUV_HAVE_CUDA
#include <gst/cuda/gstcudamemory.h>

#include <sched.h>

#include <atomic>

#include "common/base/cuvcuda.h"
#include "common/base/cuvmetaquery.h"
#include "common/cuda/cuvstreammeta.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

namespace cuv {

namespace {
/* CUV_HOST_WAIT=yield: asks whether the work is done, and gives the core to another thread
 * between two questions */
template <typename Query>
cudaError_t
wait_yielding (Query query)
{
  cudaError_t err;
  while ((err = query ()) == cudaErrorNotReady)
    sched_yield ();
  return err;
}

/* the host's waits for frames in flight (cuv_in_flight_waits); the others are counted with
 * count_host_wait () (cuvstream.h) */
std::atomic<long> in_flight_waits{0};
}  // namespace

void offer_to_follow_writers (GstQuery *query)
{
#if CUV_HAVE_STREAM_MODEL
  (void) query;
#else
  query_add_meta (query, stream_meta_api_type ());
#endif
}

bool consumer_follows_writers (GstQuery *query)
{
#if CUV_HAVE_STREAM_MODEL
  (void) query;
  return false;
#else
  return query_has_meta (query, stream_meta_api_type ());
#endif
}

cudaStream_t stream_of_writer (GstBuffer *inbuf, const StreamLease &ours)
{
#if CUV_HAVE_STREAM_MODEL
  (void) inbuf;
  (void) ours;
  return nullptr;
#else
  return carried_stream (inbuf, ours.pool ());
#endif
}

void before_others_read (GstBuffer *buf)
{
#if CUV_HAVE_STREAM_MODEL
  (void) buf;
#else
  wait_for_stream_meta (buf);
#endif
}

void hand_on_unfinished (GstBuffer *outbuf, GstBuffer *inbuf, const StreamLease &ours, cudaStream_t stream)
{
  GST_LOG ("frame on stream %p goes on unfinished to an element that follows it on the GPU", stream);
  hand_on_stream (outbuf, inbuf, ours.pool (), stream);
}

void frame_passed (GstBuffer *outbuf, GstBuffer *inbuf, cudaStream_t stream)
{
#if CUV_HAVE_STREAM_MODEL
  (void) outbuf;
  (void) inbuf;
  (void) stream;
#else
  stream_meta_finished (outbuf, inbuf, stream);
#endif
}

cudaError_t wait_for_writer (GstMemory *mem, GstCudaStream *reader, cudaEvent_t event)
{
#if CUV_HAVE_STREAM_MODEL
  GstCudaStream *writer = memory_stream (mem);
  if (!writer || writer == reader || !GST_MEMORY_FLAG_IS_SET (mem, GST_CUDA_MEMORY_TRANSFER_NEED_SYNC))
    return cudaSuccess;
  if (reader && event) {
    GST_LOG ("waiting on the GPU for stream %p before stream %p reads", writer, reader);
    cudaError_t err = cudaEventRecord (event, stream_handle (writer));
    return err != cudaSuccess ? err : cudaStreamWaitEvent (stream_handle (reader), event, 0);
  }
  GST_LOG ("the host waits for stream %p before a host copy", writer);
  count_host_wait ();
  gst_cuda_memory_sync (GST_CUDA_MEMORY_CAST (mem));
#else
  (void) mem;
  (void) reader;
  (void) event;
#endif
  return cudaSuccess;
}

cudaError_t finish_before_push (cudaStream_t stream, cudaEvent_t event)
{
  count_host_wait ();
  if (host_wait () == HostWait::Yield)
    return wait_yielding ([stream] { return cudaStreamQuery (stream); });
  if (host_wait () != HostWait::Block || !event)
    return cudaStreamSynchronize (stream);
  const cudaError_t err = cudaEventRecord (event, stream);
  return err != cudaSuccess ? err : cudaEventSynchronize (event);
}

cudaError_t mark_in_flight (cudaStream_t stream, cudaEvent_t done)
{
  return cudaEventRecord (done, stream);
}

cudaError_t finish_in_flight (cudaEvent_t done)
{
  in_flight_waits.fetch_add (1, std::memory_order_relaxed);
  if (host_wait () == HostWait::Yield)
    return wait_yielding ([done] { return cudaEventQuery (done); });
  return cudaEventSynchronize (done);
}

cudaError_t finish_last_frame (cudaStream_t stream)
{
  return finish_before_push (stream, nullptr);
}

void mark_finished (GstMemory *mem)
{
#if CUV_HAVE_STREAM_MODEL
  if (mem && gst_is_cuda_memory (mem))
    GST_MEMORY_FLAG_UNSET (mem, GST_CUDA_MEMORY_TRANSFER_NEED_SYNC);
#else
  (void) mem;
#endif
}

}  // namespace cuv

/* The host's waits for a stream so far in this process: before a push (finish_before_push), for
 * another element's stream (wait_for_writer) and for the last frame's (finish_last_frame). For
 * tests, as cuv_cuda_checked_calls. */
extern "C" G_MODULE_EXPORT long cuv_host_waits ()
{
  return cuv::host_wait_count ();
}

/* The host's waits for frames in flight so far in this process (finish_in_flight): each one for a
 * frame whose successor was queued on the GPU first. */
extern "C" G_MODULE_EXPORT long cuv_in_flight_waits ()
{
  return cuv::in_flight_waits.load ();
}
#endif
