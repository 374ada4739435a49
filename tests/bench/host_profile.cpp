/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tests/bench/host_profile.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/time.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace cuvbench {

namespace {

constexpr int kDepth = 48;
constexpr int kMaxSamples = 1 << 18;

struct Sample {
  int depth;
  void *pc[kDepth];
};

Sample *g_samples = nullptr;
std::atomic<int> g_count{0};
std::atomic<bool> g_enabled{false};

void on_sigprof (int)
{
  if (!g_enabled.load (std::memory_order_relaxed))
    return;
  const int i = g_count.fetch_add (1, std::memory_order_relaxed);
  if (i >= kMaxSamples)
    return;
  /* backtrace () is safe here once libgcc is loaded (host_profile_start calls it first) */
  g_samples[i].depth = backtrace (g_samples[i].pc, kDepth);
}

/* Where @pc lies: its library's file name, the offset in it, the exported symbol before it (NULL
 * for none); false when no library holds it. */
bool locate (void *pc, const char **lib, size_t *offset, const char **symbol)
{
  Dl_info info;
  if (!dladdr (pc, &info) || !info.dli_fname)
    return false;
  const char *slash = std::strrchr (info.dli_fname, '/');
  *lib = slash ? slash + 1 : info.dli_fname;
  *offset = static_cast<size_t> (static_cast<char *> (pc) - static_cast<char *> (info.dli_fbase));
  *symbol = info.dli_sname;
  return true;
}

std::string name_of (void *pc)
{
  const char *lib, *symbol;
  size_t offset;
  if (!locate (pc, &lib, &offset, &symbol))
    return "?";
  return symbol ? std::string (symbol) + " (" + lib + ")" : std::string ("? in ") + lib;
}

}  // namespace

void host_profile_start ()
{
  if (g_samples)
    return;
  g_samples = new Sample[kMaxSamples];
  void *warm[4];
  backtrace (warm, 4);
  struct sigaction sa = {};
  sa.sa_handler = on_sigprof;
  sa.sa_flags = SA_RESTART;
  sigaction (SIGPROF, &sa, nullptr);
  struct itimerval t = {{0, 250}, {0, 250}};
  setitimer (ITIMER_PROF, &t, nullptr);
}

void host_profile_enable (bool on)
{
  g_enabled.store (on);
}

void host_profile_report (FILE *out, int top, const char *stacks)
{
  if (!g_samples)
    return;
  struct itimerval off = {};
  setitimer (ITIMER_PROF, &off, nullptr);
  const int n = std::min (g_count.load (), kMaxSamples);
  std::map<void *, std::string> names;
  auto name = [&names] (void *pc) -> const std::string & {
    auto it = names.find (pc);
    if (it == names.end ())
      it = names.emplace (pc, name_of (pc)).first;
    return it->second;
  };
  std::map<std::string, int> self, total;
  for (int i = 0; i < n; i++) {
    const Sample &s = g_samples[i];
    /* frames 0 and 1 are the handler and the signal trampoline */
    if (s.depth <= 2)
      continue;
    self[name (s.pc[2])]++;
    std::set<std::string> seen;
    for (int d = 2; d < s.depth; d++)
      if (seen.insert (name (s.pc[d])).second)
        total[name (s.pc[d])]++;
  }
  auto print = [&] (const char *title, const std::map<std::string, int> &m) {
    std::vector<std::pair<int, std::string>> v;
    for (auto &e : m)
      v.emplace_back (e.second, e.first);
    std::sort (v.rbegin (), v.rend ());
    std::fprintf (out, "host profile, %s (%d samples of the CPU time; shares, not times):\n", title, n);
    for (int i = 0; i < top && i < static_cast<int> (v.size ()); i++)
      std::fprintf (out, "  %6.1f%%  %s\n", 100.0 * v[i].first / std::max (n, 1), v[i].second.c_str ());
  };
  print ("self", self);
  print ("total", total);
  FILE *f = stacks ? std::fopen (stacks, "w") : nullptr;
  if (!f)
    return;
  for (int i = 0; i < n; i++) {
    const Sample &s = g_samples[i];
    for (int d = 2; d < s.depth; d++) {
      const char *lib = "?", *symbol = nullptr;
      size_t offset = 0;
      locate (s.pc[d], &lib, &offset, &symbol);
      std::fprintf (f, "%s%s+0x%zx:%s", d > 2 ? " " : "", lib, offset, symbol ? symbol : "?");
    }
    std::fprintf (f, "\n");
  }
  std::fclose (f);
}

}  // namespace cuvbench
