/* CUDA faults end cleanly: for every N that the first frames reach, the plugin's Nth checked CUDA
 * call is made to fail (CUV_CUDA_FAIL_AT=N, see common/cuvcuda.h) in a child process running one
 * element on the CUDA backend, with system memory and with CUDA memory on its pads. The child
 * must post an error, get back to NULL, leak no GStreamer object (the leaks tracer) and exit
 * within 30 s; the sweep ends at the first N that the pipeline never reaches.
 *
 *   test_faults [--memory=system|cuda] [ELEMENT...]
 *                                      the sweep (every element and both memories without arguments),
 *                                      several children at a time; 77 without a GPU
 *   test_faults --child LAUNCH         one run, with CUV_CUDA_FAIL_AT set by the caller
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/gst.h>

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cuvtest.h"

namespace {

/* What a child reports through its exit code. */
enum Outcome : int {
  kCleanError = 0,     /* the fault gave an error message and the pipeline shut down */
  kNoFault = 10,       /* EOS and no fault injected: N is past the calls the run makes */
  kFaultAfterEos = 11, /* the fault came while shutting down after EOS, and nothing broke */
  kSwallowed = 12,     /* a fault before EOS, and EOS anyway without an error */
  kLeaked = 13,        /* the leaks tracer found live objects at gst_deinit () */
  kNoMessage = 14,     /* neither EOS nor an error within 20 s */
  kBadShutdown = 15,   /* the pipeline did not get back to NULL */
  kUnparsable = 16,
};

std::atomic<bool> g_injected{false};
std::atomic<bool> g_leaked{false};

void watch_log (GstDebugCategory *, GstDebugLevel level, const gchar *, const gchar *, gint, GObject *,
    GstDebugMessage *message, gpointer)
{
  if (level == GST_LEVEL_ERROR && strstr (gst_debug_message_get (message), "injected by CUV_CUDA_FAIL_AT"))
    g_injected = true;
}

void watch_warnings (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer)
{
  if (strstr (message, "Leaks detected"))
    g_leaked = true;
  g_log_default_handler (domain, level, message, nullptr);
}

int run_child (const char *launch)
{
  gst_debug_add_log_function (watch_log, nullptr, nullptr);
  g_log_set_default_handler (watch_warnings, nullptr);
  int outcome;
  {
    GstElement *pipe = gst_parse_launch (launch, nullptr);
    if (!pipe)
      return kUnparsable;
    GstBus *bus = gst_element_get_bus (pipe);
    gst_element_set_state (pipe, GST_STATE_PLAYING);
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
        static_cast<GstMessageType> (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    const bool injected_before_end = g_injected;
    if (!msg) {
      outcome = kNoMessage;
    } else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
      GError *err = nullptr;
      gst_message_parse_error (msg, &err, nullptr);
      std::fprintf (stderr, "child: error from %s: %s\n", GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), err->message);
      g_error_free (err);
      outcome = kCleanError;
    } else {
      outcome = injected_before_end ? kSwallowed : kNoFault;
    }
    if (msg)
      gst_message_unref (msg);
    if (gst_element_set_state (pipe, GST_STATE_NULL) != GST_STATE_CHANGE_SUCCESS && outcome == kCleanError)
      outcome = kBadShutdown;
    if (outcome == kNoFault && g_injected)
      outcome = kFaultAfterEos;
    gst_object_unref (bus);
    gst_object_unref (pipe);
  }
  gst_deinit ();
  return g_leaked ? kLeaked : outcome;
}

/* A child run with CUV_CUDA_FAIL_AT=@n, started and not yet reaped. */
struct Child {
  long n;
  GPid pid;
  gint64 started_us;
};

bool start_child (const char *self, const std::string &launch, long n, Child *child)
{
  gchar **env = g_get_environ ();
  env = g_environ_setenv (env, "CUV_CUDA_FAIL_AT", std::to_string (n).c_str (), TRUE);
  env = g_environ_setenv (env, "GST_TRACERS", "leaks", TRUE);
  const gchar *argv[] = {self, "--child", launch.c_str (), nullptr};
  GError *err = nullptr;
  gboolean ok = g_spawn_async (nullptr, const_cast<gchar **> (argv), env, G_SPAWN_DO_NOT_REAP_CHILD, nullptr, nullptr,
      &child->pid, &err);
  g_strfreev (env);
  if (!ok) {
    std::fprintf (stderr, "cannot start %s: %s\n", self, err->message);
    g_error_free (err);
    return false;
  }
  child->n = n;
  child->started_us = g_get_monotonic_time ();
  return true;
}

/* The child's outcome once it has exited, -1 when it crashed or ran past 30 s (then it is killed),
 * or -2 while it is still running. */
