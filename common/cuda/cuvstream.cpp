/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A CUDA stream per GStreamer version, and how the host waits for one (cuvstream.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuda/cuvstream.h"

#if CUV_HAVE_CUDA
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudamemory.h>

#include <atomic>

namespace cuv {

namespace {
const HostWait host_wait_mode = [] {
  const char *v = g_getenv ("CUV_HOST_WAIT");
  return v && g_str_equal (v, "block") ? HostWait::Block : v && g_str_equal (v, "yield") ? HostWait::Yield : HostWait::Spin;
}();
std::atomic<long> host_waits{0};
}  // namespace

void count_host_wait ()
{
  host_waits.fetch_add (1, std::memory_order_relaxed);
}

long host_wait_count ()
{
  return host_waits.load ();
}

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

HostWait host_wait ()
{
  return host_wait_mode;
}

unsigned int in_flight_event_flags ()
{
  return cudaEventDisableTiming | (host_wait_mode == HostWait::Block ? cudaEventBlockingSync : 0u);
}

}  // namespace cuv
#endif
