/* Pipeline benchmark: real GStreamer pipelines as users run them, against the kernels they run.
 * A source that costs nothing (appsrc pushing a ring of 4 pre-filled buffers: CUDA memory
 * "cuda", page-locked host memory as our elements' proposed pool gives it "pinned", or plain
 * malloc'd host memory "host", as a source that recycles a few buffers sends it, or "wrapped": the
 * same frames wrapped in a new buffer for each push, as an application that keeps its own ring
 * does (only when --memory names it); or "fresh": a
 * new malloc'd buffer every frame, its pages touched by four producer threads as a decoder's
 * writes would; the row "source alone" is that source's own rate; or, only when --memory names
 * it, "upstream": videotestsrc pattern=solid-color making each frame in a buffer of the pool the
 * first element proposes, as upstream elements that allocate do; with --pipeline identity, which
 * proposes none, its own rate), the elements, a fakesink that timestamps every buffer. Frames per
 * second from the first buffer at the sink to the last (start and negotiation excluded; with
 * several pipelines, each one's 17th frame waits until all have their first at the sink, and the
 * frames count from the last one's first buffer to the first one's last, while all stream), median
 * of 3 runs of a few seconds each; the kernels' time from bench_kernels (same binary directory,
 * run first) and the efficiency: kernels' time / wall time per frame; the host's waits for a
 * stream in our elements a frame (the plugin's cuv_host_waits: before a push, or for another
 * element's stream), and those for a frame in flight (cuv_in_flight_waits: a frame pushed once
 * the next is queued, max-frames-in-flight; the source is not live, so that is the default).
 *   bench_pipelines [--quick] [--size WxH] [--format F] [--memory M] [--only TEXT] [--no-many]
 *                   [--pipelines N,N,...] [--profile-host] [--seconds S] [--kernels FILE] [--device N]
 *                   [--ring N] [--idle-streams N] [--pipeline ELEMENTS]... [--live N,N,...]
 * --quick: 1920x1080 only, 60 frames a run (20 without a GPU, and at most 4 pipelines), one run of
 * the many-pipeline rows, for a smoke run;
 * --size: that frame size only; --format: that video format only (default RGBA and NV12; BGRx,
 * I420, ...); --memory: that source memory only (cuda, pinned, host, wrapped, fresh, upstream); --only: the configurations whose name contains TEXT ("many": only the rows of many
 * pipelines, always 1920x1080 NV12 or the smaller --size, as docs/performance.md defines them; --format does
 * not apply to them); --no-many: not those rows; --pipelines: their counts
 * of pipelines (default 1,4,16,32,64); --profile-host: sample the host's CPU time
 * while the rows' pipelines run and print where it went (host_profile.h; use it with --only;
 * CUV_PROFILE_STACKS=FILE also writes every sample's stack there, for host_profile.py); --seconds:
 * the length of each timed run (default 1; the many-pipeline rows' runs last at least 3 s, and
 * 3000 frames a pipeline, their length set by a short run first); --kernels: bench_kernels --gpu's output saved in FILE
 * (else it runs, which takes about a minute); --device: the CUDA device the pipelines run on (the
 * shared context is made there; default 0; the kernel column comes from device 0), or a list
 * (--device 0,1): each configuration row then runs one pipeline on each of those devices at once,
 * in this process, and gives their total (docs/performance.md); --ring: the frames in a source's ring
 * (default 4; more spread the frames over more memory); --idle-streams: that many CUDA streams
 * made on the first device's context and left idle while the rows run; --pipeline:
 * instead of the configurations, this one (the elements between source and sink, as gst-launch
 * takes them, e.g. "cudahistogram post-messages=false ! cudaheatmap"; repeatable), with no
 * kernel column: for trying a property's cost, or profiling one row alone (with --only many: the
 * many-pipeline rows run the first of them instead of the chain of 4); --live: instead of every
 * other row, N live sources at 30 fps through the chain of 4 (or the first --pipeline) to
 * synchronised sinks, for each N, 1920x1080 NV12 unless --size or --format is given, in CUDA
 * memory unless --memory host, --seconds timed (default 5): the share of real time kept and the
 * latency from capture to sink (tests/bench/live.h); --count-calls: each run also prints the CUDA
 * driver and runtime calls a frame while all its pipelines stream, and the kernel launches among
 * them (tests/bench/call_count.h; needs libcuv-call-count.so beside the program).
 * With a GPU, each frame size and format starts with the PCIe floor of the same run: one frame
 * copied from page-locked memory to the device, back, and both at once on two streams (median of
 * 30); rows from host memory give the duplex figure's share of their time ("pcie": 1.00 is a
 * pipeline at the speed of the link).
 * Without a GPU only the host-memory rows run (on the CPU backend), with no kernel column.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/app/gstappsrc.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <thread>
#include <vector>

#include "tests/common/cuvplugin.h"
#include "tests/bench/call_count.h"
#include "tests/bench/host_profile.h"
#include "tests/bench/live.h"
#include "tests/common/cuvtest.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  std::string name;
  std::string elements;               /* between the source and the sink named "sink" */
  std::vector<std::string> kernels;   /* bench_kernels rows whose sum is the floor */
};

/* The rows of bench_kernels --gpu are "name frame us ratio -": the name padded to 34 columns, the
 * frame two words ("3840x2160 RGBA", "1920x1080 luma"), which overflow their 10 columns. */
std::map<std::string, double> kernel_times (FILE *p)
{
  std::map<std::string, double> t;
  char line[512];
  while (fgets (line, sizeof line, p)) {
    if (strlen (line) < 40)
      continue;
    std::string name (line, 34);
    name.erase (name.find_last_not_of (' ') + 1);
    char size[32], layout[32];
    double us = 0;
    if (std::sscanf (line + 34, "%31s %31s %lf", size, layout, &us) == 3)
      t[name + "|" + size + " " + layout] = us;
  }
  return t;
}

