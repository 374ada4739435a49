/* A sampling profiler of the host's CPU time for bench_pipelines (--profile-host): SIGPROF every
 * 250 us of the process's CPU time, on whichever thread runs, records the call stack; the report
 * names each sample's functions through dladdr (exported symbols: GStreamer's, GLib's, CUDA's
 * entry points, the plugin's exported ones; a static function shows as the nearest exported one
 * before it, marked "+"). Self: the sample's innermost function; total: any frame of the stack.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cstdio>

namespace cuvbench {

/* Starts sampling (once per process). */
void host_profile_start ();
/* Stops sampling and prints the @top functions by self and by total samples to @out. */
void host_profile_report (FILE *out, int top);

}  // namespace cuvbench