int poll_child (const Child &child, const std::string &launch)
{
  int status = 0;
  if (waitpid (child.pid, &status, WNOHANG) == 0) {
    if (g_get_monotonic_time () - child.started_us < 30 * G_USEC_PER_SEC)
      return -2;
    std::fprintf (stderr, "HANG: CUV_CUDA_FAIL_AT=%ld %s\n", child.n, launch.c_str ());
    kill (child.pid, SIGKILL);
    waitpid (child.pid, &status, 0);
    return -1;
  }
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

/* The outcome of every N from 1 up to the first that the run never reaches (kNoFault), at most
 * @limit; @jobs children at a time. Children past that first N are still reaped, then dropped. */
std::vector<int> sweep (const char *self, const std::string &launch, long stride, unsigned jobs, long limit)
{
  std::vector<int> outcome;  /* outcome[k]: N = 1 + k * stride */
  std::vector<Child> running;
  long end = limit + 1;      /* the smallest index known to reach no fault */
  long next = 0;
  while (true) {
    while (running.size () < jobs && next < end && next * stride < limit) {
      Child child;
      if (!start_child (self, launch, 1 + next * stride, &child)) {
        end = std::min (end, next);
        break;
      }
      running.push_back (child);
      next++;
    }
    if (running.empty ())
      break;
    g_usleep (5000);
    for (size_t i = 0; i < running.size ();) {
      const int result = poll_child (running[i], launch);
      if (result == -2) {
        i++;
        continue;
      }
      const long k = (running[i].n - 1) / stride;
      if (outcome.size () <= static_cast<size_t> (k))
        outcome.resize (k + 1, kNoFault);
      outcome[k] = result;
      if (result == kNoFault)
        end = std::min (end, k);
      running.erase (running.begin () + i);
    }
  }
  outcome.resize (std::min<long> (end, static_cast<long> (outcome.size ())));
  return outcome;
}

const char *kElements[][2] = {
  {"cudasobel", "scale=1.5"},
  {"cudaenhance", "contrast=1.3 saturation=1.4"},
  {"cudahistogram", "overlay=true"},
  {"cudaheatmap", ""},
  {"cudanoisemap", "mode=overlay"},
  {"cudamotionest", "draw=arrows"},
};


/* A positive integer from the environment variable @name, or @fallback. */
long env_long (const char *name, long fallback)
{
  const char *v = g_getenv (name);
  const long n = v ? std::atol (v) : 0;
  return n > 0 ? n : fallback;
}

}  // namespace

int main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  if (argc == 3 && std::strcmp (argv[1], "--child") == 0)
    return run_child (argv[2]);
  if (!cuvtest::have_gpu ()) {
    std::printf ("no usable CUDA device: skipped\n");
    return cuvtest::kSkip;
  }
  /* --memory=system or --memory=cuda picks the memory on the element's pads (both by default) */
  std::vector<bool> memories = {false, true};
  std::vector<const char *> names;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp (argv[i], "--memory=system") == 0)
      memories = {false};
    else if (std::strcmp (argv[i], "--memory=cuda") == 0)
      memories = {true};
    else
      names.push_back (argv[i]);
  }
  /* CUV_FAULT_JOBS children at a time (default: a quarter of the cores, at least 2); under
   * CUV_TEST_QUICK=1 (compute-sanitizer) every 4th call, else CUV_FAULT_STRIDE (default 1) */
  const unsigned jobs = env_long ("CUV_FAULT_JOBS", std::max (2u, g_get_num_processors () / 4));
  const long stride = env_long ("CUV_FAULT_STRIDE", cuvtest::quick () ? 4 : 1);
  const long limit = 400;
  cuvtest::Checker c;
  for (const auto &e : kElements) {
    bool chosen = names.empty ();
    for (const char *name : names)
      chosen |= std::strcmp (name, e[0]) == 0;
    if (!chosen)
      continue;
    for (bool cuda_memory : memories) {
      const std::string launch = std::string ("videotestsrc num-buffers=3 pattern=ball ! "
          "video/x-raw,format=NV12,width=64,height=48 ! ") + (cuda_memory ? "cudaupload ! " : "") + e[0] +
          " backend=cuda " + e[1] + (cuda_memory ? " ! cudadownload" : "") + " ! fakesink";
      cuvtest::Timer timer (std::string ("faults ") + launch);
      const std::vector<int> outcome = sweep (argv[0], launch, stride, jobs, limit);
      int errors = 0;
      for (size_t k = 0; k < outcome.size (); k++) {
        errors += outcome[k] == kCleanError;
        c.expect (outcome[k] == kCleanError || outcome[k] == kFaultAfterEos,
            "CUV_CUDA_FAIL_AT=" + std::to_string (1 + k * stride) + " " + launch + ": outcome " +
            std::to_string (outcome[k]));
      }
      c.expect (static_cast<long> (outcome.size ()) * stride < limit, launch + ": still failing at call 400");
      std::printf ("%s: %zu checked CUDA calls tried (every %ld%s) in 3 frames, %d ended in an error message, "
          "%u children at a time\n", launch.c_str (), outcome.size (), stride, stride == 1 ? "" : "th", errors, jobs);
      c.expect (!outcome.empty () && errors > 0, launch + ": no CUDA call was reached");
    }
  }
  return c.finish ("test_faults");
}
