/* gst-cudavision tests: helpers shared by the kernel and element tests (no GStreamer here).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "kernels/base/image.h"

#if CUV_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* For test and benchmark programs: a failed CUDA call ends the program with its location. */
#if CUV_HAVE_CUDA
#define CUVTEST_CHECK_CUDA(expr)                                                                      \
  do {                                                                                                \
    cudaError_t e_ = (expr);                                                                          \
    if (e_ != cudaSuccess) {                                                                          \
      std::fprintf (stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString (e_));   \
      std::exit (1);                                                                                  \
    }                                                                                                 \
  } while (0)
#endif

namespace cuvtest {

constexpr int kSkip = 77; /* meson's exit code for a skipped test */

/* True when a CUDA device works here; GPU tests exit no_gpu () otherwise. */
inline bool have_gpu ()
{
#if CUV_HAVE_CUDA
  int n = 0;
  return cudaGetDeviceCount (&n) == cudaSuccess && n > 0;
#else
  return false;
#endif
}

/* CUV_REQUIRE_GPU=1 says that a GPU is there (the GPU machine's runs): a test that would skip
 * its GPU part fails instead, so that a broken driver does not read as "0 failed". */
inline bool gpu_required ()
{
  const char *v = std::getenv ("CUV_REQUIRE_GPU");
  return v && *v && std::strcmp (v, "0") != 0;
}

/* The exit code of a GPU test that found no usable device: skipped (kSkip), or a failure with
 * CUV_REQUIRE_GPU. Says which on stdout. */
inline int no_gpu ()
{
  const bool required = gpu_required ();
#if CUV_HAVE_CUDA
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount (&n);
  std::printf ("no usable CUDA device (%s, %d devices): %s\n", cudaGetErrorString (err), n,
      required ? "FAILED, CUV_REQUIRE_GPU is set" : "skipped");
#else
  std::printf ("a build without CUDA: %s\n", required ? "FAILED, CUV_REQUIRE_GPU is set" : "skipped");
#endif
  return required ? 1 : kSkip;
}

struct Size {
  int w, h;
};

/* CUV_TEST_QUICK=1, for runs under compute-sanitizer (10x to 100x slower): frames no larger than
 * 641x479, which already holds every edge case (partial blocks and tiles, odd sizes, several
 * blocks a row); every format, stride, parameter set and memory route stays. */
inline bool quick ()
{
  static const bool q = [] {
    const char *v = std::getenv ("CUV_TEST_QUICK");
    return v && *v && std::strcmp (v, "0") != 0;
  }();
  return q;
}

/* @s, or in quick mode @s with every larger frame replaced by 641x479 (once). */
inline std::vector<Size> quick_sizes (const std::vector<Size> &s)
{
  if (!quick ())
    return s;
  std::vector<Size> r;
  for (Size z : s) {
    const Size c = z.w > 641 || z.h > 479 ? Size{641, 479} : z;
    bool seen = false;
    for (Size q : r)
      seen |= q.w == c.w && q.h == c.h;
    if (!seen)
      r.push_back (c);
  }
  return r;
}

/* The sizes of docs/testing.md. */
inline std::vector<Size> sizes (bool with_4k)
{
  std::vector<Size> s = {{1, 1}, {2, 2}, {3, 3}, {17, 13}, {641, 479}, {1920, 1080}};
  if (with_4k)
    s.push_back ({3840, 2160});
  return quick_sizes (s);
}

inline const char *layout_name (cuv::PixelLayout l)
{
  static const char *names[] = {"RGBA", "BGRA", "RGBx", "BGRx", "GRAY8", "NV12", "I420", "YUY2", "UYVY", "P010"};
  return names[static_cast<int> (l)];
}

/* Content that is neither flat nor pure noise: gradients, edges and noise, so that every branch
 * of a kernel (saturation, zero gradients, all chroma) is exercised. */
inline void fill_pattern (std::vector<uint8_t> &buf, uint32_t seed)
{
  std::mt19937 rng (seed);
  for (size_t i = 0; i < buf.size (); i++) {
    uint32_t r = rng ();
    switch ((i / 4096 + seed) % 3) {
      case 0: buf[i] = static_cast<uint8_t> (r); break;
      case 1: buf[i] = static_cast<uint8_t> ((i * 7) / 13 + (r & 7)); break;
      default: buf[i] = (r & 0x300) ? static_cast<uint8_t> (i / 97) : 255; break;
    }
  }
}

/* A host image of @layout: planes packed one after another with pitch = min pitch + @pad bytes,
 * starting @offset bytes into the allocation (offset 1..15 breaks 16-byte alignment). */
struct HostImage {
  std::vector<uint8_t> storage;
  cuv::Frame frame;
  int offset;

