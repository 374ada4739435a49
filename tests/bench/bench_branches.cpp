/* gst-cudavision: many sources in one pipeline against as many pipelines (docs/performance.md,
 * "One pipeline, many sources"). Each branch is what a gst-launch-1.0 user writes for a camera:
 *   videotestsrc num-buffers=1 ! video/x-raw,format=NV12,width=W,height=H ! cudaupload !
 *     imagefreeze num-buffers=F ! ELEMENTS ! fakesink sync=false
 * (without a GPU, no cudaupload and the elements on the CPU backend). For each configuration and
 * each N, N branches in one GstPipeline and N GstPipelines of one branch run one after the other,
 * three times each, no context set by hand; a row gives the best of the three: frames a second
 * over all branches from PLAYING to the last EOS (start and end included, as a user's run takes
 * them), frames a second while the middle half of all frames reached the sinks (streaming alone),
 * element messages a second, the time from PLAYING to the first frame at a sink and until every sink
 * had its first (a pipeline shows no frame before all its branches prerolled), and the peak of the
 * process's threads (with what it had before the run); the last columns are one pipeline's figures over N pipelines'. The last configuration is upstream's videoanalyse message=true in the
 * same shape (I420 in system memory, at 320x240: it measures each frame on the CPU, and at 1080p
 * its pixels, not its messages, would set its pace), for the messages a second that ours are read
 * against.
 *   bench_branches [--branches N,N,...] [--frames F] [--size WxH] [--only TEXT] [--reader watch|sync]
 * --branches: default 16,64,128,256; --frames: each branch's, default 1000; --size: default
 * 1920x1080 (320x240 without a GPU); --only: the configurations whose name contains TEXT; --reader:
 * how the buses are read, `watch` (the default: a bus watch a pipeline on a GLib main loop in the
 * main thread, as gst-launch-1.0 and applications read them, every message through the bus's queue)
 * or `sync` (a sync handler that counts and drops the element messages on the posting thread).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/gst.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/cuvtally.h"
#include "tests/common/cuvtest.h"

namespace {

using Clock = std::chrono::steady_clock;

using cuvtest::Tally;
using cuvtest::threads_now;

struct Result {
  bool ok = false;
  double seconds = 0;     /* from PLAYING to the last EOS: start, frames and end */
  double mid_fps = 0;     /* frames a second at the sinks while the middle half of all frames arrived */
  double start_ms = 0;    /* from PLAYING to the first frame at a sink */
  double all_started_ms = 0; /* from PLAYING until every sink had its first frame */
  long messages = 0;
  int threads_before = 0, peak_threads = 0;
};

/* The sinks' frames: the times the middle half of all of them began and ended. */
struct Arrivals {
  long expected = 0;
  std::atomic<long> count{0};
  std::atomic<long long> first_ns{0}, quarter_ns{0}, three_quarters_ns{0};
  long sinks = 0;
  std::atomic<long> sinks_started{0};
  std::atomic<long long> all_started_ns{0};
};

void
on_handoff (GstElement *sink, GstBuffer *, GstPad *, gpointer data)
{
  auto *a = static_cast<Arrivals *> (data);
  /* a sink's handoffs come from its own streaming thread, one at a time */
  if (!g_object_get_data (G_OBJECT (sink), "cuv-started")) {
    g_object_set_data (G_OBJECT (sink), "cuv-started", GINT_TO_POINTER (1));
    if (++a->sinks_started == a->sinks)
      a->all_started_ns = std::chrono::duration_cast<std::chrono::nanoseconds> (Clock::now ().time_since_epoch ()).count ();
  }
  const long n = ++a->count;
  if (n == 1 || n == a->expected / 4 || n == 3 * a->expected / 4) {
    const long long now = std::chrono::duration_cast<std::chrono::nanoseconds> (Clock::now ().time_since_epoch ()).count ();
    (n == 1 ? a->first_ns : n == a->expected / 4 ? a->quarter_ns : a->three_quarters_ns) = now;
  }
}

void
watch_sinks (GstElement *pipe, Arrivals *a)
{
  GstIterator *it = gst_bin_iterate_sinks (GST_BIN (pipe));
  GValue v = G_VALUE_INIT;
  while (gst_iterator_next (it, &v) == GST_ITERATOR_OK) {
    GstElement *sink = GST_ELEMENT (g_value_get_object (&v));
    g_object_set (sink, "signal-handoffs", TRUE, nullptr);
    g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), a);
    a->sinks++;
    g_value_reset (&v);
  }
  g_value_unset (&v);
  gst_iterator_free (it);
}

bool g_watch = true;

/* What the bus watches of one play () count, on the main loop. */
struct Watched {
  GMainLoop *loop = nullptr;
  size_t pipelines = 0;
  size_t eos = 0;
  int errors = 0;
  std::string first_error;
  long messages = 0;
};

