/* cudavision-run: Prometheus metrics, liveness and readiness over HTTP (runner/httpserver.h), on the
 * main loop.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runner/camera.h"
#include "runner/httpserver.h"
#include "runner/publisher.h"

namespace cuvrun {

class Metrics {
 public:
  Metrics (const std::vector<std::unique_ptr<Camera>> &cameras, Publisher &publisher, std::string shard,
      HttpLimits limits);
  ~Metrics ();
  /* Serves /metrics, /healthz and /readyz on @port of @address (empty: every address). */
  bool start (const std::string &address, int port, std::string *error);
  /* The exposition text (Prometheus' text format 0.0.4). */
  std::string text ();
  /* Whether the runner is ready (connected, every camera seen a frame, failed or ended); @why
   * lists what it waits for. */
  bool ready (std::string *why);

 private:
  HttpResponse answer (const char *path);
  static gboolean sample (gpointer self);

  const std::vector<std::unique_ptr<Camera>> &cameras_;
  Publisher &pub_;
  std::string shard_;
  HttpServer server_;
  guint sampler_ = 0;
  /* frames a second over the last sampling interval, per camera */
  std::vector<uint64_t> last_frames_;
  std::vector<double> fps_;
  gint64 last_sample_us_ = 0;
};

}  // namespace cuvrun
