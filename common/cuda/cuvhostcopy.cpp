/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuda/cuvhostcopy.h"

#if CUV_HAVE_CUDA
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include <gmodule.h>

namespace {

/* Measured with bench_upload on the H100 machine (docs/performance-log.md): 2 MB bands beat 1 and 4
 * MB with 4 to 12 threads; 6 threads copy a 4K RGBA frame in 0.95 ms, more do not help. */
constexpr size_t kBandBytes = size_t (2) << 20;
constexpr int kMaxThreads = 6;
/* below two bands, the threads' hand-offs cost more than they spread */
constexpr size_t kMinBytes = 2 * kBandBytes;

std::atomic<long> staged_uploads{0};
std::atomic<long> staged_downloads{0};

/* the threads that copy, the caller among them: half the cores, at most kMaxThreads */
int
copy_threads ()
{
  static const int n = CLAMP (static_cast<int> (g_get_num_processors ()) / 2, 1, kMaxThreads);
  return n;
}

/* rows [row, row + rows) of plane @plane */
struct Band {
  int plane;
  int row;
  int rows;
};

/* bands of @from copied into @to */
struct Job {
  cuv::Frame from, to;
  std::vector<Band> bands;
  std::atomic<size_t> next{0};
  std::mutex lock;
  std::condition_variable cond;
  std::vector<char> done; /* under lock */
};

size_t
row_bytes (const cuv::Frame &f, int p)
{
  return static_cast<size_t> (f.planes[p].width) * cuv::plane_sample_bytes (f.layout, p);
}

void
copy_band (const Job &job, const Band &b)
{
  const cuv::Plane &s = job.from.planes[b.plane], &d = job.to.planes[b.plane];
  const size_t row = row_bytes (job.from, b.plane);
  const uint8_t *from = s.data + static_cast<size_t> (b.row) * s.pitch;
  uint8_t *to = d.data + static_cast<size_t> (b.row) * d.pitch;
  if (s.pitch == d.pitch && static_cast<size_t> (s.pitch) == row) {
    std::memcpy (to, from, row * b.rows);
    return;
  }
  for (int r = 0; r < b.rows; r++, from += s.pitch, to += d.pitch)
    std::memcpy (to, from, row);
}

/* Claims the next band of @job, copies it and marks it done; false when none was left. */
bool
copy_next_band (Job &job)
{
  const size_t i = job.next.fetch_add (1);
  if (i >= job.bands.size ())
    return false;
  copy_band (job, job.bands[i]);
  {
    std::lock_guard<std::mutex> lk (job.lock);
    job.done[i] = 1;
  }
  job.cond.notify_all ();
  return true;
}

/* Copies bands of @job until none is left. */
void
copy_bands (Job &job)
{
  while (copy_next_band (job)) {
  }
}

/* a pool thread's share of a job (it holds the job: the caller may have returned before a
 * thread gets to it) */
void
run_copy_task (gpointer data, gpointer)
{
  auto *job = static_cast<std::shared_ptr<Job> *> (data);
  copy_bands (**job);
  delete job;
}

GThreadPool *
copy_pool ()
{
  /* exclusive: its threads wait for the next frame instead of exiting and being made again */
  static GThreadPool *pool =
      copy_threads () > 1 ? g_thread_pool_new (run_copy_task, nullptr, copy_threads () - 1, TRUE, nullptr) : nullptr;
  return pool;
}

/* A job copying @from into @to band by band, handed to the pool's threads already (the caller
 * copies bands too). */
std::shared_ptr<Job>
start_job (const cuv::Frame &from, const cuv::Frame &to)
{
  auto job = std::make_shared<Job> ();
  job->from = from;
  job->to = to;
  for (int p = 0; p < from.n_planes; p++) {
    const int rows = static_cast<int> (MAX (size_t (1), kBandBytes / MAX (row_bytes (from, p), size_t (1))));
    for (int row = 0; row < from.planes[p].height; row += rows)
      job->bands.push_back ({p, row, MIN (rows, from.planes[p].height - row)});
  }
  job->done.assign (job->bands.size (), 0);
  if (GThreadPool *pool = copy_pool ()) {
    for (int t = 0; t < copy_threads () - 1 && static_cast<size_t> (t + 1) < job->bands.size (); t++)
      g_thread_pool_push (pool, new std::shared_ptr<Job> (job), nullptr);
  }
  return job;
}

}  // namespace

bool
cuv::staged_copy_pays (const Frame &frame)
{
  size_t bytes = 0;
  for (int p = 0; p < frame.n_planes; p++)
    bytes += row_bytes (frame, p) * frame.planes[p].height;
  return bytes >= kMinBytes && copy_pool () != nullptr;
}

cudaError_t
cuv::upload_staged (const Frame &src, const Frame &stage, const Frame &dst, cudaStream_t stream)
{
  std::shared_ptr<Job> job = start_job (src, stage);
  const size_t n = job->bands.size ();

  /* the caller copies bands too, and queues each band's DMA in order once it is in @stage */
  cudaError_t err = cudaSuccess;
  size_t queued = 0;
  while (queued < n) {
    const bool copied = copy_next_band (*job);
    std::unique_lock<std::mutex> lk (job->lock);
    if (!copied)
      job->cond.wait (lk, [&] { return job->done[queued] != 0; });
    while (queued < n && job->done[queued]) {
      const Band &b = job->bands[queued++];
      lk.unlock ();
      const Plane &s = stage.planes[b.plane], &d = dst.planes[b.plane];
      const size_t at_s = static_cast<size_t> (b.row) * s.pitch, at_d = static_cast<size_t> (b.row) * d.pitch;
      if (err == cudaSuccess)
        err = cudaMemcpy2DAsync (d.data + at_d, d.pitch, s.data + at_s, s.pitch, row_bytes (src, b.plane), b.rows,
            cudaMemcpyHostToDevice, stream);
      lk.lock ();
    }
  }
  staged_uploads++;
  return err;
}

void
cuv::copy_out_staged (const Frame &stage, const Frame &dst)
{
  std::shared_ptr<Job> job = start_job (stage, dst);
  copy_bands (*job);
  std::unique_lock<std::mutex> lk (job->lock);
  job->cond.wait (lk, [&] { return std::all_of (job->done.begin (), job->done.end (), [] (char d) { return d != 0; }); });
  staged_downloads++;
}

/* Frames uploaded, and downloaded, through the staged copy so far in this process. For tests, as
 * cuv_host_waits. */
extern "C" G_MODULE_EXPORT long cuv_staged_uploads ()
{
  return staged_uploads.load ();
}

extern "C" G_MODULE_EXPORT long cuv_staged_downloads ()
{
  return staged_downloads.load ();
}
#endif
