/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/element/cuvfiltersettings.h"
#include "common/element/cuvsettings.h"

void
cuv::install_filter_properties (GObjectClass *gobject_class, FilterSettings *(*settings) (GObject *object))
{
  Properties p (gobject_class, settings);
  /**
   * GstCudaVisionFilter:cuda-device-id:
   *
   * The CUDA device to run on; -1 takes the context a neighbouring CUDA element already uses, or
   * device 0.
   */
  p.add (&FilterSettings::device_id,
      g_param_spec_int ("cuda-device-id", "CUDA device id",
          "CUDA device to run on (-1 = the one neighbouring CUDA elements use, else device 0); "
          "a value past the device count is an error at start",
          -1, G_MAXINT, FilterSettings{}.device_id,
          static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));
  /**
   * GstCudaVisionFilter:backend:
   *
   * Where frames are processed: `auto` uses CUDA when a device works and otherwise the CPU
   * reference (posting one warning), `cuda` fails at start without a usable device, `cpu` always
   * runs the CPU reference (which gives the same bytes).
   */
  p.add (&FilterSettings::backend,
      g_param_spec_enum ("backend", "Backend",
          "Where frames are processed: auto (CUDA if a device works, else the CPU with a warning), "
          "cuda (error without a usable device) or cpu (the CPU reference; same output bytes)",
          GST_TYPE_CUDA_VISION_BACKEND, FilterSettings{}.backend,
          static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));

  /**
   * GstCudaVisionFilter:max-frames-in-flight:
   *
   * Where a frame makes the host wait for the GPU before it leaves (a host copy, results read on
   * the host, a previous frame kept, or any frame on GStreamer 1.22), 1 lets it leave when the
   * next frame has been queued, so the GPU never waits for the host, at one frame of latency; 0
   * pushes each frame as soon as it is complete. -1 is 1 when upstream is not live (a file, a
   * decoder, videotestsrc, appsrc by default) and 0 when it is (a camera). The latency query
   * reports the frame that is held.
   */
  p.add (&FilterSettings::max_frames_in_flight,
      g_param_spec_int ("max-frames-in-flight", "Max frames in flight",
          "Frames whose GPU work may still run when the next frame arrives: 1 pushes each frame once the "
          "next is queued (throughput, one frame of latency), 0 pushes each frame as soon as it is done; "
          "-1 = 1 when upstream is not live, 0 when it is",
          -1, 1, FilterSettings{}.max_frames_in_flight,
          static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));

  /**
   * GstCudaVisionFilter:n-threads:
   *
   * The CPU backend splits each frame into this many bands and runs them at once (0 = one per
   * core; for the light operations, table lookups, differences and counting, one per megapixel
   * up to that: a smaller frame stays on the core whose cache holds it), as videoconvert's
   * property does. The worker threads are one set for the whole process,
   * shared by every element in it, so a chain of elements does not oversubscribe the machine.
   * The output is the same for every value. The CUDA backend ignores it.
   */
  p.add (&FilterSettings::n_threads,
      g_param_spec_uint ("n-threads", "Threads",
          "CPU backend: bands each frame is split into and run at once, on worker threads every element "
          "of the process shares (0 = one per core, or per megapixel for light operations); the output is the "
          "same for any value",
          0, G_MAXINT, FilterSettings{}.n_threads,
          static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));
}
