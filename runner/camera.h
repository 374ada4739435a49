/* cudavision-run: one camera's pipeline, restarted on its own with backoff (docs/fleet.md).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include <atomic>
#include <map>
#include <string>

#include "runner/config.h"
#include "runner/publisher.h"

namespace cuvrun {

struct CameraStats {
  uint64_t frames;
  uint64_t dropped;  /* frames the camera's queue dropped because the pipeline fell behind */
  uint64_t restarts;
  uint64_t results;  /* analyser messages published */
  bool up;           /* playing, frames within the stall time */
  bool failing;      /* failing-after failures in a row */
  double latency_s;  /* a frame's age at the sink (live sources), smoothed */
};

class Camera {
 public:
  Camera (const CameraConfig &camera, const RunnerConfig &runner, Publisher &publisher);
  ~Camera ();
  Camera (const Camera &) = delete;
  Camera &operator= (const Camera &) = delete;

  /* Main loop thread. */
  void start ();
  void stop ();
  CameraStats stats () const;
  const CameraConfig &config () const { return cam_; }

 private:
  static gboolean on_bus (GstBus *, GstMessage *m, gpointer self);
  static GstPadProbeReturn on_frame (GstPad *, GstPadProbeInfo *info, gpointer self);
  static void on_overrun (GstElement *, gpointer self);
  static gboolean on_watchdog (gpointer self);
  void fail (const std::string &why);
  void teardown ();
  void publish_state (const char *state, const std::string &why);
  void publish_result (GstMessage *m);
  void name_topics ();

  CameraConfig cam_;
  const RunnerConfig &runner_;
  Publisher &pub_;
  GstElement *pipeline_ = nullptr;
  /* each element's topic level: its own name where the user gave one, else its factory's name
   * (with -1, -2... where a factory is there more than once), the same in every run */
  std::map<GstObject *, std::string> topics_;
  guint bus_watch_ = 0, restart_timer_ = 0, watchdog_ = 0;
  std::atomic<uint64_t> frames_{0}, dropped_{0};
  std::atomic<gint64> last_frame_us_{0};
  std::atomic<double> latency_s_{0.0};
  uint64_t frames_at_start_ = 0;
  uint64_t restarts_ = 0, results_ = 0, seq_ = 0;
  int failures_in_a_row_ = 0;
  bool playing_ = false;
  bool stopping_ = false;
};

}  // namespace cuvrun
