/* cudavision-run: the config file, a GKeyFile (docs/fleet.md shows one).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

#include <string>
#include <vector>

namespace cuvrun {

struct CameraConfig {
  std::string name;     /* the group's name after "camera ": the topics' camera part */
  std::string uri;      /* anything uridecodebin takes: rtsp://, file://, v4l2:// */
  std::string pipeline; /* gst-launch syntax between the decoded frames and the sink */
  int cuda_device_id = -1; /* -1: the elements' default */
};

struct RunnerConfig {
  std::string broker_host = "127.0.0.1";
  int broker_port = 1883;
  std::string topic_prefix = "cudavision";
  std::string client_id = "cudavision-run";
  int metrics_port = 9464; /* 0: no metrics server */
  int queue_limit = 10000;  /* results kept while the broker is away */
  int restart_min_ms = 500;
  int restart_max_ms = 30000;
  int failing_after = 5; /* failures in a row, without a frame between, that mark a camera failing */
  int stall_ms = 5000;   /* a playing camera without a frame for this long is restarted */
  std::vector<CameraConfig> cameras;
  /* this process's run (its start time): with a camera's "seq", tells a restarted runner's
   * results from the last run's */
  gint64 run_id = 0;
};

/* Reads @path; on a problem returns false with @error as "FILE:LINE: [GROUP] KEY: what is wrong". */
bool load_config (const char *path, RunnerConfig *config, std::string *error);

}  // namespace cuvrun
