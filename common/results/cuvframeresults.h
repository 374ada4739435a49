/* gst-cudavision: one frame's results, a value (docs/design.md, "A frame's path"): what an
 * analyser's transform measured on the frame and what publishing them reads (the settings the
 * frame took, post-messages and interval as it took them). The analyser makes it for each frame
 * before the frame's output buffer is chosen; the frame's task owns it, then the route's frame in
 * flight or the results that follow the frame (cuvresultsmeta.h), until the analyser publishes it
 * on its streaming thread, however many frames it has processed since. An element derives its own
 * from this one. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

#include <memory>
#include <vector>

namespace cuv {

struct FrameResults {
  virtual ~FrameResults () = default;
  /* the analyser layer: post-messages and interval as the frame took them */
  bool post_messages = true;
  guint64 interval = 0;
};

/* The values of one element, reused: one is free again once only the pool holds it (its frame
 * published or dropped), so a stream takes no allocation a frame once it has made as many as it
 * has frames unpublished at once (the current one, two in flight or following their frames).
 * Streaming thread: every other owner lets go of a value there, or where the streaming thread
 * is stopped (a flush, stop). */
class FrameResultsPool {
 public:
  template <typename Make> std::shared_ptr<FrameResults> take (Make make)
  {
    for (const std::shared_ptr<FrameResults> &r : values_)
      if (r.use_count () == 1)
        return r;
    values_.emplace_back (make ());
    return values_.back ();
  }
  /* at stop, when no frame holds one */
  void clear () { values_.clear (); }

 private:
  std::vector<std::shared_ptr<FrameResults>> values_;
};

}  // namespace cuv
