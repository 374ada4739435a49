/* cudavision-run: Prometheus' text exposition format (0.0.4), as a scraper reads it whatever the
 * names and values: label values escaped, of any length; counters exact.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cuvrun {

using Labels = std::vector<std::pair<const char *, std::string>>;

/* @v as the exposition writes a number: the shortest text that reads back as the same double,
 * NaN, +Inf or -Inf. */
std::string number (double v);

/* A label value with backslash, double quote and line feed escaped. */
std::string escape_label (const std::string &value);

/* One metric family: its HELP and TYPE once, then its samples. Whole numbers are printed exactly
 * (a float's six digits would step rate() by hundreds past 10^6); doubles as the shortest text
 * that reads back as the same double. */
class Family {
 public:
  Family (std::string &out, const char *name, const char *type, const char *help);
  void sample (const Labels &labels, uint64_t v) { line (labels, std::to_string (v)); }
  void sample (const Labels &labels, int64_t v) { line (labels, std::to_string (v)); }
  void sample (const Labels &labels, int v) { line (labels, std::to_string (v)); }
  void sample (const Labels &labels, double v);
  /* A sample named the family's name and @suffix (a histogram's _bucket, _sum and _count). */
  void sample (const char *suffix, const Labels &labels, uint64_t v) { line (labels, std::to_string (v), suffix); }
  void sample (const char *suffix, const Labels &labels, double v);

 private:
  void line (const Labels &labels, const std::string &value, const char *suffix = "");
  std::string &out_;
  const char *name_;
};

}  // namespace cuvrun
