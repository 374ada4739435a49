/* bench_pipelines --live (tests/bench/live.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tests/bench/live.h"

#include <gst/cuda/gstcudamemory.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include "runner/openfiles.h"

namespace cuvbench {
namespace {

/* One pipeline: its frames at the sink, and the ages of those in the timed window. */
struct LivePipe {
  GstElement *pipe = nullptr;
  GstElement *sink = nullptr; /* the pipeline's */
  const std::atomic<bool> *recording = nullptr;
  std::atomic<long> frames{0};
  std::atomic<bool> failed{false};
  std::mutex lock; /* the segment, the ages and the error text */
  GstSegment segment;
  bool have_segment = false;
  std::vector<GstClockTime> latencies; /* when the sink takes the frame, after its wait */
  std::vector<GstClockTime> arrivals;  /* when the frame reaches the sink, before its wait */
  std::string error;
};

/* Records the age of @buf at the sink now (the clock's running time less the frame's capture
 * time, its timestamp as running time) into @ages, while the window is timed. */
void record_age (LivePipe *lp, GstPad *pad, GstBuffer *buf, std::vector<GstClockTime> LivePipe::*ages)
{
  GstClock *clock = gst_element_get_clock (lp->sink);
  if (!clock)
    return;
  const GstClockTime now = gst_clock_get_time (clock) - gst_element_get_base_time (lp->sink);
  gst_object_unref (clock);
  std::lock_guard<std::mutex> lk (lp->lock);
  if (!lp->have_segment) {
    GstEvent *ev = gst_pad_get_sticky_event (pad, GST_EVENT_SEGMENT, 0);
    if (ev) {
      const GstSegment *s = nullptr;
      gst_event_parse_segment (ev, &s);
      gst_segment_copy_into (s, &lp->segment);
      lp->have_segment = true;
      gst_event_unref (ev);
    }
  }
  if (!lp->have_segment || !lp->recording->load ())
    return;
  const guint64 captured = gst_segment_to_running_time (&lp->segment, GST_FORMAT_TIME, GST_BUFFER_PTS (buf));
  if (GST_CLOCK_TIME_IS_VALID (captured))
    (lp->*ages).push_back (now > captured ? now - captured : 0);
}

/* At the sink, after its wait for the clock: the frame's latency. */
void on_live_handoff (GstElement *, GstBuffer *buf, GstPad *pad, gpointer data)
{
  auto *lp = static_cast<LivePipe *> (data);
  lp->frames++;
  record_age (lp, pad, buf, &LivePipe::latencies);
}

/* On the sink's pad, before its wait: how long the source and the elements took. */
GstPadProbeReturn on_live_arrival (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  record_age (static_cast<LivePipe *> (data), pad, GST_PAD_PROBE_INFO_BUFFER (info), &LivePipe::arrivals);
  return GST_PAD_PROBE_OK;
}

/* Every message is dropped where it is posted, as an application's bus watch would take it: the
 * analysers' messages are made and posted, and none pile up. An error is kept. */
GstBusSyncReply on_live_message (GstBus *, GstMessage *m, gpointer data)
{
  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
    auto *lp = static_cast<LivePipe *> (data);
    GError *err = nullptr;
    gst_message_parse_error (m, &err, nullptr);
    std::lock_guard<std::mutex> lk (lp->lock);
    if (lp->error.empty ())
      lp->error = err->message;
    lp->failed = true;
    g_error_free (err);
  }
  /* a sync handler that drops a message unrefs it */
  gst_message_unref (m);
  return GST_BUS_DROP;
}

/* The gst-launch text of one live pipeline. */
std::string live_launch (const std::string &elements, const GstVideoInfo &info, bool cuda)
{
  char caps[160];
  std::snprintf (caps, sizeof caps, "video/x-raw,format=%s,width=%d,height=%d,framerate=%d/1",
      gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&info)), GST_VIDEO_INFO_WIDTH (&info),
      GST_VIDEO_INFO_HEIGHT (&info), kLiveFps);
  /* the rate is fixed after imagefreeze, which takes it from downstream */
  char rate[80];
  std::snprintf (rate, sizeof rate, "video/x-raw%s,framerate=%d/1", cuda ? "(" GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY ")" : "",
      kLiveFps);
  return std::string ("videotestsrc num-buffers=1 pattern=ball ! ") + caps + (cuda ? " ! cudaupload" : "") +
      " ! imagefreeze is-live=true ! " + rate + " ! " + elements + " ! fakesink name=sink sync=true signal-handoffs=true";
}

