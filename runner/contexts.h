/* cudavision-run: one CUDA context a device for every camera of the process.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each camera is its own GstPipeline, and GStreamer shares a context only within one: a decoder
 * (nvh264dec) or upstream CUDA element that finds no neighbour with a context makes a context of
 * its own, about 500 MB of device memory and a share of the GPU's time slices each. The runner
 * answers, as an application does, every camera's need-context message for a CUDA context with
 * the first one any camera announced for that device (docs/fleet.md, "One CUDA context a
 * device"). Our elements already take one context a device for the process; this covers the
 * cameras' other elements, and pipelines with none of ours. */
#pragma once

#include <gst/gst.h>

namespace cuvrun {

/* Answers @pipeline's need-context messages for a CUDA context with the process's, and keeps the
 * first context announced for each device. Before the pipeline starts. */
void share_cuda_contexts (GstElement *pipeline);

/* Drops the contexts kept, at exit. */
void drop_cuda_contexts ();

}  // namespace cuvrun
