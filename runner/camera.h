/* cudavision-run: one camera's pipeline, restarted on its own with backoff (docs/fleet.md).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include <array>
#include <atomic>
#include <map>
#include <set>
#include <string>

#include "runner/siteconfig.h"
#include "runner/publisher.h"

namespace cuvrun {

/* The upper bounds of the frame age histogram's buckets, in seconds (a last one, +Inf, follows). */
constexpr std::array<double, 10> kAgeBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0};

struct CameraStats {
  uint64_t frames;
  uint64_t dropped;  /* frames the camera's queue dropped because the pipeline fell behind */
  uint64_t restarts;
  uint64_t loops;    /* a file's replays (loop=true) */
  uint64_t results;  /* analyser messages published */
  uint64_t warnings; /* GStreamer warnings from the pipeline */
  bool up;           /* playing, frames within the stall time */
  bool failing;      /* failing-after failures in a row */
  bool ended;        /* a source that is not live reached its end (loop=false) */
  bool live;
  double latency_s;  /* a frame's age at the sink (live sources), smoothed */
  /* every frame's age at the sink: how many fell in each bucket (not cumulative; the last is
   * over the largest bound), their count and their sum */
  std::array<uint64_t, kAgeBuckets.size () + 1> age_buckets;
  uint64_t age_count;
  double age_sum_s;
  std::string reason; /* why the pipeline last stopped */
  std::map<std::string, std::string> backends; /* element's topic level -> "cuda" or "cpu" */
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
  /* a frame went through, or the camera failed or ended, and can say why */
  bool ready () const;
  const CameraConfig &config () const { return cam_; }

 private:
  static gboolean on_bus (GstBus *, GstMessage *m, gpointer self);
  static void on_frame (GstElement *sink, GstBuffer *buf, GstPad *pad, gpointer self);
  static void on_overrun (GstElement *, gpointer self);
  static gboolean on_watchdog (gpointer self);
  void fail (const std::string &why);
  void end ();
  void teardown ();
  void on_warning (GstMessage *m);
  void find_backends ();
  /* @element's name as its topic level says it (cudahistogram, not cudahistogram41) */
  std::string element_name (GstObject *element) const;
  std::string error_text (GstMessage *m) const;
  std::string bus_error ();
  void publish_state (const char *state, const std::string &why);
  void publish_result (GstMessage *m);

  CameraConfig cam_;
  const RunnerConfig &runner_;
  Publisher &pub_;
  GstElement *pipeline_ = nullptr;
  std::map<GstObject *, std::string> topics_;
  std::map<std::string, std::string> backends_;
  std::set<std::string> logged_warnings_;
  std::set<std::string> cpu_fallbacks_; /* elements that warned they run on the CPU */
  guint bus_watch_ = 0, restart_timer_ = 0, watchdog_ = 0;
  std::atomic<uint64_t> frames_{0}, dropped_{0};
  std::atomic<gint64> last_frame_us_{0};
  std::atomic<double> latency_s_{0.0};
  std::array<std::atomic<uint64_t>, kAgeBuckets.size () + 1> age_buckets_{};
  std::atomic<uint64_t> age_sum_ns_{0};
  uint64_t frames_at_start_ = 0;
  uint64_t restarts_ = 0, loops_ = 0, results_ = 0, warnings_ = 0, seq_ = 0;
  std::atomic<guint64> last_frame_end_ns_{GST_CLOCK_TIME_NONE}; /* the last frame's end (its PTS and duration) */
  uint64_t restarts_since_playing_ = 0; /* restarts since the pipeline last reached PLAYING */
  int failures_in_a_row_ = 0;
  std::string reason_;
  bool playing_ = false;
  std::atomic<bool> live_{false}; /* read by the queue's streaming thread */
  bool ended_ = false;
  bool stopping_ = false;
};

}  // namespace cuvrun
