/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/metrics.h"

#include <cstdio>

namespace cuvrun {

namespace {

/* One metric's HELP, TYPE and one sample per camera. */
template <typename Value>
void per_camera (std::string &out, const char *name, const char *type, const char *help,
    const std::vector<std::unique_ptr<Camera>> &cameras, Value value)
{
  out += std::string ("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  for (size_t i = 0; i < cameras.size (); i++) {
    char line[512];
    std::snprintf (line, sizeof (line), "%s{camera=\"%s\"} %.6g\n", name, cameras[i]->config ().name.c_str (),
        static_cast<double> (value (i)));
    out += line;
  }
}

void single (std::string &out, const char *name, const char *type, const char *help, double value)
{
  char line[256];
  std::snprintf (line, sizeof (line), "%.6g", value);
  out += std::string ("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + line + "\n";
}

}  // namespace

Metrics::Metrics (const std::vector<std::unique_ptr<Camera>> &cameras, Publisher &publisher, std::string shard)
    : cameras_ (cameras), pub_ (publisher), shard_ (std::move (shard)), last_frames_ (cameras.size (), 0),
      fps_ (cameras.size (), 0.0)
{
  last_sample_us_ = g_get_monotonic_time ();
  sampler_ = g_timeout_add (1000, sample, this);
}

Metrics::~Metrics ()
{
  if (sampler_)
    g_source_remove (sampler_);
  if (server_) {
    soup_server_disconnect (server_);
    g_object_unref (server_);
  }
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

std::string Metrics::text ()
{
  std::vector<CameraStats> s;
  for (const auto &c : cameras_)
    s.push_back (c->stats ());
  std::string out;
  per_camera (out, "cudavision_camera_frames_total", "counter", "Frames that went through the camera's pipeline.",
      cameras_, [&] (size_t i) { return s[i].frames; });
  per_camera (out, "cudavision_camera_fps", "gauge", "Frames a second over the last second.", cameras_,
      [&] (size_t i) { return fps_[i]; });
  per_camera (out, "cudavision_camera_dropped_frames_total", "counter",
      "Frames dropped before the analysis because it fell behind the camera.", cameras_,
      [&] (size_t i) { return s[i].dropped; });
  per_camera (out, "cudavision_camera_restarts_total", "counter", "Times the camera's pipeline was started again.",
      cameras_, [&] (size_t i) { return s[i].restarts; });
  per_camera (out, "cudavision_camera_up", "gauge", "1 while the camera plays and frames arrive.", cameras_,
      [&] (size_t i) { return s[i].up ? 1 : 0; });
  per_camera (out, "cudavision_camera_failing", "gauge", "1 when the camera failed failing-after times in a row.",
      cameras_, [&] (size_t i) { return s[i].failing ? 1 : 0; });
  per_camera (out, "cudavision_camera_latency_seconds", "gauge",
      "A frame's age when it leaves the pipeline (live sources), smoothed.", cameras_,
      [&] (size_t i) { return s[i].latency_s; });
  per_camera (out, "cudavision_camera_results_total", "counter", "Analyser results the camera published.", cameras_,
      [&] (size_t i) { return s[i].results; });
  out += "# HELP cudavision_camera_cuda_device The CUDA device the camera's elements were given (-1: their default).\n"
         "# TYPE cudavision_camera_cuda_device gauge\n";
  for (const auto &c : cameras_)
    out += "cudavision_camera_cuda_device{camera=\"" + c->config ().name + "\"} " +
        std::to_string (c->config ().cuda_device_id) + "\n";
  const PublisherStats p = pub_.stats ();
  single (out, "cudavision_results_queued", "gauge", "Results waiting for the broker or its acknowledgement.",
      static_cast<double> (p.queued));
  single (out, "cudavision_results_published_total", "counter", "Results the broker acknowledged.",
      static_cast<double> (p.published));
  single (out, "cudavision_results_dropped_total", "counter", "Results dropped from a full queue.",
      static_cast<double> (p.dropped));
  single (out, "cudavision_broker_connected", "gauge", "1 while connected to the MQTT broker.", p.connected ? 1 : 0);
  out += "# HELP cudavision_shard_info The shard this runner runs.\n# TYPE cudavision_shard_info gauge\n"
         "cudavision_shard_info{shard=\"" + shard_ + "\"} 1\n";
  return out;
}

void Metrics::handle (SoupServer *, SoupServerMessage *msg, const char *path, GHashTable *, gpointer self)
{
  auto *m = static_cast<Metrics *> (self);
  if (g_str_equal (path, "/healthz")) {
    soup_server_message_set_status (msg, SOUP_STATUS_OK, nullptr);
    soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_STATIC, "ok\n", 3);
    return;
  }
  if (!g_str_equal (path, "/metrics")) {
    soup_server_message_set_status (msg, SOUP_STATUS_NOT_FOUND, nullptr);
    return;
  }
  const std::string body = m->text ();
  soup_server_message_set_status (msg, SOUP_STATUS_OK, nullptr);
  soup_server_message_set_response (msg, "text/plain; version=0.0.4", SOUP_MEMORY_COPY, body.data (), body.size ());
}

bool Metrics::start (int port, std::string *error)
{
  server_ = soup_server_new ("server-header", "cudavision-run ", nullptr);
  soup_server_add_handler (server_, nullptr, handle, this, nullptr);
  GError *err = nullptr;
  if (!soup_server_listen_all (server_, port, static_cast<SoupServerListenOptions> (0), &err)) {
    *error = "metrics on port " + std::to_string (port) + ": " + err->message;
    g_error_free (err);
    return false;
  }
  return true;
}

}  // namespace cuvrun
