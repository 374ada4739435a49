/* The stress suite: every element through what real pipelines do to it. Caps changes mid-stream
 * (to 1x1 and odd sizes), flushing seeks and EOS mid-stream, 1,000 NULL -> PLAYING -> NULL cycles
 * and PAUSED <-> PLAYING toggles with buffers flowing, every property set from another thread
 * (invalid values included), broken buffers, 16 pipelines in 16 threads. Each runs on the CPU
 * backend everywhere and, where a GPU is present, on CUDA with system memory and with CUDA memory
 * on the pads. Its meson test runs with the leaks tracer (GST_TRACERS=leaks): main () ends with
 * gst_deinit (), where the tracer fails the program if any GStreamer object is still alive.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "tests/check/cuvcheck.h"

using namespace cuvcheck;

namespace {

using Element = cuvtest::ElementCase;
using cuvtest::kElements;

/* Where an element runs: its backend and the memory on its pads. */
struct Route {
  const char *backend;
  const char *before;
  const char *after;
  bool cuda_memory;
};

std::vector<Route> routes ()
{
  std::vector<Route> r = {{"cpu", "", "", false}};
  fail_unless (cuvtest::have_gpu () || !cuvtest::gpu_required (), "no usable CUDA device, and CUV_REQUIRE_GPU is set");
  if (cuvtest::have_gpu ()) {
    r.push_back ({"cuda", "", "", false});
    r.push_back ({"cuda", "cudaupload ! ", " ! cudadownload", true});
  }
  return r;
}

std::string launch_for (const Element &e, const Route &r, const std::string &extra = "")
{
  return std::string (r.before) + e.name + " name=under-test backend=" + r.backend + " " + e.props + " " + extra +
      r.after;
}

std::string describe (const Element &e, const Route &r)
{
  return std::string (e.name) + " backend=" + r.backend + (r.cuda_memory ? " (CUDA memory)" : " (system memory)");
}

/* The six elements in one chain, on @r. */
std::string chain_for (const Route &r)
{
  std::string chain = r.before;
  for (const Element &e : kElements)
    chain += std::string (&e == kElements ? "" : " ! ") + e.name + " backend=" + r.backend + " " + e.props;
  return chain + r.after;
}

/* ---- what the base class says in the debug log ---- */

std::atomic<int> g_forgotten{0};

void count_forgotten (GstDebugCategory *cat, GstDebugLevel level, const gchar *file, const gchar *function, gint line,
    GObject *object, GstDebugMessage *message, gpointer)
{
  /* the debug output as without the counter */
  if (level <= GST_LEVEL_WARNING)
    gst_debug_log_default (cat, level, file, function, line, object, message, nullptr);
  if (object && GST_IS_OBJECT (object) && g_strcmp0 (GST_OBJECT_NAME (object), "under-test") == 0 &&
      (g_str_equal (gst_debug_category_get_name (cat), "cudavision") ||
          g_str_equal (gst_debug_category_get_name (cat), "cudamotionest")) &&
      strstr (gst_debug_message_get (message), "forgetting the previous frame"))
    g_forgotten++;
}

/* Counts the "forgetting the previous frame" lines of the element named under-test (the base
 * class says it for cudaheatmap and cudanoisemap; cudamotionest keeps its own previous frame). */
struct ForgetCounter {
  ForgetCounter ()
  {
    g_forgotten = 0;
    gst_debug_set_threshold_for_name ("cudavision", GST_LEVEL_DEBUG);
    gst_debug_set_threshold_for_name ("cudamotionest", GST_LEVEL_DEBUG);
    gst_debug_remove_log_function (gst_debug_log_default);
    gst_debug_add_log_function (count_forgotten, nullptr, nullptr);
  }
  ~ForgetCounter ()
  {
    gst_debug_remove_log_function (count_forgotten);
    gst_debug_add_log_function (gst_debug_log_default, nullptr, nullptr);
    gst_debug_unset_threshold_for_name ("cudavision");
    gst_debug_unset_threshold_for_name ("cudamotionest");
  }
  int count () const { return g_forgotten; }
};

GstVideoInfo current_out_info (GstHarness *h)
{
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  fail_unless (caps != nullptr, "no caps downstream");
  GstVideoInfo info;
  fail_unless (gst_video_info_from_caps (&info, caps));
  gst_caps_unref (caps);
  return info;
}

/* ---- caps changes ---- */

struct Shape {
  GstVideoFormat format;
  int w, h;
};

