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
  /* a few threads for every element of the process: a message costs microseconds, and each
   * element's messages go out one after another anyway */
  static GThreadPool *pool = g_thread_pool_new (run, nullptr, CLAMP (g_get_num_processors () / 4, 1, 4), FALSE, nullptr);
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
  while (scheduled_ && !(pad && GST_PAD_IS_FLUSHING (pad)))
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
  idle_.wait (lk, [this] { return !scheduled_; });
}

}  // namespace cuv
