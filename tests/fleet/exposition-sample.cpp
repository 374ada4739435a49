/* Prints an exposition of runner/exposition's with the names and values a scraper must read back
 * exactly (tests/fleet/scrape-check.py reads it): label values with '"', '\', a line feed, 600
 * characters and UTF-8; counters past 10^7 and up to 2^64-1; gauges that need every digit; a
 * histogram's buckets, sum and count as the runner writes its frame ages.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cstdio>
#include <limits>

#include "runner/exposition.h"

int main ()
{
  std::string out;
  {
    cuvrun::Family f (out, "sample_frames_total", "counter", "Frames.");
    f.sample ({{"camera", "q\"uote"}}, uint64_t{10000001});
    f.sample ({{"camera", "back\\slash"}}, uint64_t{9007199254740993ULL});
    f.sample ({{"camera", "line\nfeed"}}, std::numeric_limits<uint64_t>::max ());
    f.sample ({{"camera", std::string (600, 'x')}}, uint64_t{1263157});
    f.sample ({{"camera", "caf\xc3\xa9"}, {"element", "h-1"}}, int64_t{-3});
  }
  {
    cuvrun::Family f (out, "sample_fps", "gauge", "Frames a second.");
    f.sample ({{"camera", "a"}}, 29.970029970029969);
    f.sample ({{"camera", "b"}}, 1e-9);
    f.sample ({{"camera", "c"}}, 0.1);
  }
  {
    cuvrun::Family f (out, "sample_age_seconds", "histogram", "Ages.");
    f.sample ("_bucket", {{"camera", "a"}, {"le", cuvrun::number (0.005)}}, uint64_t{3});
    f.sample ("_bucket", {{"camera", "a"}, {"le", cuvrun::number (0.1)}}, uint64_t{9});
    f.sample ("_bucket", {{"camera", "a"}, {"le", "+Inf"}}, uint64_t{10});
    f.sample ("_sum", {{"camera", "a"}}, 0.75);
    f.sample ("_count", {{"camera", "a"}}, uint64_t{10});
  }
  std::fputs (out.c_str (), stdout);
  return 0;
}
