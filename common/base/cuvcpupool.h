/* gst-cudavision: the CPU backend's worker threads, one set for the whole process (docs/design.md,
 * "The CPU backend").
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <algorithm>
#include <functional>
#include <mutex>

#include "kernels/base/image.h"

namespace cuv {

/* The cores this process may run on. */
int cpu_cores ();

/* Runs @fn (begin, end) over bands that cover [0, @n) in order, at most @threads of them at once
 * (0 = one per core), and returns when all are done. The calling thread runs the first band; the
 * others go to worker threads that every element of the process shares (GLib's shared thread
 * pool: at most one per core beside the callers, and none left once idle), so that a chain of
 * elements does not start a thread set each. */
void parallel_bands (int n, int threads, const std::function<void (int begin, int end)> &fn);

/* The pixels below which a light operation (a few instructions a byte: table lookups, differences,
 * counting) stays in one band when the user left n-threads at 0: a frame that a core's cache holds
 * costs more to hand to another core than that core saves (measured, docs/performance-log.md). */
constexpr long long kLightBandPixels = 1 << 20;
/* The same for the lightest, a byte table lookup in SIMD (under a cycle a byte): 1080p in one
 * band, 4K in two (measured, docs/performance-log.md). */
constexpr long long kLookupBandPixels = 1 << 22;

/* The bands for a light operation over frame @f: @threads as the user set it, or with 0 one per
 * @band_pixels of @f (rounded), at least one and at most one per core. */
inline int
light_bands (int threads, const Frame &f, long long band_pixels = kLightBandPixels)
{
  if (threads > 0)
    return threads;
  const long long pixels = static_cast<long long> (f.width) * f.height;
  return static_cast<int> (std::clamp<long long> ((pixels + band_pixels / 2) / band_pixels, 1, cpu_cores ()));
}

/* parallel_bands () over the rows of a frame @height rows tall, in pairs so that the chroma rows
 * of 4:2:0 stay whole: @fn (y0, y1) for rows [y0, y1) (cuv::frame_rows () gives their frame). */
inline void
parallel_row_pairs (int height, int threads, const std::function<void (int y0, int y1)> &fn)
{
  parallel_bands ((height + 1) / 2, threads,
      [&] (int begin, int end) { fn (2 * begin, std::min (height, 2 * end)); });
}

/* parallel_bands () whose bands each give a Result (@band (begin, end)), added by @add
 * (Result *total, const Result &band): statistics of a whole frame from its bands. */
template <typename Result, typename Band, typename Add>
Result
sum_over_bands (int n, int threads, const Band &band, const Add &add)
{
  Result total{};
  std::mutex lock;
  parallel_bands (n, threads, [&] (int begin, int end) {
    const Result r = band (begin, end);
    std::lock_guard<std::mutex> lk (lock);
    add (&total, r);
  });
  return total;
}

/* sum_over_bands () over row pairs, as parallel_row_pairs () runs them: @band (y0, y1). */
template <typename Result, typename Band, typename Add>
Result
sum_over_row_pairs (int height, int threads, const Band &band, const Add &add)
{
  return sum_over_bands<Result> ((height + 1) / 2, threads,
      [&] (int begin, int end) { return band (2 * begin, std::min (height, 2 * end)); }, add);
}

}  // namespace cuv