const Shape kShapes[] = {{GST_VIDEO_FORMAT_RGBA, 64, 48}, {GST_VIDEO_FORMAT_NV12, 1, 1},
    {GST_VIDEO_FORMAT_BGRx, 17, 13}, {GST_VIDEO_FORMAT_I420, 3, 3}, {GST_VIDEO_FORMAT_GRAY8, 33, 9},
    {GST_VIDEO_FORMAT_RGBA, 2, 2}, {GST_VIDEO_FORMAT_NV12, 4097, 3}, {GST_VIDEO_FORMAT_BGRA, 7, 5},
    {GST_VIDEO_FORMAT_I420, 321, 241}, {GST_VIDEO_FORMAT_RGBx, 1, 17}};

}  // namespace

/* Every change gives what a fresh element gives on the same frame: a temporal element starts
 * over (and says so in the debug log), nothing of the old size or format is used. */
GST_START_TEST (test_caps_changes_mid_stream)
{
  ForgetCounter forgotten;
  for (const Route &r : routes ()) {
    for (const Element &e : kElements) {
      cuvtest::Timer timer ("caps changes " + describe (e, r));
      const std::string launch = launch_for (e, r);
      GstHarness *h = new_harness (launch);
      gst_harness_set_sink_caps_str (h, "video/x-raw");
      const int forgotten_before = forgotten.count ();
      int changes = 0;
      uint32_t seed = 1;
      for (int round = 0; round < 4; round++) {
        for (const Shape &s : kShapes) {
          if (s.format == GST_VIDEO_FORMAT_GRAY8 && (!e.gray8 || r.cuda_memory))
            continue;
          GstVideoInfo info = info_for (s.format, s.w, s.h);
          gst_harness_set_src_caps_str (h, caps_for (info).c_str ());
          changes++;
          const std::string what = launch + " after " + std::to_string (changes) + " changes, " +
              GST_VIDEO_INFO_NAME (&info) + " " + std::to_string (s.w) + "x" + std::to_string (s.h);
          GstBuffer *in = make_buffer (info, 0, seed++);
          GstBuffer *got = push_pull (h, gst_buffer_ref (in));
          GstBuffer *want = run_once (launch, info, in);
          fail_unless (want != nullptr, "%s: a fresh element gave nothing", what.c_str ());
          GstVideoInfo out = current_out_info (h);
          fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&out), s.w);
          fail_unless_equals_int (GST_VIDEO_INFO_HEIGHT (&out), s.h);
          fail_unless_equals_int (buffer_diff (got, want, out, what), 0);
          fail_unless (!e.meta || same_meta (got, want, e.meta), "%s: meta differs from a fresh element's", what.c_str ());
          gst_buffer_unref (want);
          gst_buffer_unref (got);
          gst_buffer_unref (in);
          /* and a second frame of the new shape, against the first */
          gst_buffer_unref (push_pull (h, make_buffer (info, 0, seed++)));
        }
      }
      if (e.temporal)
        fail_unless (forgotten.count () - forgotten_before >= changes - 1,
            "%s: %d caps changes, the debug log says the previous frame was forgotten %d times", launch.c_str (),
            changes, forgotten.count () - forgotten_before);
      gst_harness_teardown (h);
    }
  }
}
GST_END_TEST;

namespace {

/* Waits for an ERROR or @type on @bus; fails on an error. */
void expect_message (GstBus *bus, GstMessageType type, const std::string &what)
{
  GstMessage *msg =
      gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND, static_cast<GstMessageType> (type | GST_MESSAGE_ERROR));
  fail_unless (msg != nullptr, "%s: nothing within 30 s", what.c_str ());
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = nullptr;
    gchar *dbg = nullptr;
    gst_message_parse_error (msg, &err, &dbg);
    fail ("%s: error %s (%s)", what.c_str (), err->message, dbg);
  }
  gst_message_unref (msg);
}

/* Waits until @pipe has no state change pending and is PLAYING. Sending an event to a pipeline
 * while it is still on its way back to PLAYING (after a flushing seek) can deadlock in GStreamer
 * 1.22: gst_element_send_event holds the pipeline's state lock, which the bin's thread needs to
 * finish the change, while the streaming thread waits for preroll in the sink holding the
 * source's lock that the event needs. */
