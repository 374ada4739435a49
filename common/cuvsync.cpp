/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuvsync.h"

#if CUV_HAVE_CUDA
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudamemory.h>

#include <sched.h>

#include <atomic>

#include "common/cuvcuda.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

namespace cuv {

namespace {
/* CUV_HOST_WAIT: how the host waits (cuvsync.h) */
enum class HostWait { Spin, Block, Yield };
const HostWait host_wait = [] {
  const char *v = g_getenv ("CUV_HOST_WAIT");
  return v && g_str_equal (v, "block") ? HostWait::Block : v && g_str_equal (v, "yield") ? HostWait::Yield : HostWait::Spin;
}();
const bool host_wait_blocks = host_wait == HostWait::Block;

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

GstCudaStream *memory_stream (GstMemory *mem)
{
#if CUV_HAVE_STREAM_MODEL
  return mem && gst_is_cuda_memory (mem) ? gst_cuda_memory_get_stream (GST_CUDA_MEMORY_CAST (mem)) : nullptr;
#else
  (void) mem;
  return nullptr;
#endif
}

cudaStream_t stream_handle (GstCudaStream *s)
{
#if CUV_HAVE_STREAM_MODEL
  return s ? reinterpret_cast<cudaStream_t> (gst_cuda_stream_get_handle (s)) : nullptr;
#else
  (void) s;
  return nullptr;
#endif
}

GstCudaStream *pool_config_stream (GstStructure *config)
{
#if CUV_HAVE_STREAM_MODEL
  return gst_buffer_pool_config_get_cuda_stream (config);
#else
  (void) config;
  return nullptr;
#endif
}

void pool_config_set_stream (GstStructure *config, GstCudaStream *s)
{
#if CUV_HAVE_STREAM_MODEL
  if (s)
    gst_buffer_pool_config_set_cuda_stream (config, s);
#else
  (void) config;
  (void) s;
#endif
}

void replace_stream (GstCudaStream **slot, GstCudaStream *s)
{
#if CUV_HAVE_STREAM_MODEL
  if (s)
    gst_cuda_stream_ref (s);
  gst_clear_cuda_stream (slot);
  *slot = s;
#else
  (void) s;
  *slot = nullptr;
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
  if (host_wait == HostWait::Yield)
    return wait_yielding ([stream] { return cudaStreamQuery (stream); });
  if (!host_wait_blocks || !event)
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
  if (host_wait == HostWait::Yield)
    return wait_yielding ([done] { return cudaEventQuery (done); });
  return cudaEventSynchronize (done);
}

unsigned int in_flight_event_flags ()
{
  return cudaEventDisableTiming | (host_wait_blocks ? cudaEventBlockingSync : 0u);
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
