/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/httpserver.h"

#include "runner/openfiles.h"

#include <dirent.h>
#include <glib-unix.h>
#include <gio/gio.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace cuvrun {

namespace {

/* Descriptors the server leaves to the rest of the process (a camera that starts again opens
 * about 8): below this many free, it closes its own oldest connection. */
constexpr long kSpareFiles = 16;
/* A request's line and headers, as sent, at most this long; a longer one is answered 431
 * (Prometheus' and the kubelet's requests take about 300 bytes). */
constexpr size_t kMaxRequestHead = 8 * 1024;
/* Each connection's memory in libmicrohttpd: the request, a record for each of its headers and
 * query arguments (about 48 bytes each) and the answer's headers share it. With it at the limit
 * above, a request a little under the limit left no room for the answer, and one of many short
 * arguments or headers ran out of records: libmicrohttpd then closed the connection without a
 * word. This much holds the records of the most a request within the limit can carry (a query
 * argument every byte, about 64 bytes each), so every such request has room for its answer; one
 * over the limit is refused by refuse_large_head (from note_raw_uri, before its arguments take
 * records, where its URI alone is over), and one too large for the memory is answered 431 by
 * libmicrohttpd itself. Its pages are touched only as a request fills them. */
constexpr size_t kConnectionMemory = 1024 * 1024;
/* No request of ours has a body: one that announces a larger one is answered 413 unread. */
constexpr unsigned long long kMaxRequestBody = 1024;

MHD_Result respond (MHD_Connection *c, const HttpResponse &r, bool close, bool allow)
{
  MHD_Response *resp = MHD_create_response_from_buffer (r.body.size (), const_cast<char *> (r.body.data ()),
      MHD_RESPMEM_MUST_COPY);
  if (!resp)
    return MHD_NO;
  MHD_add_response_header (resp, MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type.c_str ());
  if (close)
    MHD_add_response_header (resp, MHD_HTTP_HEADER_CONNECTION, "close");
  if (allow)
    MHD_add_response_header (resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  const MHD_Result queued = MHD_queue_response (c, r.status, resp);
  MHD_destroy_response (resp);
  return queued;
}

MHD_Result add_header_bytes (void *total, MHD_ValueKind, const char *key, const char *value)
{
  /* "key: value\r\n" */
  *static_cast<size_t *> (total) += std::strlen (key) + 2 + (value ? std::strlen (value) : 0) + 2;
  return MHD_YES;
}

MHD_Result add_argument_bytes (void *total, MHD_ValueKind, const char *key, const char *value)
{
  /* "?key=value" or "&key=value" */
  *static_cast<size_t *> (total) += 1 + std::strlen (key) + (value ? 1 + std::strlen (value) : 0);
  return MHD_YES;
}

/* 431 for a request head over kMaxRequestHead, written to the socket here and the connection
 * closed: a head that all but fills the connection's memory leaves libmicrohttpd no room to build
 * any answer's headers (it then closes without a word), so this one does not go through it. The
 * answer is short and the socket's buffer empty (the request was read, nothing was sent yet). */
MHD_Result refuse_large_head (MHD_Connection *c)
{
  static const char kAnswer[] = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
                                "Content-Length: 36\r\nConnection: close\r\n\r\nrequest line and headers over 8 KiB\n";
  const MHD_ConnectionInfo *info = MHD_get_connection_info (c, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (info) {
    (void) !send (info->connect_fd, kAnswer, sizeof kAnswer - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    /* nothing more is read or sent on it; the daemon closes it as it closes any other */
    shutdown (info->connect_fd, SHUT_RDWR);
  }
  return MHD_NO;
}

/* The request's URI as sent (before libmicrohttpd decodes it and splits off its arguments): its
 * length, kept as the request's pointer until on_request reads it (+1, so that it is never 0). */
void *note_raw_uri (void *, const char *uri, MHD_Connection *c)
{
  const size_t length = std::strlen (uri);
  /* "GET " URI " HTTP/1.1\r\n\r\n" at the least: over the limit already, and its arguments,
   * which libmicrohttpd parses next, could take more records than the memory holds */
  if (length + 16 > kMaxRequestHead)
    refuse_large_head (c);
  return GSIZE_TO_POINTER (length + 1);
}

/* The request's head as sent: "METHOD URI VERSION\r\n", each "key: value\r\n", "\r\n" (the
 * URI as sent where note_raw_uri saw it, else as parsed with its arguments). */
size_t request_head_bytes (MHD_Connection *c, const char *url, const char *method, const char *version, size_t raw_uri)
{
  size_t total = std::strlen (method) + 1 + std::strlen (version) + 2 + 2;
  if (raw_uri) {
    total += raw_uri;
  } else {
    total += std::strlen (url);
    MHD_get_connection_values (c, MHD_GET_ARGUMENT_KIND, add_argument_bytes, &total);
  }
  total += 1;
  MHD_get_connection_values (c, MHD_HEADER_KIND, add_header_bytes, &total);
  return total;
}

}  // namespace

HttpServer::HttpServer (HttpLimits limits, Handler handler) : limits_ (limits), handler_ (std::move (handler)) {}

HttpServer::~HttpServer ()
{
  if (watch_)
    g_source_remove (watch_);
  if (timer_)
    g_source_remove (timer_);
  if (daemon_)
    MHD_stop_daemon (daemon_);
}

HttpStats HttpServer::stats () const
{
  return HttpStats {open_.size (), evicted_};
}

/* Answered on the first call, before any body is read: a body (none of our paths takes one) or
 * a method other than GET and HEAD closes the connection after the answer. */
MHD_Result HttpServer::on_request (void *self, MHD_Connection *c, const char *url, const char *method, const char *version,
    const char *, size_t *, void **request)
{
  auto *s = static_cast<HttpServer *> (self);
  const size_t raw_uri = request && *request ? GPOINTER_TO_SIZE (*request) - 1 : 0;
  if (request_head_bytes (c, url, method, version, raw_uri) > kMaxRequestHead)
    return refuse_large_head (c);
  const char *length = MHD_lookup_connection_value (c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
  const char *encoding = MHD_lookup_connection_value (c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
  const unsigned long long declared = length ? std::strtoull (length, nullptr, 10) : 0;
  const bool body = encoding || declared > 0;
  if (encoding || declared > kMaxRequestBody)
    return respond (c, HttpResponse {MHD_HTTP_CONTENT_TOO_LARGE, "text/plain; charset=utf-8", "request body too large\n"},
        true, false);
  if (std::strcmp (method, MHD_HTTP_METHOD_GET) != 0 && std::strcmp (method, MHD_HTTP_METHOD_HEAD) != 0)
    return respond (c, HttpResponse {MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", "only GET and HEAD\n"}, true,
        true);
  return respond (c, s->handler_ (url), body, false);
}

void HttpServer::on_connection (void *self, MHD_Connection *c, void **, MHD_ConnectionNotificationCode code)
{
  auto *s = static_cast<HttpServer *> (self);
  if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
    const auto it = s->open_.find (c);
    if (it != s->open_.end ()) {
      s->leaving_ -= it->second.evicting;
      s->open_.erase (it);
    }
    return;
  }
  const MHD_ConnectionInfo *info = MHD_get_connection_info (c, MHD_CONNECTION_INFO_CONNECTION_FD);
  s->open_[c] = Connection {info ? static_cast<int> (info->connect_fd) : -1, g_get_monotonic_time (), false};
  s->make_room (static_cast<size_t> (s->limits_.connections));
}

void HttpServer::on_completed (void *self, MHD_Connection *c, void **, MHD_RequestTerminationCode)
{
  auto *s = static_cast<HttpServer *> (self);
  const auto it = s->open_.find (c);
  if (it != s->open_.end ())
    it->second.waiting_since_us = g_get_monotonic_time ();
}

void HttpServer::make_room (size_t keep)
{
  if (open_.size () - leaving_ <= 1)
    return;
  const long spare = spare_files ();
  while (open_.size () - leaving_ > 1 &&
      (open_.size () - leaving_ > keep || spare + static_cast<long> (leaving_) < kSpareFiles))
    if (!evict_oldest ())
      break;
}

/* Shuts the socket down: the daemon then reads its end and closes it as it closes any other,
 * on this thread, so that the descriptor is still the connection's here. */
bool HttpServer::evict_oldest ()
{
  Connection *oldest = nullptr;
  for (auto &[c, conn] : open_)
    if (!conn.evicting && conn.fd >= 0 && (!oldest || conn.waiting_since_us < oldest->waiting_since_us))
      oldest = &conn;
  if (!oldest)
    return false;
  shutdown (oldest->fd, SHUT_RDWR);
  oldest->evicting = true;
  leaving_++;
  evicted_++;
  return true;
}

void HttpServer::on_log (void *self, const char *format, va_list args)
{
  auto *s = static_cast<HttpServer *> (self);
  char line[512];
  std::vsnprintf (line, sizeof line, format, args);
  const size_t len = std::strlen (line);
  if (len && line[len - 1] == '\n')
    line[len - 1] = 0;
  if (!s->daemon_) {
    s->start_error_ = line;
    return;
  }
  if (!s->log_.due ())
    return;
  const uint64_t n = s->log_.take ();
  if (n > 1)
    g_printerr ("cudavision-run: metrics server: %s (and %llu more messages since the last)\n", line,
        static_cast<unsigned long long> (n - 1));
  else
    g_printerr ("cudavision-run: metrics server: %s\n", line);
}

gboolean HttpServer::on_ready (gint, GIOCondition, gpointer self)
{
  static_cast<HttpServer *> (self)->run ();
  return G_SOURCE_CONTINUE;
}

gboolean HttpServer::on_timer (gpointer self)
{
  auto *s = static_cast<HttpServer *> (self);
  s->timer_ = 0;
  s->make_room (static_cast<size_t> (s->limits_.connections));
  s->run ();
  return G_SOURCE_REMOVE;
}

/* The daemon's timeouts (idle connections) and the descriptor check run at least once a second;
 * while connections closed to make room are still open, at once: the daemon closes them, and
 * takes the connections waiting behind them, only when it runs. */
void HttpServer::run ()
{
  MHD_run (daemon_);
  MHD_UNSIGNED_LONG_LONG ms = 1000;
  if (MHD_get_timeout (daemon_, &ms) != MHD_YES || ms > 1000)
    ms = 1000;
  if (leaving_)
    ms = 0;
  if (timer_)
    g_source_remove (timer_);
  timer_ = g_timeout_add (static_cast<guint> (ms), on_timer, this);
}

bool HttpServer::start (const std::string &address, int port, std::string *error)
{
  struct sockaddr_storage native {};
  bool v6 = false;
  if (!address.empty ()) {
    GSocketAddress *a = g_inet_socket_address_new_from_string (address.c_str (), static_cast<guint> (port));
    if (!a || !g_socket_address_to_native (a, &native, sizeof native, nullptr)) {
      *error = "metrics on " + address + ": not an address";
      g_clear_object (&a);
      return false;
    }
    v6 = g_socket_address_get_family (a) == G_SOCKET_FAMILY_IPV6;
    g_object_unref (a);
  }
  /* the daemon takes more than the limit (twice, and 16 more at least), so that a connection that
   * comes while those closed to make room are still closing is taken */
  const unsigned int taken = static_cast<unsigned int> (limits_.connections) + std::max (limits_.connections, 16);
  auto start_daemon = [&] (unsigned int flags) {
    start_error_.clear ();
    return MHD_start_daemon (flags | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, static_cast<uint16_t> (port), nullptr, nullptr,
        on_request, this, MHD_OPTION_CONNECTION_LIMIT, taken, MHD_OPTION_CONNECTION_TIMEOUT,
        static_cast<unsigned int> (limits_.idle_timeout_s), MHD_OPTION_CONNECTION_MEMORY_LIMIT, kConnectionMemory,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, this, MHD_OPTION_NOTIFY_COMPLETED, on_completed, this,
        MHD_OPTION_URI_LOG_CALLBACK, note_raw_uri, nullptr,
        MHD_OPTION_EXTERNAL_LOGGER, on_log, this, MHD_OPTION_SOCK_ADDR,
        address.empty () ? nullptr : reinterpret_cast<struct sockaddr *> (&native), MHD_OPTION_END);
  };
  if (address.empty ()) {
    /* IPv6 and IPv4 on one socket, or IPv4 alone on a host without IPv6 */
    daemon_ = start_daemon (MHD_USE_DUAL_STACK);
    if (!daemon_)
      daemon_ = start_daemon (0);
  } else {
    daemon_ = start_daemon (v6 ? MHD_USE_IPv6 : 0);
  }
  if (!daemon_) {
    *error = "metrics on " + (address.empty () ? std::string ("port ") : address + " port ") + std::to_string (port) + ": " +
        (start_error_.empty () ? std::string ("the server did not start") : start_error_);
    return false;
  }
  const MHD_DaemonInfo *info = MHD_get_daemon_info (daemon_, MHD_DAEMON_INFO_EPOLL_FD);
  watch_ = g_unix_fd_add (info->epoll_fd, G_IO_IN, on_ready, this);
  run ();
  return true;
}

}  // namespace cuvrun
