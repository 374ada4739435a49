/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuvsync.h"

#if CUV_HAVE_CUDA
#include <gst/cuda/gstcudamemory.h>

#include <sched.h>

#include <atomic>

#include "common/cuvcuda.h"

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

/* the host's waits for a stream, for tests (cuv_host_waits), and for frames in flight
 * (cuv_in_flight_waits) */
std::atomic<long> host_waits{0};
std::atomic<long> in_flight_waits{0};
}  // namespace

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
  host_waits.fetch_add (1, std::memory_order_relaxed);
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
  host_waits.fetch_add (1, std::memory_order_relaxed);
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
  return cuv::host_waits.load ();
}

/* The host's waits for frames in flight so far in this process (finish_in_flight): each one for a
 * frame whose successor was queued on the GPU first. */
extern "C" G_MODULE_EXPORT long cuv_in_flight_waits ()
{
  return cuv::in_flight_waits.load ();
}
#endif
