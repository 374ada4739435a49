/* One pipeline of many analyser branches, its bus read as users read it (docs/design.md, "Messages
 * on one bus"): a bus watch on a GLib main loop (gst-launch-1.0, most applications, Python's), a
 * gst_bus_timed_pop_filtered () loop, and a sync handler; gst-launch-1.0 itself is
 * tests/examples/test-launch-branches.sh. Every run counts every element message and the EOS, with
 * a limit of its own: a run that hangs fails (GStreamer's bus queue spins while earlier writers
 * finish, so posts that race on few cores can all but stop a pipeline). Run many times, as a hang
 * in one run of twenty is a hang.
 * - CPU backend (this program without arguments): CUV_BUS_BRANCHES (128) branches of
 *   `videotestsrc num-buffers=CUV_BUS_FRAMES (300) ! NV12 64x48 ! cudahistogram ! fakesink`,
 *   CUV_BUS_RUNS (20) runs of each reader; 48 chains of four (`cudasobel mode=luma ! cudaenhance !
 *   cudahistogram ! cudaheatmap`) 6 runs; and a sync handler that stalls one pipeline while another
 *   of the same process finishes (a slow handler holds only its own pipeline).
 * - CUDA (`--gpu`, skipped without a GPU): 64, 128 and 256 branches of cudahistogram on 1080p NV12 in
 *   CUDA memory (`cudaupload ! imagefreeze num-buffers=1000`), and 256 chains of four of 200 frames,
 *   5 runs of each under a bus watch, each within CUV_BUS_LIMIT seconds (for the branches 10 per 64
 *   of them: alone on an H200, 256 x 1000 take 2.7 s, and beside the rest of the suite at gpu-tests
 *   -j 8 more than 10 s, still delivering 13,000 messages a second; a hang delivers none).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/check/cuvcheck.h"
#include "tests/common/cuvtally.h"

namespace {

int
env_int (const char *name, int fallback)
{
  const char *v = g_getenv (name);
  return v ? std::max (1, std::atoi (v)) : fallback;
}

enum class Reader { kWatch, kTimedPop, kSyncHandler };

const char *
reader_name (Reader r)
{
  switch (r) {
    case Reader::kWatch:
      return "a bus watch on a main loop";
    case Reader::kTimedPop:
      return "a gst_bus_timed_pop_filtered loop";
    case Reader::kSyncHandler:
      return "a sync handler";
  }
  return "?";
}

/* What a reader saw of one run. */
struct Seen {
  long messages = 0; /* element messages of our analysers */
  bool eos = false;
  std::string error;
  double seconds = 0;
};

bool
ours (GstMessage *m)
{
  const GstStructure *s = gst_message_get_structure (m);
  return GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT && s && g_str_has_prefix (gst_structure_get_name (s), "cuda");
}

/* Notes @m in @seen; TRUE when the run is over (EOS or an error). */
bool
note (Seen &seen, GstMessage *m)
{
  if (ours (m))
    seen.messages++;
  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS)
    seen.eos = true;
  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
    GError *err = nullptr;
    gst_message_parse_error (m, &err, nullptr);
    seen.error = err ? err->message : "?";
    g_clear_error (&err);
  }
  return seen.eos || !seen.error.empty ();
}

struct WatchState {
  Seen *seen;
  GMainLoop *loop;
};

gboolean
on_bus_message (GstBus *, GstMessage *m, gpointer data)
{
  auto *w = static_cast<WatchState *> (data);
  if (note (*w->seen, m))
    g_main_loop_quit (w->loop);
  return G_SOURCE_CONTINUE;
}

/* As gst-launch-1.0 and a GLib application read the bus: a watch on the default main context. */
void
read_with_watch (GstElement *pipe, GstBus *bus, Seen &seen, int limit_s)
{
  GMainLoop *loop = g_main_loop_new (nullptr, FALSE);
  WatchState w{&seen, loop};
  gst_bus_add_watch (bus, on_bus_message, &w);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  cuvtest::run_loop_for (loop, limit_s);
  gst_bus_remove_watch (bus);
  g_main_loop_unref (loop);
}

