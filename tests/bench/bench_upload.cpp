/* gst-cudavision benchmark: ways to upload a frame that sits in pageable host memory (docs/design.md, "Data flow").
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * bench_upload [--size WxH] [--bpp N]: for one frame (default 3840x2160, 4 bytes a pixel), the median
 * of 30 of each way, in microseconds:
 *   pinned             cudaMemcpyAsync from page-locked memory (the floor)
 *   driver, warm       the driver's pageable copy from a buffer used before
 *   driver, fresh      the same from a buffer just made (malloc'd, each page written once)
 *   register, fresh    cudaHostRegister, the pinned copy, cudaHostUnregister
 *   staged T x C MB    T threads copy C MB chunks into page-locked staging, each chunk's DMA queued
 *                      as soon as it is there (warm and fresh)
 *   free, fresh        free () of a frame just made (its pages go back to the system)
 * With --busy N, N threads keep making new frames meanwhile, as a decoder does (bench_pipelines'
 * "fresh" source has 4). */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

namespace {

using Clock = std::chrono::steady_clock;

double
us_since (Clock::time_point t0)
{
  return std::chrono::duration<double, std::micro> (Clock::now () - t0).count ();
}

double
median (std::vector<double> v)
{
  std::sort (v.begin (), v.end ());
  return v[v.size () / 2];
}

void
check (cudaError_t err, const char *what)
{
  if (err != cudaSuccess) {
    std::fprintf (stderr, "%s: %s\n", what, cudaGetErrorString (err));
    std::exit (1);
  }
}

unsigned char *
fresh_frame (size_t bytes)
{
  auto *p = static_cast<unsigned char *> (std::malloc (bytes));
  for (size_t at = 0; at < bytes; at += 4096)
    p[at] = static_cast<unsigned char> (at >> 12);
  return p;
}

/* T persistent threads; run (n, f) calls f (i) for i in [0, n) across them and the caller. */
class Workers {
 public:
  explicit Workers (int t)
  {
    for (int i = 0; i < t; i++)
      threads_.emplace_back ([this] { loop (); });
  }
  ~Workers ()
  {
    {
      std::lock_guard<std::mutex> lk (lock_);
      quit_ = true;
    }
    cond_.notify_all ();
    for (auto &t : threads_)
      t.join ();
  }
  void run (int n, std::function<void (int)> f)
  {
    {
      std::lock_guard<std::mutex> lk (lock_);
      job_ = std::move (f);
      n_ = n;
      next_ = 0;
      done_ = 0;
      gen_++;
    }
    cond_.notify_all ();
    std::unique_lock<std::mutex> lk (lock_);
    while (next_ < n_) {
      int i = next_++;
      lk.unlock ();
      job_ (i);
      lk.lock ();
      done_++;
    }
    finished_.wait (lk, [this] { return done_ == n_; });
  }

 private:
  void loop ()
  {
    unsigned seen = 0;
    std::unique_lock<std::mutex> lk (lock_);
    for (;;) {
      cond_.wait (lk, [&] { return quit_ || (gen_ != seen && next_ < n_); });
      if (quit_)
        return;
      while (next_ < n_) {
        int i = next_++;
        lk.unlock ();
        job_ (i);
        lk.lock ();
        if (++done_ == n_)
          finished_.notify_all ();
      }
      seen = gen_;
    }
  }
  std::vector<std::thread> threads_;
  std::mutex lock_;
  std::condition_variable cond_, finished_;
  std::function<void (int)> job_;
  int n_ = 0, next_ = 0, done_ = 0;
  unsigned gen_ = 0;
  bool quit_ = false;
};

/* Keeps making and freeing new frames on @n threads, as a decoder would, until stopped. */
class Busy {
 public:
  Busy (int n, size_t bytes)
  {
    for (int i = 0; i < n; i++)
      threads_.emplace_back ([this, bytes] {
        while (!stop_)
          std::free (fresh_frame (bytes));
      });
  }
  ~Busy ()
  {
    stop_ = true;
    for (auto &t : threads_)
      t.join ();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace

int
main (int argc, char **argv)
{
  int width = 3840, height = 2160, bpp = 4, busy = 0;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--size" && i + 1 < argc)
      std::sscanf (argv[++i], "%dx%d", &width, &height);
    else if (a == "--bpp" && i + 1 < argc)
      bpp = std::atoi (argv[++i]);
    else if (a == "--busy" && i + 1 < argc)
      busy = std::atoi (argv[++i]);
    else {
      std::fprintf (stderr, "usage: %s [--size WxH] [--bpp N] [--busy N]\n", argv[0]);
      return 2;
    }
  }
  std::setvbuf (stdout, nullptr, _IOLBF, 0);
  const size_t bytes = static_cast<size_t> (width) * height * bpp;
  void *dev = nullptr, *pinned = nullptr;
  cudaStream_t stream;
  check (cudaMalloc (&dev, bytes), "cudaMalloc");
  check (cudaMallocHost (&pinned, bytes), "cudaMallocHost");
  check (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking), "stream");
  std::memset (pinned, 1, bytes);
  unsigned char *warm = fresh_frame (bytes);
  std::memset (warm, 2, bytes);
  std::printf ("frame %dx%d, %d bytes a pixel: %zu bytes; %d busy threads\n", width, height, bpp, bytes, busy);
  Busy background (busy, bytes);