/* The kernels' times: from @file (a saved run of bench_kernels --gpu) when given, else from a run
 * of bench_kernels --gpu beside this program. */
std::map<std::string, double> kernel_times (const char *argv0, const std::string &file)
{
  std::map<std::string, double> t;
  if (!file.empty ()) {
    if (FILE *f = std::fopen (file.c_str (), "r")) {
      t = kernel_times (f);
      std::fclose (f);
    }
    return t;
  }
  std::string dir = argv0;
  dir = dir.substr (0, dir.find_last_of ('/') + 1);
  if (FILE *p = popen ((dir + "bench_kernels --gpu").c_str (), "r")) {
    t = kernel_times (p);
    pclose (p);
  }
  return t;
}

/* docs/performance.md's chain of four, as the many-pipeline and live rows run it */
const std::string kChainOf4 = "cudasobel ! cudaenhance contrast=1.4 ! cudahistogram ! cudaheatmap";

/* the shared context of each device the pipelines run on (--device); pipeline p takes
 * g_contexts[p % size] */
std::vector<GstContext *> g_contexts;
/* the frames of a source's ring (--ring) */
int g_ring = 4;
/* streams made on the first context and left idle (--idle-streams) */
int g_idle_streams = 0;
/* each run prints its CUDA calls a frame (--count-calls) */
bool g_count_calls = false;

GstBuffer *new_fresh_buffer (gsize size);

/* A producer of new malloc'd frames on threads of its own, as a decoder makes its frames on its
 * own threads: the page faults of a new 33 MB block are the producer's cost, not the pipeline's,
 * so four threads make them ahead of the feeding thread (at most 8 ready). */
class FreshFrames {
 public:
  FreshFrames (gsize size, int n) : size_ (size), left_ (n)
  {
    for (int i = 0; i < 4; i++)
      threads_.emplace_back ([this] { produce (); });
  }
  ~FreshFrames ()
  {
    {
      std::lock_guard<std::mutex> lk (lock_);
      left_ = 0;
    }
    cond_.notify_all ();
    for (auto &t : threads_)
      t.join ();
    for (GstBuffer *b : ready_)
      gst_buffer_unref (b);
  }
  /* the next frame (NULL once @n were taken) */
  GstBuffer *take ()
  {
    std::unique_lock<std::mutex> lk (lock_);
    cond_.wait (lk, [this] { return !ready_.empty () || (left_ == 0 && making_ == 0); });
    if (ready_.empty ())
      return nullptr;
    GstBuffer *b = ready_.front ();
    ready_.erase (ready_.begin ());
    cond_.notify_all ();
    return b;
  }

 private:
  void produce ()
  {
    std::unique_lock<std::mutex> lk (lock_);
    for (;;) {
      cond_.wait (lk, [this] { return left_ == 0 || ready_.size () + making_ < 8; });
      if (left_ == 0)
        break;
      left_--;
      making_++;
      lk.unlock ();
      GstBuffer *b = new_fresh_buffer (size_);
      lk.lock ();
      making_--;
      ready_.push_back (b);
      cond_.notify_all ();
    }
    cond_.notify_all ();
  }
  gsize size_;
  int left_;
  int making_ = 0;
  std::vector<GstBuffer *> ready_;
  std::vector<std::thread> threads_;
  std::mutex lock_;
  std::condition_variable cond_;
};

struct Source {
  std::vector<GstBuffer *> ring;
  bool fresh = false;   /* a new buffer every frame instead of the ring */
  bool wrapped = false; /* each frame of the ring wrapped anew on each push */
  ~Source ()
  {
    for (GstBuffer *b : ring)
      gst_buffer_unref (b);
  }
};

/* The shared CUDA context of pipeline @p's device, a reference. */
GstCudaContext *shared_context (int p = 0)
{
  GstCudaContext *ctx = nullptr;
  gst_structure_get (gst_context_get_structure (g_contexts[p % g_contexts.size ()]), "gst.cuda.context",
      GST_TYPE_CUDA_CONTEXT, &ctx, nullptr);
  return ctx;
}

/* A frame of page-locked memory (cudaHostAlloc on the shared context), as a buffer that frees it
 * with the context current: what an upstream element writes into when it takes the pool our
 * first element proposes on the CUDA backend (common/cuda/cuvpinned.h). */
struct PinnedBlock {
  GstCudaContext *ctx;
  void *data;
};

GstBuffer *new_pinned_buffer (gsize size)
{
  auto *b = new PinnedBlock{shared_context (), nullptr};
  const bool pushed = gst_cuda_context_push (b->ctx);
  const bool ok = pushed && cudaHostAlloc (&b->data, size, cudaHostAllocPortable) == cudaSuccess;
  if (pushed)
    gst_cuda_context_pop (nullptr);
  if (!ok) {
    gst_object_unref (b->ctx);
    delete b;
    return nullptr;
  }
  return gst_buffer_new_wrapped_full (static_cast<GstMemoryFlags> (0), b->data, size, 0, size, b, +[] (gpointer data) {
    auto *block = static_cast<PinnedBlock *> (data);
    if (gst_cuda_context_push (block->ctx)) {
      cudaFreeHost (block->data);
      gst_cuda_context_pop (nullptr);
    }
    gst_object_unref (block->ctx);
    delete block;
  });
}

/* The ring of pipeline @p: g_ring frames of @info in @memory ("cuda", on the pipeline's device,
 * "pinned", or "host" and "wrapped", malloc'd), filled with a pattern; none for "fresh". */
