/* CUDA faults end cleanly: for every N that the first frames reach, the plugin's Nth checked CUDA
 * call is made to fail (CUV_CUDA_FAIL_AT=N, see common/cuvcuda.h) in a child process running one
 * element on the CUDA backend, with system memory and with CUDA memory on its pads. The child
 * must post an error, get back to NULL, leak no GStreamer object (the leaks tracer) and exit
 * within 30 s; the sweep ends at the first N that the pipeline never reaches.
 *
 *   test_faults [ELEMENT...]           the sweep (every element without arguments); 77 without a GPU
 *   test_faults --child LAUNCH         one run, with CUV_CUDA_FAIL_AT set by the caller
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/gst.h>

#include <signal.h>
#include <sys/wait.h>

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

/* Runs this program as a child with CUV_CUDA_FAIL_AT=@n; its outcome, or -1 when it crashed or
 * was killed after 30 s. */
int spawn_child (const char *self, const std::string &launch, long n)
{
  gchar **env = g_get_environ ();
  env = g_environ_setenv (env, "CUV_CUDA_FAIL_AT", std::to_string (n).c_str (), TRUE);
  env = g_environ_setenv (env, "GST_TRACERS", "leaks", TRUE);
  const gchar *argv[] = {self, "--child", launch.c_str (), nullptr};
  GPid pid;
  GError *err = nullptr;
  gboolean ok = g_spawn_async (nullptr, const_cast<gchar **> (argv), env, G_SPAWN_DO_NOT_REAP_CHILD, nullptr, nullptr,
      &pid, &err);
  g_strfreev (env);
  if (!ok) {
    std::fprintf (stderr, "cannot start %s: %s\n", self, err->message);
    g_error_free (err);
    return -1;
  }
  int status = 0;
  for (int waited_ms = 0; waitpid (pid, &status, WNOHANG) == 0; waited_ms += 10) {
    if (waited_ms > 30000) {
      std::fprintf (stderr, "HANG: CUV_CUDA_FAIL_AT=%ld %s\n", n, launch.c_str ());
      kill (pid, SIGKILL);
      waitpid (pid, &status, 0);
      return -1;
    }
    g_usleep (10000);
  }
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

const char *kElements[][2] = {
  {"cudasobel", "scale=1.5"},
  {"cudaenhance", "contrast=1.3 saturation=1.4"},
  {"cudahistogram", "overlay=true"},
  {"cudaheatmap", ""},
  {"cudanoisemap", "mode=overlay"},
  {"cudamotionest", "draw=arrows"},
};

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
  cuvtest::Checker c;
  for (const auto &e : kElements) {
    bool chosen = argc < 2;
    for (int i = 1; i < argc; i++)
      chosen |= std::strcmp (argv[i], e[0]) == 0;
    if (!chosen)
      continue;
    for (bool cuda_memory : {false, true}) {
      const std::string launch = std::string ("videotestsrc num-buffers=3 pattern=ball ! "
          "video/x-raw,format=NV12,width=64,height=48 ! ") + (cuda_memory ? "cudaupload ! " : "") + e[0] +
          " backend=cuda " + e[1] + (cuda_memory ? " ! cudadownload" : "") + " ! fakesink";
      cuvtest::Timer timer (std::string ("faults ") + launch);
      long n = 1;
      int errors = 0;
      for (;; n++) {
        const int outcome = spawn_child (argv[0], launch, n);
        if (outcome == kNoFault)
          break;
        errors += outcome == kCleanError;
        c.expect (outcome == kCleanError || outcome == kFaultAfterEos,
            "CUV_CUDA_FAIL_AT=" + std::to_string (n) + " " + launch + ": outcome " + std::to_string (outcome));
        if (n >= 400) {
          c.expect (false, launch + ": still failing at call 400");
          break;
        }
      }
      std::printf ("%s: %ld checked CUDA calls in 3 frames, %d ended in an error message\n", launch.c_str (), n - 1,
          errors);
      c.expect (n > 1 && errors > 0, launch + ": no CUDA call was reached");
    }
  }
  return c.finish ("test_faults");
}