gboolean
on_bus_message (GstBus *, GstMessage *m, gpointer data)
{
  auto *w = static_cast<Watched *> (data);
  switch (GST_MESSAGE_TYPE (m)) {
    case GST_MESSAGE_ELEMENT:
      w->messages++;
      break;
    case GST_MESSAGE_EOS:
      w->eos++;
      break;
    case GST_MESSAGE_ERROR:
      if (w->errors++ == 0) {
        GError *err = nullptr;
        gst_message_parse_error (m, &err, nullptr);
        w->first_error = err ? err->message : "?";
        g_clear_error (&err);
      }
      break;
    default:
      break;
  }
  if (w->errors > 0 || w->eos == w->pipelines)
    g_main_loop_quit (w->loop);
  return G_SOURCE_CONTINUE;
}

/* Plays @launches (one pipeline each) until all reached EOS; @frames: all their sinks'. */
Result
play (const std::vector<std::string> &launches, long frames)
{
  Result r;
  Tally tally;
  Arrivals arrivals;
  arrivals.expected = frames;
  std::vector<GstElement *> pipes;
  for (const std::string &l : launches) {
    GError *err = nullptr;
    GstElement *p = gst_parse_launch (l.c_str (), &err);
    if (!p || err) {
      std::fprintf (stderr, "cannot make %s: %s\n", l.substr (0, 300).c_str (), err ? err->message : "?");
      g_clear_error (&err);
      for (GstElement *q : pipes)
        gst_object_unref (q);
      return r;
    }
    if (!g_watch)
      tally.watch (p);
    watch_sinks (p, &arrivals);
    pipes.push_back (p);
  }
  cuvtest::ThreadPeak threads (std::chrono::milliseconds (5));
  r.threads_before = threads.at_start ();
  const Clock::time_point start = Clock::now ();
  Watched w;
  w.loop = g_main_loop_new (nullptr, FALSE);
  w.pipelines = pipes.size ();
  std::vector<GstBus *> buses;
  if (g_watch) {
    for (GstElement *p : pipes) {
      buses.push_back (gst_element_get_bus (p));
      gst_bus_add_watch (buses.back (), on_bus_message, &w);
    }
  }
  for (GstElement *p : pipes)
    gst_element_set_state (p, GST_STATE_PLAYING);
  if (g_watch) {
    cuvtest::run_loop_for (w.loop, 300);
    r.ok = w.errors == 0 && w.eos == pipes.size ();
  } else {
    r.ok = tally.wait_all (pipes.size (), std::chrono::seconds (300));
  }
  r.seconds = std::chrono::duration<double> (Clock::now () - start).count ();
  r.peak_threads = threads.stop ();
  const int eos = g_watch ? static_cast<int> (w.eos) : tally.eos;
  const std::string error = g_watch ? w.first_error : tally.first_error;
  if (!r.ok)
    std::fprintf (stderr, "%d of %zu pipelines reached EOS in 300 s%s%s\n", eos, pipes.size (),
        error.empty () ? "" : "; an error: ", error.c_str ());
  for (GstBus *bus : buses) {
    gst_bus_remove_watch (bus);
    gst_object_unref (bus);
  }
  g_main_loop_unref (w.loop);
  cuvtest::drop_pipelines (pipes);
  r.messages = g_watch ? w.messages : tally.messages.load ();
  const long long start_ns = std::chrono::duration_cast<std::chrono::nanoseconds> (start.time_since_epoch ()).count ();
  r.start_ms = (arrivals.first_ns - start_ns) * 1e-6;
  r.all_started_ms = (arrivals.all_started_ns - start_ns) * 1e-6;
  if (arrivals.three_quarters_ns > arrivals.quarter_ns)
    r.mid_fps = (frames / 2) / ((arrivals.three_quarters_ns - arrivals.quarter_ns) * 1e-9);
  return r;
}

struct Config {
  std::string name;
  std::string elements;
  bool system_memory; /* upstream's CPU element: its frames stay in system memory */
};

std::string
branch (const Config &c, bool gpu, int w, int h, int frames)
{
  if (c.system_memory) {
    w = 320;
    h = 240;
  }
  return "videotestsrc num-buffers=1 pattern=ball ! video/x-raw,format=" + std::string (c.system_memory ? "I420" : "NV12") +
      ",width=" + std::to_string (w) + ",height=" + std::to_string (h) + ",framerate=30/1 ! " +
      (gpu && !c.system_memory ? "cudaupload ! " : "") + "imagefreeze num-buffers=" + std::to_string (frames) + " ! " +
      c.elements + " ! fakesink sync=false";
}

