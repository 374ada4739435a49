/* Kernel benchmark, docs/performance.md's method: CUDA events around the kernel on its stream, the L2 cache
 * flushed before every iteration (a 256 MiB write), 20 warm-ups, the median of 100; in the same run
 * a device-to-device copy of the same frame, the floor every kernel is reported against; and the CPU
 * reference's time per frame.
 *   bench_kernels [--quick | --profile | --motion | --gpu | --throughput N]
 * --quick: 1920x1080 only, for a smoke run; --profile: each 3840x2160 RGBA kernel twice and no
 * timing, for Nsight Compute (tests/bench/profile.sh); --motion: the motion search rows only;
 * --gpu: the GPU times only (no CPU column), for comparing the kernel variants the build makes
 * and for bench_pipelines' kernel column; --throughput N: the 1920x1080 NV12 chain's kernels on
 * N streams at once, GPU time per launch in all (bench_throughput below).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "tests/common/cuvdevice.h"
#include "tests/common/cuvtest.h"
#include "kernels/enhance/enhance.h"
#include "kernels/heatmap/heatmap.h"
#include "kernels/histogram/histogram.h"
#include "kernels/luma/luma.h"
#include "kernels/motion/motion.h"
#include "kernels/noisemap/noisemap.h"
#include "tests/bench/read_floor.h"
#include "kernels/sobel/sobel.h"

namespace {

constexpr int kWarmup = 20;
constexpr int kIters = 100;
constexpr size_t kFlushBytes = 256u << 20;

struct Bench {
  cudaStream_t stream;
  cudaEvent_t start, stop;
  void *flush;

  Bench ()
  {
    CUVTEST_CHECK_CUDA (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
    CUVTEST_CHECK_CUDA (cudaEventCreate (&start));
    CUVTEST_CHECK_CUDA (cudaEventCreate (&stop));
    CUVTEST_CHECK_CUDA (cudaMalloc (&flush, kFlushBytes));
  }
  ~Bench ()
  {
    cudaFree (flush);
    cudaEventDestroy (start);
    cudaEventDestroy (stop);
    cudaStreamDestroy (stream);
  }

  /* Median microseconds of @work (which launches on the stream) with a cold L2. */
  double time (const std::function<cudaError_t ()> &work)
  {
    std::vector<float> t;
    for (int i = 0; i < kWarmup + kIters; i++) {
      CUVTEST_CHECK_CUDA (cudaMemsetAsync (flush, i & 0xff, kFlushBytes, stream));
      CUVTEST_CHECK_CUDA (cudaEventRecord (start, stream));
      CUVTEST_CHECK_CUDA (work ());
      CUVTEST_CHECK_CUDA (cudaEventRecord (stop, stream));
      CUVTEST_CHECK_CUDA (cudaEventSynchronize (stop));
      float ms = 0;
      CUVTEST_CHECK_CUDA (cudaEventElapsedTime (&ms, start, stop));
      if (i >= kWarmup)
        t.push_back (ms * 1000.0f);
    }
    std::nth_element (t.begin (), t.begin () + t.size () / 2, t.end ());
    return t[t.size () / 2];
  }
};

/* Camera-like content: smooth gradients, a few hard edges and +-6 of noise. */
void fill_natural (const cuv::Frame &f, uint32_t seed)
{
  std::mt19937 rng (seed);
  for (int p = 0; p < f.n_planes; p++) {
    const cuv::Plane &pl = f.planes[p];
    int row = pl.width * cuv::plane_sample_bytes (f.layout, p);
    for (int y = 0; y < pl.height; y++)
      for (int x = 0; x < row; x++) {
        int v = (x * 3 / 7 + y / 3 + (x % 4) * 40) % 200 + ((x / 300 + y / 200) % 2) * 40 + static_cast<int> (rng () % 13) - 6;
        pl.data[static_cast<size_t> (y) * pl.pitch + x] = static_cast<uint8_t> (std::clamp (v, 0, 255));
      }
  }
}

