/* A sampling profiler of the host's CPU time for bench_pipelines (--profile-host): SIGPROF every
 * 250 us of the process's CPU time (the kernel may tick more coarsely: read the shares, not
 * times), on whichever thread runs, records the call stack; the report
 * names each sample's functions through dladdr (exported symbols: GStreamer's, GLib's, CUDA's
 * entry points, the plugin's exported ones; a static function shows as the nearest exported one
 * before it). Self: the sample's innermost function; total: any frame of the stack.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cstdio>

namespace cuvbench {

/* Starts the timer (once per process); samples are kept only while enabled. */
void host_profile_start ();
/* Keeps samples (true) or drops them (false), e.g. around the timed part of a run. */
void host_profile_enable (bool on);
/* Stops sampling and prints the @top functions by self and by total samples to @out; with
 * @stacks, also every sample's stack to that file, a line a sample, each frame as
 * "library+0xoffset:symbol", innermost first, for tests/bench/host_profile.py to name the static
 * functions from the build's debug information. */
void host_profile_report (FILE *out, int top, const char *stacks);

}  // namespace cuvbench
