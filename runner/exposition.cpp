/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/exposition.h"

#include <charconv>
#include <cmath>

namespace cuvrun {

std::string escape_label (const std::string &value)
{
  std::string out;
  out.reserve (value.size ());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

Family::Family (std::string &out, const char *name, const char *type, const char *help) : out_ (out), name_ (name)
{
  out_ += std::string ("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

std::string number (double v)
{
  if (std::isnan (v) || std::isinf (v))
    return std::isnan (v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto r = std::to_chars (buf, buf + sizeof (buf), v);
  return std::string (buf, r.ptr);
}

void Family::sample (const Labels &labels, double v)
{
  line (labels, number (v));
}

void Family::sample (const char *suffix, const Labels &labels, double v)
{
  line (labels, number (v), suffix);
}

void Family::line (const Labels &labels, const std::string &value, const char *suffix)
{
  out_ += name_;
  out_ += suffix;
  if (!labels.empty ()) {
    out_ += '{';
    for (size_t i = 0; i < labels.size (); i++)
      out_ += std::string (i ? "," : "") + labels[i].first + "=\"" + escape_label (labels[i].second) + "\"";
    out_ += '}';
  }
  out_ += " " + value + "\n";
}

}  // namespace cuvrun