void
read_with_timed_pop (GstElement *pipe, GstBus *bus, Seen &seen, int limit_s)
{
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  const auto deadline = std::chrono::steady_clock::now () + std::chrono::seconds (limit_s);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds> (deadline - std::chrono::steady_clock::now ());
    if (left.count () <= 0)
      return;
    GstMessage *m = gst_bus_timed_pop_filtered (bus, left.count (),
        static_cast<GstMessageType> (GST_MESSAGE_ELEMENT | GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    if (!m)
      return;
    const bool over = note (seen, m);
    gst_message_unref (m);
    if (over)
      return;
  }
}

/* cuvtally.h's shape: element messages counted and dropped on the posting thread. */
void
read_with_sync_handler (GstElement *pipe, Seen &seen, int limit_s)
{
  cuvtest::Tally tally;
  tally.watch (pipe);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  const bool ended = tally.wait_all (1, std::chrono::seconds (limit_s));
  GstBus *bus = gst_element_get_bus (pipe);
  gst_bus_set_sync_handler (bus, nullptr, nullptr, nullptr);
  gst_object_unref (bus);
  seen.messages = tally.messages;
  seen.eos = ended;
  seen.error = tally.first_error;
}

/* One run of @launch (one pipeline) read by @reader; fails on a hang, an error or a lost message. */
Seen
run_once (const std::string &launch, Reader reader, long expected, int limit_s, const std::string &what)
{
  GstElement *pipe = cuvcheck::new_pipeline (launch);
  fail_unless (pipe != nullptr, "cannot make %s", launch.substr (0, 200).c_str ());
  GstBus *bus = gst_element_get_bus (pipe);
  Seen seen;
  const auto start = std::chrono::steady_clock::now ();
  if (reader == Reader::kWatch)
    read_with_watch (pipe, bus, seen, limit_s);
  else if (reader == Reader::kTimedPop)
    read_with_timed_pop (pipe, bus, seen, limit_s);
  else
    read_with_sync_handler (pipe, seen, limit_s);
  seen.seconds = std::chrono::duration<double> (std::chrono::steady_clock::now () - start).count ();
  /* said before the pipeline stops: a pipeline that hangs may not stop either */
  if (!seen.eos || !seen.error.empty ()) {
    std::printf ("%s, %s: no EOS within %d s (%ld of %ld messages)%s%s\n", what.c_str (), reader_name (reader),
        limit_s, seen.messages, expected, seen.error.empty () ? "" : ", an error: ", seen.error.c_str ());
    std::fflush (stdout);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  fail_unless (seen.error.empty (), "%s: an error: %s", what.c_str (), seen.error.c_str ());
  fail_unless (seen.eos, "%s, %s: no EOS within %d s", what.c_str (), reader_name (reader), limit_s);
  fail_unless_equals_int (seen.messages, expected);
  return seen;
}

/* @runs runs of @launch under @reader; prints the slowest and the median. */
void
run_many (const std::string &launch, Reader reader, long expected, int runs, int limit_s, const std::string &what)
{
  std::vector<double> took;
  for (int i = 0; i < runs; i++)
    took.push_back (run_once (launch, reader, expected, limit_s, what + ", run " + std::to_string (i + 1)).seconds);
  std::sort (took.begin (), took.end ());
  std::printf ("%s, %s: %d of %d runs ended with every message (%ld a run); median %.2f s, slowest %.2f s\n",
      what.c_str (), reader_name (reader), runs, runs, expected, took[took.size () / 2], took.back ());
  std::fflush (stdout);
}

/* @n branches of @chain, each from a source of its own, in one pipeline. */
std::string
branches (int n, const std::string &source, const std::string &chain)
{
  std::string launch;
  for (int i = 0; i < n; i++)
    launch += source + " ! " + chain + " ! fakesink sync=false ";
  return launch;
}

std::string
cpu_source (int frames)
{
  return "videotestsrc num-buffers=" + std::to_string (frames) + " ! video/x-raw,format=NV12,width=64,height=48";
}

const char *const kChainOfFour = "cudasobel mode=luma backend=@ ! cudaenhance contrast=1.2 backend=@ ! "
                                 "cudahistogram backend=@ ! cudaheatmap backend=@";

std::string
chain_of_four (const std::string &backend)
{
  std::string chain = kChainOfFour;
  for (size_t at; (at = chain.find ('@')) != std::string::npos;)
    chain.replace (at, 1, backend);
  return chain;
}

}  // namespace

GST_START_TEST (test_many_branches_every_reader)
{
  const int n = env_int ("CUV_BUS_BRANCHES", 128), frames = env_int ("CUV_BUS_FRAMES", 300);
  const int runs = env_int ("CUV_BUS_RUNS", 20), limit = env_int ("CUV_BUS_LIMIT", 30);
  const std::string launch = branches (n, cpu_source (frames), "cudahistogram backend=cpu");
  for (Reader r : {Reader::kWatch, Reader::kTimedPop, Reader::kSyncHandler})
    run_many (launch, r, static_cast<long> (n) * frames, runs, limit,
        std::to_string (n) + " cudahistogram branches x " + std::to_string (frames) + " frames");
}
GST_END_TEST;

/* cudahistogram posts a message a frame, the other three of the chain none but cudaheatmap's */
GST_START_TEST (test_chains_of_four_under_a_watch)
{
  const int n = env_int ("CUV_BUS_CHAINS", 48), frames = env_int ("CUV_BUS_FRAMES", 300);
  const int limit = env_int ("CUV_BUS_LIMIT", 30);
  run_many (branches (n, cpu_source (frames), chain_of_four ("cpu")), Reader::kWatch, 2L * n * frames,
      env_int ("CUV_BUS_CHAIN_RUNS", 6), limit, std::to_string (n) + " chains of four x " + std::to_string (frames) + " frames");
}
GST_END_TEST;

namespace {

/* Holds each of a pipeline's element messages on its posting thread until released. */
struct Gate {
  std::mutex lock;
  std::condition_variable cond;
  bool open = false;
  std::atomic<long> held{0};
};

GstBusSyncReply
hold_message (GstBus *, GstMessage *m, gpointer data)
{
  auto *g = static_cast<Gate *> (data);
  if (ours (m)) {
    g->held++;
    std::unique_lock<std::mutex> lk (g->lock);
    g->cond.wait_for (lk, std::chrono::seconds (60), [g] { return g->open; });
  }
  return GST_BUS_PASS;
}

}  // namespace

/* A sync handler that stalls holds only its own pipeline: while pipeline A's handler holds its
 * first message, pipeline B of the same process, read by a bus watch, ends with every message; A
 * then ends too, with every message. */
GST_START_TEST (test_slow_sync_handler_holds_only_its_pipeline)
{
  constexpr int kBranches = 16, kFrames = 100;
  const std::string launch = branches (kBranches, cpu_source (kFrames), "cudahistogram backend=cpu");
  GstElement *a = cuvcheck::new_pipeline (launch);
  fail_unless (a != nullptr);
  Gate gate;
  GstBus *bus_a = gst_element_get_bus (a);
  gst_bus_set_sync_handler (bus_a, hold_message, &gate, nullptr);
  fail_unless (gst_element_set_state (a, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  for (int i = 0; i < 500 && gate.held == 0; i++)
    g_usleep (10000);
  fail_unless (gate.held > 0, "pipeline A posted nothing in 5 s");
  run_once (launch, Reader::kWatch, kBranches * kFrames, 30, "pipeline B while A's sync handler stalls");
  fail_unless_equals_int (gate.held.load (), 1);
  {
    std::lock_guard<std::mutex> lk (gate.lock);
    gate.open = true;
  }
  gate.cond.notify_all ();
  gst_bus_set_sync_handler (bus_a, nullptr, nullptr, nullptr);
  Seen seen;
  for (GstMessage *m; !seen.eos && seen.error.empty () &&
       (m = gst_bus_timed_pop_filtered (bus_a, 30 * GST_SECOND,
            static_cast<GstMessageType> (GST_MESSAGE_ELEMENT | GST_MESSAGE_EOS | GST_MESSAGE_ERROR)));) {
    note (seen, m);
    gst_message_unref (m);
  }
  gst_element_set_state (a, GST_STATE_NULL);
  gst_object_unref (bus_a);
  gst_object_unref (a);
  fail_unless (seen.eos && seen.error.empty (), "pipeline A: no EOS after its handler let go (%s)", seen.error.c_str ());
  /* the held message too went on into the queue when its handler let go */
  fail_unless_equals_int (seen.messages, kBranches * kFrames);
}
GST_END_TEST;

/* CUDA memory, as the issue's users run it: one upload a branch, then the same frame 1000 times. */
GST_START_TEST (test_gpu_branches_under_a_watch)
{
  const int runs = env_int ("CUV_BUS_RUNS", 5);
  const int frames = env_int ("CUV_BUS_FRAMES", 1000);
  const std::string source = "videotestsrc num-buffers=1 ! video/x-raw,format=NV12,width=1920,height=1080 ! "
                             "cudaupload ! imagefreeze num-buffers=" + std::to_string (frames);
  for (int n : {64, 128, 256})
    run_many (branches (n, source, "cudahistogram"), Reader::kWatch, static_cast<long> (n) * frames, runs,
        env_int ("CUV_BUS_LIMIT", 10 * n / 64),
        std::to_string (n) + " cudahistogram branches x " + std::to_string (frames) + " frames of 1080p in CUDA memory");
}
GST_END_TEST;

GST_START_TEST (test_gpu_chains_of_four_under_a_watch)
{
  constexpr int kChains = 256, kFrames = 200;
  const std::string source = "videotestsrc num-buffers=" + std::to_string (kFrames) +
      " ! video/x-raw,format=NV12,width=320,height=240 ! cudaupload";
  run_many (branches (kChains, source, chain_of_four ("cuda")), Reader::kWatch, 2L * kChains * kFrames,
      env_int ("CUV_BUS_RUNS", 5), env_int ("CUV_BUS_LIMIT", 60), "256 chains of four x 200 frames in CUDA memory");
}
GST_END_TEST;

static Suite *
bus_readers_suite (void)
{
  Suite *s = suite_create ("bus_readers");
  TCase *tc = tcase_create ("cpu");
  tcase_set_timeout (tc, 1200);
  suite_add_tcase (s, tc);
  tcase_add_checked_fixture (tc, nullptr, cuvcheck::stop_pipelines_left_playing);
  tcase_add_test (tc, test_many_branches_every_reader);
  tcase_add_test (tc, test_chains_of_four_under_a_watch);
  tcase_add_test (tc, test_slow_sync_handler_holds_only_its_pipeline);
  return s;
}

static Suite *
bus_readers_gpu_suite (void)
{
  Suite *s = suite_create ("bus_readers_gpu");
  TCase *tc = tcase_create ("cuda");
  tcase_set_timeout (tc, 1200);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_gpu_branches_under_a_watch);
  tcase_add_test (tc, test_gpu_chains_of_four_under_a_watch);
  return s;
}

int
main (int argc, char **argv)
{
  /* ours, not gst_check_init's */
  if (argc > 1 && std::strcmp (argv[1], "--gpu") == 0) {
    argv[1] = argv[0];
    return cuvcheck::run_gpu_suite (argc - 1, argv + 1, bus_readers_gpu_suite, "bus_readers_gpu", __FILE__);
  }
  gst_check_init (&argc, &argv);
  return cuvcheck::run_suite (bus_readers_suite (), "bus_readers", __FILE__);
}
