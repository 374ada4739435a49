/* gst-cudavision: the regions an analyser attaches, cudanoisemap's changing tiles and
 * cudamotionest's moving blocks (docs/results.md, "Regions"): their two properties, which are the
 * same in both but for what the blurbs say the regions are, and the regions attached to a buffer
 * as GStreamer's metas (common/results/cuvanalytics.h). The regions themselves are the kernels'
 * (pixel_regions (), kernels/base/regions.h). Two elements share it, so it is common/'s;
 * element/'s, beside the property table it declares into (cuvsettings.h). Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <type_traits>
#include <vector>

#include "common/element/cuvsettings.h"
#include "common/results/cuvanalytics.h"
#include "kernels/base/regions.h"

namespace cuv {

/* The values of `regions` and `min-region-area`: the settings struct of an analyser that attaches
 * regions derives from it, so that they have the same defaults in each. */
struct RegionSettings {
  bool regions = false;
  guint min_region_area = 256;
};

/* class_init: `regions` and `min-region-area` in @p, their values in S's RegionSettings, with
 * the same names, nicks, range, defaults and flags in each analyser (a change reaches the next
 * frame); @regions_blurb and @min_area_blurb say what the element's regions are. */
template <typename S>
void
add_region_properties (Properties<S> &p, const char *regions_blurb, const char *min_area_blurb)
{
  static_assert (std::is_base_of_v<RegionSettings, S>, "the settings derive from cuv::RegionSettings");
  static const RegionSettings kDefaults;
  const auto flags = static_cast<GParamFlags> (kMutablePlaying | GST_PARAM_CONTROLLABLE);
  p.add (static_cast<bool S::*> (&RegionSettings::regions),
      g_param_spec_boolean ("regions", "Regions", regions_blurb, kDefaults.regions, flags));
  p.add (static_cast<guint S::*> (&RegionSettings::min_region_area),
      g_param_spec_uint ("min-region-area", "Minimum region area", min_area_blurb, 0, G_MAXINT,
          kDefaults.min_region_area, flags));
}

/* attach_metas: each of a frame's @regions on @buf (writable) as a region of @type, with its
 * confidence (attach_region ()). */
inline void
attach_regions (GstBuffer *buf, GQuark type, const std::vector<PixelRegion> &regions)
{
  for (const PixelRegion &r : regions)
    attach_region (buf, type, RegionBox{static_cast<guint> (r.x), static_cast<guint> (r.y), static_cast<guint> (r.width),
        static_cast<guint> (r.height), r.confidence});
}

}  // namespace cuv