/* Whether every pipeline has a frame at its sink within a minute, none failing meanwhile. */
bool wait_all_started (const std::vector<std::unique_ptr<LivePipe>> &pipes)
{
  const auto deadline = std::chrono::steady_clock::now () + std::chrono::seconds (60);
  while (std::chrono::steady_clock::now () < deadline) {
    bool all = true;
    for (const auto &lp : pipes) {
      if (lp->failed)
        return false;
      all &= lp->frames > 0;
    }
    if (all)
      return true;
    std::this_thread::sleep_for (std::chrono::milliseconds (10));
  }
  std::fprintf (stderr, "live: not every pipeline had a frame at its sink within a minute\n");
  return false;
}

/* The largest latency that a pipeline of @pipes configured, in ms. */
double configured_latency_ms (const std::vector<std::unique_ptr<LivePipe>> &pipes)
{
  GstClockTime most = 0;
  for (const auto &lp : pipes) {
    GstQuery *q = gst_query_new_latency ();
    gboolean live = FALSE;
    GstClockTime min = 0, max = 0;
    if (gst_element_query (lp->pipe, q)) {
      gst_query_parse_latency (q, &live, &min, &max);
      most = std::max (most, min);
    }
    gst_query_unref (q);
  }
  return most / 1e6;
}

/* The ages in @member of every pipeline, sorted. */
std::vector<GstClockTime> all_ages (std::vector<std::unique_ptr<LivePipe>> &pipes, std::vector<GstClockTime> LivePipe::*member)
{
  std::vector<GstClockTime> all;
  for (const auto &lp : pipes) {
    std::lock_guard<std::mutex> lk (lp->lock);
    all.insert (all.end (), ((*lp).*member).begin (), ((*lp).*member).end ());
  }
  std::sort (all.begin (), all.end ());
  return all;
}

/* p-th fraction of sorted @v, in ms */
double percentile_ms (const std::vector<GstClockTime> &v, double p)
{
  if (v.empty ())
    return 0;
  const size_t at = std::min (v.size () - 1, static_cast<size_t> (p * static_cast<double> (v.size ())));
  return v[at] / 1e6;
}

/* Times the window: kept share and latencies into @row. */
void time_window (std::vector<std::unique_ptr<LivePipe>> &pipes, std::atomic<bool> &recording, double seconds,
    LiveRow *row)
{
  std::vector<long> before;
  recording = true;
  const auto t0 = std::chrono::steady_clock::now ();
  for (const auto &lp : pipes)
    before.push_back (lp->frames);
  std::this_thread::sleep_for (std::chrono::duration<double> (seconds));
  long frames = 0;
  for (size_t p = 0; p < pipes.size (); p++)
    frames += pipes[p]->frames - before[p];
  const double elapsed = std::chrono::duration<double> (std::chrono::steady_clock::now () - t0).count ();
  recording = false;
  const std::vector<GstClockTime> all = all_ages (pipes, &LivePipe::latencies);
  const std::vector<GstClockTime> arrivals = all_ages (pipes, &LivePipe::arrivals);
  row->frames = frames;
  row->arrive_p50_ms = percentile_ms (arrivals, 0.50);
  row->arrive_p99_ms = percentile_ms (arrivals, 0.99);
  row->kept = frames / (static_cast<double> (pipes.size ()) * kLiveFps * elapsed);
  row->p50_ms = percentile_ms (all, 0.50);
  row->p99_ms = percentile_ms (all, 0.99);
  row->max_ms = all.empty () ? 0 : all.back () / 1e6;
}

/* Makes @pipelines pipelines of @launch into @pipes; false (the reason printed) when one cannot be made. */
bool make_live_pipes (const std::string &launch, const std::vector<GstContext *> &contexts, int pipelines,
    const std::atomic<bool> &recording, std::vector<std::unique_ptr<LivePipe>> &pipes)
{
  for (int p = 0; p < pipelines; p++) {
    auto lp = std::make_unique<LivePipe> ();
    lp->recording = &recording;
    gst_segment_init (&lp->segment, GST_FORMAT_TIME);
    GError *err = nullptr;
    lp->pipe = gst_parse_launch (launch.c_str (), &err);
    if (err || !lp->pipe) {
      std::fprintf (stderr, "live: cannot make %s%s%s\n", launch.c_str (), err ? ": " : "", err ? err->message : "");
      g_clear_error (&err);
      if (lp->pipe)
        gst_object_unref (lp->pipe);
      return false;
    }
    if (!contexts.empty ())
      gst_element_set_context (lp->pipe, contexts[p % contexts.size ()]);
    GstBus *bus = gst_element_get_bus (lp->pipe);
    gst_bus_set_sync_handler (bus, on_live_message, lp.get (), nullptr);
    gst_object_unref (bus);
    /* the pipeline holds it while the pipeline lives */
    lp->sink = gst_bin_get_by_name (GST_BIN (lp->pipe), "sink");
    gst_object_unref (lp->sink);
    g_signal_connect (lp->sink, "handoff", G_CALLBACK (on_live_handoff), lp.get ());
    GstPad *pad = gst_element_get_static_pad (lp->sink, "sink");
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_live_arrival, lp.get (), nullptr);
    gst_object_unref (pad);
    pipes.push_back (std::move (lp));
  }
  return true;
}

}  // namespace

