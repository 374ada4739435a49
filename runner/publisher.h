/* cudavision-run: results to an MQTT broker (Eclipse Mosquitto's client library), QoS 1, at
 * least once: a message leaves the queue when the broker acknowledged it; while the broker is
 * away the queue keeps at most a bounded number, dropping the oldest, and counts them. A thread
 * of the publisher's own connects whenever the broker comes, at start or later, and again with
 * backoff after each loss (docs/fleet.md, "The broker").
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <mosquitto.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "runner/siteconfig.h"
#include "runner/throttle.h"

namespace cuvrun {

/* why a result never reached the broker: cudavision_results_dropped_total's reason label */
inline constexpr const char *kDroppedQueueFull = "queue-full"; /* the queue was full while the broker was away */
inline constexpr const char *kDroppedRefused = "refused";      /* the client refused it, or no broker acknowledged it */
inline constexpr const char *kDroppedShutdown = "shutdown";    /* still queued when the runner stopped */

struct PublisherStats {
  uint64_t published = 0; /* acknowledged by the broker */
  std::map<std::string, uint64_t> dropped; /* by reason */
  uint64_t queued = 0;    /* waiting or unacknowledged now */
  uint64_t connects = 0;  /* connections the broker accepted */
  uint64_t takeovers = 0; /* times another client with this client id took the session */
  bool connected = false;
  std::string last_error; /* why the last connection failed or ended */
};

class Publisher {
 public:
  /* @state_topic: the runner's retained state ("online"; the broker publishes the will, "offline",
   * when the runner goes without a word), a JSON object naming @runner_id and @run */
  Publisher (const BrokerConfig &broker, const std::string &state_topic, const std::string &runner_id, gint64 run,
      size_t limit);
  ~Publisher ();
  Publisher (const Publisher &) = delete;
  Publisher &operator= (const Publisher &) = delete;

  /* Sets up credentials and TLS and starts the connecting thread; false only for a setting the
   * client refuses (a TLS file it cannot use). */
  bool start (std::string *error);
  /* Any thread. A @retain message stays on the broker for later subscribers (a camera's state). */
  void publish (const std::string &topic, const std::string &payload, bool retain = false);
  PublisherStats stats ();
  /* stop() left the client's thread in a blocking connect: the process must end without
   * destroying it (main leaves with _exit) */
  bool abandoned () const { return abandoned_; }
  /* At shutdown: waits up to @timeout_ms for the queue to empty, says "offline" and disconnects;
   * returns how many results were lost (counted as dropped, reason shutdown). */
  uint64_t stop (int timeout_ms);

 private:
  struct Message {
    std::string topic, payload;
    bool retain = false;
    size_t size () const { return topic.size () + payload.size (); }
    int sends = 0; /* connections it was sent on without an acknowledgement */
  };
  static void on_connect (struct mosquitto *, void *self, int rc);
  static void on_disconnect (struct mosquitto *, void *self, int rc, const mosquitto_property *);
  static void on_publish (struct mosquitto *, void *self, int mid, int reason, const mosquitto_property *);
  static void on_log (struct mosquitto *, void *self, int level, const char *text);
  static void on_message (struct mosquitto *, void *self, const struct mosquitto_message *m, const mosquitto_property *);
  /* under lock_: another client with this client id took the session (@how: how it was seen) */
  void taken_over (const std::string &how);
  void run ();
  /* sleeps up to @ms unless stop() wakes it */
  void pause (int ms);
  /* under lock_: sends what waits while connected */
  void send_waiting ();
  void drop (const char *reason, uint64_t n = 1);
  /* under lock_: a message the client or the broker (@who) refused, dropped, its topic logged */
  void refuse (const std::string &topic, const char *who, const std::string &why);
  std::string state_payload (const char *state) const;
  /* under lock_, connected: each retained topic's last payload again */
  void republish_retained ();

  BrokerConfig broker_;
  std::string state_topic_, runner_id_;
  gint64 run_ = 0;
  size_t limit_;
  struct mosquitto *mosq_ = nullptr;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> finished_{false}; /* the thread's loop has ended */
  bool abandoned_ = false;            /* stop() left the thread in a blocking connect */
  std::mutex lock_;
  std::condition_variable wake_;
  std::deque<Message> waiting_;
  std::map<int, Message> in_flight_;
  std::map<std::string, std::string> retained_; /* topic -> its last retained payload (one a camera) */
  bool connected_ = false;
  uint64_t published_ = 0, connects_ = 0, takeovers_ = 0;
  /* results dropped for a full queue while the broker is away, and while it is connected but does
   * not acknowledge as fast as results come; another client taking the session */
  Throttle away_log_, slow_log_, takeover_log_;
  std::map<std::string, uint64_t> dropped_;
  std::string last_error_;
  std::string last_log_error_, refused_; /* under the log lock: the library's last error, the broker's refusal */
  std::map<std::string, gint64> refusals_logged_; /* topic -> when its refusal was last logged */
};

}  // namespace cuvrun
