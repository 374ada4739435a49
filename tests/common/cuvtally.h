/* gst-cudavision tests: what pipelines post until they end, and the process's threads, for the
 * tests and benchmarks of many branches (tests/check/test_branches.cpp, tests/bench/bench_branches.cpp).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cuvtest {

/* Threads of this process now. */
inline int threads_now ()
{
  std::ifstream status ("/proc/self/status");
  std::string line;
  while (std::getline (status, line))
    if (line.rfind ("Threads:", 0) == 0)
      return std::atoi (line.c_str () + 8);
  return 0;
}

/* The peak of the process's threads from construction to stop (), sampled every @period by a
 * thread of its own, which it leaves out. */
class ThreadPeak {
 public:
  explicit ThreadPeak (std::chrono::milliseconds period) : at_start_ (threads_now ()), peak_ (at_start_)
  {
    sampler_ = std::thread ([this, period] {
      while (!done_) {
        peak_ = std::max (peak_.load (), threads_now ());
        std::this_thread::sleep_for (period);
      }
    });
  }
  ~ThreadPeak () { stop (); }
  int at_start () const { return at_start_; }
  int stop ()
  {
    done_ = true;
    if (sampler_.joinable ())
      sampler_.join ();
    return peak_ - 1;
  }

 private:
  const int at_start_;
  std::atomic<int> peak_;
  std::atomic<bool> done_{false};
  std::thread sampler_;
};

/* Runs @loop until something quits it or @seconds pass; whether it was quit before the limit. */
inline bool run_loop_for (GMainLoop *loop, unsigned seconds)
{
  struct Limit {
    GMainLoop *loop;
    bool reached = false;
  } limit{loop};
  const guint id = g_timeout_add_seconds (seconds, [] (gpointer data) -> gboolean {
    auto *l = static_cast<Limit *> (data);
    l->reached = true;
    g_main_loop_quit (l->loop);
    return G_SOURCE_REMOVE;
  }, &limit);
  g_main_loop_run (loop);
  if (!limit.reached)
    g_source_remove (id);
  return !limit.reached;
}

inline GstBusSyncReply count_message (GstBus *, GstMessage *m, gpointer data);

/* What a set of pipelines posted until each reached EOS, counted by count_message, a bus sync
 * handler that drops element messages (as cheap as a handler can be, the same for every shape). */
struct Tally {
  std::mutex lock;
  std::condition_variable cond;
  int eos = 0;
  int errors = 0;
  std::string first_error;
  std::atomic<long> messages{0};

  /* Counts what @pipe's bus carries. */
  void watch (GstElement *pipe)
  {
    GstBus *bus = gst_element_get_bus (pipe);
    gst_bus_set_sync_handler (bus, count_message, this, nullptr);
    gst_object_unref (bus);
  }

  /* Whether @pipelines reached EOS within @limit, with no error. */
  bool wait_all (size_t pipelines, std::chrono::seconds limit)
  {
    std::unique_lock<std::mutex> lk (lock);
    return cond.wait_for (lk, limit, [&] { return errors > 0 || eos == static_cast<int> (pipelines); }) && errors == 0;
  }
};

/* Sets @pipes to NULL, takes their bus handlers off and lets them go. */
inline void drop_pipelines (std::vector<GstElement *> &pipes)
{
  for (GstElement *p : pipes) {
    gst_element_set_state (p, GST_STATE_NULL);
    GstBus *bus = gst_element_get_bus (p);
    gst_bus_set_sync_handler (bus, nullptr, nullptr, nullptr);
    gst_object_unref (bus);
    gst_object_unref (p);
  }
  pipes.clear ();
}

inline GstBusSyncReply count_message (GstBus *, GstMessage *m, gpointer data)
{
  auto *t = static_cast<Tally *> (data);
  switch (GST_MESSAGE_TYPE (m)) {
    case GST_MESSAGE_ELEMENT:
      t->messages++;
      gst_message_unref (m);
      return GST_BUS_DROP;
    case GST_MESSAGE_EOS:
    case GST_MESSAGE_ERROR: {
      std::lock_guard<std::mutex> lk (t->lock);
      if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS) {
        t->eos++;
      } else {
        GError *err = nullptr;
        gst_message_parse_error (m, &err, nullptr);
        if (t->errors++ == 0)
          t->first_error = err ? err->message : "?";
        g_clear_error (&err);
      }
      t->cond.notify_all ();
      break;
    }
    default:
      break;
  }
  return GST_BUS_PASS;
}

}  // namespace cuvtest