struct Image {
  cuv::Frame host, dev;
  std::vector<uint8_t> hbuf;
  uint8_t *dbuf = nullptr;
  size_t bytes;
  Image (cuv::PixelLayout l, int w, int h)
  {
    int pitches[3] = {0, 0, 0};
    for (int p = 0; p < cuv::layout_n_planes (l); p++)
      pitches[p] = cuv::min_pitch (l, w, p, 256);  /* GstCudaMemory-like pitch */
    host = cuv::make_frame (l, w, h, nullptr, pitches);
    bytes = cuv::frame_bytes (host);
    hbuf.resize (bytes);
    CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dbuf), bytes));
    host = cuv::make_frame (l, w, h, hbuf.data (), pitches);
    dev = cuv::make_frame (l, w, h, dbuf, pitches);
  }
  ~Image () { cudaFree (dbuf); }
  void upload () { CUVTEST_CHECK_CUDA (cudaMemcpy (dbuf, hbuf.data (), bytes, cudaMemcpyHostToDevice)); }
};

bool g_skip_cpu = false;

double cpu_ms (const std::function<void ()> &work)
{
  if (g_skip_cpu)
    return 0.0;
  std::vector<double> t;
  for (int i = 0; i < 5; i++) {
    auto a = std::chrono::steady_clock::now ();
    work ();
    t.push_back (std::chrono::duration<double, std::milli> (std::chrono::steady_clock::now () - a).count ());
  }
  std::sort (t.begin (), t.end ());
  return t[2];
}

/* The motion search on luma planes (the figure docs/performance.md holds it to): a camera-like frame and the same
 * frame panned by (3, -2) with other noise, so that the search finds real motion. The CPU
 * reference is timed once, at 1920x1080 only (it takes seconds). */
void bench_motion (Bench &b, bool quick)
{
  std::vector<cuvtest::Size> sizes = {{1920, 1080}};
  if (!quick)
    sizes.push_back ({3840, 2160});
  for (cuvtest::Size s : sizes) {
    Image prev (cuv::PixelLayout::GRAY8, s.w, s.h), cur (cuv::PixelLayout::GRAY8, s.w, s.h);
    Image rgba (cuv::PixelLayout::RGBA, s.w, s.h);
    fill_natural (prev.host, 3);
    fill_natural (rgba.host, 4);
    std::mt19937 rng (5);
    const cuv::Plane &p = prev.host.planes[0], &c = cur.host.planes[0];
    for (int y = 0; y < s.h; y++)
      for (int x = 0; x < s.w; x++)
        c.data[static_cast<size_t> (y) * c.pitch + x] = static_cast<uint8_t> (std::clamp (
            p.data[static_cast<size_t> (std::clamp (y - 2, 0, s.h - 1)) * p.pitch + std::clamp (x + 3, 0, s.w - 1)] +
                static_cast<int> (rng () % 7) - 3,
            0, 255));
    prev.upload ();
    cur.upload ();
    rgba.upload ();
    const cuv::Plane &dc = cur.dev.planes[0], &dp = prev.dev.planes[0];
    char frame[32];
    std::snprintf (frame, sizeof frame, "%dx%d luma", s.w, s.h);
    double copy = b.time ([&] { return cudaMemcpyAsync (prev.dbuf, cur.dbuf, cur.bytes, cudaMemcpyDeviceToDevice, b.stream); });
    std::printf ("%-34s %-10s %10.1f %8.2f %10s\n", "copy (device to device)", frame, copy, 1.0, "-");
    const cuv::MotionGrid g = cuv::motion_grid (cuv::MotionBlock::B4, s.w, s.h);
    cuv::MotionVector *dvec;
    CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dvec), g.count () * sizeof (cuv::MotionVector)));
    std::vector<cuv::MotionVector> hvec (g.count ());
    CUVTEST_CHECK_CUDA (cudaMemcpy (prev.dbuf, prev.hbuf.data (), prev.bytes, cudaMemcpyHostToDevice));
    for (cuv::MotionBlock block : {cuv::MotionBlock::Variable, cuv::MotionBlock::B4, cuv::MotionBlock::B8,
             cuv::MotionBlock::B16}) {
      const cuv::MotionParams mp{block, 16, 16};
      const double us = b.time ([&] { return cuv::motion_search_cuda (dc, dp, mp, dvec, b.stream); });
      std::string cpu = "-";
      if (!g_skip_cpu && s.w <= 1920 && block == cuv::MotionBlock::Variable) {
        auto a = std::chrono::steady_clock::now ();
        cuv::motion_search_cpu (cur.host.planes[0], prev.host.planes[0], mp, hvec.data ());
        cpu = std::to_string (std::chrono::duration<double, std::milli> (std::chrono::steady_clock::now () - a).count ());
        cpu.resize (cpu.find ('.') + 2);
      }
      const char *names[] = {"cudamotionest variable R=16", "cudamotionest 4x4 R=16", "cudamotionest 8x8 R=16",
          "cudamotionest 16x16 R=16"};
      const int i = block == cuv::MotionBlock::Variable ? 0 : block == cuv::MotionBlock::B4 ? 1 : block == cuv::MotionBlock::B8 ? 2 : 3;
      std::printf ("%-34s %-10s %10.1f %8.2f %10s\n", names[i], frame, us, us / copy, cpu.c_str ());
    }
    /* what the element adds for RGB input: the luma plane of the frame */
    const double luma = b.time ([&] { return cuv::luma_plane_cuda (rgba.dev, dc, b.stream); });
    std::printf ("%-34s %-10s %10.1f %8.2f %10s\n", "cudamotionest luma from RGBA", frame, luma, luma / copy, "-");
    cudaFree (dvec);
  }
}