void settle (GstElement *pipe, const std::string &what)
{
  GstState state = GST_STATE_VOID_PENDING;
  fail_unless_equals_int (gst_element_get_state (pipe, &state, nullptr, 30 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
  fail_unless (state == GST_STATE_PLAYING, "%s: in %s, not PLAYING", what.c_str (), gst_element_state_get_name (state));
}

void expect_no_error (GstBus *bus, const std::string &what)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  if (msg) {
    GError *err = nullptr;
    gchar *dbg = nullptr;
    gst_message_parse_error (msg, &err, &dbg);
    fail ("%s: error %s (%s)", what.c_str (), err->message, dbg);
  }
}

/* Pipelines a test has started. A failed check leaves the test by a long jump (CK_FORK=no), past
 * the code that would stop its pipeline; the suite's teardown stops what is left, so that the
 * failure is reported instead of the program hanging at exit, where gst_deinit () waits for every
 * streaming thread. */
std::vector<GstElement *> &live_pipelines ()
{
  static std::vector<GstElement *> live;
  return live;
}

GstElement *tracked (GstElement *pipe)
{
  if (pipe)
    live_pipelines ().push_back (GST_ELEMENT (gst_object_ref (pipe)));
  return pipe;
}

/* @pipe to NULL and no longer tracked (the caller's reference stays). */
void stop_tracked (GstElement *pipe)
{
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  auto &live = live_pipelines ();
  live.erase (std::remove (live.begin (), live.end (), pipe), live.end ());
  gst_object_unref (pipe);
}

void stop_live_pipelines ()
{
  for (GstElement *pipe : live_pipelines ()) {
    gst_element_set_state (pipe, GST_STATE_NULL);
    gst_object_unref (pipe);
  }
  live_pipelines ().clear ();
}

/* Counts buffers reaching a fakesink named "sink" (signal-handoffs=true) and waits for them. It
 * belongs to the pipeline (freed with it), so a test that fails early leaves no dangling handler. */
struct HandoffCounter {
  std::mutex lock;
  std::condition_variable cond;
  int n = 0;

  static HandoffCounter &attach (GstElement *pipe)
  {
    auto *c = new HandoffCounter ();
    g_object_set_data_full (G_OBJECT (pipe), "handoff-counter", c, [] (gpointer p) {
      delete static_cast<HandoffCounter *> (p);
    });
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
    g_signal_connect (sink, "handoff", G_CALLBACK (+[] (GstElement *, GstBuffer *, GstPad *, gpointer self) {
      auto *c = static_cast<HandoffCounter *> (self);
      std::lock_guard<std::mutex> lk (c->lock);
      c->n++;
      c->cond.notify_all ();
    }), c);
    gst_object_unref (sink);
    return *c;
  }
  int count ()
  {
    std::lock_guard<std::mutex> lk (lock);
    return n;
  }
  /* Whether @more buffers beyond @from arrived within 30 s. */
  bool wait_beyond (int from, int more)
  {
    std::unique_lock<std::mutex> lk (lock);
    return cond.wait_for (lk, std::chrono::seconds (30), [&] { return n >= from + more; });
  }
};

int cycles ()
{
  const char *v = g_getenv ("CUV_STRESS_CYCLES");
  return v ? atoi (v) : 1000;
}

}  // namespace

/* Flushing seeks while frames flow, then EOS sent mid-stream: no error, EOS arrives, and every
 * flush makes a temporal element start over (the debug log says so). */
GST_START_TEST (test_flushing_seeks_and_eos_mid_stream)
{
  ForgetCounter forgotten;
  for (const Route &r : routes ()) {
    for (const Element &e : kElements) {
      cuvtest::Timer timer ("seeks and EOS " + describe (e, r));
      const std::string launch = "videotestsrc pattern=ball ! video/x-raw,format=NV12,width=96,height=64,framerate=30/1 ! " +
          launch_for (e, r) + " ! fakesink name=sink sync=false signal-handoffs=true";
      GstElement *pipe = tracked (new_pipeline (launch));
      fail_unless (pipe != nullptr);
      HandoffCounter &frames = HandoffCounter::attach (pipe);
      GstBus *bus = gst_element_get_bus (pipe);
      fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
      expect_message (bus, GST_MESSAGE_ASYNC_DONE, launch + " reaching PLAYING");
      const int forgotten_before = forgotten.count ();
      const int seeks = 50;
      for (int i = 0; i < seeks; i++) {
        const int before = frames.count ();
        fail_unless (gst_element_seek_simple (pipe, GST_FORMAT_TIME,
                         static_cast<GstSeekFlags> (GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE), (i % 7) * GST_SECOND / 3),
            "%s: seek %d refused", launch.c_str (), i);
        settle (pipe, launch + " seek " + std::to_string (i));
        fail_unless (frames.wait_beyond (before, 2), "%s: no frames after seek %d", launch.c_str (), i);
        expect_no_error (bus, launch + " seek " + std::to_string (i));
      }
      if (e.temporal)
        fail_unless (forgotten.count () - forgotten_before >= seeks, "%s: %d flushes, %d resets in the debug log",
            launch.c_str (), seeks, forgotten.count () - forgotten_before);
      fail_unless (gst_element_send_event (pipe, gst_event_new_eos ()));
      expect_message (bus, GST_MESSAGE_EOS, launch + " EOS mid-stream");
      stop_tracked (pipe);
      gst_object_unref (bus);
      gst_object_unref (pipe);
    }
  }
}
GST_END_TEST;

