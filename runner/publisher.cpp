/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/publisher.h"

#include <glib.h>

#include <chrono>
#include <thread>

namespace cuvrun {

Publisher::Publisher (const std::string &host, int port, const std::string &client_id, size_t limit)
    : host_ (host), port_ (port), limit_ (limit)
{
  mosquitto_lib_init ();
  /* a clean session: what was not acknowledged is sent again from this process's own queue */
  mosq_ = mosquitto_new (client_id.c_str (), true, this);
  if (mosq_) {
    mosquitto_connect_callback_set (mosq_, on_connect);
    mosquitto_disconnect_callback_set (mosq_, on_disconnect);
    mosquitto_publish_callback_set (mosq_, on_publish);
    mosquitto_reconnect_delay_set (mosq_, 1, 5, false);
    /* this queue, not the library's, bounds what waits */
    mosquitto_max_inflight_messages_set (mosq_, 0);
  }
}

Publisher::~Publisher ()
{
  if (mosq_) {
    mosquitto_disconnect (mosq_);
    mosquitto_loop_stop (mosq_, true);
    mosquitto_destroy (mosq_);
  }
  mosquitto_lib_cleanup ();
}

bool Publisher::start (std::string *error)
{
  if (!mosq_) {
    *error = "could not make an MQTT client";
    return false;
  }
  /* a broker that is not there yet is not an error: the client's thread keeps trying */
  const int rc = mosquitto_connect_async (mosq_, host_.c_str (), port_, 30);
  if (rc != MOSQ_ERR_SUCCESS && rc != MOSQ_ERR_ERRNO) {
    *error = std::string ("MQTT broker ") + host_ + ":" + std::to_string (port_) + ": " + mosquitto_strerror (rc);
    return false;
  }
  if (mosquitto_loop_start (mosq_) != MOSQ_ERR_SUCCESS) {
    *error = "could not start the MQTT client's thread";
    return false;
  }
  return true;
}

void Publisher::publish (const std::string &topic, const std::string &payload)
{
  std::lock_guard<std::mutex> lk (lock_);
  waiting_.push_back ({topic, payload});
  while (waiting_.size () + in_flight_.size () > limit_ && !waiting_.empty ()) {
    waiting_.pop_front ();
    dropped_++;
  }
  send_waiting ();
}

void Publisher::send_waiting ()
{
  while (connected_ && !waiting_.empty ()) {
    Message &m = waiting_.front ();
    int mid = 0;
    const int rc = mosquitto_publish (mosq_, &mid, m.topic.c_str (), static_cast<int> (m.payload.size ()),
        m.payload.data (), 1, false);
    if (rc != MOSQ_ERR_SUCCESS)
      return; /* the connection went: on_connect sends them */
    in_flight_[mid] = std::move (m);
    waiting_.pop_front ();
  }
}

void Publisher::on_connect (struct mosquitto *, void *self, int rc)
{
  auto *p = static_cast<Publisher *> (self);
  if (rc != 0) {
    g_printerr ("cudavision-run: MQTT broker %s:%d refused the connection: %s\n", p->host_.c_str (), p->port_,
        mosquitto_connack_string (rc));
    return;
  }
  std::lock_guard<std::mutex> lk (p->lock_);
  p->connected_ = true;
  p->send_waiting ();
}

void Publisher::on_disconnect (struct mosquitto *, void *self, int)
{
  auto *p = static_cast<Publisher *> (self);
  std::lock_guard<std::mutex> lk (p->lock_);
  p->connected_ = false;
  /* unacknowledged messages go again, first, in their order (at least once) */
  for (auto it = p->in_flight_.rbegin (); it != p->in_flight_.rend (); ++it)
    p->waiting_.push_front (std::move (it->second));
  p->in_flight_.clear ();
}

void Publisher::on_publish (struct mosquitto *, void *self, int mid)
{
  auto *p = static_cast<Publisher *> (self);
  std::lock_guard<std::mutex> lk (p->lock_);
  if (p->in_flight_.erase (mid))
    p->published_++;
}

PublisherStats Publisher::stats ()
{
  std::lock_guard<std::mutex> lk (lock_);
  PublisherStats s;
  s.published = published_;
  s.dropped = dropped_;
  s.queued = waiting_.size () + in_flight_.size ();
  s.connected = connected_;
  return s;
}

void Publisher::flush (int timeout_ms)
{
  const auto end = std::chrono::steady_clock::now () + std::chrono::milliseconds (timeout_ms);
  while (std::chrono::steady_clock::now () < end) {
    if (stats ().queued == 0)
      return;
    std::this_thread::sleep_for (std::chrono::milliseconds (20));
  }
}

}  // namespace cuvrun
