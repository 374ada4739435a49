/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/base/cuvcpupool.h"

#include <glib.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>

namespace cuv {

namespace {

constexpr int kMaxBands = 64;

struct Job {
  const std::function<void (int, int)> *fn;
  int remaining = 0; /* bands the workers have not finished; under lock */
  std::mutex lock;
  std::condition_variable done;
};

struct Band {
  Job *job;
  int begin, end;
};

void
run_band (gpointer data, gpointer)
{
  Band *b = static_cast<Band *> (data);
  Job *job = b->job;
  (*job->fn) (b->begin, b->end);
  /* under the lock: the caller's job lives on its stack until it sees the count reach zero */
  std::lock_guard<std::mutex> lk (job->lock);
  if (--job->remaining == 0)
    job->done.notify_one ();
}

GThreadPool *
workers ()
{
  static GThreadPool *pool = [] {
    /* not exclusive: its threads come from GLib's shared set and go back there when idle */
    return g_thread_pool_new (run_band, nullptr, std::max (1, cpu_cores () - 1), FALSE, nullptr);
  }();
  return pool;
}

}  // namespace

int
cpu_cores ()
{
  static const int cores = std::max (1, static_cast<int> (g_get_num_processors ()));
  return cores;
}

void
parallel_bands (int n, int threads, const std::function<void (int begin, int end)> &fn)
{
  if (n <= 0)
    return;
  const int bands = std::min ({n, threads > 0 ? threads : cpu_cores (), kMaxBands});
  if (bands <= 1) {
    fn (0, n);
    return;
  }
  auto edge = [n, bands] (int i) { return static_cast<int> (static_cast<long long> (n) * i / bands); };
  Job job;
  job.fn = &fn;
  job.remaining = bands - 1;
  Band b[kMaxBands];
  for (int i = 1; i < bands; i++) {
    b[i] = Band{&job, edge (i), edge (i + 1)};
    g_thread_pool_push (workers (), &b[i], nullptr);
  }
  fn (0, edge (1));
  std::unique_lock<std::mutex> lk (job.lock);
  job.done.wait (lk, [&job] { return job.remaining == 0; });
}

}  // namespace cuv