/* The six elements in one pipeline, NULL -> PLAYING -> NULL a thousand times (CUV_STRESS_CYCLES),
 * each time with frames through every element, then PAUSED <-> PLAYING toggles on a live source. */
GST_START_TEST (test_state_cycles_with_buffers_flowing)
{
  for (const Route &r : routes ()) {
    const std::string chain = chain_for (r);
    {
      cuvtest::Timer timer (std::to_string (cycles ()) + " NULL-PLAYING-NULL cycles of " + chain);
      GstElement *pipe = tracked (new_pipeline (
          "videotestsrc pattern=ball ! video/x-raw,format=RGBA,width=64,height=48 ! " + chain +
          " ! fakesink name=sink sync=false signal-handoffs=true"));
      fail_unless (pipe != nullptr);
      HandoffCounter &frames = HandoffCounter::attach (pipe);
      GstBus *bus = gst_element_get_bus (pipe);
      for (int i = 0; i < cycles (); i++) {
        const int before = frames.count ();
        fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
        fail_unless (frames.wait_beyond (before, 3), "cycle %d: no frames through %s", i, chain.c_str ());
        fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
        expect_no_error (bus, "cycle " + std::to_string (i) + " of " + chain);
      }
      stop_tracked (pipe);
      gst_object_unref (bus);
      gst_object_unref (pipe);
    }
    {
      cuvtest::Timer timer ("PAUSED-PLAYING toggles of " + chain);
      GstElement *pipe = tracked (new_pipeline (
          "videotestsrc is-live=true pattern=ball ! video/x-raw,format=NV12,width=64,height=48,framerate=200/1 ! " +
          chain + " ! fakesink name=sink sync=true signal-handoffs=true"));
      fail_unless (pipe != nullptr);
      HandoffCounter &frames = HandoffCounter::attach (pipe);
      GstBus *bus = gst_element_get_bus (pipe);
      fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
      fail_unless (frames.wait_beyond (0, 2), "no frames through %s", chain.c_str ());
      for (int i = 0; i < 100; i++) {
        fail_unless (gst_element_set_state (pipe, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
        fail_unless (gst_element_get_state (pipe, nullptr, nullptr, 10 * GST_SECOND) != GST_STATE_CHANGE_FAILURE);
        const int before = frames.count ();
        fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
        fail_unless (frames.wait_beyond (before, 1), "toggle %d: no frames after PLAYING", i);
        expect_no_error (bus, "toggle " + std::to_string (i) + " of " + chain);
      }
      settle (pipe, "after the toggles");
      fail_unless (gst_element_send_event (pipe, gst_event_new_eos ()));
      expect_message (bus, GST_MESSAGE_EOS, "EOS after the toggles");
      stop_tracked (pipe);
      gst_object_unref (bus);
      gst_object_unref (pipe);
    }
  }
}
GST_END_TEST;

namespace {

/* Values to try on @pspec: its bounds, middle and default, every enum value, and a string that
 * does not parse. Values outside a numeric range, NaN included, are left out: GLib refuses them
 * itself with a g_warning before the element sees them. */
std::vector<std::string> values_for (GParamSpec *pspec)
{
  std::vector<std::string> v = {"bogus"};
  auto num = [&v] (auto lo, auto hi, auto def) {
    v.push_back (std::to_string (lo));
    v.push_back (std::to_string (hi));
    v.push_back (std::to_string (def));
  };
  auto dbl = [&v] (double lo, double hi, double def) {
    for (double d : {lo, hi, def, (lo + hi) / 2}) {
      gchar buf[G_ASCII_DTOSTR_BUF_SIZE];
      v.push_back (g_ascii_dtostr (buf, sizeof (buf), d));
    }
  };
  if (G_IS_PARAM_SPEC_BOOLEAN (pspec)) {
    v.insert (v.end (), {"true", "false"});
  } else if (G_IS_PARAM_SPEC_INT (pspec)) {
    auto *p = G_PARAM_SPEC_INT (pspec);
    num (p->minimum, p->maximum, p->default_value);
  } else if (G_IS_PARAM_SPEC_UINT (pspec)) {
    auto *p = G_PARAM_SPEC_UINT (pspec);
    num (p->minimum, p->maximum, p->default_value);
  } else if (G_IS_PARAM_SPEC_INT64 (pspec)) {
    auto *p = G_PARAM_SPEC_INT64 (pspec);
    num (p->minimum, p->maximum, p->default_value);
  } else if (G_IS_PARAM_SPEC_UINT64 (pspec)) {
    auto *p = G_PARAM_SPEC_UINT64 (pspec);
    num (p->minimum, p->maximum, p->default_value);
  } else if (G_IS_PARAM_SPEC_DOUBLE (pspec)) {
    auto *p = G_PARAM_SPEC_DOUBLE (pspec);
    dbl (p->minimum, p->maximum, p->default_value);
  } else if (G_IS_PARAM_SPEC_FLOAT (pspec)) {
    auto *p = G_PARAM_SPEC_FLOAT (pspec);
    dbl (p->minimum, p->maximum, p->default_value);
  } else if (G_IS_PARAM_SPEC_ENUM (pspec)) {
    GEnumClass *k = G_PARAM_SPEC_ENUM (pspec)->enum_class;
    for (guint i = 0; i < k->n_values; i++)
      v.push_back (k->values[i].value_nick);
  }
  return v;
}

struct PropertyStress {
  GstElement *element;
  std::vector<std::pair<std::string, std::string>> settings;
  std::atomic<size_t> next{0};
};

}  // namespace

/* Every writable property of every element, set from another thread to each of its values in
 * turn while frames flow; the frames keep coming. */
GST_START_TEST (test_every_property_from_another_thread)
{
  for (const Route &r : routes ()) {
    for (const Element &e : kElements) {
      cuvtest::Timer timer ("property stress " + describe (e, r));
      GstHarness *h = new_harness (launch_for (e, r));
      GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 96, 64);
      gst_harness_set_src_caps_str (h, caps_for (info).c_str ());
      gst_harness_set_sink_caps_str (h, "video/x-raw");
      PropertyStress stress;
      stress.element = gst_harness_find_element (h, e.name);
      guint n = 0;
      GParamSpec **specs = g_object_class_list_properties (G_OBJECT_GET_CLASS (stress.element), &n);
      for (guint i = 0; i < n; i++) {
        if (!(specs[i]->flags & G_PARAM_WRITABLE) || (specs[i]->flags & G_PARAM_CONSTRUCT_ONLY) ||
            g_str_equal (specs[i]->name, "name") || g_str_equal (specs[i]->name, "parent"))
          continue;
        for (const std::string &v : values_for (specs[i]))
          stress.settings.emplace_back (specs[i]->name, v);
      }
      g_free (specs);
      /* the base classes' properties alone give 19 settings (an element with none of its own) */
      fail_unless (stress.settings.size () >= 19, "%s: %zu settings to stress", e.name, stress.settings.size ());
      GstHarnessThread *t = gst_harness_stress_custom_start (h, nullptr, +[] (gpointer, gpointer data) {
        auto *s = static_cast<PropertyStress *> (data);
        const auto &p = s->settings[s->next++ % s->settings.size ()];
        gst_util_set_object_arg (G_OBJECT (s->element), p.first.c_str (), p.second.c_str ());
      }, &stress, 50);
      /* three frames a setting, and on until the thread has made every setting once (on a
       * loaded machine it may start late), for 20 s at most */
      const gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
      /* with max-frames-in-flight=1 a frame leaves when the next one comes: one frame may be
       * held at any time */
      int pushed = 0, received = 0;
      for (int i = 0; i < 3 * static_cast<int> (stress.settings.size ()) ||
           (stress.next < stress.settings.size () && g_get_monotonic_time () < deadline); i++) {
        fail_unless_equals_int (gst_harness_push (h, make_buffer (info, 0, i)), GST_FLOW_OK);
        pushed++;
        while (GstBuffer *out = gst_harness_try_pull (h)) {
          received++;
          gst_buffer_unref (out);
        }
        fail_unless (received >= pushed - 1, "%s: %d frames in, %d out", e.name, pushed, received);
      }
      gst_harness_stress_thread_stop (t);
      fail_unless (stress.next >= stress.settings.size (), "%s: only %zu of %zu settings made", e.name, stress.next.load (),
          stress.settings.size ());
      gst_object_unref (stress.element);
      gst_harness_teardown (h);
    }
  }
}
GST_END_TEST;

namespace {

/* A harness on @launch with a bus, fed @info; pushes @buf and expects a stream error for it. */
void expect_stream_error (const std::string &launch, const GstVideoInfo &info, GstBuffer *buf, const char *what)
{
  BusHarness b (launch);
  gst_harness_set_src_caps_str (b.h, caps_for (info).c_str ());
  gst_harness_set_sink_caps_str (b.h, "video/x-raw");
  GstFlowReturn ret = gst_harness_push (b.h, buf);
  fail_unless (ret == GST_FLOW_ERROR, "%s: %s gave %s, not an error", launch.c_str (), what, gst_flow_get_name (ret));
  GstMessage *msg = wait_error (b.bus);
  fail_unless (msg != nullptr, "%s: %s gave no error message", launch.c_str (), what);
  GError *err = nullptr;
  gst_message_parse_error (msg, &err, nullptr);
  fail_unless (err->domain == GST_STREAM_ERROR, "%s: %s gave %s", launch.c_str (), what, err->message);
  g_error_free (err);
  gst_message_unref (msg);
}

/* A buffer of @size bytes whose video meta gives @info's planes rows @row_pad bytes longer than
 * the caps' (shorter where negative), whatever @size holds. */
GstBuffer *buffer_with_meta (const GstVideoInfo &info, int row_pad, gsize size)
{
  gsize offsets[GST_VIDEO_MAX_PLANES] = {0};
  gint strides[GST_VIDEO_MAX_PLANES] = {0};
  padded_layout (info, row_pad, offsets, strides);
  GstBuffer *buf = gst_buffer_new_allocate (nullptr, size, nullptr);
  gst_buffer_memset (buf, 0, 0x55, size);
  add_video_meta (buf, info, offsets, strides);
  return buf;
}

/* The frame of @in (@info) in the top-left corner of a frame 16 pixels wider and 12 taller, whose
 * video meta says so. */
GstBuffer *in_larger_frame (GstBuffer *in, const GstVideoInfo &info)
{
  GstVideoInfo big;
  gst_video_info_set_format (&big, GST_VIDEO_INFO_FORMAT (&info), GST_VIDEO_INFO_WIDTH (&info) + 16,
      GST_VIDEO_INFO_HEIGHT (&info) + 12);
  GstBuffer *out = gst_buffer_new_allocate (nullptr, GST_VIDEO_INFO_SIZE (&big), nullptr);
  gst_buffer_memset (out, 0, 0x33, GST_VIDEO_INFO_SIZE (&big));
  add_video_meta (out, big, big.offset, big.stride);
  GstVideoFrame src, dst;
  GstVideoInfo i = info;
  fail_unless (gst_video_frame_map (&src, &i, in, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&dst, &big, out, GST_MAP_WRITE));
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (&info); p++) {
    int comp[GST_VIDEO_MAX_COMPONENTS];
    gst_video_format_info_component (info.finfo, p, comp);
    const int rows = GST_VIDEO_INFO_COMP_HEIGHT (&info, comp[0]);
    const int row_bytes = GST_VIDEO_INFO_COMP_WIDTH (&info, comp[0]) * GST_VIDEO_INFO_COMP_PSTRIDE (&info, comp[0]);
    for (int y = 0; y < rows; y++)
      memcpy (static_cast<guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (&dst, p)) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&dst, p),
          static_cast<const guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (&src, p)) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&src, p),
          row_bytes);
  }
  gst_video_frame_unmap (&dst);
  gst_video_frame_unmap (&src);
  gst_buffer_copy_into (out, in, GST_BUFFER_COPY_METADATA, 0, -1);
  return out;
}

