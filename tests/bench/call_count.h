/* bench_pipelines --count-calls: the CUDA calls a frame takes, by name, while the pipelines stream
 * (docs/performance.md, "Driver calls a frame"). The counting is call_count_inject.cpp's, loaded by
 * the CUDA driver through CUDA_INJECTION64_PATH, which --count-calls sets before CUDA starts;
 * this side reads its counters at two moments and divides by the frames that reached the sinks
 * in between.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

namespace cuvbench {

/* Every call's count at one moment, driver API and runtime API (by CUPTI's callback id). */
struct CallCounts {
  std::vector<uint64_t> driver, runtime;
};

/* Points CUDA_INJECTION64_PATH at the injection library beside @program (argv[0]); false, with a
 * message, where it is not there. Before any CUDA call. */
bool call_counts_enable (const char *program);
/* The counts now (empty where counting is not on). */
CallCounts call_counts_now ();
/* Prints the calls a frame between @before and @after over @frames frames: driver calls in all,
 * kernel launches, runtime calls, and the @top driver calls by count, on one line of @out. */
void call_counts_print (FILE *out, const CallCounts &before, const CallCounts &after, long frames, int top);

}  // namespace cuvbench