bool make_ring (Source &src, const GstVideoInfo &info, const std::string &memory, int p)
{
  src.wrapped = memory == "wrapped";
  if (memory == "fresh") {
    src.fresh = true; /* feed () makes each frame */
    return true;
  }
  GstBufferPool *pool = nullptr;
  if (memory == "cuda") {
    GstCudaContext *ctx = shared_context (p);
    pool = gst_cuda_buffer_pool_new (ctx);
    gst_object_unref (ctx);
    GstCaps *caps = gst_video_info_to_caps (&info);
    gst_caps_set_features_simple (caps, gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, nullptr));
    GstStructure *config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (&info), g_ring, g_ring);
    gst_caps_unref (caps);
    if (!gst_buffer_pool_set_config (pool, config) || !gst_buffer_pool_set_active (pool, TRUE)) {
      gst_object_unref (pool);
      return false;
    }
  }
  /* the patterns are made once per frame size: made per pipeline, they were most of the time
   * that setting up 64 pipelines took (16 to 27 s) */
  static std::map<std::tuple<size_t, int, guint>, std::vector<uint8_t>> patterns;
  for (int i = 0; i < g_ring; i++) {
    GstBuffer *buf = nullptr;
    if (pool) {
      if (gst_buffer_pool_acquire_buffer (pool, &buf, nullptr) != GST_FLOW_OK)
        return false;
    } else if (memory == "pinned") {
      if (!(buf = new_pinned_buffer (GST_VIDEO_INFO_SIZE (&info))))
        return false;
    } else {
      buf = gst_buffer_new_allocate (nullptr, GST_VIDEO_INFO_SIZE (&info), nullptr);
    }
    GstVideoFrame f;
    GstVideoInfo vi = info;
    if (!gst_video_frame_map (&f, &vi, buf, GST_MAP_WRITE))
      return false;
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (&f); p++) {
      std::vector<uint8_t> &pattern = patterns[std::make_tuple (static_cast<size_t> (GST_VIDEO_INFO_SIZE (&info)), i, p)];
      if (pattern.empty ()) {
        pattern.resize (GST_VIDEO_INFO_SIZE (&info));
        cuvtest::fill_pattern (pattern, 17 + i * 3 + p);
      }
      auto *d = static_cast<uint8_t *> (GST_VIDEO_FRAME_PLANE_DATA (&f, p));
      const int stride = GST_VIDEO_FRAME_PLANE_STRIDE (&f, p);
      const int rows = GST_VIDEO_FRAME_COMP_HEIGHT (&f, p == 0 ? 0 : 1);
      const int row_bytes = std::min (stride, GST_VIDEO_INFO_PLANE_STRIDE (&info, p));
      for (int y = 0; y < rows; y++)
        std::memcpy (d + static_cast<size_t> (y) * stride, pattern.data () + static_cast<size_t> (y) * row_bytes, row_bytes);
    }
    gst_video_frame_unmap (&f);
    src.ring.push_back (buf);
  }
  if (pool) {
    /* the buffers stay valid after the pool is deactivated while we hold them */
    gst_object_unref (pool);
  }
  return true;
}

/* Holds each feeder after its first frame until every pipeline's first frame is at its sink: the
 * pipelines start one after another, and a row measures them streaming, not starting. */
struct StartGate {
  std::mutex lock;
  std::condition_variable cond;
  int waiting_for = 0;
  Clock::time_point opened;
  /* --count-calls: the frames at all sinks, and the calls and those frames when the gate opened
   * and when the first pipeline had its last frame (its @last_frame-th) */
  std::atomic<long> at_sinks{0};
  int last_frame = 0;
  std::atomic<bool> ended{false};
  cuvbench::CallCounts calls_opened, calls_ended;
  long at_sinks_opened = 0, at_sinks_ended = 0;
  void arrive ()
  {
    std::lock_guard<std::mutex> lk (lock);
    if (--waiting_for == 0) {
      opened = Clock::now ();
      if (g_count_calls) {
        calls_opened = cuvbench::call_counts_now ();
        at_sinks_opened = at_sinks;
      }
      cond.notify_all ();
    }
  }
  void frame_at_sink (int frames)
  {
    at_sinks++;
    if (g_count_calls && frames == last_frame && !ended.exchange (true)) {
      calls_ended = cuvbench::call_counts_now ();
      at_sinks_ended = at_sinks;
    }
  }
  /* whether all started within a minute */
  bool wait ()
  {
    std::unique_lock<std::mutex> lk (lock);
    return cond.wait_for (lk, std::chrono::seconds (60), [this] { return waiting_for <= 0; });
  }
};

/* One pipeline: the time of every buffer at the sink. */
struct Run {
  StartGate *gate = nullptr;
  GstElement *pipe = nullptr;
  std::atomic<int> frames{0};
  Clock::time_point first, last;
  std::vector<Clock::time_point> times;
  std::mutex lock;
  bool error = false;
};

void on_handoff (GstElement *, GstBuffer *, GstPad *, gpointer data)
{
  auto *r = static_cast<Run *> (data);
  const Clock::time_point now = Clock::now ();
  bool first;
  {
    std::lock_guard<std::mutex> lk (r->lock);
    if ((first = r->frames++ == 0))
      r->first = now;
    r->last = now;
    r->times.push_back (now);
  }
  if (first)
    r->gate->arrive ();
  r->gate->frame_at_sink (r->frames);
}

/* A new malloc'd frame, each page written once (a producer's writes: the page faults are its). */
GstBuffer *new_fresh_buffer (gsize size)
{
  GstBuffer *b = gst_buffer_new_allocate (nullptr, size, nullptr);
  GstMapInfo map;
  if (b && gst_buffer_map (b, &map, GST_MAP_WRITE)) {
    for (gsize at = 0; at < map.size; at += 4096)
      map.data[at] = static_cast<guint8> (at >> 12);
    gst_buffer_unmap (b, &map);
  }
  return b;
}