/* The bytes of @buf in @parts separate memories, the last one from a foreign allocation. */
GstBuffer *split_into_memories (GstBuffer *buf, int parts)
{
  gsize size = gst_buffer_get_size (buf);
  GstBuffer *out = gst_buffer_new ();
  gsize at = 0;
  for (int i = 0; i < parts; i++) {
    gsize n = i == parts - 1 ? size - at : size / parts;
    gpointer bytes = g_malloc (n);
    gst_buffer_extract (buf, at, bytes, n);
    gst_buffer_append_memory (out, gst_memory_new_wrapped (static_cast<GstMemoryFlags> (0), bytes, n, 0, n, bytes, g_free));
    at += n;
  }
  gst_buffer_copy_into (out, buf, GST_BUFFER_COPY_METADATA, 0, -1);
  return out;
}

/* An allocator whose memory cannot be mapped (as some hardware memory cannot). */
struct SealedAllocator {
  GstAllocator parent;
};
struct SealedAllocatorClass {
  GstAllocatorClass parent_class;
};
G_DEFINE_TYPE (SealedAllocator, sealed_allocator, GST_TYPE_ALLOCATOR)

void sealed_allocator_class_init (SealedAllocatorClass *klass)
{
  GST_ALLOCATOR_CLASS (klass)->free = [] (GstAllocator *, GstMemory *mem) { g_free (mem); };
}