  auto time30 = [&] (const char *name, std::function<double ()> once) {
    std::vector<double> t;
    once ();
    for (int i = 0; i < 30; i++)
      t.push_back (once ());
    const double m = median (t);
    std::printf ("%-34s %9.0f us  %7.1f fps\n", name, m, 1e6 / m);
    return m;
  };
  auto copy_from = [&] (const void *src) {
    auto t0 = Clock::now ();
    check (cudaMemcpyAsync (dev, src, bytes, cudaMemcpyHostToDevice, stream), "copy");
    check (cudaStreamSynchronize (stream), "sync");
    return us_since (t0);
  };
  /* @way's time for a frame just made, which is freed after it */
  auto on_fresh = [&] (std::function<double (const unsigned char *)> way) {
    return [&, way] {
      unsigned char *f = fresh_frame (bytes);
      double t = way (f);
      std::free (f);
      return t;
    };
  };
  time30 ("pinned", [&] { return copy_from (pinned); });
  time30 ("driver, warm", [&] { return copy_from (warm); });
  time30 ("driver, fresh", on_fresh (copy_from));
  time30 ("register, fresh", on_fresh ([&] (const unsigned char *f) {
    auto t0 = Clock::now ();
    check (cudaHostRegister (const_cast<unsigned char *> (f), bytes, cudaHostRegisterPortable), "register");
    copy_from (f);
    check (cudaHostUnregister (const_cast<unsigned char *> (f)), "unregister");
    return us_since (t0);
  }));
  time30 ("free, fresh", [&] {
    unsigned char *f = fresh_frame (bytes);
    auto t0 = Clock::now ();
    std::free (f);
    return us_since (t0);
  });
  for (int threads : {1, 2, 4, 6, 8, 12}) {
    Workers w (threads - 1); /* the caller is one of them */
    for (size_t chunk_mb : {1, 2, 4}) {
      const size_t chunk = chunk_mb << 20;
      const int n = static_cast<int> ((bytes + chunk - 1) / chunk);
      auto staged = [&] (const unsigned char *src) {
        auto t0 = Clock::now ();
        w.run (n, [&] (int i) {
          const size_t at = i * chunk, len = std::min (chunk, bytes - at);
          std::memcpy (static_cast<unsigned char *> (pinned) + at, src + at, len);
          check (cudaMemcpyAsync (static_cast<unsigned char *> (dev) + at, static_cast<unsigned char *> (pinned) + at, len,
                     cudaMemcpyHostToDevice, stream),
              "chunk");
        });
        check (cudaStreamSynchronize (stream), "sync");
        return us_since (t0);
      };
      char name[64];
      std::snprintf (name, sizeof name, "staged %d x %zu MB, warm", threads, chunk_mb);
      time30 (name, [&] { return staged (warm); });
      std::snprintf (name, sizeof name, "staged %d x %zu MB, fresh", threads, chunk_mb);
      time30 (name, on_fresh (staged));
    }
  }
  std::free (warm);
  cudaFreeHost (pinned);
  cudaFree (dev);
  return 0;
}
