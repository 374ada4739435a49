/* cudavision-run: the metrics port's connections, bounded. libsoup's own listener keeps every
 * connection a client opens for as long as the client likes (each costs about 21 KB, and an open
 * file); here the runner accepts them itself and hands each to the SoupServer, at most
 * kMaxConnections at once (one more is closed at once, and counted), each closed once it has
 * waited kIdleSeconds for the client (no request, half a request, a keep-alive between scrapes)
 * (docs/fleet.md, "Security"). Where no connection can be accepted (the open files exhausted),
 * accepting pauses for a second, with a line in the log once a minute.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libsoup/soup.h>

#include <set>
#include <string>

namespace cuvrun {

class BoundedListener {
 public:
  static constexpr guint kMaxConnections = 64;
  static constexpr guint kIdleSeconds = 30;

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

  SoupServer *server_;
  GSocketListener *listener_ = nullptr;
  GCancellable *cancel_ = nullptr;
  guint retry_ = 0;
  std::set<GObject *> open_; /* the connections libsoup holds, until it lets them go */
  guint64 refused_ = 0;
  gint64 last_log_us_ = 0;
};

}  // namespace cuvrun