bool run_live (const std::string &elements, const GstVideoInfo &info, const std::vector<GstContext *> &contexts,
    bool cuda_memory, int pipelines, double seconds, LiveRow *row)
{
  *row = LiveRow ();
  row->pipelines = pipelines;
  const std::string launch = live_launch (elements, info, cuda_memory && !contexts.empty ());
  std::atomic<bool> recording{false};
  std::vector<std::unique_ptr<LivePipe>> pipes;
  bool ok = make_live_pipes (launch, contexts, pipelines, recording, pipes);
  const auto playing = std::chrono::steady_clock::now ();
  for (size_t p = 0; ok && p < pipes.size (); p++)
    ok = gst_element_set_state (pipes[p]->pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE;
  ok = ok && wait_all_started (pipes);
  row->start_ms = std::chrono::duration<double, std::milli> (std::chrono::steady_clock::now () - playing).count ();
  if (ok) {
    /* a second for the latency every sink configured once all are playing, and for the pools */
    std::this_thread::sleep_for (std::chrono::seconds (1));
    row->configured_ms = configured_latency_ms (pipes);
    time_window (pipes, recording, seconds, row);
  }
  for (const auto &lp : pipes) {
    if (lp->failed) {
      std::lock_guard<std::mutex> lk (lp->lock);
      std::fprintf (stderr, "live: a pipeline failed: %s\n", lp->error.c_str ());
      ok = false;
    }
  }
  for (const auto &lp : pipes)
    gst_element_set_state (lp->pipe, GST_STATE_NULL);
  for (const auto &lp : pipes)
    gst_object_unref (lp->pipe);
  return ok;
}

int live_rows (const std::string &elements, const std::vector<int> &counts, const std::vector<cuvtest::Size> &sizes,
    GstVideoFormat format, const std::vector<GstContext *> &contexts, bool cuda_memory, double seconds)
{
  cuda_memory &= !contexts.empty ();
  const rlim_t files = cuvrun::raise_open_files_limit ();
  std::printf ("bench_pipelines --live: live sources at %d fps (imagefreeze is-live=true, %s), \"%s\", "
      "fakesink sync=true; %.1f s timed while all stream; open files limit %llu\n", kLiveFps,
      cuda_memory ? "CUDA memory" : contexts.empty () ? "system memory, CPU backend" : "system memory", elements.c_str (), seconds,
      static_cast<unsigned long long> (files));
  std::printf ("%-10s %-16s %7s %9s %9s %9s %11s %11s %11s %9s %9s\n", "pipelines", "frame", "kept", "p50 ms", "p99 ms",
      "max ms", "config. ms", "arrive p50", "arrive p99", "start ms", "frames");
  int failed = 0;
  for (const auto &s : sizes) {
    GstVideoInfo info;
    gst_video_info_set_format (&info, format, s.w, s.h);
    char frame[32];
    std::snprintf (frame, sizeof frame, "%dx%d %s", s.w, s.h, gst_video_format_to_string (format));
    for (int n : counts) {
      LiveRow row;
      if (!run_live (elements, info, contexts, cuda_memory, n, seconds, &row)) {
        std::printf ("%-10d %-16s %7s\n", n, frame, "failed");
        failed++;
        continue;
      }
      std::printf ("%-10d %-16s %7.3f %9.1f %9.1f %9.1f %11.1f %11.1f %11.1f %9.0f %9ld\n", n, frame, row.kept, row.p50_ms,
          row.p99_ms, row.max_ms, row.configured_ms, row.arrive_p50_ms, row.arrive_p99_ms, row.start_ms, row.frames);
      std::fflush (stdout);
    }
  }
  return failed ? 1 : 0;
}

}  // namespace cuvbench
