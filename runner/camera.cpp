/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/camera.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "runner/json.h"

namespace cuvrun {

namespace {

/* the analysers' element messages (docs/results.md) */
bool is_result (const GstStructure *s)
{
  const char *name = gst_structure_get_name (s);
  return g_str_equal (name, "cudahistogram") || g_str_equal (name, "cudaheatmap") ||
      g_str_equal (name, "cudanoisemap") || g_str_equal (name, "cudamotionest");
}

/* Sets cuda-device-id on each element of @bin that has it. */
void set_device (GstElement *bin, int device)
{
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (bin));
  GValue item = G_VALUE_INIT;
  while (gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    GObject *e = G_OBJECT (g_value_get_object (&item));
    if (g_object_class_find_property (G_OBJECT_GET_CLASS (e), "cuda-device-id"))
      g_object_set (e, "cuda-device-id", device, nullptr);
    g_value_reset (&item);
  }
  g_value_unset (&item);
  gst_iterator_free (it);
}

}  // namespace

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
  /* the decoder's frames through a short queue that drops the oldest when the analysis falls
   * behind a live camera, so that the camera is never held up */
  gchar *desc = g_strdup_printf ("uridecodebin uri=\"%s\" ! queue name=cuvrun-queue max-size-buffers=4 "
      "max-size-bytes=0 max-size-time=0 leaky=downstream ! %s ! fakesink name=cuvrun-sink sync=false",
      cam_.uri.c_str (), cam_.pipeline.c_str ());
  GError *err = nullptr;
  pipeline_ = gst_parse_launch_full (desc, nullptr, GST_PARSE_FLAG_FATAL_ERRORS, &err);
  g_free (desc);
  if (!pipeline_) {
    fail (std::string ("the pipeline does not build: ") + (err ? err->message : "unknown error"));
    g_clear_error (&err);
    return;
  }
  if (cam_.cuda_device_id >= 0)
    set_device (pipeline_, cam_.cuda_device_id);
  name_topics ();
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline_), "cuvrun-sink");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_frame, this, nullptr);
  gst_object_unref (pad);
  gst_object_unref (sink);
  GstElement *queue = gst_bin_get_by_name (GST_BIN (pipeline_), "cuvrun-queue");
  g_signal_connect (queue, "overrun", G_CALLBACK (on_overrun), this);
  gst_object_unref (queue);
  GstBus *bus = gst_element_get_bus (pipeline_);
  bus_watch_ = gst_bus_add_watch (bus, on_bus, this);
  gst_object_unref (bus);
  frames_at_start_ = frames_;
  last_frame_us_ = g_get_monotonic_time ();
  playing_ = false;
  watchdog_ = g_timeout_add (std::max (100, runner_.stall_ms / 4), on_watchdog, this);
  if (gst_element_set_state (pipeline_, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    fail ("the pipeline does not start");
}

void Camera::name_topics ()
{
  topics_.clear ();
  /* GStreamer numbers unnamed elements across the process (cudahistogram3 after a restart) */
  std::map<std::string, std::vector<std::pair<long, GstObject *>>> unnamed;
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (pipeline_));
  GValue item = G_VALUE_INIT;
  while (gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    GstElement *e = GST_ELEMENT (g_value_get_object (&item));
    GstElementFactory *f = gst_element_get_factory (e);
    const char *factory = f ? GST_OBJECT_NAME (f) : "";
    const char *name = GST_OBJECT_NAME (e);
    const size_t n = std::strlen (factory);
    if (n && g_str_has_prefix (name, factory) && name[n] && std::strspn (name + n, "0123456789") == std::strlen (name + n))
      unnamed[factory].push_back ({std::atol (name + n), GST_OBJECT (e)});
    else
      topics_[GST_OBJECT (e)] = name;
    g_value_reset (&item);
  }
  g_value_unset (&item);
  gst_iterator_free (it);
  for (auto &[factory, elements] : unnamed) {
    std::sort (elements.begin (), elements.end ());
    for (size_t i = 0; i < elements.size (); i++)
      topics_[elements[i].second] = elements.size () == 1 ? factory : factory + "-" + std::to_string (i + 1);
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

GstPadProbeReturn Camera::on_frame (GstPad *pad, GstPadProbeInfo *info, gpointer self)
{
  auto *c = static_cast<Camera *> (self);
  c->frames_++;
  c->last_frame_us_ = g_get_monotonic_time ();
  /* the frame's age: the clock now against the time the pipeline says the frame is for */
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstElement *sink = GST_ELEMENT (gst_pad_get_parent (pad));
  GstClock *clock = sink ? gst_element_get_clock (sink) : nullptr;
  GstEvent *seg_event = gst_pad_get_sticky_event (pad, GST_EVENT_SEGMENT, 0);
  if (clock && seg_event && GST_BUFFER_PTS_IS_VALID (buf)) {
    const GstSegment *seg;
    gst_event_parse_segment (seg_event, &seg);
    const GstClockTime rt = gst_segment_to_running_time (seg, GST_FORMAT_TIME, GST_BUFFER_PTS (buf));
    const GstClockTime now = gst_clock_get_time (clock), base = gst_element_get_base_time (sink);
    if (GST_CLOCK_TIME_IS_VALID (rt) && now >= base + rt) {
      const double age = static_cast<double> (now - base - rt) / GST_SECOND;
      const double prev = c->latency_s_;
      c->latency_s_ = prev == 0.0 ? age : 0.9 * prev + 0.1 * age;
    }
  }
  if (seg_event)
    gst_event_unref (seg_event);
  if (clock)
    gst_object_unref (clock);
  if (sink)
    gst_object_unref (sink);
  return GST_PAD_PROBE_OK;
}

void Camera::on_overrun (GstElement *, gpointer self)
{
  static_cast<Camera *> (self)->dropped_++;
}

gboolean Camera::on_bus (GstBus *, GstMessage *m, gpointer self)
{
  auto *c = static_cast<Camera *> (self);
  switch (GST_MESSAGE_TYPE (m)) {
    case GST_MESSAGE_ELEMENT: {
      const GstStructure *s = gst_message_get_structure (m);
      if (s && is_result (s))
        c->publish_result (m);
      break;
    }
    case GST_MESSAGE_ERROR: {
      GError *err = nullptr;
      gchar *dbg = nullptr;
      gst_message_parse_error (m, &err, &dbg);
      const std::string why = std::string (GST_OBJECT_NAME (GST_MESSAGE_SRC (m))) + ": " + err->message;
      g_error_free (err);
      g_free (dbg);
      c->bus_watch_ = 0; /* removed by returning FALSE below */
      c->fail (why);
      return G_SOURCE_REMOVE;
    }
    case GST_MESSAGE_EOS:
      c->bus_watch_ = 0;
      c->fail ("end of stream");
      return G_SOURCE_REMOVE;
    case GST_MESSAGE_STATE_CHANGED:
      if (GST_MESSAGE_SRC (m) == GST_OBJECT (c->pipeline_)) {
        GstState state;
        gst_message_parse_state_changed (m, nullptr, &state, nullptr);
        if (state == GST_STATE_PLAYING && !c->playing_) {
          c->playing_ = true;
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
  if (!why.empty ())
    j.add ("reason", why);
  j.add ("time-us", g_get_real_time ());
  pub_.publish (runner_.topic_prefix + "/" + cam_.name + "/state", j.text ());
}

void Camera::publish_result (GstMessage *m)
{
  const GstStructure *s = gst_message_get_structure (m);
  const auto topic = topics_.find (GST_MESSAGE_SRC (m));
  const std::string element = topic != topics_.end () ? topic->second : GST_OBJECT_NAME (GST_MESSAGE_SRC (m));
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
  s.results = results_;
  s.up = pipeline_ != nullptr && playing_ &&
      g_get_monotonic_time () - last_frame_us_ < static_cast<gint64> (runner_.stall_ms) * 1000;
  s.failing = failures_in_a_row_ >= runner_.failing_after && frames_ == frames_at_start_;
  s.latency_s = latency_s_;
  return s;
}

}  // namespace cuvrun
