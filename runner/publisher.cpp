/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/publisher.h"

#include <glib.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

#include <mqtt_protocol.h>

#include "runner/json.h"

namespace cuvrun {

namespace {

constexpr int kFirstRetryMs = 250, kLastRetryMs = 10000;
/* a connection shorter than this was not a success: the backoff goes on growing (a broker that
 * accepts and then drops the runner at once is not hammered) */
constexpr gint64 kConnectionThatCountsUs = 10 * G_USEC_PER_SEC;
/* connections lost with a message the largest of those in flight, after which it is dropped as
 * refused: under MQTT 3.1.1 a broker disconnects a client for a packet over its limit, and the
 * message would go again at the head of the queue on every connection (max-message-bytes keeps
 * such messages from being sent at all) */
constexpr int kMaxSends = 3;
/* how long a connection may wait for the broker's answer to CONNECT */
constexpr gint64 kConnackTimeoutUs = 10 * G_USEC_PER_SEC;

/* libmosquitto's text without its full stop, for a line that goes on */
std::string reason_text (int rc)
{
  std::string s = mosquitto_strerror (rc);
  if (!s.empty () && s.back () == '.')
    s.pop_back ();
  return s;
}
/* the system's CA certificates (Debian's, and the image's), where no tls-ca-file is given */
constexpr const char *kSystemCaPath = "/etc/ssl/certs";

std::mutex log_lock;

/* A key with a passphrase is refused, never asked for on a terminal the runner may not have. */
int no_passphrase (char *, int, int, void *)
{
  return 0;
}

}  // namespace

Publisher::Publisher (const BrokerConfig &broker, const std::string &state_topic, const std::string &runner_id,
    gint64 run, size_t limit)
    : broker_ (broker), state_topic_ (state_topic), runner_id_ (runner_id), run_ (run), limit_ (limit)
{
  mosquitto_lib_init ();
  /* a clean session: what was not acknowledged is sent again from this process's own queue */
  mosq_ = mosquitto_new (broker_.client_id.c_str (), true, this);
  if (!mosq_)
    return;
  mosquitto_connect_callback_set (mosq_, on_connect);
  mosquitto_disconnect_v5_callback_set (mosq_, on_disconnect);
  mosquitto_publish_v5_callback_set (mosq_, on_publish);
  mosquitto_log_callback_set (mosq_, on_log);
  mosquitto_message_v5_callback_set (mosq_, on_message);
  /* this queue, not the library's, bounds what waits */
  mosquitto_max_inflight_messages_set (mosq_, 0);
  /* our thread runs the client's loop: other threads' publishes only queue and wake it */
  mosquitto_threaded_set (mosq_, true);
}

Publisher::~Publisher ()
{
  if (thread_.joinable ())
    stop (0);
  /* a client whose thread still runs (abandoned in stop) is the thread's until the process ends */
  if (abandoned_)
    return;
  if (mosq_)
    mosquitto_destroy (mosq_);
  mosquitto_lib_cleanup ();
}

std::string Publisher::state_payload (const char *state) const
{
  Json j;
  j.add ("runner", runner_id_);
  j.add ("run", run_);
  j.add ("state", state);
  j.add ("time-us", g_get_real_time ());
  return j.text ();
}

bool Publisher::start (std::string *error)
{
  if (!mosq_) {
    *error = "could not make an MQTT client";
    return false;
  }
  const BrokerConfig &b = broker_;
  int rc = mosquitto_int_option (mosq_, MOSQ_OPT_PROTOCOL_VERSION, b.mqtt5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311);
  if (rc == MOSQ_ERR_SUCCESS && !b.username.empty ())
    rc = mosquitto_username_pw_set (mosq_, b.username.c_str (), b.password.empty () ? nullptr : b.password.c_str ());
  if (rc == MOSQ_ERR_SUCCESS && b.tls) {
    rc = mosquitto_tls_set (mosq_, b.tls_ca_file.empty () ? nullptr : b.tls_ca_file.c_str (),
        b.tls_ca_file.empty () ? kSystemCaPath : nullptr, b.tls_cert_file.empty () ? nullptr : b.tls_cert_file.c_str (),
        b.tls_key_file.empty () ? nullptr : b.tls_key_file.c_str (), no_passphrase);
    if (rc == MOSQ_ERR_SUCCESS && b.tls_insecure) {
      /* SSL_VERIFY_NONE and no host name check: for tests against a throwaway broker only */
      rc = mosquitto_tls_opts_set (mosq_, 0, nullptr, nullptr);
      if (rc == MOSQ_ERR_SUCCESS)
        rc = mosquitto_tls_insecure_set (mosq_, true);
    }
  }
  const std::string offline = state_payload ("offline");
  if (rc == MOSQ_ERR_SUCCESS)
    rc = mosquitto_will_set (mosq_, state_topic_.c_str (), static_cast<int> (offline.size ()), offline.data (), 1, true);
  if (rc != MOSQ_ERR_SUCCESS) {
    *error = std::string ("MQTT client settings (credentials, TLS files, will): ") + mosquitto_strerror (rc);
    return false;
  }
  thread_ = std::thread (&Publisher::run, this);
  return true;
}

void Publisher::pause (int ms)
{
  std::unique_lock<std::mutex> lk (lock_);
  wake_.wait_for (lk, std::chrono::milliseconds (ms), [this] { return stopping_.load (); });
}

/* Connects whenever the broker is there, and again after each loss, waiting twice as long after
 * each failure in a row up to kLastRetryMs. libmosquitto's own thread (mosquitto_loop_start)
 * never starts its loop when the first connection failed, so a broker that comes after the
 * runner would never be reached. */
void Publisher::run ()
{
  int delay = kFirstRetryMs;
  while (!stopping_) {
    const uint64_t connects_before = stats ().connects;
    const gint64 started = g_get_monotonic_time ();
    {
      std::lock_guard<std::mutex> lk (log_lock);
      last_log_error_.clear ();
    }
    int rc = mosquitto_connect (mosq_, broker_.host.c_str (), broker_.port, broker_.keepalive_s);
    const int saved_errno = errno;
    /* the loop ends when the connection does; stop() disconnects after its last words, and a
     * connection made while it did is ended here */
    bool disconnecting = false;
    if (rc == MOSQ_ERR_SUCCESS)
      while ((rc = mosquitto_loop (mosq_, 250, 1)) == MOSQ_ERR_SUCCESS) {
        if (stopping_ && !disconnecting) {
          mosquitto_disconnect (mosq_);
          disconnecting = true;
        }
        /* a peer that took the TCP connection and never answers CONNECT (not an MQTT broker, a TLS
         * port without tls=true, a broker that hangs) is said as such, not as the keep-alive's
         * "Unknown error" half a minute later */
        if (!disconnecting && stats ().connects == connects_before &&
            g_get_monotonic_time () - started > kConnackTimeoutUs) {
          std::lock_guard<std::mutex> lk (log_lock);
          refused_ = "connected over TCP, but no answer to MQTT's CONNECT in " +
              std::to_string (kConnackTimeoutUs / G_USEC_PER_SEC) + " s (not an MQTT broker? a TLS port without tls=true?)";
          mosquitto_disconnect (mosq_);
          disconnecting = true;
        }
      }
    if (stopping_)
      break;
    /* newer libmosquitto closes the socket before it returns, and errno then says only that */
    std::string why = rc != MOSQ_ERR_ERRNO ? reason_text (rc)
        : saved_errno && saved_errno != EBADF ? g_strerror (saved_errno) : "could not connect";
    {
      std::lock_guard<std::mutex> lk (log_lock);
      if (!refused_.empty ())
        why = refused_;
      else if (!last_log_error_.empty ())
        why += " (" + last_log_error_ + ")";
      refused_.clear ();
    }
    if (stats ().connects > connects_before && g_get_monotonic_time () - started > kConnectionThatCountsUs)
      delay = kFirstRetryMs;
    {
      std::lock_guard<std::mutex> lk (lock_);
      last_error_ = why;
    }
    g_printerr ("cudavision-run: MQTT broker %s:%d: %s; connecting again in %d ms\n", broker_.host.c_str (),
        broker_.port, why.c_str (), delay);
    pause (delay);
    delay = std::min (delay * 2, kLastRetryMs);
  }
  finished_ = true;
}

void Publisher::drop (const char *reason, uint64_t n)
{
  dropped_[reason] += n;
}

void Publisher::refuse (const std::string &topic, const char *who, const std::string &why)
{
  drop (kDroppedRefused);
  /* logged at most once a minute a topic (the log is bounded as the queue is) */
  const gint64 now = g_get_monotonic_time ();
  if (refusals_logged_.size () > 256)
    refusals_logged_.clear ();
  auto logged = refusals_logged_.find (topic);
  if (logged != refusals_logged_.end () && now - logged->second <= 60 * G_USEC_PER_SEC)
    return;
  g_printerr ("cudavision-run: MQTT %s refused a message for '%s': %s; dropped\n", who, topic.c_str (), why.c_str ());
  refusals_logged_[topic] = now;
}

void Publisher::publish (const std::string &topic, const std::string &payload, bool retain)
{
  std::lock_guard<std::mutex> lk (lock_);
  if (retain)
    retained_[topic] = payload;
  waiting_.push_back ({topic, payload, retain, 0});
  uint64_t full = 0;
  while (waiting_.size () + in_flight_.size () > limit_ && !waiting_.empty ()) {
    waiting_.pop_front ();
    full++;
  }
  if (full) {
    drop (kDroppedQueueFull, full);
    /* away and slow are told apart: each is told at once the first time */
    Throttle &log = connected_ ? slow_log_ : away_log_;
    if (log.due (full))
      g_printerr ("cudavision-run: MQTT broker %s:%d: %s; the queue is full (queue-limit %zu): the oldest results "
                  "are dropped, %llu now (then a count a minute while it goes on)\n", broker_.host.c_str (), broker_.port,
          connected_ ? "not acknowledging" : ("away: " + last_error_).c_str (), limit_,
          static_cast<unsigned long long> (log.take ()));
  }
  send_waiting ();
}

void Publisher::taken_over (const std::string &how)
{
  takeovers_++;
  if (!takeover_log_.due ())
    return;
  const uint64_t n = takeover_log_.take ();
  const std::string times = n > 1 ? "; " + std::to_string (n) + " times since the last such line" : "";
  g_printerr ("cudavision-run: MQTT broker %s:%d: another client connects with this client id '%s' (%s%s): the "
              "broker gives the session to the last to connect, so each takes it from the other; give each runner its "
              "own client-id or --shard\n", broker_.host.c_str (), broker_.port, broker_.client_id.c_str (), how.c_str (),
      times.c_str ());
}

/* The runner's own state topic, read back at each connection: its retained state from another
 * run of this client id, once this process has connected before, means another runner took the
 * session between (brokers before MQTT 5's reason code, Debian 12's Mosquitto 2.0.11 among them,
 * close the connection without a word). A state of this runner's previous run, at the first
 * connection, is a restart's. */
void Publisher::on_message (struct mosquitto *, void *self, const struct mosquitto_message *m, const mosquitto_property *)
{
  auto *p = static_cast<Publisher *> (self);
  if (!m->payload || m->topic != p->state_topic_)
    return;
  JsonParser *parser = json_parser_new ();
  gint64 run = 0;
  std::string state;
  if (json_parser_load_from_data (parser, static_cast<const char *> (m->payload), m->payloadlen, nullptr) &&
      JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser))) {
    JsonObject *o = json_node_get_object (json_parser_get_root (parser));
    run = json_object_get_int_member_with_default (o, "run", 0);
    state = json_object_get_string_member_with_default (o, "state", "");
  }
  g_object_unref (parser);
  std::lock_guard<std::mutex> lk (p->lock_);
  if (run != p->run_ && p->connects_ > 1)
    p->taken_over ("its state, of run " + std::to_string (run) + ", " + state + ", replaced this runner's");
}

