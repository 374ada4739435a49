/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/metrics.h"

#include "runner/exposition.h"

namespace cuvrun {

Metrics::Metrics (const std::vector<std::unique_ptr<Camera>> &cameras, Publisher &publisher, std::string shard,
    HttpLimits limits)
    : cameras_ (cameras), pub_ (publisher), shard_ (std::move (shard)),
      server_ (limits, [this] (const char *path) { return answer (path); }), last_frames_ (cameras.size (), 0),
      fps_ (cameras.size (), 0.0)
{
  last_sample_us_ = g_get_monotonic_time ();
  sampler_ = g_timeout_add (1000, sample, this);
}

Metrics::~Metrics ()
{
  if (sampler_)
    g_source_remove (sampler_);
}

gboolean Metrics::sample (gpointer self)
{
  auto *m = static_cast<Metrics *> (self);
  const gint64 now = g_get_monotonic_time ();
  const double seconds = (now - m->last_sample_us_) / 1e6;
  for (size_t i = 0; i < m->cameras_.size (); i++) {
    const uint64_t frames = m->cameras_[i]->stats ().frames;
    m->fps_[i] = seconds > 0 ? (frames - m->last_frames_[i]) / seconds : 0.0;
    m->last_frames_[i] = frames;
  }
  m->last_sample_us_ = now;
  return G_SOURCE_CONTINUE;
}

namespace {

/* Every frame's age at the sink, a histogram a camera (Prometheus' cumulative buckets). */
void age_histogram (std::string &out, const std::vector<std::unique_ptr<Camera>> &cameras, const std::vector<CameraStats> &s)
{
  Family f (out, "cudavision_camera_frame_age_seconds", "histogram",
      "Each frame's age when it leaves the pipeline: the clock against the time the frame is for (live sources).");
  for (size_t i = 0; i < cameras.size (); i++) {
    const std::string &name = cameras[i]->config ().name;
    uint64_t below = 0;
    for (size_t b = 0; b < s[i].age_buckets.size (); b++) {
      below += s[i].age_buckets[b];
      f.sample ("_bucket", {{"camera", name}, {"le", b < kAgeBuckets.size () ? number (kAgeBuckets[b]) : "+Inf"}}, below);
    }
    f.sample ("_sum", {{"camera", name}}, s[i].age_sum_s);
    f.sample ("_count", {{"camera", name}}, s[i].age_count);
  }
}

}  // namespace

std::string Metrics::text ()
{
  std::vector<CameraStats> s;
  for (const auto &c : cameras_)
    s.push_back (c->stats ());
  std::string out;
  /* one family a camera's field: VALUE (i) gives camera i's sample */
  auto per_camera = [&] (const char *name, const char *type, const char *help, auto value) {
    Family f (out, name, type, help);
    for (size_t i = 0; i < cameras_.size (); i++)
      f.sample ({{"camera", cameras_[i]->config ().name}}, value (i));
  };
  per_camera ("cudavision_camera_frames_total", "counter", "Frames that went through the camera's pipeline.",
      [&] (size_t i) { return s[i].frames; });
  per_camera ("cudavision_camera_fps", "gauge", "Frames a second over the last second.", [&] (size_t i) { return fps_[i]; });
  per_camera ("cudavision_camera_dropped_frames_total", "counter",
      "Frames a live camera's queue dropped because the analysis fell behind.", [&] (size_t i) { return s[i].dropped; });
  per_camera ("cudavision_camera_restarts_total", "counter", "Times the camera's pipeline was started again after a failure.",
      [&] (size_t i) { return s[i].restarts; });
  per_camera ("cudavision_camera_loops_total", "counter", "Times a file camera with loop=true started again at its end.",
      [&] (size_t i) { return s[i].loops; });
  per_camera ("cudavision_camera_up", "gauge", "1 while the camera plays and frames arrive.",
      [&] (size_t i) { return s[i].up ? 1 : 0; });
  per_camera ("cudavision_camera_failing", "gauge", "1 when the camera failed failing-after times in a row.",
      [&] (size_t i) { return s[i].failing ? 1 : 0; });
  per_camera ("cudavision_camera_ended", "gauge", "1 when a camera that is not live reached its end (loop=false).",
      [&] (size_t i) { return s[i].ended ? 1 : 0; });
  per_camera ("cudavision_camera_live", "gauge", "1 when the camera's source is live (its queue drops frames, never waits).",
      [&] (size_t i) { return s[i].live ? 1 : 0; });
  per_camera ("cudavision_camera_latency_seconds", "gauge",
      "A frame's age when it leaves the pipeline (live sources), smoothed.", [&] (size_t i) { return s[i].latency_s; });
  age_histogram (out, cameras_, s);
  per_camera ("cudavision_camera_results_total", "counter", "Analyser results the camera published.",
      [&] (size_t i) { return s[i].results; });
  per_camera ("cudavision_camera_warnings_total", "counter", "GStreamer warnings from the camera's pipeline (logged).",
      [&] (size_t i) { return s[i].warnings; });
  per_camera ("cudavision_camera_cuda_device", "gauge", "The CUDA device the camera's elements were given (-1: their default).",
      [&] (size_t i) { return cameras_[i]->config ().cuda_device_id; });
  {
    Family f (out, "cudavision_camera_backend", "gauge", "1 for what each element of the camera runs on (cuda or cpu).");
    for (size_t i = 0; i < cameras_.size (); i++)
      for (const auto &[element, backend] : s[i].backends)
        f.sample ({{"camera", cameras_[i]->config ().name}, {"element", element}, {"backend", backend}}, 1);
  }
  const PublisherStats p = pub_.stats ();
  Family (out, "cudavision_results_queued", "gauge", "Results waiting for the broker or its acknowledgement.")
      .sample ({}, p.queued);
  Family (out, "cudavision_results_published_total", "counter", "Results the broker acknowledged.").sample ({}, p.published);
  {
    Family f (out, "cudavision_results_dropped_total", "counter",
        "Results that never reached the broker: queue-full (the broker was away too long), refused (the client "
        "refused the topic or payload), shutdown (still queued when the runner stopped).");
    for (const char *reason : {kDroppedQueueFull, kDroppedRefused, kDroppedShutdown}) {
      const auto it = p.dropped.find (reason);
      f.sample ({{"reason", reason}}, it != p.dropped.end () ? it->second : uint64_t{0});
    }
  }
  Family (out, "cudavision_broker_connected", "gauge", "1 while connected to the MQTT broker.").sample ({}, p.connected ? 1 : 0);
  Family (out, "cudavision_broker_connects_total", "counter", "Connections the MQTT broker accepted.").sample ({}, p.connects);
  Family (out, "cudavision_broker_session_takeovers_total", "counter",
      "Times another client with this runner's client id took its session (two runners of one id).")
      .sample ({}, p.takeovers);
  Family (out, "cudavision_shard_cameras", "gauge", "Cameras in this runner's shard (0: a warning at start).")
      .sample ({}, static_cast<uint64_t> (cameras_.size ()));
  Family (out, "cudavision_shard_info", "gauge", "The shard this runner runs, as I/N.").sample ({{"shard", shard_}}, 1);
  const HttpStats h = server_.stats ();
  Family (out, "cudavision_http_connections", "gauge", "Connections open to this metrics server (metrics-connections at most).")
      .sample ({}, h.open);
  Family (out, "cudavision_http_connections_evicted_total", "counter",
      "Connections closed to make room for a new one: the oldest without a finished request, at metrics-connections "
      "or when the process is short of file descriptors.")
      .sample ({}, h.evicted);
  return out;
}

bool Metrics::ready (std::string *why)
{
  const PublisherStats p = pub_.stats ();
  if (!p.connected)
    *why += "broker: not connected" + (p.last_error.empty () ? std::string () : " (" + p.last_error + ")") + "\n";
  for (const auto &c : cameras_)
    if (!c->ready ())
      *why += "camera " + c->config ().name + ": no frame yet\n";
  return why->empty ();
}

HttpResponse Metrics::answer (const char *path)
{
  if (g_str_equal (path, "/healthz"))
    return HttpResponse {200, "text/plain; charset=utf-8", "ok\n"};
  if (g_str_equal (path, "/readyz")) {
    std::string why;
    const bool ready = this->ready (&why);
    return HttpResponse {ready ? 200u : 503u, "text/plain; charset=utf-8", ready ? "ready\n" : why};
  }
  if (g_str_equal (path, "/metrics"))
    return HttpResponse {200, "text/plain; version=0.0.4; charset=utf-8", text ()};
  return HttpResponse {404, "text/plain; charset=utf-8", "/metrics, /healthz and /readyz\n"};
}

bool Metrics::start (const std::string &address, int port, std::string *error)
{
  return server_.start (address, port, error);
}

}  // namespace cuvrun
