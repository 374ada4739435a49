/* gst-cudavision: a CUDA stream as GStreamer and CUDA see it, per GStreamer version: the
 * GstCudaStream that memory and pools carry since 1.24 (none on 1.22), its CUDA handle and
 * references to it; and how the host waits for a stream (CUV_HOST_WAIT), which the flags of the
 * events it waits on follow (cuvstreampool.h makes them, cuvsync.h waits). Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include "common/base/cuvcuda.h"

#if GST_CHECK_VERSION(1, 24, 0)
#include <gst/cuda/gstcudastream.h>
#else
/* GStreamer 1.22 has no GstCudaStream: every function below takes and gives NULL there */
typedef struct _GstCudaStream GstCudaStream;
#endif
#define CUV_HAVE_STREAM_MODEL (CUV_HAVE_CUDA && GST_CHECK_VERSION(1, 24, 0))

#if CUV_HAVE_CUDA

namespace cuv {

/* ---- streams carried by memory and pools (1.24+) ---- */

/* The stream @mem was written on: the one its pool gave it, NULL for the default stream (and
 * always on 1.22). Not a new reference: valid while @mem lives. */
GstCudaStream *memory_stream (GstMemory *mem);
/* The CUDA stream of @s. */
cudaStream_t stream_handle (GstCudaStream *s);
/* A new reference to the stream in a CUDA buffer pool's @config, or NULL. */
GstCudaStream *pool_config_stream (GstStructure *config);
/* Puts @s in a CUDA buffer pool's @config (nothing for NULL, and on 1.22). */
void pool_config_set_stream (GstStructure *config, GstCudaStream *s);
/* Takes a reference to @s into @slot, dropping the one there (NULL clears it). */
void replace_stream (GstCudaStream **slot, GstCudaStream *s);

/* ---- how the host waits ---- */

/* CUV_HOST_WAIT, read once when the plugin loads: unset, spin (cudaStreamSynchronize, CUDA's
 * default scheduling); `block`, sleep on an event made with cudaEventBlockingSync; `yield`, ask
 * whether the work is done and yield the core between two questions (cuvsync.h). */
enum class HostWait { Spin, Block, Yield };
HostWait host_wait ();
/* Counts one host wait for a stream (cuv_host_waits, for tests), and the count so far. */
void count_host_wait ();
long host_wait_count ();

/* The flags of the events that mark the ends of frames in flight: they sleep where
 * finish_before_push () would (CUV_HOST_WAIT). */
unsigned int in_flight_event_flags ();

}  // namespace cuv
#endif