void Publisher::send_waiting ()
{
  while (connected_ && !waiting_.empty ()) {
    Message &m = waiting_.front ();
    if (broker_.max_message_bytes && m.size () > static_cast<size_t> (broker_.max_message_bytes)) {
      refuse (m.topic, "client", "larger than max-message-bytes");
      waiting_.pop_front ();
      continue;
    }
    int mid = 0;
    const int rc = mosquitto_publish (mosq_, &mid, m.topic.c_str (), static_cast<int> (m.payload.size ()),
        m.payload.data (), 1, m.retain);
    if (rc == MOSQ_ERR_NO_CONN || rc == MOSQ_ERR_CONN_LOST)
      return; /* on_connect sends them */
    if (rc != MOSQ_ERR_SUCCESS) {
      /* a message the client refuses (its topic or size) is refused every time: it never waits at
       * the head of the queue in front of the others */
      refuse (m.topic, "client", reason_text (rc));
      waiting_.pop_front ();
      continue;
    }
    in_flight_[mid] = std::move (m);
    waiting_.pop_front ();
  }
}

/* Each retained topic's last payload (a camera's state) again, at every connection: a broker that
 * keeps nothing (persistence off) and restarted has forgotten it, and a later subscriber would
 * learn no camera's state. A topic whose newer payload still waits in the queue is left to it. */
