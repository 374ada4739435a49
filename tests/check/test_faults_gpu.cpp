/* CUDA faults end cleanly: for every N that the first frames reach, the plugin's Nth checked CUDA
 * call is made to fail (CUV_CUDA_FAIL_AT, see common/base/cuvcuda.h) while one element runs on the CUDA
 * backend, with system memory or with CUDA memory on its pads. Each run must post an error and
 * get back to NULL within 20 s; the sweep ends at the first N that the run never reaches. The runs
 * share one process (the injected failures leave the device as it was), set N through the
 * plugin's cuv_cuda_fail_at_set (), and leave no GStreamer object alive at gst_deinit () (the
 * leaks tracer, GST_TRACERS=leaks in the test's environment).
 *
 *   test_faults_gpu [--memory=system|cuda] [ELEMENT...]   every element and both memories without
 *                                                         arguments; 77 without a GPU
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/gst.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/common/cuvplugin.h"
#include "tests/common/cuvtest.h"

namespace {

/* What a run ends in. */
enum Outcome : int {
  kCleanError,    /* the fault gave an error message and the pipeline shut down */
  kNoFault,       /* EOS and no fault injected: N is past the calls the run makes */
  kFaultAfterEos, /* the fault came while shutting down after EOS, and nothing broke */
  kSwallowed,     /* a fault before EOS, and EOS anyway without an error */
  kNoMessage,     /* neither EOS nor an error within 20 s */
  kBadShutdown,   /* the pipeline did not get back to NULL */
  kUnparsable,
};

const char *const kOutcomeNames[] = {"clean error", "no fault", "fault after EOS", "fault swallowed: EOS without an error",
    "no EOS nor error within 20 s", "did not get back to NULL", "launch line does not parse"};

std::atomic<bool> g_leaked{false};

void watch_warnings (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer)
{
  if (strstr (message, "Leaks detected"))
    g_leaked = true;
  g_log_default_handler (domain, level, message, nullptr);
}

/* The plugin's fault-injection hooks (common/base/cuvcuda.cpp). */
struct Hooks {
  void (*fail_at_set) (long) = nullptr;
  long (*checked_calls) () = nullptr;
};

bool find_hooks (Hooks *hooks)
{
  hooks->fail_at_set = reinterpret_cast<void (*) (long)> (cuvtest::plugin_symbol ("cuv_cuda_fail_at_set"));
  hooks->checked_calls = reinterpret_cast<long (*) ()> (cuvtest::plugin_symbol ("cuv_cuda_checked_calls"));
  return hooks->fail_at_set && hooks->checked_calls;
}

/* One run of @launch with its Nth checked CUDA call failing. */
Outcome run_once (const Hooks &hooks, const std::string &launch, long n)
{
  GstElement *pipe = gst_parse_launch (launch.c_str (), nullptr);
  if (!pipe)
    return kUnparsable;
  hooks.fail_at_set (n);
  GstBus *bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
      static_cast<GstMessageType> (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  const bool injected_before_end = n > 0 && hooks.checked_calls () >= n;
  Outcome outcome;
  if (!msg)
    outcome = kNoMessage;
  else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
    outcome = kCleanError;
  else
    outcome = injected_before_end ? kSwallowed : kNoFault;
  if (msg)
    gst_message_unref (msg);
  if (gst_element_set_state (pipe, GST_STATE_NULL) != GST_STATE_CHANGE_SUCCESS && outcome == kCleanError)
    outcome = kBadShutdown;
  if (outcome == kNoFault && n > 0 && hooks.checked_calls () >= n)
    outcome = kFaultAfterEos;
  hooks.fail_at_set (0);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  return outcome;
}

}  // namespace

int main (int argc, char **argv)
{
  g_log_set_default_handler (watch_warnings, nullptr);
  gst_init (&argc, &argv);
  if (!cuvtest::have_gpu ())
    return cuvtest::no_gpu ();
  /* --memory=system or --memory=cuda picks the memory on the element's pads (both by default) */
  std::vector<bool> memories = {false, true};
  std::vector<const char *> names;
  /* --then=ELEMENT puts another element of ours after it (an analyser's results then follow the
   * frame to it: docs/design.md, "Results that follow the frame") */
  std::string then;
  for (int i = 1; i < argc; i++) {
    if (g_str_has_prefix (argv[i], "--then="))
      then = std::string (" ! ") + (argv[i] + 7) + " backend=cuda";
    else if (std::strcmp (argv[i], "--memory=system") == 0)
      memories = {false};
    else if (std::strcmp (argv[i], "--memory=cuda") == 0)
      memories = {true};
    else
      names.push_back (argv[i]);
  }
  cuvtest::Checker c;
  Hooks hooks;
  if (!find_hooks (&hooks)) {
    c.expect (false, "the cudavision plugin and its cuv_cuda_fail_at_set hook");
    return c.finish ("test_faults_gpu");
  }
  const long limit = 400;
  for (const auto &e : cuvtest::kElements) {
    bool chosen = names.empty ();
    for (const char *name : names)
      chosen |= std::strcmp (name, e.name) == 0;
    if (!chosen)
      continue;
    for (bool cuda_memory : memories) {
      const std::string launch = std::string ("videotestsrc num-buffers=3 pattern=ball ! "
          "video/x-raw,format=NV12,width=64,height=48 ! ") + (cuda_memory ? "cudaupload ! " : "") + e.name +
          " backend=cuda " + e.props + then + (cuda_memory ? " ! cudadownload" : "") + " ! fakesink";
      cuvtest::Timer timer (std::string ("faults ") + launch);
      const Outcome plain = run_once (hooks, launch, 0);
      c.expect (plain == kNoFault, launch + " without a fault: " + kOutcomeNames[plain]);
      if (plain != kNoFault)
        continue;
      long n = 1;
      int errors = 0;
      for (; n <= limit; n++) {
        const Outcome outcome = run_once (hooks, launch, n);
        if (outcome == kNoFault)
          break;
        errors += outcome == kCleanError;
        c.expect (outcome == kCleanError || outcome == kFaultAfterEos,
            "CUV_CUDA_FAIL_AT=" + std::to_string (n) + " " + launch + ": " + kOutcomeNames[outcome]);
      }
      c.expect (n <= limit, launch + ": still failing at call " + std::to_string (limit));
      std::printf ("%s: %ld checked CUDA calls in 3 frames, %d ended in an error message\n", launch.c_str (), n - 1,
          errors);
      c.expect (n > 1 && errors > 0, launch + ": no CUDA call was reached");
    }
  }
  /* the leaks tracer reports at gst_deinit (): a warning, which watch_warnings notes */
  const int failures = c.finish ("test_faults_gpu");
  cuvtest::finish_plugin_work ();
  gst_deinit ();
  if (g_leaked) {
    std::printf ("test_faults_gpu: the leaks tracer found GStreamer objects alive at gst_deinit ()\n");
    return 1;
  }
  return failures;
}
