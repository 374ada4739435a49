/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/boundedread.h"

#include <glib.h>
#include <glib/gstdio.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cuvrun {

namespace {

/* Whether @path resolves into the kernel's files (/proc, /sys, /dev): regular files there can
 * block, never end or be consumed by reading them (/proc/kmsg) */
bool kernel_file (const std::string &path)
{
  char *real = realpath (path.c_str (), nullptr);
  const std::string resolved = real ? real : "";
  free (real);
  for (const char *dir : {"/proc/", "/sys/", "/dev/"})
    if (resolved.compare (0, std::strlen (dir), dir) == 0)
      return true;
  return false;
}

}  // namespace

bool read_bounded (const std::string &path, size_t limit, std::string *out, std::string *why)
{
  const bool kernel = kernel_file (path);
  const int fd = kernel ? -1 : g_open (path.c_str (), O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
  struct stat st {};
  if (fd < 0 || fstat (fd, &st) != 0 || !S_ISREG (st.st_mode)) {
    *why = "'" + path + "': " + (kernel ? std::string ("a file of the kernel's (/proc, /sys, /dev)") :
        fd < 0 ? std::string (g_strerror (errno)) : std::string ("not a regular file"));
    if (fd >= 0)
      close (fd);
    return false;
  }
  out->clear ();
  char chunk[65536];
  ssize_t n;
  while ((n = read (fd, chunk, sizeof chunk)) > 0 && out->size () <= limit)
    out->append (chunk, static_cast<size_t> (n));
  const int err = errno;
  close (fd);
  if (n < 0 || out->size () > limit) {
    *why = "'" + path + "': " + (n < 0 ? std::string (g_strerror (err)) : "larger than " + std::to_string (limit) + " bytes");
    return false;
  }
  return true;
}

bool read_secret (const std::string &path, std::string *secret, std::string *why)
{
  std::string s;
  if (!read_bounded (path, 64 * 1024, &s, why))
    return false;
  s = s.substr (0, s.find_first_of ("\r\n"));
  if (s.empty () || s.size () > 4096) {
    *why = "'" + path + "' does not hold a password on its first line (1 to 4,096 bytes)";
    return false;
  }
  /* the password is given on as a C string (libmosquitto, rtspsrc's user-pw): it would end there */
  if (s.find ('\0') != std::string::npos) {
    *why = "'" + path + "': a NUL byte in the password (at byte " + std::to_string (s.find ('\0') + 1) +
        " of its first line), where it would end: a password holds none";
    return false;
  }
  *secret = s;
  return true;
}

}  // namespace cuvrun