void Publisher::republish_retained ()
{
  std::set<std::string> queued;
  for (const Message &m : waiting_)
    if (m.retain)
      queued.insert (m.topic);
  for (const auto &[mid, m] : in_flight_)
    if (m.retain)
      queued.insert (m.topic);
  for (const auto &[topic, payload] : retained_)
    if (!queued.count (topic))
      mosquitto_publish (mosq_, nullptr, topic.c_str (), static_cast<int> (payload.size ()), payload.data (), 1, true);
}

void Publisher::on_connect (struct mosquitto *mosq, void *self, int rc)
{
  auto *p = static_cast<Publisher *> (self);
  if (rc != 0) {
    /* MQTT 5's reason codes are not 3.1.1's return codes */
    std::lock_guard<std::mutex> lk (log_lock);
    p->refused_ = std::string ("the broker refused the connection: ") +
        (p->broker_.mqtt5 ? mosquitto_reason_string (rc) : mosquitto_connack_string (rc));
    return;
  }
  g_printerr ("cudavision-run: MQTT broker %s:%d: connected%s\n", p->broker_.host.c_str (), p->broker_.port,
      p->broker_.tls ? " (TLS)" : "");
  /* the retained state first (on_message), then this run's */
  mosquitto_subscribe (mosq, nullptr, p->state_topic_.c_str (), 0);
  const std::string online = p->state_payload ("online");
  mosquitto_publish (mosq, nullptr, p->state_topic_.c_str (), static_cast<int> (online.size ()), online.data (), 1, true);
  std::lock_guard<std::mutex> lk (p->lock_);
  p->connected_ = true;
  p->connects_++;
  p->last_error_.clear ();
  if (const uint64_t more = p->away_log_.take ())
    g_printerr ("cudavision-run: MQTT broker %s:%d: %llu more results were dropped for the full queue before it came back\n",
        p->broker_.host.c_str (), p->broker_.port, static_cast<unsigned long long> (more));
  /* the next time the queue fills is told at once */
  p->away_log_.reset ();
  p->republish_retained ();
  p->send_waiting ();
}

