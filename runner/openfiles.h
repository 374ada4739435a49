/* cudavision-run: the process limits that many pipelines in one process need (docs/fleet.md).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <dirent.h>
#include <sys/resource.h>

#include <limits>

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

/* Descriptors this process may still open (0 when it cannot tell: it is short). */
inline long spare_files ()
{
  struct rlimit l {};
  if (getrlimit (RLIMIT_NOFILE, &l) != 0 || l.rlim_cur == RLIM_INFINITY)
    return std::numeric_limits<long>::max ();
  DIR *d = opendir ("/proc/self/fd");
  if (!d)
    return 0;
  long open = -1; /* the directory's own */
  while (const dirent *e = readdir (d))
    open += e->d_name[0] != '.';
  closedir (d);
  return static_cast<long> (l.rlim_cur) - open;
}

/* The open-files limit now (its soft limit), or 0 when it cannot tell. */
inline long open_files_limit ()
{
  struct rlimit l {};
  if (getrlimit (RLIMIT_NOFILE, &l) != 0)
    return 0;
  return l.rlim_cur == RLIM_INFINITY ? std::numeric_limits<long>::max () : static_cast<long> (l.rlim_cur);
}

}  // namespace cuvrun