void sealed_allocator_init (SealedAllocator *self)
{
  GstAllocator *a = GST_ALLOCATOR (self);
  a->mem_type = "SealedMemory";
  a->mem_map = [] (GstMemory *, gsize, GstMapFlags) -> gpointer { return nullptr; };
  a->mem_unmap = [] (GstMemory *) {};
  a->mem_share = [] (GstMemory *, gssize, gssize) -> GstMemory * { return nullptr; };
  a->mem_copy = [] (GstMemory *, gssize, gssize) -> GstMemory * { return nullptr; };
  a->mem_is_span = [] (GstMemory *, GstMemory *, gsize *) -> gboolean { return FALSE; };
  GST_OBJECT_FLAG_SET (a, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

GstBuffer *sealed_buffer (gsize size)
{
  GstAllocator *allocator = GST_ALLOCATOR (g_object_new (sealed_allocator_get_type (), nullptr));
  gst_object_ref_sink (allocator);
  GstMemory *mem = g_new0 (GstMemory, 1);
  gst_memory_init (mem, static_cast<GstMemoryFlags> (0), allocator, nullptr, size, 0, 0, size);
  gst_object_unref (allocator); /* the memory holds one */
  GstBuffer *buf = gst_buffer_new ();
  gst_buffer_append_memory (buf, mem);
  return buf;
}

}  // namespace

/* Broken buffers from broken sources: a clear stream error, never a crash or a read past the end
 * (the ASan build proves the latter); odd but valid memory layouts work. */
GST_START_TEST (test_broken_and_foreign_buffers)
{
  for (const Route &r : routes ()) {
    if (r.cuda_memory)
      continue; /* the buffers are system memory; with cudaupload in front they would test cudaupload */
    for (const Element &e : kElements) {
      cuvtest::Timer timer ("broken buffers " + describe (e, r));
      const std::string launch = launch_for (e, r);
      for (GstVideoFormat f : {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420}) {
        GstVideoInfo info = info_for (f, 64, 48);
        const gsize size = GST_VIDEO_INFO_SIZE (&info);
        expect_stream_error (launch, info, gst_buffer_new_allocate (nullptr, 100, nullptr), "a short buffer");
        expect_stream_error (launch, info, gst_buffer_new (), "an empty buffer");
        expect_stream_error (launch, info, gst_buffer_new_allocate (nullptr, size - 1, nullptr), "a buffer one byte short");
        /* a video meta whose rows run past the end of the buffer */
        expect_stream_error (launch, info, buffer_with_meta (info, 64, size), "a video meta larger than the buffer");
        /* a video meta whose rows overlap (stride shorter than a row) */
        expect_stream_error (launch, info, buffer_with_meta (info, -GST_VIDEO_INFO_PLANE_STRIDE (&info, 0) / 2, size),
            "a video meta with a stride shorter than a row");

        GstBuffer *in = make_buffer (info, 0, 7);
        GstBuffer *want = run_once (launch, info, in);
        fail_unless (want != nullptr);
        const GstVideoInfo out = g_str_equal (e.name, "cudaheatmap") ? info_for (GST_VIDEO_FORMAT_RGBA, 64, 48) : info;
        /* padded rows without a video meta: the caps' layout is what counts, the rest is ignored */
        GstBuffer *longer = gst_buffer_new_allocate (nullptr, size + 4096, nullptr);
        gst_buffer_memset (longer, 0, 0x33, size + 4096);
        GstMapInfo map;
        fail_unless (gst_buffer_map (in, &map, GST_MAP_READ));
        gst_buffer_fill (longer, 0, map.data, map.size);
        gst_buffer_unmap (in, &map);
        GstBuffer *got = run_once (launch, info, longer);
        fail_unless (got != nullptr, "%s: a longer buffer gave nothing", launch.c_str ());
        fail_unless_equals_int (buffer_diff (got, want, out, launch + " longer buffer"), 0);
        gst_buffer_unref (got);
        gst_buffer_unref (longer);
        /* a video meta of a larger frame (a buffer from before a caps change, as input-selector
         * hands on): the caps' frame in its top-left corner */
        GstBuffer *larger = in_larger_frame (in, info);
        got = run_once (launch, info, larger);
        fail_unless (got != nullptr, "%s: a buffer of a larger frame gave nothing", launch.c_str ());
        fail_unless_equals_int (buffer_diff (got, want, out, launch + " larger frame"), 0);
        gst_buffer_unref (got);
        gst_buffer_unref (larger);
        /* the frame in three memories of foreign allocations */
        GstBuffer *split = split_into_memories (in, 3);
        got = run_once (launch, info, split);
        fail_unless (got != nullptr, "%s: a buffer of three memories gave nothing", launch.c_str ());
        fail_unless_equals_int (buffer_diff (got, want, out, launch + " three memories"), 0);
        gst_buffer_unref (got);
        gst_buffer_unref (split);
        /* memory that cannot be mapped */
        expect_stream_error (launch, info, sealed_buffer (size), "memory that cannot be mapped");
        gst_buffer_unref (want);
        gst_buffer_unref (in);
      }
    }
  }
}
GST_END_TEST;

namespace {

struct ThreadRun {
  std::vector<GstBuffer *> frames;
  bool eos = false;
};

/* @launch to its end in this thread (no check macros: they belong to the test's thread). */
void run_to_end (const std::string &launch, ThreadRun *out)
{
  GstElement *pipe = new_pipeline (launch);
  if (!pipe)
    return;
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  if (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE) {
    while (GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 30 * GST_SECOND)) {
      out->frames.push_back (gst_buffer_ref (gst_sample_get_buffer (sample)));
      gst_sample_unref (sample);
    }
    out->eos = gst_app_sink_is_eos (GST_APP_SINK (sink));
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipe);
}

}  // namespace