void Publisher::on_disconnect (struct mosquitto *, void *self, int rc, const mosquitto_property *)
{
  auto *p = static_cast<Publisher *> (self);
  std::lock_guard<std::mutex> lk (p->lock_);
  if (rc == MQTT_RC_SESSION_TAKEN_OVER)
    p->taken_over ("the broker said: session taken over");
  if (p->connected_ && !p->stopping_)
    g_printerr ("cudavision-run: MQTT broker %s:%d: disconnected: %s; %zu messages unacknowledged, sent again\n",
        p->broker_.host.c_str (), p->broker_.port,
        /* an MQTT 5 broker's DISCONNECT gives its reason ("Session taken over": a second runner of this id) */
        rc >= 0x80 ? mosquitto_reason_string (rc) : reason_text (rc).c_str (), p->in_flight_.size ());
  p->connected_ = false;
  /* unacknowledged messages go again, first, in their order (at least once), but not forever: the
   * largest of them is the one a 3.1.1 broker would have closed the connection for */
  auto largest = p->in_flight_.end ();
  for (auto it = p->in_flight_.begin (); it != p->in_flight_.end (); ++it)
    if (largest == p->in_flight_.end () || it->second.size () > largest->second.size ())
      largest = it;
  if (largest != p->in_flight_.end ())
    largest->second.sends++;
  uint64_t refused = 0;
  for (auto it = p->in_flight_.rbegin (); it != p->in_flight_.rend (); ++it) {
    if (it->second.sends >= kMaxSends) {
      refused++;
      continue;
    }
    p->waiting_.push_front (std::move (it->second));
  }
  p->in_flight_.clear ();
  if (refused) {
    p->drop (kDroppedRefused, refused);
    g_printerr ("cudavision-run: MQTT broker %s:%d: %llu messages the largest unacknowledged on %d lost connections "
        "(larger than the broker takes? max-message-bytes drops them before); dropped\n", p->broker_.host.c_str (), p->broker_.port,
        static_cast<unsigned long long> (refused), kMaxSends);
  }
}

