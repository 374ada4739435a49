/* gst-cudavision tests: what pipelines post until they end, and the process's threads, for the
 * tests and benchmarks of many branches (tests/check/test_branches.cpp, tests/bench/bench_branches.cpp).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>

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

/* What a set of pipelines posted until each reached EOS, counted by count_message, a bus sync
 * handler that drops element messages (as cheap as a handler can be, the same for every shape). */
struct Tally {
  std::mutex lock;
  std::condition_variable cond;
  int eos = 0;
  int errors = 0;
  std::string first_error;
  std::atomic<long> messages{0};
};

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
