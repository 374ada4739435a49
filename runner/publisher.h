/* cudavision-run: results to an MQTT broker (Eclipse Mosquitto's client library), QoS 1, at
 * least once: a message leaves the queue when the broker acknowledged it; while the broker is
 * away the queue keeps at most a bounded number, dropping the oldest, and counts them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <mosquitto.h>

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>

namespace cuvrun {

struct PublisherStats {
  uint64_t published = 0; /* acknowledged by the broker */
  uint64_t dropped = 0;   /* dropped from a full queue */
  uint64_t queued = 0;    /* waiting or unacknowledged now */
  bool connected = false;
};

class Publisher {
 public:
  Publisher (const std::string &host, int port, const std::string &client_id, size_t limit);
  ~Publisher ();
  Publisher (const Publisher &) = delete;
  Publisher &operator= (const Publisher &) = delete;

  /* Starts the client's own thread, which connects and reconnects by itself. */
  bool start (std::string *error);
  /* Any thread. */
  void publish (const std::string &topic, const std::string &payload);
  PublisherStats stats ();
  /* Waits up to @timeout_ms for the queue to empty (at shutdown). */
  void flush (int timeout_ms);

 private:
  struct Message {
    std::string topic, payload;
  };
  static void on_connect (struct mosquitto *, void *self, int rc);
  static void on_disconnect (struct mosquitto *, void *self, int rc);
  static void on_publish (struct mosquitto *, void *self, int mid);
  /* under lock_: sends what waits while connected */
  void send_waiting ();

  std::string host_;
  int port_;
  size_t limit_;
  struct mosquitto *mosq_ = nullptr;
  std::mutex lock_;
  std::deque<Message> waiting_;
  std::map<int, Message> in_flight_;
  bool connected_ = false;
  uint64_t published_ = 0, dropped_ = 0;
};

}  // namespace cuvrun