  HostImage (cuv::PixelLayout l, int w, int h, int pad, int offset_ = 0) : offset (offset_)
  {
    int pitches[3] = {0, 0, 0};
    for (int p = 0; p < cuv::layout_n_planes (l); p++)
      pitches[p] = cuv::min_pitch (l, w, p, 1) + pad;
    frame = cuv::make_frame (l, w, h, nullptr, pitches);
    storage.resize (cuv::frame_bytes (frame) + offset + 16);
    frame = cuv::make_frame (l, w, h, storage.data () + offset, pitches);
  }
};

/* Compares the samples of two frames (padding ignored); prints the first difference. Returns the
 * largest absolute difference. */
inline int max_diff (const cuv::Frame &a, const cuv::Frame &b, const std::string &what, bool print = true)
{
  int worst = 0;
  for (int p = 0; p < a.n_planes; p++) {
    const cuv::Plane &pa = a.planes[p], &pb = b.planes[p];
    int row = pa.width * cuv::plane_sample_bytes (a.layout, p);
    for (int y = 0; y < pa.height; y++) {
      for (int x = 0; x < row; x++) {
        int d = std::abs (pa.data[static_cast<size_t> (y) * pa.pitch + x] - pb.data[static_cast<size_t> (y) * pb.pitch + x]);
        if (d > worst) {
          if (print && worst == 0)
            std::fprintf (stderr, "  %s: first difference at plane %d byte %d row %d: %d vs %d\n", what.c_str (), p, x, y,
                pa.data[static_cast<size_t> (y) * pa.pitch + x], pb.data[static_cast<size_t> (y) * pb.pitch + x]);
          worst = d;
        }
      }
    }
  }
  return worst;
}

/* Bytes of the padding (pitch beyond the row) that differ from @poison: a kernel must not write
 * outside the image. */
inline size_t padding_written (const cuv::Frame &f, uint8_t poison)
{
  size_t n = 0;
  for (int p = 0; p < f.n_planes; p++) {
    const cuv::Plane &pl = f.planes[p];
    int row = pl.width * cuv::plane_sample_bytes (f.layout, p);
    for (int y = 0; y < pl.height; y++)
      for (int x = row; x < pl.pitch; x++)
        n += pl.data[static_cast<size_t> (y) * pl.pitch + x] != poison;
  }
  return n;
}

/* Wall time of one part of a test, printed when it ends (stderr, and appended to the file that
 * CUV_TEST_TIMES names, one line per part from every test program), so that a slow suite shows
 * where its time goes. */
class Timer {
 public:
  explicit Timer (std::string what) : what_ (std::move (what)), t0_ (std::chrono::steady_clock::now ()) {}
  ~Timer ()
  {
    double ms = std::chrono::duration<double, std::milli> (std::chrono::steady_clock::now () - t0_).count ();
    std::fprintf (stderr, "time %9.1f ms  %s\n", ms, what_.c_str ());
    if (const char *path = std::getenv ("CUV_TEST_TIMES")) {
      /* one fwrite of one short line: programs running in parallel append whole lines */
      if (FILE *f = std::fopen (path, "a")) {
        std::string line = std::to_string (static_cast<long> (ms)) + " ms  " + what_ + "\n";
        std::fwrite (line.data (), 1, line.size (), f);
        std::fclose (f);
      }
    }
  }
  Timer (const Timer &) = delete;
  Timer &operator= (const Timer &) = delete;

