/* cudavision-run: the line of each group and key of the config file, and what GLib's key files
 * would take from it without a word (docs/fleet.md, "Keys").
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cuvrun {

/* GKeyFile reads the config's values (runner/siteconfig.cpp) but keeps no line numbers, and some
 * of what the runner refuses it takes silently or reports without a line: a second group of one
 * name (merged: a camera would be gone), a second value for a key (the last kept), a localized
 * key, a NUL (the value ends there), a byte order mark, a byte that is not UTF-8, a line before the
 * first group. So the text is also split here, into lines as GKeyFile splits them, for those cases
 * and for the line of each group and key that an error names; no value is read here. */
class ConfigLines {
 public:
  /* Splits @text, the file @path's; false with @error, "PATH:LINE: ...", at the first of the cases
   * above (one of the bytes first, wherever it is: what GKeyFile would drop or change). */
  bool scan (const char *path, const std::string &text, std::string *error);
  /* The line (from 1) of @key in [@group]; [@group]'s when @key is empty or not written there; 0
   * when the group is not there either. */
  int line (const std::string &group, const std::string &key = "") const;
  /* The first line whose text is @text (GKeyFile's syntax errors quote the line), or 0. */
  int line_of_text (const std::string &text) const;

 private:
  std::vector<std::string> lines_;
  std::map<std::string, int> groups_;
  std::map<std::pair<std::string, std::string>, int> keys_;
};

/* @text fit for one line of the log: each control character written \xNN (a value's \n cannot
 * start a line of its own, nor ESC drive the terminal), and a text longer than @max bytes cut in
 * its middle, where the bytes left out are counted (a 1 MiB group name or pipeline is not echoed
 * whole; the message's start, FILE:LINE: [GROUP] KEY, and its end, what is wrong, stay). */
std::string printable (const std::string &text, size_t max = 1024);

}  // namespace cuvrun
