/* cudavision-run: the config file, a GKeyFile (docs/fleet.md shows one).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

#include <string>
#include <vector>

namespace cuvrun {

/* Where a password comes from: a file named in the config or an environment variable, never the
 * config itself (docs/fleet.md, "Security"). */
inline constexpr const char *kBrokerPasswordEnv = "CUDAVISION_BROKER_PASSWORD";

/* load_config fills each field that a key names with the key's value, or its default where the key
 * is not written: each default is in runner/siteconfig.cpp's key tables, and nowhere else
 * (docs/fleet.md, "Keys"). */
struct CameraConfig {
  std::string name;     /* the group's name after "camera ": the topics' camera part */
  std::string uri;      /* anything uridecodebin takes: rtsp://, file://, v4l2://; no password in it */
  std::string pipeline; /* gst-launch syntax between the decoded frames and the sink */
  int cuda_device_id{}; /* -1: the elements' default */
  std::string username, password; /* given to the source (rtspsrc's user-id and user-pw) */
  bool loop{};          /* a source that is not live starts again at its end */
  int line = 0;         /* the group's line in the file, for messages */
  int pipeline_line = 0; /* the pipeline key's */
};

struct BrokerConfig {
  std::string host;
  int port{};
  std::string client_id;
  std::string username, password;
  bool tls{};
  std::string tls_ca_file, tls_cert_file, tls_key_file;
  bool tls_insecure{}; /* tests only: the broker's certificate is not verified */
  int keepalive_s = 30; /* not a key */
  /* MQTT 5 by default: the broker's CONNACK tells its largest packet, and the client refuses a
   * larger result instead of being disconnected by the broker for it again and again */
  bool mqtt5{};
  int max_message_bytes{}; /* larger results are dropped unsent (0: none; MQTT 5 brokers say theirs) */
};

struct RunnerConfig {
  BrokerConfig broker;
  std::string topic_prefix;
  std::string metrics_address; /* empty: every address */
  int metrics_port{};        /* 0: no metrics server */
  int metrics_connections{}; /* open at once; the oldest waiting is closed for a new one */
  int metrics_idle_timeout_s{}; /* an idle connection is closed after this long */
  int queue_limit{};         /* results kept while the broker is away */
  int restart_min_ms{};
  int restart_max_ms{};
  int failing_after{}; /* failures in a row, without a frame between, that mark a camera failing */
  int stall_ms{};      /* a playing camera without a frame for this long is restarted */
  std::vector<CameraConfig> cameras;
  /* this process's run (its start time): with a camera's "seq", tells a restarted runner's
   * results from the last run's */
  gint64 run_id = 0;
};

/* Reads @path and checks every camera's pipeline (its syntax, its elements' names as topic levels,
 * every property value in range); on a problem returns false with @error as
 * "FILE:LINE: [GROUP] KEY: what is wrong". Reads the passwords from their files or the
 * environment. */
bool load_config (const char *path, RunnerConfig *config, std::string *error);

}  // namespace cuvrun
