/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/camera.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "runner/contexts.h"
#include "runner/json.h"
#include "runner/openfiles.h"
#include "runner/pipeline.h"
#include "runner/results.h"

namespace cuvrun {


/* descriptors a camera leaves free before it starts: its pipeline's (about 8) and the metrics
 * server's reserve (16) */
constexpr long kCameraSpareFiles = 32;

Camera::Camera (const CameraConfig &camera, const RunnerConfig &runner, Publisher &publisher)
    : cam_ (camera), runner_ (runner), pub_ (publisher)
{
}

Camera::~Camera ()
{
  stop ();
}

void Camera::start ()
{
  restart_timer_ = 0;
  if (stopping_)
    return;
  /* a pipeline made without descriptors to spare gets a bus without its wake-up descriptor, which
   * floods the log with GLib's criticals for ever; it waits for them instead, as any failure does */
  const long spare = spare_files ();
  if (spare < kCameraSpareFiles) {
    fail ("too few file descriptors free to start (" + std::to_string (spare) + " of the open-files limit " +
        std::to_string (open_files_limit ()) + "; a camera needs about 8, and the metrics server keeps 16)");
    return;
  }
  CameraPipeline p;
  std::string why;
  if (!build_camera_pipeline (cam_, &p, &why)) {
    fail ("the pipeline does not build: " + why);
    return;
  }
  pipeline_ = p.pipeline;
  /* a file that loops stands in for a camera: at its own rate; one that ends is analysed as fast
   * as the elements go */
  if (cam_.loop)
    g_object_set (p.sink, "sync", TRUE, nullptr);
  if (cam_.cuda_device_id >= 0)
    set_cuda_device (pipeline_, cam_.cuda_device_id);
  topics_ = element_topics (pipeline_);
  cpu_fallbacks_.clear ();
  /* each frame as the sink renders it: after its clock wait where it syncs (a loop), so that its
   * age is the one a viewer would see */
  g_object_set (p.sink, "signal-handoffs", TRUE, nullptr);
  g_signal_connect (p.sink, "handoff", G_CALLBACK (on_frame), this);
  g_signal_connect (p.queue, "overrun", G_CALLBACK (on_overrun), this);
  share_cuda_contexts (pipeline_);
  GstBus *bus = gst_element_get_bus (pipeline_);
  bus_watch_ = gst_bus_add_watch (bus, on_bus, this);
  gst_object_unref (bus);
  frames_at_start_ = frames_;
  last_frame_us_ = g_get_monotonic_time ();
  playing_ = false;
  watchdog_ = g_timeout_add (std::max (100, runner_.stall_ms / 4), on_watchdog, this);
  const GstStateChangeReturn paused = gst_element_set_state (pipeline_, GST_STATE_PAUSED);
  /* a live camera is never held up: its queue drops the oldest frame when the analysis falls
   * behind; a file or a stream that is not live waits for the analysis, so every frame is seen */
  live_ = paused == GST_STATE_CHANGE_NO_PREROLL;
  if (live_)
    g_object_set (p.queue, "leaky", 2 /* downstream */, nullptr);
  if (paused == GST_STATE_CHANGE_FAILURE || gst_element_set_state (pipeline_, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    fail ("the pipeline does not start" + bus_error ());
}

/* The reason an element posted for a failed state change (": source: No such file ..."), or empty. */
std::string Camera::bus_error ()
{
  GstBus *bus = gst_element_get_bus (pipeline_);
  GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  gst_object_unref (bus);
  if (!m)
    return "";
  const std::string why = ": " + error_text (m);
  gst_message_unref (m);
  return why;
}

/* An error message as the log says it: its element's topic name and GStreamer's words, with the
 * debug text's last line where the words alone say nothing ("Internal data stream error."). */
std::string Camera::error_text (GstMessage *m) const
{
  GError *err = nullptr;
  gchar *dbg = nullptr;
  gst_message_parse_error (m, &err, &dbg);
  std::string why = element_name (GST_MESSAGE_SRC (m)) + ": " + err->message;
  if (dbg && err->domain == GST_STREAM_ERROR && err->code == GST_STREAM_ERROR_FAILED) {
    std::string d = dbg;
    d = d.substr (d.find_last_of ('\n') == std::string::npos ? 0 : d.find_last_of ('\n') + 1);
    why += " (" + d + ")";
  }
  g_error_free (err);
  g_free (dbg);
  return why;
}

/* Once the pipeline plays, each element with a backend: what it runs on. "auto" is CUDA unless the
 * element warned at start that it found no usable device and runs on the CPU (on_warning). */
void Camera::find_backends ()
{
  backends_.clear ();
  for (const auto &[object, level] : topics_) {
    GParamSpec *spec = g_object_class_find_property (G_OBJECT_GET_CLASS (object), "backend");
    if (!spec)
      continue;
    GValue v = G_VALUE_INIT;
    g_value_init (&v, spec->value_type);
    g_object_get_property (G_OBJECT (object), "backend", &v);
    gchar *backend = gst_value_serialize (&v);
    g_value_unset (&v);
    backends_[level] = (backend && g_str_equal (backend, "cpu")) || cpu_fallbacks_.count (level) ? "cpu" : "cuda";
    g_free (backend);
  }
}

void Camera::teardown ()
{
  if (watchdog_)
    g_source_remove (watchdog_);
  watchdog_ = 0;
  if (!pipeline_)
    return;
  if (bus_watch_)
    g_source_remove (bus_watch_);
  bus_watch_ = 0;
  gst_element_set_state (pipeline_, GST_STATE_NULL);
  /* results the analysers posted before an error, a stall or the stop that the main loop had not
   * read yet: frames that were analysed, so they go to the broker like the others */
  GstBus *bus = gst_element_get_bus (pipeline_);
  while (GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT)) {
    if (is_result (m))
      publish_result (m);
    gst_message_unref (m);
  }
  gst_object_unref (bus);
  gst_object_unref (pipeline_);
  pipeline_ = nullptr;
  topics_.clear ();
  playing_ = false;
}

void Camera::stop ()
{
  stopping_ = true;
  if (restart_timer_)
    g_source_remove (restart_timer_);
  restart_timer_ = 0;
  teardown ();
}

/* The pipeline is gone (an error, the end of a live stream, a stall): it starts again after a
 * backoff that doubles with each failure in a row; a camera that keeps failing is reported and
 * retried at the longest backoff, never in a tight loop. */
void Camera::fail (const std::string &why)
{
  teardown ();
  if (stopping_)
    return;
  if (frames_ > frames_at_start_)
    failures_in_a_row_ = 0;
  failures_in_a_row_++;
  restarts_++;
  restarts_since_playing_++;
  reason_ = why;
  int delay = runner_.restart_min_ms;
  for (int i = 1; i < failures_in_a_row_ && delay < runner_.restart_max_ms; i++)
    delay *= 2;
  delay = std::min (delay, runner_.restart_max_ms);
  const bool failing = failures_in_a_row_ >= runner_.failing_after;
  g_printerr ("cudavision-run: camera %s: %s; %s in %d ms\n", cam_.name.c_str (), why.c_str (),
      failing ? "failing, trying again" : "restarting", delay);
  publish_state (failing ? "failing" : "restarting", why);
  restart_timer_ = g_timeout_add (delay, [] (gpointer self) -> gboolean {
    static_cast<Camera *> (self)->start ();
    return G_SOURCE_REMOVE;
  }, this);
}

std::string Camera::element_name (GstObject *element) const
{
  const auto topic = topics_.find (element);
  return topic != topics_.end () ? topic->second : GST_OBJECT_NAME (element);
}

/* A source that is not live reached its end: every frame was analysed. The camera ends there, or
 * with loop=true (where the source could not seek to its start) starts the pipeline again. */
/* frames may end this much before a file's stated duration (a last frame's rounding, an audio
 * track longer than the video) without a warning */
constexpr guint64 kEarlyEndNs = GST_SECOND / 2;

void Camera::end ()
{
  if (frames_ == frames_at_start_) {
    fail ("end of stream before any frame");
    return;
  }
  /* a file whose frames stop well before the duration its header gives was cut short or damaged:
   * the demuxer and the decoder end it as a normal end of stream, so it is said here */
  gint64 duration = -1;
  const guint64 last = last_frame_end_ns_;
  std::string early;
  if (gst_element_query_duration (pipeline_, GST_FORMAT_TIME, &duration) && duration > 0 &&
      GST_CLOCK_TIME_IS_VALID (last) && last + kEarlyEndNs < static_cast<guint64> (duration)) {
    char text[160];
    std::snprintf (text, sizeof text, "its last frame ends at %.2f s of the %.2f s the file says it lasts (truncated or damaged?)",
        static_cast<double> (last) / GST_SECOND, static_cast<double> (duration) / GST_SECOND);
    early = text;
    g_printerr ("cudavision-run: camera %s: warning: the file ends early: %s\n", cam_.name.c_str (), early.c_str ());
    warnings_++;
  }
  teardown ();
  if (cam_.loop) {
    loops_++;
    start ();
    return;
  }
  ended_ = true;
  reason_ = early.empty () ? "end of stream" : "end of stream, early: " + early;
  g_printerr ("cudavision-run: camera %s: end of stream after %llu frames; ended\n", cam_.name.c_str (),
      static_cast<unsigned long long> (frames_.load ()));
  publish_state ("ended", reason_);
}

/* A warning is logged with its camera, the first time it comes; the one that says an element runs
 * on the CPU (no usable CUDA device) also shows in cudavision_camera_backend. */
void Camera::on_warning (GstMessage *m)
{
  GError *err = nullptr;
  gchar *dbg = nullptr;
  gst_message_parse_warning (m, &err, &dbg);
  const std::string element = element_name (GST_MESSAGE_SRC (m));
  warnings_++;
  /* each warning once a camera: a pipeline that restarts or loops says the same again */
  if (logged_warnings_.insert (element + ": " + err->message).second)
    g_printerr ("cudavision-run: camera %s: warning from %s: %s\n", cam_.name.c_str (), element.c_str (), err->message);
  if (err->domain == GST_RESOURCE_ERROR && err->code == GST_RESOURCE_ERROR_NOT_FOUND)
    cpu_fallbacks_.insert (element);
  g_error_free (err);
  g_free (dbg);
}

gboolean Camera::on_watchdog (gpointer self)
{
  auto *c = static_cast<Camera *> (self);
  if (g_get_monotonic_time () - c->last_frame_us_ > static_cast<gint64> (c->runner_.stall_ms) * 1000) {
    c->watchdog_ = 0;
    c->fail ("no frame for " + std::to_string (c->runner_.stall_ms) + " ms");
    return G_SOURCE_REMOVE;
  }
  return G_SOURCE_CONTINUE;
}

void Camera::on_frame (GstElement *sink, GstBuffer *buf, GstPad *pad, gpointer self)
{
  auto *c = static_cast<Camera *> (self);
  c->frames_++;
  c->last_frame_us_ = g_get_monotonic_time ();
  if (GST_BUFFER_PTS_IS_VALID (buf))
    c->last_frame_end_ns_ = GST_BUFFER_PTS (buf) + (GST_BUFFER_DURATION_IS_VALID (buf) ? GST_BUFFER_DURATION (buf) : 0);
  /* the frame's age: the clock now against the time the pipeline says the frame is for; only a
   * live source's (a camera's). A file analysed as fast as it goes has no age, and a looping
   * file's running times after its seeks did not give one on GStreamer 1.26 (docs/fleet.md) */
  if (!c->live_)
    return;
  GstClock *clock = gst_element_get_clock (sink);
  GstEvent *seg_event = gst_pad_get_sticky_event (pad, GST_EVENT_SEGMENT, 0);
  if (clock && seg_event && GST_BUFFER_PTS_IS_VALID (buf)) {
    const GstSegment *seg;
    gst_event_parse_segment (seg_event, &seg);
    const GstClockTime rt = gst_segment_to_running_time (seg, GST_FORMAT_TIME, GST_BUFFER_PTS (buf));
    const GstClockTime now = gst_clock_get_time (clock), base = gst_element_get_base_time (sink);
    if (GST_CLOCK_TIME_IS_VALID (rt)) {
      /* a frame rendered ahead of its time (a live source's clock a little behind) is 0 old */
      const GstClockTime age_ns = now >= base + rt ? now - base - rt : 0;
      const double age = static_cast<double> (age_ns) / GST_SECOND;
      const double prev = c->latency_s_;
      c->latency_s_ = prev == 0.0 ? age : 0.9 * prev + 0.1 * age;
      const size_t bucket = std::lower_bound (kAgeBuckets.begin (), kAgeBuckets.end (), age) - kAgeBuckets.begin ();
      c->age_buckets_[bucket]++;
      c->age_sum_ns_ += age_ns;
    }
  }
  if (seg_event)
    gst_event_unref (seg_event);
  if (clock)
    gst_object_unref (clock);
}

void Camera::on_overrun (GstElement *, gpointer self)
{
  /* a full queue drops a frame only where it is leaky (live sources); elsewhere it waits */
  auto *c = static_cast<Camera *> (self);
  if (c->live_)
    c->dropped_++;
}

gboolean Camera::on_bus (GstBus *, GstMessage *m, gpointer self)
{
  auto *c = static_cast<Camera *> (self);
  switch (GST_MESSAGE_TYPE (m)) {
    case GST_MESSAGE_ELEMENT:
      /* an analyser's results, whichever analyser (runner/results.h) */
      if (is_result (m))
        c->publish_result (m);
      break;
    case GST_MESSAGE_ERROR: {
      const std::string why = c->error_text (m);
      c->bus_watch_ = 0; /* removed by returning FALSE below */
      c->fail (why);
      return G_SOURCE_REMOVE;
    }
    case GST_MESSAGE_WARNING:
      c->on_warning (m);
      break;
    case GST_MESSAGE_EOS:
      /* a file that loops seeks back to its start: the same pipeline, its elements' contexts kept */
      if (!c->live_ && c->cam_.loop && c->frames_ > c->frames_at_start_ &&
          gst_element_seek_simple (c->pipeline_, GST_FORMAT_TIME, GST_SEEK_FLAG_FLUSH, 0)) {
        c->loops_++;
        return G_SOURCE_CONTINUE;
      }
      c->bus_watch_ = 0;
      if (c->live_)
        c->fail ("end of stream");
      else
        c->end ();
      return G_SOURCE_REMOVE;
    case GST_MESSAGE_STATE_CHANGED:
      if (GST_MESSAGE_SRC (m) == GST_OBJECT (c->pipeline_)) {
        GstState state;
        gst_message_parse_state_changed (m, nullptr, &state, nullptr);
        if (state == GST_STATE_PLAYING && !c->playing_) {
          c->playing_ = true;
          c->find_backends ();
          /* the restarts since it last played, not its lifetime's (cudavision_camera_restarts_total) */
          if (c->restarts_since_playing_ > 0)
            g_printerr ("cudavision-run: camera %s: playing again after %llu restart%s\n", c->cam_.name.c_str (),
                static_cast<unsigned long long> (c->restarts_since_playing_), c->restarts_since_playing_ == 1 ? "" : "s");
          c->restarts_since_playing_ = 0;
          c->publish_state ("playing", "");
        }
      }
      break;
    default:
      break;
  }
  return G_SOURCE_CONTINUE;
}

void Camera::publish_state (const char *state, const std::string &why)
{
  Json j;
  j.add ("camera", cam_.name);
  j.add ("state", state);
  j.add ("restarts", static_cast<gint64> (restarts_));
  j.add ("frames", static_cast<gint64> (frames_.load ()));
  if (!why.empty ())
    j.add ("reason", why);
  j.add ("time-us", g_get_real_time ());
  /* retained: a subscriber that comes later learns each camera's state */
  pub_.publish (runner_.topic_prefix + "/" + cam_.name + "/state", j.text (), true);
}

void Camera::publish_result (GstMessage *m)
{
  const GstStructure *s = gst_message_get_structure (m);
  const std::string element = element_name (GST_MESSAGE_SRC (m));
  Json j;
  j.add ("camera", cam_.name);
  j.add ("element", element);
  j.add ("run", runner_.run_id);
  j.add ("seq", static_cast<gint64> (++seq_));
  j.add ("time-us", g_get_real_time ());
  j.add_structure ("result", s);
  results_++;
  pub_.publish (runner_.topic_prefix + "/" + cam_.name + "/" + element, j.text ());
}

CameraStats Camera::stats () const
{
  CameraStats s{};
  s.frames = frames_;
  s.dropped = dropped_;
  s.restarts = restarts_;
  s.loops = loops_;
  s.results = results_;
  s.warnings = warnings_;
  s.ended = ended_;
  s.live = live_;
  s.reason = reason_;
  s.backends = backends_;
  s.up = pipeline_ != nullptr && playing_ &&
      g_get_monotonic_time () - last_frame_us_ < static_cast<gint64> (runner_.stall_ms) * 1000;
  s.failing = failures_in_a_row_ >= runner_.failing_after && frames_ == frames_at_start_;
  s.latency_s = latency_s_;
  s.age_count = 0;
  for (size_t i = 0; i < age_buckets_.size (); i++) {
    s.age_buckets[i] = age_buckets_[i];
    s.age_count += s.age_buckets[i];
  }
  s.age_sum_s = static_cast<double> (age_sum_ns_.load ()) / GST_SECOND;
  return s;
}

bool Camera::ready () const
{
  return frames_ > 0 || ended_ || (failures_in_a_row_ >= runner_.failing_after && !reason_.empty ());
}

}  // namespace cuvrun
