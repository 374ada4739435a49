/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/cuvmessenger.h"

#include <gmodule.h>

#include <atomic>
#include <chrono>

namespace cuv {

namespace {
/* tasks given to the pool and not yet ended, for cuv_finish_messages (): an atomic, since a task
 * may be scheduled every frame and nothing in the streaming path takes a process-wide lock */
std::atomic<long> g_tasks_scheduled{0};
}  // namespace

void
Messenger::post_now (GstElement *element, Pending &p)
{
  p.write (p.s);
  gst_element_post_message (element, gst_message_new_element (GST_OBJECT (element), p.s));
}

void
Messenger::post (GstStructure *s, ResultWriter write, GstPad *pad)
{
  std::unique_lock<std::mutex> lk (lock_);
  pending_.push_back ({s, std::move (write)});
  const bool behind = pending_.size () > kMaxWaiting;
  if (!scheduled_) {
    scheduled_ = true;
    lk.unlock ();
    hand_over (false);
  } else {
    lk.unlock ();
  }
  /* the pool is behind: the frames wait for their messages, which do not pile up */
  if (behind)
    drain (pad);
}

void
Messenger::hand_over (bool overflow)
{
  /* a few threads for every element of the process: a message costs microseconds, and each
   * element's messages go out one after another anyway (one thread for each element posting at
   * once cost 16 pipelines of the chain of four a tenth of their frames on the H100); at least 4,
   * so that a slow bus handler, or one that stops its pipeline, leaves threads to the others */
  static GThreadPool *pool =
      g_thread_pool_new (run, nullptr, CLAMP (g_get_num_processors () / 4, 4, 16), FALSE, nullptr);
  /* where those are all busy, a thread for each element that waits for its messages: a bus sync
   * handler never runs on a streaming thread, where it could not stop its pipeline */
  static GThreadPool *overflow_pool = g_thread_pool_new (run_overflow, nullptr, -1, FALSE, nullptr);
  g_tasks_scheduled++;
  /* the element lives until its messages are out, wherever its last reference goes */
  gst_object_ref (element_);
  GThreadPool *to = overflow ? overflow_pool : pool;
  if (!to || !g_thread_pool_push (to, this, nullptr))
    post_pending (!overflow);
}

void
Messenger::run (gpointer data, gpointer)
{
  static_cast<Messenger *> (data)->post_pending (true);
}

void
Messenger::run_overflow (gpointer data, gpointer)
{
  static_cast<Messenger *> (data)->post_pending (false);
}

void
Messenger::post_pending (bool scheduled_task)
{
  GstElement *element = element_;
  std::unique_lock<std::mutex> lk (lock_);
  /* one thread posts an element's messages at a time, in order */
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
  /* only the pool's task clears its flag: one of them at most waits for the pool an element */
  if (scheduled_task)
    scheduled_ = false;
  idle_.notify_all ();
  lk.unlock ();
  /* may be the last reference: this messenger may be gone after it */
  gst_object_unref (element);
  g_tasks_scheduled--;
}

void
Messenger::drain (GstPad *pad)
{
  std::unique_lock<std::mutex> lk (lock_);
  if (poster_ == g_thread_self ())
    return;
  const auto flushing = [pad] { return pad && GST_PAD_IS_FLUSHING (pad); };
  /* messages that no thread has begun (the pool's threads may all be busy with other elements'
   * messages, or with a slow bus handler) go to a thread of their own: no element waits for
   * another's, and no bus handler runs on this thread. Whoever begins posts them all. */
  if (!poster_ && !pending_.empty ()) {
    lk.unlock ();
    hand_over (true);
    lk.lock ();
  }
  /* this element's own messages, to its own bus; a flush ends the wait (a pipeline being stopped
   * waits for this thread), and stop () drops what is left */
  while ((poster_ || !pending_.empty ()) && !flushing ())
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
  /* a task that has not begun (the pool's threads may be busy with other elements' messages)
   * finds nothing to post; only this element's message being posted now is waited for */
  idle_.wait (lk, [this] { return !poster_; });
}

}  // namespace cuv

/* Returns once every task given to the pool so far has ended, so that no element is held by one:
 * tests call it before gst_deinit (), where the leaks tracer counts what is alive. */
extern "C" G_MODULE_EXPORT void cuv_finish_messages ()
{
  while (cuv::g_tasks_scheduled > 0)
    g_usleep (1000);
}
