/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/configlines.h"

#include <glib.h>

#include <algorithm>
#include <cstdio>

namespace cuvrun {

namespace {

constexpr const char *kByteOrderMark = "\xEF\xBB\xBF";

/* What a line is to GKeyFile, which skips its ASCII white space (g_ascii_isspace: a space, a tab,
 * a line feed, a form feed, a carriage return; not a vertical tab) before a line's first character
 * and after a key's name */
enum class LineKind { kBlank, kGroup, kKey, kOther };

/* @line's kind, and the group's name ([NAME]) or the key's (KEY = value) in @name; kOther is a line
 * GKeyFile refuses itself (no '='), kBlank a blank line or a comment */
LineKind line_kind (const std::string &line, std::string *name)
{
  size_t first = 0;
  while (first < line.size () && g_ascii_isspace (line[first]))
    first++;
  if (first == line.size () || line[first] == '#')
    return LineKind::kBlank;
  const size_t close = line.find (']', first);
  if (line[first] == '[' && close != std::string::npos) {
    *name = line.substr (first + 1, close - first - 1);
    return LineKind::kGroup;
  }
  size_t end = line.find ('=', first);
  if (end == std::string::npos)
    return LineKind::kOther;
  while (end > first && g_ascii_isspace (line[end - 1]))
    end--;
  *name = line.substr (first, end - first);
  return LineKind::kKey;
}

std::string hex_byte (unsigned char c)
{
  char hex[8];
  std::snprintf (hex, sizeof hex, "0x%02X", c);
  return hex;
}

/* What in @line GKeyFile would drop, change or report without the line ("" when nothing): @kind
 * and @name are the line's, @in_group whether a group began before it, @group the last one's name.
 * A NUL would end the value there (the rest of a pipeline unseen, and --check would say valid), a
 * byte order mark would join a group's name, and a byte that is not UTF-8 is reported without its
 * line. */
std::string byte_problem (const std::string &line, LineKind kind, const std::string &name, bool in_group,
    const std::string &group)
{
  const size_t cr = line.find ('\r');
  if (cr != std::string::npos && cr + 1 != line.size ())
    return "a carriage return inside a line (column " + std::to_string (cr + 1) +
        "; old Mac line ends?): save the file with LF or CRLF line ends";
  const size_t bom = line.find (kByteOrderMark);
  if (bom != std::string::npos)
    return "a UTF-8 byte order mark at column " + std::to_string (bom + 1) + ": remove it";
  if (kind == LineKind::kGroup) {
    for (const char c : name)
      if (static_cast<unsigned char> (c) < 0x20 || c == 0x7f)
        return "a control character (" + hex_byte (c) + ") in a group's name: [runner] and [camera NAME] are known";
  }
  /* where a byte at @column lies: [GROUP] KEY, [GROUP] before a key's '=' */
  const auto where = [&] (size_t column) {
    std::string key;
    if (group.empty ())
      return std::string ();
    return "[" + group + "]" + (line_kind (line.substr (0, column), &key) == LineKind::kKey ? " " + key : "") + ": ";
  };
  /* a control character GKeyFile keeps (a vertical tab is no white space to it): in a key's name
   * a key no one sees ('\vuri=' was said as 'uri: unknown key'), in a value a byte the runner would
   * take (an ESC, which its messages would echo to the terminal); a tab and a form feed are white
   * space, and a NUL is said below */
  for (size_t i = 0; kind != LineKind::kBlank && i < line.size (); i++) {
    const unsigned char c = static_cast<unsigned char> (line[i]);
    if ((c < 0x20 && c != '\0' && c != '\t' && c != '\f' && !(c == '\r' && i + 1 == line.size ())) || c == 0x7f)
      return where (i) + "a control character (" + hex_byte (c) + ") at column " + std::to_string (i + 1) +
          ": the config takes none but a tab or a form feed (a value writes \\t, \\n or \\r)";
  }
  if (kind != LineKind::kGroup && !in_group && kind != LineKind::kBlank)
    return "a line before the first group: the file begins with [runner] or [camera NAME]";
  const size_t nul = line.find ('\0');
  const char *bad = nullptr;
  if (nul == std::string::npos && g_utf8_validate_len (line.data (), line.size (), &bad))
    return "";
  const size_t column = nul != std::string::npos ? nul : static_cast<size_t> (bad - line.data ());
  if (nul != std::string::npos)
    return where (column) + "a NUL byte at column " + std::to_string (column + 1) + " (what follows it would be dropped)";
  return where (column) + "not UTF-8 (byte " + hex_byte (line[column]) + " at column " + std::to_string (column + 1) +
      "): save the file as UTF-8";
}

}  // namespace

bool ConfigLines::scan (const char *path, const std::string &text, std::string *error)
{
  lines_.clear ();
  groups_.clear ();
  keys_.clear ();
  /* GKeyFile ends a line at '\n' and drops a '\r' before it */
  for (size_t pos = 0; pos <= text.size ();) {
    const size_t end = std::min (text.find ('\n', pos), text.size ());
    lines_.push_back (text.substr (pos, end - pos));
    pos = end + 1;
  }
  const std::string file = std::string (path) + ":";
  if (text.compare (0, 3, kByteOrderMark) == 0) {
    *error = file + "1: a UTF-8 byte order mark: save the file without it";
    return false;
  }
  if (text.compare (0, 2, "\xFF\xFE") == 0 || text.compare (0, 2, "\xFE\xFF") == 0) {
    *error = file + "1: a UTF-16 byte order mark: save the file as UTF-8";
    return false;
  }
  /* the first group or key that GKeyFile would take silently: said once no byte is wrong (a byte
   * is said first, wherever it is) */
  std::string taken_silently, group;
  bool in_group = false;
  for (size_t i = 0; i < lines_.size (); i++) {
    const int n = static_cast<int> (i + 1);
    const std::string where = file + std::to_string (n) + ": ";
    std::string name;
    const LineKind kind = line_kind (lines_[i], &name);
    const std::string problem = byte_problem (lines_[i], kind, name, in_group, group);
    if (!problem.empty ()) {
      *error = where + problem;
      return false;
    }
    if (kind == LineKind::kGroup) {
      in_group = true;
      group = name;
      const auto [first, added] = groups_.emplace (name, n);
      if (!added && taken_silently.empty ())
        taken_silently = where + "[" + name + "]: a second group of that name (the first is on line " +
            std::to_string (first->second) + ")";
    } else if (kind == LineKind::kKey && taken_silently.empty ()) {
      const auto [first, added] = keys_.emplace (std::make_pair (group, name), n);
      if (name.find ('[') != std::string::npos)
        taken_silently = where + "[" + group + "] " + name + ": a localized key (key[locale]) is not taken: one value a key";
      else if (!added)
        taken_silently = where + "[" + group + "] " + name + ": a second value for that key (the first is on line " +
            std::to_string (first->second) + ")";
    }
  }
  *error = taken_silently;
  return taken_silently.empty ();
}

int ConfigLines::line (const std::string &group, const std::string &key) const
{
  const auto k = keys_.find (std::make_pair (group, key));
  if (!key.empty () && k != keys_.end ())
    return k->second;
  const auto g = groups_.find (group);
  return g != groups_.end () ? g->second : 0;
}

int ConfigLines::line_of_text (const std::string &text) const
{
  for (size_t i = 0; i < lines_.size (); i++)
    if (lines_[i] == text || lines_[i] == text + "\r")
      return static_cast<int> (i + 1);
  return 0;
}

std::string printable (const std::string &text, size_t max)
{
  std::string kept = text;
  if (text.size () > max) {
    /* cut on UTF-8 character boundaries: never a continuation byte (10xxxxxx) first */
    size_t head = max * 2 / 3, tail = text.size () - max / 3;
    while (head > 0 && (static_cast<unsigned char> (text[head]) & 0xC0) == 0x80)
      head--;
    while (tail < text.size () && (static_cast<unsigned char> (text[tail]) & 0xC0) == 0x80)
      tail++;
    kept = text.substr (0, head) + " [... " + std::to_string (tail - head) + " bytes left out ...] " + text.substr (tail);
  }
  std::string out;
  for (const char c : kept) {
    const unsigned char u = static_cast<unsigned char> (c);
    if (u < 0x20 || u == 0x7f) {
      char hex[8];
      std::snprintf (hex, sizeof hex, "\\x%02X", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace cuvrun
