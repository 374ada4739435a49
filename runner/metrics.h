/* cudavision-run: Prometheus metrics, liveness and readiness over HTTP (libsoup), on the main loop.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libsoup/soup.h>

#include <memory>
#include <string>
#include <vector>

#include "runner/camera.h"
#include "runner/publisher.h"

namespace cuvrun {

class Metrics {
 public:
  Metrics (const std::vector<std::unique_ptr<Camera>> &cameras, Publisher &publisher, std::string shard);
  ~Metrics ();
  /* Serves /metrics, /healthz and /readyz on @port of @address (empty: every address). */
  bool start (const std::string &address, int port, std::string *error);
  /* The exposition text (Prometheus' text format 0.0.4). */
  std::string text ();
  /* Whether the runner is ready (connected, every camera seen a frame, failed or ended); @why
   * lists what it waits for. */
  bool ready (std::string *why);

 private:
  static void handle (SoupServer *, SoupServerMessage *msg, const char *path, GHashTable *, gpointer self);
  static void handle_early (SoupServer *, SoupServerMessage *msg, const char *path, GHashTable *, gpointer self);
  static gboolean sample (gpointer self);

  const std::vector<std::unique_ptr<Camera>> &cameras_;
  Publisher &pub_;
  std::string shard_;
  SoupServer *server_ = nullptr;
  guint sampler_ = 0;
  /* frames a second over the last sampling interval, per camera */
  std::vector<uint64_t> last_frames_;
  std::vector<double> fps_;
  gint64 last_sample_us_ = 0;
};

}  // namespace cuvrun