/* Frames a feeder pushes before it waits for the others to start: more than the elements hold
 * back (a frame in flight each, max-frames-in-flight), so that its first frame reaches the sink. */
constexpr int kFramesBeforeGate = 16;
/* the least length of a timed run of the many-pipeline rows, in seconds */
constexpr double kManySeconds = 3.0;

/* A new buffer of new memory that wraps @frame's bytes and holds @frame until it is freed: an
 * application that keeps its own ring of frames and wraps a frame for each push
 * (gst_buffer_new_wrapped_full), the frame going back to its ring when GStreamer lets it go. */
GstBuffer *wrap_again (GstBuffer *frame)
{
  GstMapInfo map;
  if (!gst_buffer_map (frame, &map, GST_MAP_READ))
    return nullptr;
  guint8 *data = map.data;
  const gsize size = map.size;
  gst_buffer_unmap (frame, &map);
  return gst_buffer_new_wrapped_full (static_cast<GstMemoryFlags> (0), data, size, 0, size, gst_buffer_ref (frame),
      reinterpret_cast<GDestroyNotify> (gst_buffer_unref));
}

/* Pushes @n frames of the ring (or fresh ones) into @appsrc, those after the first
 * kFramesBeforeGate once @gate opens, then EOS. */
void feed (GstElement *appsrc, const Source &src, int n, const GstVideoInfo &info, StartGate &gate)
{
  const GstClockTime dur = gst_util_uint64_scale (GST_SECOND, GST_VIDEO_INFO_FPS_D (&info), GST_VIDEO_INFO_FPS_N (&info));
  std::unique_ptr<FreshFrames> fresh;
  if (src.fresh)
    fresh = std::make_unique<FreshFrames> (GST_VIDEO_INFO_SIZE (&info), n);
  for (int i = 0; i < n; i++) {
    /* a new buffer header sharing the frame's memory, so timestamps can differ */
    GstBuffer *frame = fresh ? nullptr : src.ring[i % src.ring.size ()];
    GstBuffer *b = fresh ? fresh->take () : src.wrapped ? wrap_again (frame) : gst_buffer_make_writable (gst_buffer_ref (frame));
    if (!b)
      break;
    GST_BUFFER_PTS (b) = i * dur;
    GST_BUFFER_DURATION (b) = dur;
    if (gst_app_src_push_buffer (GST_APP_SRC (appsrc), b) != GST_FLOW_OK)
      break;
    if (i == kFramesBeforeGate - 1 && !gate.wait ()) {
      std::fprintf (stderr, "not every pipeline started within a minute\n");
      break;
    }
  }
  gst_app_src_end_of_stream (GST_APP_SRC (appsrc));
}

/* @pipelines copies of the configuration at once; total frames per second at their sinks. */
/* How long a run's pipelines took to be made (parsed, their sources filled), to start (all
 * streaming), and to stop (from the last frame at a sink, through EOS and NULL, to all freed), in
 * ms. */
struct Phases {
  double make = 0, start = 0, stop = 0;
};

