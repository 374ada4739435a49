/* bench_pipelines --live: live sources measured as cameras are (docs/performance.md, "Live
 * cameras"). N pipelines in one process, each a live source that costs nothing (one frame that
 * imagefreeze is-live=true repeats at 30 fps, uploaded once by cudaupload on the GPU), the
 * elements, and a fakesink synchronised to the clock, as a display or a recorder is. While all of
 * them stream, for a few seconds: the share of real time kept (frames at the sinks over the frames
 * the sources' rate gives in that time) and each frame's latency from its capture time (its
 * timestamp as running time, as v4l2src gives it) to the moment its sink takes it (the clock's
 * running time at the sink, after the sink's wait for the pipeline's latency), p50, p99 and max;
 * and its age when it reaches the sink, before that wait (what the source and the elements took),
 * p50 and p99.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <string>
#include <vector>

#include "tests/common/cuvtest.h"

namespace cuvbench {

/* the frame rate of the live sources */
constexpr int kLiveFps = 30;

/* One count of pipelines, measured. */
struct LiveRow {
  int pipelines = 0;
  double kept = 0;                        /* frames at the sinks / (pipelines x rate x window) */
  double p50_ms = 0, p99_ms = 0, max_ms = 0; /* capture to sink, frames of the window */
  double configured_ms = 0;               /* the largest latency a pipeline configured (its sink waits so long) */
  double arrive_p50_ms = 0, arrive_p99_ms = 0; /* capture to the sink's pad, before its wait */
  double start_ms = 0;                    /* from PLAYING to every pipeline's first frame at its sink */
  long frames = 0;                        /* frames at the sinks in the window */
};

/* Runs @pipelines copies of the live source (@info's size and format at kLiveFps; in CUDA memory
 * when @cuda_memory and @contexts is not empty, else system memory; pipeline p on
 * @contexts[p % size]), @elements, and a synchronised
 * fakesink, and times @seconds of them once every one has a frame at its sink and a second more
 * has passed. False, with the reason on stderr, when a pipeline cannot be made, posts an error, or
 * not all start within a minute. */
bool run_live (const std::string &elements, const GstVideoInfo &info, const std::vector<GstContext *> &contexts,
    bool cuda_memory, int pipelines, double seconds, LiveRow *row);

/* Prints a row for each count of @counts at each of @sizes in @format: the table of --live. 0 when
 * every row ran, else 1. */
int live_rows (const std::string &elements, const std::vector<int> &counts, const std::vector<cuvtest::Size> &sizes,
    GstVideoFormat format, const std::vector<GstContext *> &contexts, bool cuda_memory, double seconds);

}  // namespace cuvbench