void Publisher::on_publish (struct mosquitto *, void *self, int mid, int reason, const mosquitto_property *)
{
  auto *p = static_cast<Publisher *> (self);
  std::lock_guard<std::mutex> lk (p->lock_);
  auto it = p->in_flight_.find (mid);
  if (it == p->in_flight_.end ())
    return;
  /* an MQTT 5 broker acknowledges a message it would not take (its ACL, its quota) with a reason */
  if (reason >= 0x80)
    p->refuse (it->second.topic, "broker", mosquitto_reason_string (reason));
  else
    p->published_++;
  p->in_flight_.erase (it);
}

void Publisher::on_log (struct mosquitto *, void *self, int level, const char *text)
{
  /* OpenSSL's reason for a failed handshake reaches us only here */
  if (!(level & MOSQ_LOG_ERR) || !text)
    return;
  std::lock_guard<std::mutex> lk (log_lock);
  static_cast<Publisher *> (self)->last_log_error_ = text;
}

PublisherStats Publisher::stats ()
{
  std::lock_guard<std::mutex> lk (lock_);
  PublisherStats s;
  s.published = published_;
  s.dropped = dropped_;
  s.takeovers = takeovers_;
  s.queued = waiting_.size () + in_flight_.size ();
  s.connects = connects_;
  s.connected = connected_;
  s.last_error = last_error_;
  return s;
}

uint64_t Publisher::stop (int timeout_ms)
{
  const auto end = std::chrono::steady_clock::now () + std::chrono::milliseconds (timeout_ms);
  while (std::chrono::steady_clock::now () < end && stats ().queued > 0)
    std::this_thread::sleep_for (std::chrono::milliseconds (20));
  uint64_t lost = 0;
  {
    std::lock_guard<std::mutex> lk (lock_);
    lost = waiting_.size () + in_flight_.size ();
    if (lost)
      drop (kDroppedShutdown, lost);
    if (connected_) {
      /* a runner that stops says so itself: the broker sends the will only for one that vanished */
      const std::string offline = state_payload ("offline");
      mosquitto_publish (mosq_, nullptr, state_topic_.c_str (), static_cast<int> (offline.size ()), offline.data (), 1,
          true);
    }
    stopping_ = true;
  }
  mosquitto_disconnect (mosq_);
  wake_.notify_all ();
  /* a connect to a broker that drops packets blocks for minutes in the kernel: the runner does not
   * wait for it (the process is ending; the client is left to it) */
  const auto give_up = std::chrono::steady_clock::now () + std::chrono::seconds (1);
  while (!finished_ && std::chrono::steady_clock::now () < give_up)
    std::this_thread::sleep_for (std::chrono::milliseconds (20));
  if (thread_.joinable ()) {
    if (finished_) {
      thread_.join ();
    } else {
      g_printerr ("cudavision-run: MQTT broker %s:%d: still connecting; not waiting for it\n", broker_.host.c_str (),
          broker_.port);
      thread_.detach ();
      abandoned_ = true;
    }
  }
  return lost;
}

}  // namespace cuvrun
