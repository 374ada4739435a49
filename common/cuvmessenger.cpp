/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cuvmessenger.h"

#include <chrono>

namespace cuv {

void
Messenger::post_now (GstElement *element, Pending &p)
{
  p.write (p.s);
  gst_element_post_message (element, gst_message_new_element (GST_OBJECT (element), p.s));
}

void
Messenger::post (GstStructure *s, ResultWriter write)
{
  /* threads shared by every element of the process, as many as are posting at once: a message
   * costs microseconds, so a few serve many elements, but a bus handler that is slow (or stops
   * its pipeline) holds only its own element's thread, never another pipeline's messages; idle
   * threads go after GLib's pool timeout */
  static GThreadPool *pool = g_thread_pool_new (run, nullptr, -1, FALSE, nullptr);
  std::unique_lock<std::mutex> lk (lock_);
  pending_.push_back ({s, std::move (write)});
  if (scheduled_)
    return;
  scheduled_ = true;
  /* the element lives until its messages are out, wherever its last reference goes */
  gst_object_ref (element_);
  lk.unlock ();
  if (pool && g_thread_pool_push (pool, this, nullptr))
    return;
  run (this, nullptr);
}

void
Messenger::run (gpointer data, gpointer)
{
  static_cast<Messenger *> (data)->post_pending ();
}

void
Messenger::post_pending ()
{
  GstElement *element = element_;
  std::unique_lock<std::mutex> lk (lock_);
  /* a drain () on the streaming thread may be posting this element's messages itself */
  idle_.wait (lk, [this] { return !poster_; });
  poster_ = g_thread_self ();
  while (!pending_.empty ()) {
    Pending p = std::move (pending_.front ());
    pending_.pop_front ();
    lk.unlock ();
    post_now (element, p);
    lk.lock ();
  }
  poster_ = nullptr;
  scheduled_ = false;
  idle_.notify_all ();
  lk.unlock ();
  /* may be the last reference: this messenger may be gone after it */
  gst_object_unref (element);
}

void
Messenger::drain (GstPad *pad)
{
  std::unique_lock<std::mutex> lk (lock_);
  if (poster_ == g_thread_self ())
    return;
  /* messages that no thread has begun (the pool's threads may all be busy with other elements'
   * messages, or with a slow bus handler) go out from here, in order: no element waits for
   * another's */
  if (!poster_ && !pending_.empty ()) {
    std::deque<Pending> mine;
    mine.swap (pending_);
    poster_ = g_thread_self ();
    lk.unlock ();
    for (Pending &p : mine)
      post_now (element_, p);
    lk.lock ();
    poster_ = nullptr;
    idle_.notify_all ();
  }
  /* what a thread of the pool is posting now: this element's own message, to its own bus */
  while (poster_ && !(pad && GST_PAD_IS_FLUSHING (pad)))
    idle_.wait_for (lk, std::chrono::milliseconds (10));
}

void
Messenger::stop ()
{
  std::unique_lock<std::mutex> lk (lock_);
  for (Pending &p : pending_)
    gst_structure_free (p.s);
  pending_.clear ();
  if (poster_ == g_thread_self ())
    return;
  /* the pool has a thread for every element posting at once, so the task ends at once unless it
   * posts a message now (this element's own); waiting for it keeps the element's last reference
   * on this side of stop */
  idle_.wait (lk, [this] { return !scheduled_; });
}

}  // namespace cuv
