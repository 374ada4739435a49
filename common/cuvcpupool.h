/* gst-cudavision: the CPU backend's worker threads, one set for the whole process (docs/design.md,
 * "The CPU backend").
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <functional>

namespace cuv {

/* The cores this process may run on. */
int cpu_cores ();

/* Runs @fn (begin, end) over bands that cover [0, @n) in order, at most @threads of them at once
 * (0 = one per core), and returns when all are done. The calling thread runs the first band; the
 * others go to worker threads that every element of the process shares (GLib's shared thread
 * pool: at most one per core beside the callers, and none left once idle), so that a chain of
 * elements does not start a thread set each. */
void parallel_bands (int n, int threads, const std::function<void (int begin, int end)> &fn);

}  // namespace cuv
