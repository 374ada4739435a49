/* cudavision-run: a log line for something that may happen many times a second (docs/fleet.md,
 * "Operations"): the first at once, then at most one a minute, each with how many it stands for.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

#include <cstdint>

namespace cuvrun {

class Throttle {
 public:
  /* Counts @n more; true when a line is due now: take() then gives the count since the last. */
  bool due (uint64_t n = 1)
  {
    held_ += n;
    const gint64 now = g_get_monotonic_time ();
    if (last_us_ && now - last_us_ < 60 * G_USEC_PER_SEC)
      return false;
    last_us_ = now;
    return true;
  }
  /* the count since the last line, which is then 0 */
  uint64_t take ()
  {
    const uint64_t n = held_;
    held_ = 0;
    return n;
  }
  /* The thing stopped (the broker came back): the next occurrence is a first again. */
  void reset () { last_us_ = 0; held_ = 0; }

 private:
  gint64 last_us_ = 0;
  uint64_t held_ = 0;
};

}  // namespace cuvrun