std::vector<int>
parse_list (const char *s)
{
  std::vector<int> v;
  std::stringstream ss (s);
  std::string item;
  while (std::getline (ss, item, ','))
    v.push_back (std::atoi (item.c_str ()));
  return v;
}

}  // namespace

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  std::vector<int> counts = {16, 64, 128, 256};
  int frames = 1000;
  int w = 0, h = 0;
  std::string only;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp (argv[i], "--branches") == 0 && i + 1 < argc) {
      counts = parse_list (argv[++i]);
    } else if (std::strcmp (argv[i], "--frames") == 0 && i + 1 < argc) {
      frames = std::atoi (argv[++i]);
    } else if (std::strcmp (argv[i], "--size") == 0 && i + 1 < argc) {
      if (std::sscanf (argv[++i], "%dx%d", &w, &h) != 2) {
        std::fprintf (stderr, "--size WxH\n");
        return 2;
      }
    } else if (std::strcmp (argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else if (std::strcmp (argv[i], "--reader") == 0 && i + 1 < argc) {
      const std::string reader = argv[++i];
      if (reader != "watch" && reader != "sync") {
        std::fprintf (stderr, "--reader watch|sync\n");
        return 2;
      }
      g_watch = reader == "watch";
    } else {
      std::fprintf (stderr, "usage: %s [--branches N,N,...] [--frames F] [--size WxH] [--only TEXT] [--reader watch|sync]\n", argv[0]);
      return 2;
    }
  }
  const bool gpu = cuvtest::have_gpu ();
  if (w == 0) {
    w = gpu ? 1920 : 320;
    h = gpu ? 1080 : 240;
  }
  const std::string backend = gpu ? "" : " backend=cpu";
  const std::vector<Config> configs = {
    {"cudahistogram", "cudahistogram" + backend, false},
    {"cudahistogram post-messages=false", "cudahistogram post-messages=false" + backend, false},
    {"chain of 4", "cudasobel" + backend + " ! cudaenhance" + backend + " ! cudahistogram" + backend + " ! cudaheatmap" + backend,
        false},
    {"videoanalyse message=true (320x240)", "videoanalyse message=true", true},
  };
  std::printf ("%dx%d, %d frames a branch, %s, buses read by %s; the best of 3 runs each; threads: the peak (before the run)\n",
      w, h, frames, gpu ? "CUDA memory from cudaupload" : "the CPU backend",
      g_watch ? "a watch on a main loop" : "a sync handler");
  std::printf ("%-34s %5s | %11s %11s %11s %8s %8s %13s | %11s %11s %11s %8s %8s %13s | %6s %6s\n", "configuration", "N",
      "one: fps", "mid fps", "messages/s", "start ms", "all ms", "threads", "N: fps", "mid fps", "messages/s", "start ms",
      "all ms", "threads", "one/N", "mid");
  int rc = 0;
  for (const Config &c : configs) {
    if (!only.empty () && c.name.find (only) == std::string::npos)
      continue;
    for (int n : counts) {
      std::string one;
      std::vector<std::string> separate;
      for (int i = 0; i < n; i++) {
        one += branch (c, gpu, w, h, frames) + " ";
        separate.push_back (branch (c, gpu, w, h, frames));
      }
      Result best_one, best_sep;
      double mid_one = 0, mid_sep = 0;
      bool ok = true;
      const long total = static_cast<long> (n) * frames;
      for (int rep = 0; ok && rep < 3; rep++) {
        const Result a = play ({one}, total);
        const Result b = play (separate, total);
        ok = a.ok && b.ok;
        if (rep == 0 || a.seconds < best_one.seconds)
          best_one = a;
        if (rep == 0 || b.seconds < best_sep.seconds)
          best_sep = b;
        mid_one = std::max (mid_one, a.mid_fps);
        mid_sep = std::max (mid_sep, b.mid_fps);
      }
      if (!ok) {
        std::printf ("%-34s %5d | failed\n", c.name.c_str (), n);
        rc = 1;
        continue;
      }
      char one_threads[32], sep_threads[32];
      std::snprintf (one_threads, sizeof one_threads, "%d (%d)", best_one.peak_threads, best_one.threads_before);
      std::snprintf (sep_threads, sizeof sep_threads, "%d (%d)", best_sep.peak_threads, best_sep.threads_before);
      std::printf ("%-34s %5d | %11.0f %11.0f %11.0f %8.0f %8.0f %13s | %11.0f %11.0f %11.0f %8.0f %8.0f %13s | %6.2f %6.2f\n",
          c.name.c_str (), n, total / best_one.seconds, mid_one, best_one.messages / best_one.seconds, best_one.start_ms,
          best_one.all_started_ms, one_threads, total / best_sep.seconds, mid_sep, best_sep.messages / best_sep.seconds,
          best_sep.start_ms, best_sep.all_started_ms, sep_threads,
          best_sep.seconds / best_one.seconds, mid_one / mid_sep);
      std::fflush (stdout);
    }
  }
  return rc;
}
