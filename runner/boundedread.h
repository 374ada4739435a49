/* cudavision-run: the files a config names (password and TLS files) and the config itself, read
 * so that none can hold or flood the runner (docs/fleet.md, "Keys").
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cstddef>
#include <string>

namespace cuvrun {

/* At most @limit bytes of the regular file @path, read to its end at once (never a FIFO, a device
 * or a kernel file, which could block or never end, whatever size it states); false with @why when
 * it is not one or is larger. */
bool read_bounded (const std::string &path, size_t limit, std::string *out, std::string *why);

/* A password file's first line: 1 to 4,096 bytes, the line's end not part of it; the file a
 * regular one of at most 64 KiB. */
bool read_secret (const std::string &path, std::string *secret, std::string *why);

}  // namespace cuvrun
