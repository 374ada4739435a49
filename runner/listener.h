/* cudavision-run: the metrics port's connections, bounded. libsoup's own listener keeps every
 * connection a client opens for as long as the client likes (each costs about 21 KB, and an open
 * file); here the runner accepts them itself and hands each to the SoupServer: at most
 * kMaxConnections at once (one more is closed at once, and counted), each shut down
 * kDeadlineSeconds after it was accepted, however its client trickles, and earlier where it waits
 * kIdleSeconds for its client. libsoup answers one request a connection given this way, and
 * closes it. Where no connection can be accepted (the open files exhausted), accepting pauses for
 * a second, with a line in the log once a minute (docs/fleet.md, "Security").
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libsoup/soup.h>

#include <map>
#include <string>

namespace cuvrun {

class BoundedListener {
 public:
  static constexpr guint kMaxConnections = 64;
  static constexpr guint kIdleSeconds = 10;
  static constexpr guint kDeadlineSeconds = 30;

  explicit BoundedListener (SoupServer *server) : server_ (server) {}
  ~BoundedListener ();
  BoundedListener (const BoundedListener &) = delete;
  BoundedListener &operator= (const BoundedListener &) = delete;

  /* Listens on @port of @address (empty: every address). Main thread. */
  bool listen (const std::string &address, int port, std::string *error);
  guint open () const { return static_cast<guint> (open_.size ()); }
  guint64 refused () const { return refused_; }

 private:
  void accept_next ();
  static void on_accepted (GObject *listener, GAsyncResult *result, gpointer self);
  void take (GSocketConnection *connection);
  /* once a minute at most: @what, with how many were closed at once so far */
  void log (const std::string &what);
  static void on_gone (gpointer self, GObject *connection);
  struct Deadline {
    BoundedListener *listener;
    GObject *connection;
  };
  static gboolean on_deadline (gpointer deadline);

  SoupServer *server_;
  GSocketListener *listener_ = nullptr;
  GCancellable *cancel_ = nullptr;
  guint retry_ = 0;
  /* the connections libsoup holds, until it lets them go, with their deadlines' sources (0 once
   * passed) */
  std::map<GObject *, guint> open_;
  guint64 refused_ = 0;
  gint64 last_log_us_ = 0;
};

}  // namespace cuvrun
