/* cudavision-run: a small HTTP server for an exporter's few GET paths (libmicrohttpd), on the GLib
 * main loop, bounded as a port open to a network must be (docs/fleet.md, "Security"):
 *   - at most a configured number of connections; when a new one comes at that number, or when
 *     the process is short of file descriptors, the connection that has waited longest without a
 *     finished request is closed, so that a client that comes later (a probe, a scraper) is served
 *     whatever slow or idle clients hold;
 *   - a connection idle for the timeout is closed;
 *   - a request's headers are read into a fixed budget of memory a connection, and a request with
 *     a body or another method than GET and HEAD is answered without reading the body;
 *   - after accept() fails for want of descriptors (EMFILE), the port answers again as soon as one
 *     is free.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <microhttpd.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "runner/throttle.h"

namespace cuvrun {

struct HttpLimits {
  int connections = 64;    /* open at once */
  int idle_timeout_s = 10; /* a connection without a byte either way for this long is closed */
};

struct HttpResponse {
  unsigned int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

struct HttpStats {
  uint64_t open = 0;    /* connections open now */
  uint64_t evicted = 0; /* closed to make room (at the limit or short of descriptors) */
};

class HttpServer {
 public:
  /* @handler answers a GET or HEAD of @path (without its query), on the main loop. */
  using Handler = std::function<HttpResponse (const char *path)>;
  HttpServer (HttpLimits limits, Handler handler);
  ~HttpServer ();
  HttpServer (const HttpServer &) = delete;
  HttpServer &operator= (const HttpServer &) = delete;

  /* Listens on @port of @address (empty: every address, IPv6 and IPv4 where the host has both). */
  bool start (const std::string &address, int port, std::string *error);
  HttpStats stats () const;

 private:
  struct Connection {
    int fd = -1;
    gint64 waiting_since_us = 0; /* opened, or its last request finished */
    bool evicting = false;
  };
  static MHD_Result on_request (void *self, MHD_Connection *c, const char *url, const char *method, const char *,
      const char *, size_t *upload_size, void **request);
  static void on_connection (void *self, MHD_Connection *c, void **, MHD_ConnectionNotificationCode code);
  static void on_completed (void *self, MHD_Connection *c, void **, MHD_RequestTerminationCode);
  static void on_log (void *self, const char *format, va_list args);
  static gboolean on_ready (gint, GIOCondition, gpointer self);
  static gboolean on_timer (gpointer self);
  /* runs the daemon and arms the timer for its next timeout */
  void run ();
  /* closes connections while more than @keep are open or descriptors are short */
  void make_room (size_t keep);
  /* false where no connection is left to close */
  bool evict_oldest ();

  HttpLimits limits_;
  Handler handler_;
  MHD_Daemon *daemon_ = nullptr;
  guint watch_ = 0;
  guint timer_ = 0;
  std::unordered_map<MHD_Connection *, Connection> open_;
  uint64_t evicted_ = 0;
  size_t leaving_ = 0; /* connections shut down to make room, not yet closed by the daemon */
  std::string start_error_; /* the daemon's message while it starts */
  Throttle log_; /* the daemon's messages */
};

}  // namespace cuvrun