/* Launches the 3840x2160 motion search (variable, R=16) twice, for Nsight Compute. */
void profile_motion (Bench &b)
{
  Image prev (cuv::PixelLayout::GRAY8, 3840, 2160), cur (cuv::PixelLayout::GRAY8, 3840, 2160);
  fill_natural (prev.host, 3);
  fill_natural (cur.host, 4);
  prev.upload ();
  cur.upload ();
  const cuv::MotionGrid g = cuv::motion_grid (cuv::MotionBlock::B4, 3840, 2160);
  cuv::MotionVector *dvec;
  CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dvec), g.count () * sizeof (cuv::MotionVector)));
  for (int i = 0; i < 2; i++)
    CUVTEST_CHECK_CUDA (cuv::motion_search_cuda (cur.dev.planes[0], prev.dev.planes[0],
        cuv::MotionParams{cuv::MotionBlock::Variable, 16, 16}, dvec, b.stream));
  CUVTEST_CHECK_CUDA (cudaStreamSynchronize (b.stream));
  cudaFree (dvec);
}

/* The 1920x1080 NV12 chain of 4's kernels as many pipelines run them (--throughput N): N streams,
 * each with frames and results of its own, each stream launching one kernel (or the chain) kReps
 * times through a CUDA graph, all streams at once; microseconds of GPU time per launch in all
 * (the span over N * kReps). The pipelines' plateau (bench_pipelines' many rows) is bounded by the
 * chain's figure here, where the per-launch time of bench_kernels' rows is that of one stream
 * alone. Every stream's L2 share is small (N frames), as in the pipelines. */
