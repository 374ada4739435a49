/* gst-cudavision: an element's messages built and posted off its streaming thread, in order.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An analyser posts one message per interval, by default every frame. Building it (cudahistogram's
 * holds an array of 256 GValues) and posting it (two buses, a wake-up of the application's thread)
 * cost the streaming thread as much as the frame's whole GPU work at 1920x1080. Here
 * the streaming thread only hands over what the message says; a thread of a pool shared by all
 * elements writes the fields and posts the message, one element's messages in the order given.
 * drain () returns when every message given so far is on the bus: the analyser calls it before
 * EOS goes on, so that an application sees all of them before the EOS message. The messages
 * waiting for the pool are bounded (kMaxWaiting an element): where the pool falls behind (a slow
 * bus handler, or more frames a second than its threads post) the streaming thread waits for
 * them, posted by a thread of their own where the pool's are busy, so that a pipeline slows down
 * with its messages instead of queueing them without end. No message is posted on a streaming
 * thread: a bus sync handler may set its pipeline to NULL (docs/design.md, "Analysers"). */
#pragma once

#include <gst/gst.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

namespace cuv {

/* Writes an interval's results into its message's structure; runs on the messenger's thread, so
 * it holds copies of what it writes, never pointers into the element's state. */
using ResultWriter = std::function<void (GstStructure *)>;

class Messenger {
 public:
  /* @element posts the messages; it is referenced while a thread posts for it. */
  explicit Messenger (GstElement *element) : element_ (element) {}
  ~Messenger () { stop (); }
  Messenger (const Messenger &) = delete;
  Messenger &operator= (const Messenger &) = delete;

  /* Messages of one element that may wait for the pool; at 30 frames a second, 133 ms of them. */
  static constexpr size_t kMaxWaiting = 4;

  /* Queues an element message: @s (taken) after @write has added its fields. With more than kMaxWaiting
   * waiting, returns once they are all posted, as drain (@pad) does. */
  void post (GstStructure *s, ResultWriter write, GstPad *pad);

  /* Returns once every message given so far is posted (at once on a thread that posts them, where
   * a bus sync handler may stop the pipeline), or when @pad starts flushing, since a pipeline that
   * is shut down may wait for this thread. Messages that no thread of the pool has begun go to a
   * thread of their own, so that an element never waits for other elements' messages; stop ()
   * drops those left at a flush. */
  void drain (GstPad *pad = nullptr);

  /* At stop: the messages not yet begun are dropped, and the one being posted now is waited for
   * (not on the pool's own thread), so that nothing is posted once the element has stopped, when
   * its bin may be going away. A task of the pool that has not begun is not waited for (it may
   * be queued behind other elements' messages): it finds nothing to post, and holds a reference
   * to the element until it has run. */
  void stop ();

 private:
  struct Pending {
    GstStructure *s;
    ResultWriter write;
  };
  /* Gives the messages to a thread: the shared pool's, or with @overflow one of their own. */
  void hand_over (bool overflow);
  static void run (gpointer data, gpointer pool_data);
  static void run_overflow (gpointer data, gpointer pool_data);
  /* Posts every pending message; @scheduled_task: the pool's task that scheduled_ stands for. */
  void post_pending (bool scheduled_task);
  static void post_now (GstElement *element, Pending &p);

  GstElement *element_;
  std::mutex lock_;
  std::condition_variable idle_;
  std::deque<Pending> pending_;
  bool scheduled_ = false; /* a thread of the pool has this messenger, or will */
  GThread *poster_ = nullptr; /* the thread posting now */
};

}  // namespace cuv
