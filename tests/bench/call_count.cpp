/* bench_pipelines --count-calls (call_count.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tests/bench/call_count.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

namespace cuvbench {

namespace {

using Counts = size_t (*) (int, uint64_t *, size_t);
using Name = const char *(*) (int, size_t);

/* the injection library, once the driver has loaded it */
void *library ()
{
  static void *handle = nullptr;
  if (!handle) {
    const char *path = std::getenv ("CUDA_INJECTION64_PATH");
    handle = path ? dlopen (path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  }
  return handle;
}

std::vector<uint64_t> read (int runtime)
{
  auto counts = library () ? reinterpret_cast<Counts> (dlsym (library (), "cuv_call_counts")) : nullptr;
  if (!counts)
    return {};
  std::vector<uint64_t> v (counts (runtime, nullptr, 0));
  counts (runtime, v.data (), v.size ());
  return v;
}

/* the driver calls from @before to @after whose names start with @prefix (all with none) */
uint64_t sum (const std::vector<uint64_t> &before, const std::vector<uint64_t> &after, const char *prefix)
{
  auto name = reinterpret_cast<Name> (dlsym (library (), "cuv_call_name"));
  uint64_t n = 0;
  for (size_t i = 0; i < after.size () && i < before.size (); i++)
    if (!prefix || std::strncmp (name (0, i), prefix, std::strlen (prefix)) == 0)
      n += after[i] - before[i];
  return n;
}

}  // namespace

bool call_counts_enable (const char *program)
{
  const char *slash = std::strrchr (program, '/');
  const std::string path = (slash ? std::string (program, slash + 1 - program) : std::string ("./")) +
      "libcuv-call-count.so";
  char *real = realpath (path.c_str (), nullptr);
  if (!real) {
    std::fprintf (stderr, "--count-calls: %s is not there (built where the CUDA toolkit has CUPTI)\n", path.c_str ());
    return false;
  }
  setenv ("CUDA_INJECTION64_PATH", real, 1);
  free (real);
  return true;
}

CallCounts call_counts_now ()
{
  return {read (0), read (1)};
}

void call_counts_print (FILE *out, const CallCounts &before, const CallCounts &after, long frames, int top)
{
  if (after.driver.empty () || before.driver.size () != after.driver.size () || frames <= 0) {
    std::fprintf (out, "  calls a frame: not counted (the injection library did not load)\n");
    return;
  }
  const double f = static_cast<double> (frames);
  const uint64_t runtime = after.runtime.size () == before.runtime.size () ?
      sum (before.runtime, after.runtime, nullptr) : 0;
  std::fprintf (out, "  calls a frame (%ld frames): driver %.2f, kernel launches %.2f, copies and sets %.2f, runtime %.2f;",
      frames, sum (before.driver, after.driver, nullptr) / f, sum (before.driver, after.driver, "cuLaunch") / f,
      (sum (before.driver, after.driver, "cuMemcpy") + sum (before.driver, after.driver, "cuMemset")) / f, runtime / f);
  std::vector<std::pair<uint64_t, size_t>> by_count;
  for (size_t i = 0; i < after.driver.size (); i++)
    if (after.driver[i] > before.driver[i])
      by_count.emplace_back (after.driver[i] - before.driver[i], i);
  std::sort (by_count.rbegin (), by_count.rend ());
  auto name = reinterpret_cast<Name> (dlsym (library (), "cuv_call_name"));
  for (int i = 0; i < top && i < static_cast<int> (by_count.size ()); i++)
    std::fprintf (out, " %s %.2f", name (0, by_count[i].second), by_count[i].first / f);
  std::fprintf (out, "\n");
}

}  // namespace cuvbench