double run_once (const Config &c, const GstVideoInfo &info, const std::string &memory, int frames, int pipelines,
    bool *ok, Phases *phases = nullptr)
{
  const Clock::time_point begun = Clock::now ();
  StartGate gate;
  gate.waiting_for = pipelines;
  gate.last_frame = frames;
  GstCaps *caps = gst_video_info_to_caps (&info);
  if (memory == "cuda")
    gst_caps_set_features_simple (caps, gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, nullptr));
  gchar *caps_str = gst_caps_to_string (caps);
  gst_caps_unref (caps);
  /* frames leave in the memory they came in: fakesink takes any, and our elements would write
   * CUDA memory into it from host memory too */
  std::string elements = c.elements;
  if (memory != "cuda")
    for (size_t at = 0; (at = elements.find ("fakesink", at)) != std::string::npos; at += std::strlen ("video/x-raw ! fakesink"))
      elements.insert (at, "video/x-raw ! ");
  /* "upstream": videotestsrc makes the frames, in buffers of the pool the elements propose */
  const bool upstream = memory == "upstream";
  const std::string launch = upstream ?
      "videotestsrc name=src pattern=solid-color num-buffers=" + std::to_string (frames) + " ! " + caps_str + " ! " + elements :
      std::string ("appsrc name=src format=time block=true max-buffers=4 caps=\"") + caps_str + "\" ! " + elements;
  g_free (caps_str);
  std::vector<std::unique_ptr<Run>> runs;
  std::vector<std::unique_ptr<Source>> sources;
  *ok = true;
  for (int p = 0; p < pipelines; p++) {
    auto r = std::make_unique<Run> ();
    r->gate = &gate;
    r->times.reserve (frames);
    GError *err = nullptr;
    r->pipe = gst_parse_launch (launch.c_str (), &err);
    auto s = std::make_unique<Source> ();
    if (err || !r->pipe || (!upstream && !make_ring (*s, info, memory, p))) {
      std::fprintf (stderr, "cannot set up: %s%s%s\n", launch.c_str (), err ? ": " : "", err ? err->message : "");
      g_clear_error (&err);
      if (r->pipe)
        gst_object_unref (r->pipe);
      for (auto &done : runs)
        gst_object_unref (done->pipe);
      *ok = false;
      return 0;
    }
    if (!g_contexts.empty ())
      gst_element_set_context (r->pipe, g_contexts[p % g_contexts.size ()]);
    GstElement *sink = gst_bin_get_by_name (GST_BIN (r->pipe), "sink");
    g_object_set (sink, "signal-handoffs", TRUE, "sync", FALSE, nullptr);
    g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), r.get ());
    gst_object_unref (sink);
    runs.push_back (std::move (r));
    sources.push_back (std::move (s));
  }
  std::vector<std::thread> feeders;
  cuvbench::host_profile_enable (true); /* a no-op unless --profile-host */
  const Clock::time_point playing = Clock::now ();
  for (int p = 0; p < pipelines; p++) {
    gst_element_set_state (runs[p]->pipe, GST_STATE_PLAYING);
    if (upstream)
      continue;
    GstElement *appsrc = gst_bin_get_by_name (GST_BIN (runs[p]->pipe), "src");
    feeders.emplace_back ([appsrc, &sources, p, frames, &info, &gate] {
      feed (appsrc, *sources[p], frames, info, gate);
      gst_object_unref (appsrc);
    });
  }
  for (auto &r : runs) {
    GstBus *bus = gst_element_get_bus (r->pipe);
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 600 * GST_SECOND,
        static_cast<GstMessageType> (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    if (!m || GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
      if (m) {
        GError *err = nullptr;
        gst_message_parse_error (m, &err, nullptr);
        std::fprintf (stderr, "%s: %s\n", c.name.c_str (), err->message);
        g_error_free (err);
      }
      *ok = false;
    }
    if (m)
      gst_message_unref (m);
    gst_object_unref (bus);
  }
  /* back to NULL before the feeders are joined: after an error a feeder waits in a full appsrc,
   * which going to NULL releases */
  cuvbench::host_profile_enable (false);
  for (auto &r : runs)
    gst_element_set_state (r->pipe, GST_STATE_NULL);
  for (auto &f : feeders)
    f.join ();
  /* The frames while every pipeline streams: from the last pipeline's first frame to the first
   * pipeline's last (one pipeline: its first frame to its last). The pipelines start one after
   * another, so from the first pipeline's first frame the later ones' negotiation and start would
   * count against the earlier ones' frames. */
  Clock::time_point start = Clock::time_point::min (), end = Clock::time_point::max (), last = start;
  for (auto &r : runs) {
    gst_object_unref (r->pipe);
    if (r->frames < 2) {
      *ok = false;
      return 0;
    }
    start = std::max (start, r->first);
    end = std::min (end, r->last);
    last = std::max (last, r->last);
  }
  if (g_count_calls) {
    std::printf ("%s, %d pipelines:", c.name.c_str (), pipelines);
    cuvbench::call_counts_print (stdout, gate.calls_opened, gate.calls_ended, gate.at_sinks_ended - gate.at_sinks_opened, 8);
    std::fflush (stdout);
  }
  if (phases) {
    phases->make = std::chrono::duration<double, std::milli> (playing - begun).count ();
    phases->start = std::chrono::duration<double, std::milli> (gate.opened - playing).count ();
    phases->stop = std::chrono::duration<double, std::milli> (Clock::now () - last).count ();
  }
  long in_window = 0;
  for (auto &r : runs)
    for (const Clock::time_point &t : r->times)
      in_window += t > start && t <= end;
  if (!*ok || end <= start || in_window < pipelines) {
    if (*ok)
      std::fprintf (stderr, "%s, %d pipelines: too few frames while all of them streamed\n", c.name.c_str (), pipelines);
    *ok = false;
    return 0;
  }
  return in_window / std::chrono::duration<double> (end - start).count ();
}

double median3 (double a, double b, double c)
{
  return std::max (std::min (a, b), std::min (std::max (a, b), c));
}

/* The PCIe floor for one frame of @bytes: page-locked host to device, back, and both at once on
 * two streams; microseconds, median of 30. */
struct PcieFloor {
  double h2d = 0, d2h = 0, both = 0;
};

bool measure_pcie (gsize bytes, PcieFloor *floor)
{
  GstCudaContext *ctx = shared_context ();
  bool ok = gst_cuda_context_push (ctx);
  if (!ok) {
    gst_object_unref (ctx);
    return false;
  }
  void *host[2] = {}, *dev[2] = {};
  cudaStream_t st[2] = {};
  for (int i = 0; i < 2; i++) {
    ok = ok && cudaHostAlloc (&host[i], bytes, cudaHostAllocPortable) == cudaSuccess;
    ok = ok && cudaMalloc (&dev[i], bytes) == cudaSuccess;
    ok = ok && cudaStreamCreateWithFlags (&st[i], cudaStreamNonBlocking) == cudaSuccess;
  }
  auto median30 = [&] (bool up, bool down) {
    std::vector<double> t;
    for (int i = 0; i < 30; i++) {
      const Clock::time_point t0 = Clock::now ();
      if (up)
        ok = ok && cudaMemcpyAsync (dev[0], host[0], bytes, cudaMemcpyHostToDevice, st[0]) == cudaSuccess;
      if (down)
        ok = ok && cudaMemcpyAsync (host[1], dev[1], bytes, cudaMemcpyDeviceToHost, st[1]) == cudaSuccess;
      ok = ok && cudaStreamSynchronize (st[0]) == cudaSuccess && cudaStreamSynchronize (st[1]) == cudaSuccess;
      t.push_back (std::chrono::duration<double, std::micro> (Clock::now () - t0).count ());
    }
    std::nth_element (t.begin (), t.begin () + 15, t.end ());
    return t[15];
  };
  if (ok) {
    median30 (true, true); /* warm-up */
    floor->h2d = median30 (true, false);
    floor->d2h = median30 (false, true);
    floor->both = median30 (true, true);
  }
  for (int i = 0; i < 2; i++) {
    if (st[i])
      cudaStreamDestroy (st[i]);
    cudaFree (dev[i]);
    cudaFreeHost (host[i]);
  }
  gst_cuda_context_pop (nullptr);
  gst_object_unref (ctx);
  return ok;
}

}  // namespace