void bench_throughput (int n)
{
  constexpr int kReps = 50;
  const int w = 1920, h = 1080;
  const cuv::PixelLayout l = cuv::PixelLayout::NV12;
  struct Lane {
    Image src, mid, prev, heat;
    cuvtest::DeviceResults<cuv::HistogramPartials, cuv::HistogramResult> hist;
    cuvtest::DeviceResults<cuv::DiffStats, cuv::DiffStats> diff;
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
    Lane (cuv::PixelLayout l, int w, int h)
        : src (l, w, h), mid (l, w, h), prev (l, w, h), heat (cuv::heatmap_out_layout (l), w, h)
    {
      CUVTEST_CHECK_CUDA (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
      CUVTEST_CHECK_CUDA (cudaEventCreateWithFlags (&done, cudaEventDisableTiming));
    }
    ~Lane ()
    {
      cudaEventDestroy (done);
      cudaStreamDestroy (stream);
    }
  };
  std::vector<std::unique_ptr<Lane>> lanes;
  for (int i = 0; i < n; i++) {
    lanes.push_back (std::make_unique<Lane> (l, w, h));
    fill_natural (lanes.back ()->src.host, 1 + i);
    fill_natural (lanes.back ()->prev.host, 100 + i);
    lanes.back ()->src.upload ();
    lanes.back ()->prev.upload ();
  }
  auto tables = std::make_unique<cuv::EnhanceTables> ();
  cuv::enhance_build_tables (cuv::EnhanceParams{1.4, 0.05, 1.3, 0.1}, tables.get ());
  cuv::EnhanceTables *dtables;
  CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dtables), sizeof (cuv::EnhanceTables)));
  CUVTEST_CHECK_CUDA (cudaMemcpy (dtables, tables.get (), sizeof (cuv::EnhanceTables), cudaMemcpyHostToDevice));
  uint32_t heat_table[cuv::kHeatmapTableSize], *dheat_table;
  cuv::heatmap_build_table (cuv::Colormap::Sine, 1.0, cuv::heatmap_out_layout (l), heat_table);
  CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dheat_table), sizeof (heat_table)));
  CUVTEST_CHECK_CUDA (cudaMemcpy (dheat_table, heat_table, sizeof (heat_table), cudaMemcpyHostToDevice));
  bool fast = false;
  CUVTEST_CHECK_CUDA (cuv::sobel_fast_root_exact_cuda (1.0f, &fast, lanes[0]->stream));
  const cuv::SobelParams sobel{cuv::SobelMode::Color, 1.0f, 0, fast};
  const cuv::HeatmapParams heat{dheat_table, 256, cuv::yuv_to_rgb_coefficients (0.2126, 0.0722, false)};
  const cuv::Roi all{0, 0, w, h};
  using Work = std::function<cudaError_t (Lane &)>;
  const Work copy = [] (Lane &a) {
    return cudaMemcpyAsync (a.mid.dbuf, a.src.dbuf, a.src.bytes, cudaMemcpyDeviceToDevice, a.stream);
  };
  const Work sobel_k = [&] (Lane &a) { return cuv::sobel_cuda (a.src.dev, a.mid.dev, sobel, a.stream); };
  const Work enhance_k = [&] (Lane &a) { return cuv::enhance_cuda (a.mid.dev, a.mid.dev, dtables, a.stream); };
  const Work histogram_k = [&] (Lane &a) { return cuv::histogram_cuda (a.mid.dev, all, 256, a.hist.to (), a.stream); };
  const Work heatmap_k = [&] (Lane &a) {
    return cuv::heatmap_cuda (a.mid.dev, a.prev.dev, a.heat.dev, heat, a.diff.to (), a.stream);
  };
  const Work chain = [&] (Lane &a) {
    for (const Work *k : {&sobel_k, &enhance_k, &histogram_k, &heatmap_k}) {
      const cudaError_t e = (*k) (a);
      if (e != cudaSuccess)
        return e;
    }
    return cudaSuccess;
  };
  cudaStream_t s0 = lanes[0]->stream;
  cudaEvent_t start, stop;
  CUVTEST_CHECK_CUDA (cudaEventCreate (&start));
  CUVTEST_CHECK_CUDA (cudaEventCreate (&stop));
  /* median of 5 spans of every stream's graph at once */
  auto span = [&] (const Work &work) {
    std::vector<cudaGraphExec_t> graphs;
    for (auto &a : lanes) {
      cudaGraph_t g;
      CUVTEST_CHECK_CUDA (cudaStreamBeginCapture (a->stream, cudaStreamCaptureModeThreadLocal));
      for (int r = 0; r < kReps; r++)
        CUVTEST_CHECK_CUDA (work (*a));
      CUVTEST_CHECK_CUDA (cudaStreamEndCapture (a->stream, &g));
      cudaGraphExec_t e;
      CUVTEST_CHECK_CUDA (cudaGraphInstantiate (&e, g, 0));
      CUVTEST_CHECK_CUDA (cudaGraphDestroy (g));
      graphs.push_back (e);
    }
    std::vector<double> t;
    for (int i = 0; i < 6; i++) {
      CUVTEST_CHECK_CUDA (cudaDeviceSynchronize ());
      CUVTEST_CHECK_CUDA (cudaEventRecord (start, s0));
      for (size_t k = 0; k < lanes.size (); k++) {
        Lane &a = *lanes[k];
        if (k)
          CUVTEST_CHECK_CUDA (cudaStreamWaitEvent (a.stream, start, 0));
        CUVTEST_CHECK_CUDA (cudaGraphLaunch (graphs[k], a.stream));
        CUVTEST_CHECK_CUDA (cudaEventRecord (a.done, a.stream));
        CUVTEST_CHECK_CUDA (cudaStreamWaitEvent (s0, a.done, 0));
      }
      CUVTEST_CHECK_CUDA (cudaEventRecord (stop, s0));
      CUVTEST_CHECK_CUDA (cudaEventSynchronize (stop));
      float ms = 0;
      CUVTEST_CHECK_CUDA (cudaEventElapsedTime (&ms, start, stop));
      if (i)
        t.push_back (ms * 1000.0 / (static_cast<double> (kReps) * n));
    }
    for (cudaGraphExec_t e : graphs)
      cudaGraphExecDestroy (e);
    std::sort (t.begin (), t.end ());
    return t[t.size () / 2];
  };
  char frame[32];
  std::snprintf (frame, sizeof frame, "%dx%d %s", w, h, cuvtest::layout_name (l));
  std::printf ("%d streams at once, %d launches each; GPU us per launch in all\n", n, kReps);
  const double floor = span (copy);
  std::printf ("%-34s %-10s %10.2f %8.2f\n", "copy (device to device)", frame, floor, 1.0);
  const std::pair<const char *, const Work *> rows[] = {{"cudasobel mode=color", &sobel_k},
      {"cudaenhance in place", &enhance_k}, {"cudahistogram", &histogram_k}, {"cudaheatmap", &heatmap_k},
      {"chain of 4 (the four in turn)", &chain}};
  for (const auto &r : rows) {
    const double us = span (*r.second);
    std::printf ("%-34s %-10s %10.2f %8.2f\n", r.first, frame, us, us / floor);
  }
  cudaEventDestroy (start);
  cudaEventDestroy (stop);
  cudaFree (dheat_table);
  cudaFree (dtables);
}

}  // namespace