 private:
  std::string what_;
  std::chrono::steady_clock::time_point t0_;
};

/* Counts failures and prints a summary line; the exit code of a test program. */
struct Checker {
  int checks = 0, failures = 0;
  void expect (bool ok, const std::string &what)
  {
    checks++;
    if (!ok) {
      failures++;
      std::fprintf (stderr, "FAIL: %s\n", what.c_str ());
    }
  }
  int finish (const char *name)
  {
    std::printf ("%s: %d checks, %d failures\n", name, checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
  }
};

/* A named part of a test program. */
struct Part {
  const char *name;
  std::function<void ()> run;
};

/* Runs the parts named on the command line (every part without arguments; with `--except NAME...`
 * every part but those), each timed, and returns the program's exit code: meson runs the parts of
 * a long program as tests of their own, in parallel, and the rest as one more (tests/meson.build),
 * so that a new part runs without a change there. An unknown name is a failure, so a renamed part
 * cannot silently drop out; a rest with no part left is skipped. */
inline int run_parts (int argc, char **argv, const char *program, Checker &c, std::initializer_list<Part> parts)
{
  const bool except = argc > 1 && std::strcmp (argv[1], "--except") == 0;
  const int first = except ? 2 : 1;
  for (int i = first; i < argc; i++) {
    bool known = false;
    for (const Part &p : parts)
      known |= std::strcmp (p.name, argv[i]) == 0;
    c.expect (known, std::string ("no part named ") + argv[i]);
  }
  int ran = 0;
  for (const Part &p : parts) {
    bool named = false;
    for (int i = first; i < argc; i++)
      named |= std::strcmp (p.name, argv[i]) == 0;
    if (except ? !named : named || argc < 2) {
      Timer t (std::string (program) + " " + p.name);
      p.run ();
      ran++;
    }
  }
  if (except && ran == 0 && c.failures == 0) {
    std::printf ("%s: every part runs in a test of its own: skipped\n", program);
    return kSkip;
  }
  return c.finish (program);
}

/* run_parts for a program of GPU parts: skips (exit 77), or fails where CUV_REQUIRE_GPU says a
 * GPU must be there, on a machine without a usable device. */
inline int run_gpu_parts (int argc, char **argv, const char *program, Checker &c, std::initializer_list<Part> parts)
{
  if (!have_gpu ())
    return no_gpu ();
  return run_parts (argc, argv, program, c, parts);
}

/* Every element of the plugin, with properties that make it work on every frame and draw where it
 * can (for the tests that want every code path of each element): its name, those properties,
 * whether it compares each frame with the one before, whether it takes GRAY8, and its custom meta
 * (NULL: none). The sources test (tests/lint/check-sources.py) checks that each element
 * gst/plugin.cpp registers is here and in tests/meson.build's faults list. */
struct ElementCase {
  const char *name;
  const char *props;
  bool temporal;
  bool gray8;
  const char *meta;
};

inline const ElementCase kElements[] = {
  {"cudasobel", "scale=1.5", false, true, nullptr},
  {"cudaenhance", "contrast=1.3 saturation=1.4 hue=0.1", false, false, nullptr},
  {"cudahistogram", "overlay=true", false, true, "CudaHistogramMeta"},
  {"cudaheatmap", "blend=0.7", true, false, "CudaHeatmapMeta"},
  {"cudanoisemap", "threshold=10 mode=overlay", true, false, "CudaNoisemapMeta"},
  {"cudamotionest", "draw=arrows search-range=4", true, true, "CudaMotionMeta"},
};

}  // namespace cuvtest
