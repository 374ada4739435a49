/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/listener.h"

namespace cuvrun {

BoundedListener::~BoundedListener ()
{
  if (retry_)
    g_source_remove (retry_);
  if (listener_) {
    /* an accept still pending ends as cancelled, and touches nothing of this listener */
    g_cancellable_cancel (cancel_);
    g_socket_listener_close (listener_);
    g_object_unref (listener_);
    g_object_unref (cancel_);
  }
  for (auto &[c, deadline] : open_) {
    g_object_weak_unref (c, on_gone, this);
    if (deadline)
      g_source_remove (deadline);
  }
}

bool BoundedListener::listen (const std::string &address, int port, std::string *error)
{
  listener_ = g_socket_listener_new ();
  cancel_ = g_cancellable_new ();
  GError *err = nullptr;
  bool ok;
  if (address.empty ()) {
    ok = g_socket_listener_add_inet_port (listener_, static_cast<guint16> (port), nullptr, &err);
  } else {
    GSocketAddress *a = g_inet_socket_address_new_from_string (address.c_str (), static_cast<guint> (port));
    ok = a && g_socket_listener_add_address (listener_, a, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, nullptr,
                  nullptr, &err);
    if (a)
      g_object_unref (a);
  }
  if (!ok) {
    *error = err ? err->message : "not an address";
    g_clear_error (&err);
    return false;
  }
  accept_next ();
  return true;
}

void BoundedListener::accept_next ()
{
  g_socket_listener_accept_async (listener_, cancel_, on_accepted, this);
}

void BoundedListener::on_accepted (GObject *listener, GAsyncResult *result, gpointer self)
{
  GError *err = nullptr;
  GSocketConnection *connection = g_socket_listener_accept_finish (G_SOCKET_LISTENER (listener), result, nullptr, &err);
  if (!connection && g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
    g_error_free (err);
    return;
  }
  auto *l = static_cast<BoundedListener *> (self);
  if (!connection) {
    /* the open files exhausted, most likely: the listening socket stays readable, so accepting
     * again at once would spin */
    l->log (std::string ("cannot accept a connection (") + err->message + "): accepting again in 1 s");
    g_error_free (err);
    l->retry_ = g_timeout_add (1000, [] (gpointer self) -> gboolean {
      auto *l = static_cast<BoundedListener *> (self);
      l->retry_ = 0;
      l->accept_next ();
      return G_SOURCE_REMOVE;
    }, l);
    return;
  }
  l->take (connection);
  g_object_unref (connection);
  l->accept_next ();
}

void BoundedListener::take (GSocketConnection *connection)
{
  if (open_.size () >= kMaxConnections) {
    refused_++;
    log (std::to_string (kMaxConnections) + " connections are open, the most taken: closing new ones");
    g_io_stream_close (G_IO_STREAM (connection), nullptr, nullptr);
    return;
  }
  /* a wait for the client longer than this fails the read or write, and libsoup closes it */
  g_socket_set_timeout (g_socket_connection_get_socket (connection), kIdleSeconds);
  GSocketAddress *local = g_socket_connection_get_local_address (connection, nullptr);
  GSocketAddress *remote = g_socket_connection_get_remote_address (connection, nullptr);
  GError *err = nullptr;
  /* a connection its client reset before this has no address left: libsoup takes none such */
  if (local && remote && soup_server_accept_iostream (server_, G_IO_STREAM (connection), local, remote, &err)) {
    /* the deadline holds no reference: the connection is gone when libsoup lets it go */
    const guint deadline = g_timeout_add_seconds_full (G_PRIORITY_DEFAULT, kDeadlineSeconds, on_deadline,
        new Deadline{this, G_OBJECT (connection)}, [] (gpointer d) { delete static_cast<Deadline *> (d); });
    open_.emplace (G_OBJECT (connection), deadline);
    g_object_weak_ref (G_OBJECT (connection), on_gone, this);
  } else {
    g_clear_error (&err);
    g_io_stream_close (G_IO_STREAM (connection), nullptr, nullptr);
  }
  g_clear_object (&local);
  g_clear_object (&remote);
}

/* The connection's time is up: its socket is shut down, and libsoup, reading or writing it,
 * closes it and lets it go. */
gboolean BoundedListener::on_deadline (gpointer data)
{
  auto *d = static_cast<Deadline *> (data);
  const auto it = d->listener->open_.find (d->connection);
  if (it != d->listener->open_.end ()) {
    it->second = 0;
    g_socket_shutdown (g_socket_connection_get_socket (G_SOCKET_CONNECTION (d->connection)), TRUE, TRUE, nullptr);
  }
  return G_SOURCE_REMOVE;
}

void BoundedListener::log (const std::string &what)
{
  const gint64 now = g_get_monotonic_time ();
  if (last_log_us_ && now - last_log_us_ < 60 * G_USEC_PER_SEC)
    return;
  last_log_us_ = now;
  g_printerr ("cudavision-run: metrics: %s (%" G_GUINT64_FORMAT " connections closed at once so far)\n", what.c_str (),
      refused_);
}

void BoundedListener::on_gone (gpointer self, GObject *connection)
{
  auto &open = static_cast<BoundedListener *> (self)->open_;
  const auto it = open.find (connection);
  if (it == open.end ())
    return;
  if (it->second)
    g_source_remove (it->second);
  open.erase (it);
}

}  // namespace cuvrun