int main (int argc, char **argv)
{
  if (!cuvtest::have_gpu ()) {
    std::printf ("no usable CUDA device\n");
    return cuvtest::kSkip;
  }
  bool quick = argc > 1 && std::strcmp (argv[1], "--quick") == 0;
  bool profile = argc > 1 && std::strcmp (argv[1], "--profile") == 0;
  bool motion_only = argc > 1 && std::strcmp (argv[1], "--motion") == 0;
  g_skip_cpu = argc > 1 && std::strcmp (argv[1], "--gpu") == 0;
  const int throughput = argc > 2 && std::strcmp (argv[1], "--throughput") == 0 ? std::atoi (argv[2]) : 0;
  cudaDeviceProp prop;
  CUVTEST_CHECK_CUDA (cudaGetDeviceProperties (&prop, 0));
  std::printf ("device: %s, %d SMs, L2 %d MiB; cold L2, median of %d after %d warm-ups\n", prop.name,
      prop.multiProcessorCount, prop.l2CacheSize >> 20, kIters, kWarmup);
  std::printf ("%-34s %-10s %10s %8s %10s\n", "kernel", "frame", "GPU us", "x copy", "CPU ms");

  if (throughput > 0) {
    bench_throughput (throughput);
    return 0;
  }
  Bench b;
  if (motion_only) {
    bench_motion (b, false);
    return 0;
  }
  auto tables = std::make_unique<cuv::EnhanceTables> ();
  cuv::EnhanceParams ep{1.4, 0.05, 1.3, 0.1};
  cuv::enhance_build_tables (ep, tables.get ());
  cuv::EnhanceTables *dtables;
  CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dtables), sizeof (cuv::EnhanceTables)));
  CUVTEST_CHECK_CUDA (cudaMemcpy (dtables, tables.get (), sizeof (cuv::EnhanceTables), cudaMemcpyHostToDevice));
  /* the analysers' results as the elements take them: each launch writes them into page-locked
   * host memory itself and rearms its accumulator (kernels/base/results.h), so a row is all the GPU
   * does for its frame */
  cuvtest::DeviceResults<cuv::HistogramPartials, cuv::HistogramResult> hist_results;
  const cuv::HistogramResults hist_to = hist_results.to ();
  cuv::HistogramResult hhist;
  cuvtest::DeviceResults<cuv::DiffStats, cuv::DiffStats> diff_results;
  const cuv::DiffResults dstats = diff_results.to ();
  cuv::DiffStats hstats;
  uint32_t heat_table[cuv::kHeatmapTableSize], *dheat_table;
  CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dheat_table), sizeof (heat_table)));
  const cuv::YuvToRgb yuv = cuv::yuv_to_rgb_coefficients (0.2126, 0.0722, false);
  auto noise_params = [] (bool overlay) {
    cuv::NoisemapParams p{};
    p.threshold = 20;
    p.overlay = overlay;
    p.alpha = 256;
    p.color = cuv::pack_px (cuv::PixelLayout::RGBA, 255, 0, 0, 255);
    p.yuv[0] = 63, p.yuv[1] = 102, p.yuv[2] = 240, p.y_black = 16;
    return p;
  };

  if (profile) {
    Image src (cuv::PixelLayout::RGBA, 3840, 2160), dst (cuv::PixelLayout::RGBA, 3840, 2160);
    fill_natural (src.host, 1);
    src.upload ();
    for (int i = 0; i < 2; i++) {
      CUVTEST_CHECK_CUDA (cuv::sobel_cuda (src.dev, dst.dev, {cuv::SobelMode::Color, 1.0f, 0}, b.stream));
      CUVTEST_CHECK_CUDA (cuv::sobel_cuda (src.dev, dst.dev, {cuv::SobelMode::Luma, 1.0f, 0}, b.stream));
      CUVTEST_CHECK_CUDA (cuv::enhance_cuda (src.dev, dst.dev, dtables, b.stream));
      CUVTEST_CHECK_CUDA (cuv::histogram_cuda (src.dev, {0, 0, 3840, 2160}, 256, hist_to, b.stream));
      CUVTEST_CHECK_CUDA (cuv::heatmap_cuda (src.dev, dst.dev, dst.dev, {dheat_table, 256, yuv}, dstats, b.stream));
      CUVTEST_CHECK_CUDA (cuv::noisemap_cuda (src.dev, dst.dev, dst.dev, noise_params (false), dstats, b.stream));
    }
    CUVTEST_CHECK_CUDA (cudaStreamSynchronize (b.stream));
    profile_motion (b);
    return 0;
  }
  std::vector<cuvtest::Size> sizes = {{1920, 1080}};
  if (!quick)
    sizes.push_back ({3840, 2160});
  /* RGBA, NV12, a webcam's YUY2 and UYVY and a 10-bit decoder's P010 */
  for (cuv::PixelLayout l : {cuv::PixelLayout::RGBA, cuv::PixelLayout::NV12, cuv::PixelLayout::YUY2, cuv::PixelLayout::UYVY,
           cuv::PixelLayout::P010}) {
    for (cuvtest::Size s : sizes) {
      Image src (l, s.w, s.h), dst (l, s.w, s.h);
      fill_natural (src.host, 1);
      src.upload ();
      char frame[32];
      std::snprintf (frame, sizeof frame, "%dx%d %s", s.w, s.h, cuvtest::layout_name (l));
      double copy = b.time ([&] { return cudaMemcpyAsync (dst.dbuf, src.dbuf, src.bytes, cudaMemcpyDeviceToDevice, b.stream); });
      std::printf ("%-34s %-10s %10.1f %8.2f %10s\n", "copy (device to device)", frame, copy, 1.0, "-");
      auto row = [&] (const char *name, const std::function<cudaError_t ()> &gpu, const std::function<void ()> &cpu) {
        double us = b.time (gpu);
        if (!cpu || g_skip_cpu) {
          std::printf ("%-34s %-10s %10.1f %8.2f %10s\n", name, frame, us, us / copy, "-");
          return;
        }
        std::printf ("%-34s %-10s %10.1f %8.2f %10.1f\n", name, frame, us, us / copy, cpu_ms (cpu));
      };
      /* as the element runs them: the approximate root, which is exact for scale 1 */
      bool fast = false;
      CUVTEST_CHECK_CUDA (cuv::sobel_fast_root_exact_cuda (1.0f, &fast, b.stream));
      cuv::SobelParams color{cuv::SobelMode::Color, 1.0f, 0, fast}, luma{cuv::SobelMode::Luma, 1.0f, 0, fast};
      cuv::SobelParams color_exact{cuv::SobelMode::Color, 1.0f, 0, false};
      row ("cudasobel mode=color", [&] { return cuv::sobel_cuda (src.dev, dst.dev, color, b.stream); },
          [&] { cuv::sobel_cpu (src.host, dst.host, color); });
      if (l == cuv::PixelLayout::RGBA)
        row ("cudasobel mode=color, exact root", [&] { return cuv::sobel_cuda (src.dev, dst.dev, color_exact, b.stream); },
            [&] { cuv::sobel_cpu (src.host, dst.host, color_exact); });
      if (l == cuv::PixelLayout::RGBA)
        row ("cudasobel mode=luma", [&] { return cuv::sobel_cuda (src.dev, dst.dev, luma, b.stream); },
            [&] { cuv::sobel_cpu (src.host, dst.host, luma); });
      row ("cudaenhance (camera-like content)", [&] { return cuv::enhance_cuda (src.dev, dst.dev, dtables, b.stream); },
          [&] { cuv::enhance_cpu (src.host, dst.host, *tables); });
      row ("cudaenhance in place", [&] { return cuv::enhance_cuda (src.dev, src.dev, dtables, b.stream); },
          [&] { cuv::enhance_cpu (src.host, src.host, *tables); });
      /* the floor of the analysers, which only read the frame (cudahistogram) */
      uint32_t *sink = nullptr;
      CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&sink), sizeof (*sink)));
      row ("read only (analysers' floor)", [&] { return read_floor_cuda (src.dbuf, src.bytes, sink, b.stream); }, nullptr);
      cudaFree (sink);
      /* the histogram and its results on the host, as the element runs it */
      const cuv::Roi all{0, 0, s.w, s.h};
      const cuv::OverlayRect rect = cuv::histogram_overlay_rect (s.w, s.h, cuv::OverlayCorner::TopRight, 25);
      auto histogram = [&] { return cuv::histogram_cuda (src.dev, all, 256, hist_to, b.stream); };
      auto histogram_cpu = [&] { cuv::histogram_cpu (src.host, all, 256, &hhist); };
      row ("cudahistogram (camera-like)", histogram, histogram_cpu);
      row ("cudahistogram + overlay", [&] {
            cudaError_t e = histogram ();
            return e != cudaSuccess ? e : cuv::histogram_overlay_cuda (src.dev, rect, 256, hist_to.device_out, static_cast<uint64_t> (s.w) * s.h, b.stream);
          },
          histogram_cpu);
      /* the difference kernels read this frame and a previous one (camera-like, other noise) and
       * write a third; NV12 gives RGBA for the heat map */
      {
        Image prev (l, s.w, s.h), heat_out (cuv::heatmap_out_layout (l), s.w, s.h);
        fill_natural (prev.host, 2);
        prev.upload ();
        cuv::heatmap_build_table (cuv::Colormap::Sine, 1.0, cuv::heatmap_out_layout (l), heat_table);
        CUVTEST_CHECK_CUDA (cudaMemcpy (dheat_table, heat_table, sizeof (heat_table), cudaMemcpyHostToDevice));
        for (int blend : {256, 128}) {
          const cuv::HeatmapParams dp{dheat_table, blend, yuv}, hp{heat_table, blend, yuv};
          row (blend == 256 ? "cudaheatmap" : "cudaheatmap blend=0.5",
              [&] { return cuv::heatmap_cuda (src.dev, prev.dev, heat_out.dev, dp, dstats, b.stream); },
              [&] { cuv::heatmap_cpu (src.host, prev.host, heat_out.host, hp, &hstats); });
        }
        for (bool overlay : {false, true}) {
          const cuv::NoisemapParams np = noise_params (overlay);
          row (overlay ? "cudanoisemap mode=overlay" : "cudanoisemap mode=map",
              [&] { return cuv::noisemap_cuda (src.dev, prev.dev, dst.dev, np, dstats, b.stream); },
              [&] { cuv::noisemap_cpu (src.host, prev.host, dst.host, np, &hstats); });
        }
        /* regions=true's extra pass: the changed pixels of each 16x16 tile */
        const size_t tiles = static_cast<size_t> (cuv::noise_tile_cols (s.w)) * cuv::noise_tile_rows (s.h);
        uint16_t *dtiles = nullptr;
        CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dtiles), tiles * sizeof (uint16_t)));
        std::vector<uint16_t> htiles (tiles);
        row ("cudanoisemap regions=true: tile counts",
            [&] { return cuv::noisemap_tiles_cuda (src.dev, prev.dev, 20, dtiles, b.stream); },
            [&] { cuv::noisemap_tiles_reference (src.host, prev.host, 20, htiles.data ()); });
        cudaFree (dtiles);
      }
      /* every pixel in one bin: each shared atomic of a warp hits one address */
      CUVTEST_CHECK_CUDA (cudaMemset (src.dbuf, 128, src.bytes));
      row ("cudahistogram (flat content)", histogram, histogram_cpu);
      src.upload ();
      /* worst case for the chroma table: every pixel's chroma random */
      std::mt19937 rng (9);
      for (auto &v : src.hbuf)
        v = static_cast<uint8_t> (rng ());
      src.upload ();
      row ("cudaenhance (random content)", [&] { return cuv::enhance_cuda (src.dev, dst.dev, dtables, b.stream); },
          [&] { cuv::enhance_cpu (src.host, dst.host, *tables); });
      row ("cudahistogram (random content)", histogram, histogram_cpu);
    }
  }
  bench_motion (b, quick);
  cudaFree (dheat_table);
  cudaFree (dtables);
  return 0;
}