int main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  bool quick = false, many = true, profile = false;
  std::vector<int> counts = {1, 4, 16, 32, 64};
  std::string only, kernels_file;
  double seconds = 1.0;
  std::vector<int> devices = {0};
  std::vector<cuvtest::Size> sizes = {{1920, 1080}, {3840, 2160}};
  std::vector<GstVideoFormat> formats = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12};
  std::string only_memory;
  std::vector<std::string> custom; /* --pipeline */
  std::vector<int> live;           /* --live */
  bool size_given = false, format_given = false, seconds_given = false;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp (argv[i], "--quick") == 0) {
      quick = true;
      sizes = {{1920, 1080}};
    } else if (std::strcmp (argv[i], "--size") == 0 && i + 1 < argc) {
      int w = 0, h = 0;
      if (std::sscanf (argv[++i], "%dx%d", &w, &h) != 2)
        return 2;
      sizes = {{w, h}};
      size_given = true;
    } else if (std::strcmp (argv[i], "--format") == 0 && i + 1 < argc) {
      const GstVideoFormat f = gst_video_format_from_string (argv[++i]);
      if (f == GST_VIDEO_FORMAT_UNKNOWN)
        return 2;
      formats = {f};
      format_given = true;
    } else if (std::strcmp (argv[i], "--memory") == 0 && i + 1 < argc) {
      only_memory = argv[++i];
    } else if (std::strcmp (argv[i], "--profile-host") == 0) {
      profile = true;
    } else if (std::strcmp (argv[i], "--pipelines") == 0 && i + 1 < argc) {
      counts.clear ();
      for (char *tok = std::strtok (argv[++i], ","); tok; tok = std::strtok (nullptr, ","))
        counts.push_back (std::atoi (tok));
    } else if (std::strcmp (argv[i], "--live") == 0 && i + 1 < argc) {
      for (char *tok = std::strtok (argv[++i], ","); tok; tok = std::strtok (nullptr, ","))
        if (std::atoi (tok) > 0)
          live.push_back (std::atoi (tok));
      if (live.empty ())
        return 2;
    } else if (std::strcmp (argv[i], "--no-many") == 0) {
      many = false;
    } else if (std::strcmp (argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else if (std::strcmp (argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof (argv[++i]);
      seconds_given = true;
      if (!(seconds > 0))
        return 2;
    } else if (std::strcmp (argv[i], "--kernels") == 0 && i + 1 < argc) {
      kernels_file = argv[++i];
    } else if (std::strcmp (argv[i], "--device") == 0 && i + 1 < argc) {
      devices.clear ();
      gchar **ids = g_strsplit (argv[++i], ",", -1);
      for (gchar **id = ids; *id; id++)
        devices.push_back (std::atoi (*id));
      g_strfreev (ids);
    } else if (std::strcmp (argv[i], "--idle-streams") == 0 && i + 1 < argc) {
      g_idle_streams = std::atoi (argv[++i]);
    } else if (std::strcmp (argv[i], "--ring") == 0 && i + 1 < argc) {
      g_ring = std::atoi (argv[++i]);
      if (g_ring < 1)
        return 2;
    } else if (std::strcmp (argv[i], "--pipeline") == 0 && i + 1 < argc) {
      custom.push_back (argv[++i]);
    } else if (std::strcmp (argv[i], "--count-calls") == 0) {
      if (!cuvbench::call_counts_enable (argv[0]))
        return 1;
      g_count_calls = true;
    } else {
      std::fprintf (stderr,
          "usage: %s [--quick] [--size WxH] [--format F] [--memory cuda|pinned|host|wrapped|fresh|upstream] [--only TEXT] [--no-many] "
          "[--pipelines N,N,...] [--profile-host] [--seconds S] [--kernels FILE] [--device N] [--ring N] [--idle-streams N] [--pipeline ELEMENTS]... "
          "[--live N,N,...] [--count-calls]\n",
          argv[0]);
      return 2;
    }
  }
  const bool gpu = cuvtest::have_gpu () && gst_cuda_load_library ();
  /* a quick run's frames a row: fewer on the CPU backend, so that it ends within 2 minutes on a
   * 2-core machine */
  const int quick_frames = gpu ? 60 : 20;
  std::vector<std::string> memories = {"host", "fresh"};
  std::map<std::string, double> kernels;
  if (gpu) {
    /* the source's CUDA pool needs GstCudaMemory's allocator before any element registers it */
    gst_cuda_memory_init_once ();
    for (int device : devices) {
      GstCudaContext *ctx = gst_cuda_context_new (device);
      if (!ctx) {
        std::fprintf (stderr, "no CUDA context on device %d\n", device);
        return 1;
      }
      g_contexts.push_back (gst_context_new_cuda_context (ctx));
      gst_object_unref (ctx);
    }
    memories.insert (memories.begin (), {"cuda", "pinned"});
    if (g_idle_streams > 0) {
      GstCudaContext *ctx = shared_context ();
      const bool pushed = gst_cuda_context_push (ctx);
      bool made = pushed;
      for (int i = 0; made && i < g_idle_streams; i++) {
        cudaStream_t st;
        made = cudaStreamCreateWithFlags (&st, cudaStreamNonBlocking) == cudaSuccess;
      }
      if (pushed)
        gst_cuda_context_pop (nullptr);
      gst_object_unref (ctx);
      if (!made) {
        std::fprintf (stderr, "cannot make %d idle streams\n", g_idle_streams);
        return 1;
      }
    }
    if (live.empty ())
      kernels = kernel_times (argv[0], kernels_file);
  }
  if (!live.empty ()) {
    /* 1920x1080 NV12 unless --size or --format says otherwise; 5 s unless --seconds does */
    const int rc = cuvbench::live_rows (custom.empty () ? kChainOf4 : custom.front (), live,
        size_given ? sizes : std::vector<cuvtest::Size>{{1920, 1080}},
        format_given ? formats.front () : GST_VIDEO_FORMAT_NV12, g_contexts, only_memory != "host",
        seconds_given ? seconds : 5.0);
    for (GstContext *c : g_contexts)
      gst_context_unref (c);
    return rc;
  }
  if (!only_memory.empty ()) {
    if (only_memory != "wrapped" && only_memory != "upstream" && std::find (memories.begin (), memories.end (), only_memory) == memories.end ()) {
      std::fprintf (stderr, "no source memory %s here\n", only_memory.c_str ());
      return 2;
    }
    memories = {only_memory};
  }
  std::string device_list;
  for (int d : devices)
    device_list += (device_list.empty () ? "" : ",") + std::to_string (d);
  std::printf ("bench_pipelines on %s, device %s%s; median of %d runs, frames timed at the sink\n",
      gpu ? "the GPU (CUDA backend)" : "no GPU (CPU backend, host memory only)", device_list.c_str (),
      devices.size () > 1 ? " (each row: one pipeline per device at once, their total)" : "", quick ? 1 : 3);
  /* the configuration rows' pipelines: one per device */
  const int per_row = gpu ? static_cast<int> (devices.size ()) : 1;

  const std::string sink = " ! fakesink name=sink";
  std::vector<Config> configs = {
    {"source alone", "fakesink name=sink", {}},
    {"cudasobel", "cudasobel" + sink, {"cudasobel mode=color"}},
    {"cudaenhance", "cudaenhance contrast=1.4 saturation=1.3" + sink, {"cudaenhance (camera-like content)"}},
    {"cudahistogram", "cudahistogram" + sink, {"cudahistogram (camera-like)"}},
    {"cudaheatmap", "cudaheatmap" + sink, {"cudaheatmap"}},
    {"cudanoisemap", "cudanoisemap" + sink, {"cudanoisemap mode=map"}},
    /* its kernels' rows are on the luma plane ("WxH luma"); for NV12 the luma is a plane copy,
     * cheaper than the RGBA row counted here */
    {"cudamotionest", "cudamotionest post-messages=false" + sink,
        {"cudamotionest luma from RGBA", "cudamotionest variable R=16"}},
    /* with its defaults: a message every frame, the interval's count of every vector */
    {"cudamotionest, defaults", "cudamotionest" + sink, {"cudamotionest luma from RGBA", "cudamotionest variable R=16"}},
    {"chain of 4", kChainOf4 + sink,
        {"cudasobel mode=color", "cudaenhance (camera-like content)", "cudahistogram (camera-like)", "cudaheatmap"}},
    {"chain of 4, max-frames-in-flight=0",
        "cudasobel max-frames-in-flight=0 ! cudaenhance contrast=1.4 max-frames-in-flight=0 ! "
        "cudahistogram max-frames-in-flight=0 ! cudaheatmap max-frames-in-flight=0" + sink,
        {"cudasobel mode=color", "cudaenhance (camera-like content)", "cudahistogram (camera-like)", "cudaheatmap"}},
    {"all six", "cudasobel ! cudaenhance contrast=1.4 ! cudahistogram ! cudaheatmap ! cudanoisemap ! cudamotionest" + sink, {}},
    /* an analyser after an element that writes its own buffers, against "cudahistogram" alone,
     * which reads the source's shared buffers (as after cudaupload ! imagefreeze or a tee) */
    {"cudasobel ! cudahistogram", "cudasobel ! cudahistogram" + sink,
        {"cudasobel mode=color", "cudahistogram (camera-like)"}},
    {"tee: cudasobel | cudahistogram", "tee name=t t. ! queue ! cudasobel" + sink + " t. ! queue ! cudahistogram ! fakesink",
        {"cudasobel mode=color", "cudahistogram (camera-like)"}},
  };
  /* the many-pipeline rows' chain: docs/performance.md's, or with --pipeline and --only many the first of those */
  Config many_chain = *std::find_if (configs.begin (), configs.end (), [] (const Config &c) { return c.name == "chain of 4"; });
  if (!custom.empty ()) {
    configs.clear ();
    for (const std::string &e : custom)
      configs.push_back ({e, e + sink, {}});
    many = only == "many";
    if (many)
      many_chain = configs.front ();
  }
  /* the host's waits for a stream in our elements (common/cuda/cuvsync.cpp), 0 where the plugin lacks the hook */
  auto waits_hook = reinterpret_cast<long (*) ()> (cuvtest::plugin_symbol ("cuv_host_waits"));
  auto host_waits = [waits_hook] { return waits_hook ? waits_hook () : 0L; };
  auto late_hook = reinterpret_cast<long (*) ()> (cuvtest::plugin_symbol ("cuv_in_flight_waits"));
  auto in_flight_waits = [late_hook] { return late_hook ? late_hook () : 0L; };
  if (profile)
    cuvbench::host_profile_start ();
  std::printf ("%-34s %-16s %-6s %10s %10s %10s %6s %7s %7s %6s\n", "configuration", "frame", "mem", "fps", "us/frame",
      "kernels us", "eff.", "waits", "late", "pcie");
  for (const cuvtest::Size &s : sizes) {
    for (GstVideoFormat f : formats) {
      GstVideoInfo info;
      gst_video_info_set_format (&info, f, s.w, s.h);
      GST_VIDEO_INFO_FPS_N (&info) = 30;
      GST_VIDEO_INFO_FPS_D (&info) = 1;
      char frame[32];
      std::snprintf (frame, sizeof frame, "%dx%d %s", s.w, s.h, gst_video_format_to_string (f));
      PcieFloor pcie;
      const bool have_pcie = gpu && measure_pcie (GST_VIDEO_INFO_SIZE (&info), &pcie);
      if (have_pcie)
        std::printf ("%-34s %-16s %-6s %10.0f %10.1f   (page-locked: to the device %.1f us, back %.1f us)\n",
            "PCIe floor, both ways at once", frame, "pinned", 1e6 / pcie.both, pcie.both, pcie.h2d, pcie.d2h);
      for (const std::string &memory : memories) {
        for (const Config &c : configs) {
          if (!only.empty () && c.name.find (only) == std::string::npos)
            continue;
          bool ok = true;
          /* a short run sets the length of the timed ones: about @seconds each */
          double fps = run_once (c, info, memory, quick && !gpu ? 10 : 30, per_row, &ok) / per_row;
          const int n = quick ? quick_frames : std::clamp (static_cast<int> (fps * seconds), 60, 5000);
          std::vector<double> r;
          const long waits_before = host_waits (), late_before = in_flight_waits ();
          for (int i = 0; ok && i < (quick ? 1 : 3); i++)
            r.push_back (run_once (c, info, memory, n, per_row, &ok));
          /* host waits a frame, over the timed runs */
          const double frames_run = static_cast<double> (n) * per_row * static_cast<double> (r.size ());
          const double waits = static_cast<double> (host_waits () - waits_before) / frames_run;
          const double late = static_cast<double> (in_flight_waits () - late_before) / frames_run;
          if (!ok) {
            std::printf ("%-34s %-16s %-6s %10s\n", c.name.c_str (), frame, memory.c_str (), "failed");
            continue;
          }
          fps = r.size () == 3 ? median3 (r[0], r[1], r[2]) : r[0];
          double k = 0;
          bool have_k = !c.kernels.empty ();
          char kframe[32];
          std::snprintf (kframe, sizeof kframe, "%dx%d %s", s.w, s.h, f == GST_VIDEO_FORMAT_NV12 ? "NV12" : "RGBA");
          char lframe[32];
          std::snprintf (lframe, sizeof lframe, "%dx%d luma", s.w, s.h);
          for (const std::string &name : c.kernels) {
            auto it = kernels.find (name + "|" + kframe);
            if (it == kernels.end ())
              it = kernels.find (name + "|" + lframe);
            have_k &= it != kernels.end ();
            if (it != kernels.end ())
              k += it->second;
          }
          const double us = 1e6 / fps;
          char pcie_share[16] = "-";
          if (have_pcie && memory != "cuda")
            std::snprintf (pcie_share, sizeof pcie_share, "%.2f", pcie.both / us);
          if (have_k)
            std::printf ("%-34s %-16s %-6s %10.0f %10.1f %10.1f %6.2f %7.2f %7.2f %6s\n", c.name.c_str (), frame,
                memory.c_str (), fps, us, k, k / us, waits, late, pcie_share);
          else
            std::printf ("%-34s %-16s %-6s %10.0f %10.1f %10s %6s %7.2f %7.2f %6s\n", c.name.c_str (), frame,
                memory.c_str (), fps, us, "-", "-", waits, late, pcie_share);
          std::fflush (stdout);
        }
      }
    }
  }
  /* many pipelines in one process: the worst of several runs, as pipelines are added */
  if (many && (only.empty () || std::string ("many").find (only) != std::string::npos)) {
    const cuvtest::Size s = sizes.front ().w >= 1920 ? cuvtest::Size{1920, 1080} : sizes.front ();
    GstVideoInfo info;
    gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, s.w, s.h);
    GST_VIDEO_INFO_FPS_N (&info) = 30;
    GST_VIDEO_INFO_FPS_D (&info) = 1;
    const Config &chain = many_chain;
    for (int p : counts) {
      if (quick && p > (gpu ? 16 : 4))
        break;
      double worst = 0;
      Phases phases, slowest;
      bool ok = true;
      std::string each; /* every run's fps, to see a collapse */
      /* a short run, not counted, sets the timed runs' length: at least 3000 frames a pipeline,
       * and a few seconds a run (docs/performance.md), so that a burst of a few ms weighs little in it */
      int n = quick ? quick_frames : 60;
      if (!quick) {
        const double fps = run_once (chain, info, memories.front (), 300, p, &ok);
        n = std::clamp (static_cast<int> (fps * std::max (seconds, kManySeconds) / p), 3000, 30000);
      }
      for (int i = 0; ok && i < (quick ? 1 : 5); i++) {
        double fps = run_once (chain, info, memories.front (), n, p, &ok, &phases);
        worst = i == 0 ? fps : std::min (worst, fps);
        slowest.make = std::max (slowest.make, phases.make);
        slowest.start = std::max (slowest.start, phases.start);
        slowest.stop = std::max (slowest.stop, phases.stop);
        each += (each.empty () ? "" : " ") + std::to_string (static_cast<long> (fps));
      }
      char frame[32];
      const std::string name = std::to_string (p) + " x " + chain.name + " (worst of " + std::to_string (quick ? 1 : 5) + ")";
      std::snprintf (frame, sizeof frame, "%dx%d NV12", s.w, s.h);
      if (ok)
        std::printf ("%-34s %-16s %-6s %10.0f %10.1f %10s %6s   (runs: %s; at worst %.0f ms to make them, "
            "%.0f to start, %.0f to stop; %d frames a pipeline)\n",
            name.c_str (), frame, memories.front ().c_str (), worst, 1e6 / worst, "-", "-", each.c_str (), slowest.make, slowest.start,
            slowest.stop, n);
      else
        std::printf ("%-34s %-16s %-6s %10s\n", name.c_str (), frame, memories.front ().c_str (), "failed");
      std::fflush (stdout);
    }
  }
  if (profile)
    cuvbench::host_profile_report (stdout, 40, g_getenv ("CUV_PROFILE_STACKS"));
  for (GstContext *c : g_contexts)
    gst_context_unref (c);
  return 0;
}
