/* cudavision-run: the process limits that many pipelines in one process need (docs/fleet.md).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/resource.h>

namespace cuvrun {

/* Raises the limit of open files to the hard limit, as a server does: every pipeline holds
 * several (a camera's sockets, its bus's and each buffer pool's wake-up descriptors: about 8 a
 * pipeline of four elements on the CPU backend), so that a thousand pipelines need more than the
 * usual soft limit of 1,024, and running out shows far from its cause (GLib's criticals about a
 * NULL GstPoll, a CUDA stream that cannot be made). The limit now. */
inline rlim_t raise_open_files_limit ()
{
  struct rlimit l {};
  if (getrlimit (RLIMIT_NOFILE, &l) != 0)
    return 0;
  if (l.rlim_cur < l.rlim_max) {
    l.rlim_cur = l.rlim_max;
    setrlimit (RLIMIT_NOFILE, &l);
    getrlimit (RLIMIT_NOFILE, &l);
  }
  return l.rlim_cur;
}

}  // namespace cuvrun