/* Sixteen pipelines of all six elements in sixteen threads of one process give what one gives alone. */
GST_START_TEST (test_sixteen_pipelines_in_sixteen_threads)
{
  const int n = 16, frames = 20;
  for (const Route &r : routes ()) {
    const std::string launch = "videotestsrc num-buffers=" + std::to_string (frames) +
        " pattern=ball ! video/x-raw,format=RGBA,width=160,height=120 ! " + chain_for (r) +
        " ! video/x-raw ! appsink name=sink sync=false";
    cuvtest::Timer timer ("16 threads of " + launch);
    ThreadRun alone;
    run_to_end (launch, &alone);
    fail_unless_equals_int (alone.frames.size (), frames);
    std::vector<ThreadRun> runs (n);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; i++)
      threads.emplace_back (run_to_end, launch, &runs[i]);
    for (std::thread &t : threads)
      t.join ();
    GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 160, 120);
    for (int i = 0; i < n; i++) {
      fail_unless (runs[i].eos, "thread %d did not reach EOS", i);
      fail_unless_equals_int (runs[i].frames.size (), frames);
      for (int f = 0; f < frames; f++) {
        const std::string what = "thread " + std::to_string (i) + " frame " + std::to_string (f);
        fail_unless_equals_int (buffer_diff (runs[i].frames[f], alone.frames[f], info, what), 0);
        for (const Element &e : kElements)
          fail_unless (!e.meta || same_meta (runs[i].frames[f], alone.frames[f], e.meta), "%s: %s differs",
              what.c_str (), e.meta);
        gst_buffer_unref (runs[i].frames[f]);
      }
    }
    for (GstBuffer *b : alone.frames)
      gst_buffer_unref (b);
  }
}
GST_END_TEST;

/* After each test, passed or failed: the pipelines a failed test left running (gst-check waits for
 * every streaming thread after a test). */
static void
stop_leftovers (void)
{
  stop_live_pipelines ();
}

static Suite *
cudavision_stress_suite (void)
{
  Suite *s = suite_create ("cudavision-stress");
  TCase *tc = pipeline_tcase (s, "stress", 600, stop_leftovers);
  tcase_add_test (tc, test_caps_changes_mid_stream);
  tcase_add_test (tc, test_flushing_seeks_and_eos_mid_stream);
  tcase_add_test (tc, test_state_cycles_with_buffers_flowing);
  tcase_add_test (tc, test_every_property_from_another_thread);
  tcase_add_test (tc, test_broken_and_foreign_buffers);
  tcase_add_test (tc, test_sixteen_pipelines_in_sixteen_threads);
  return s;
}

/* gst_check_run_suite () ends with gst_deinit (): with GST_TRACERS=leaks, a GStreamer object
 * still alive there is a g_warning, which gst-check makes fatal. */
CUV_CHECK_MAIN (cudavision_stress)
