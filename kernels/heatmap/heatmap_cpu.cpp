/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The heat map's colour table and its CPU reference. */
#include <algorithm>
#include <cmath>

#include "kernels/heatmap/heatmap.h"

namespace cuv {

namespace {

int to_byte (double v)
{
  return clamp_byte (static_cast<int> (std::lrint (std::clamp (v, 0.0, 1.0) * 255.0)));
}

/* Matt Zucker's degree-6 polynomial fit of matplotlib's inferno (public domain). */
void inferno (double t, double rgb[3])
{
  static const double c[7][3] = {
      {0.0002189403691192265, 0.001651004631001012, -0.01948089843709184},
      {0.1065134194856116, 0.5639564367884091, 3.932712388889277},
      {11.60249308247187, -3.972853965665698, -15.9423941062914},
      {-41.70399613139459, 17.43639888205313, 44.35414519872813},
      {77.162935699427, -33.40235894210092, -81.80730925738993},
      {-71.31942824499214, 32.62606426397723, 73.20951985803202},
      {25.13112622477341, -12.24266895238567, -23.07032500287172},
  };
  for (int k = 0; k < 3; k++) {
    double v = c[6][k];
    for (int i = 5; i >= 0; i--)
      v = c[i][k] + t * v;
    rgb[k] = v;
  }
}

}  // namespace

void colormap_rgb (Colormap map, double n, int rgb[3])
{
  double v[3];
  switch (map) {
    case Colormap::Sine:
      v[0] = std::sin (M_PI * n - M_PI / 2);
      v[1] = std::sin (M_PI * n);
      v[2] = std::sin (M_PI * n + M_PI / 2);
      break;
    case Colormap::Jet:
      v[0] = 1.5 - std::fabs (4.0 * n - 3.0);
      v[1] = 1.5 - std::fabs (4.0 * n - 2.0);
      v[2] = 1.5 - std::fabs (4.0 * n - 1.0);
      break;
    case Colormap::Inferno:
      inferno (n, v);
      break;
    case Colormap::Gray:
    default:
      v[0] = v[1] = v[2] = n;
      break;
  }
  for (int k = 0; k < 3; k++)
    rgb[k] = to_byte (v[k]);
}

void heatmap_build_table (Colormap map, double gain, PixelLayout out_layout, uint32_t table[kHeatmapTableSize])
{
  for (int d = 0; d < kHeatmapTableSize; d++) {
    int rgb[3];
    colormap_rgb (map, std::min (1.0, gain * d / 765.0), rgb);
    table[d] = pack_px (out_layout, rgb[0], rgb[1], rgb[2], 255);
  }
}

namespace {

void add_stats (DiffStats *stats, int d)
{
  stats->sum_difference += static_cast<unsigned> (d);
  stats->max_difference = std::max (stats->max_difference, static_cast<unsigned> (d));
}

void heatmap_rgb (const Frame &cur, const Frame &prev, const Frame &out, const HeatmapParams &p, DiffStats *stats)
{
  map_rgb_words (cur, out, [&] (int x, int y, uint32_t c) {
    const int d = rgb_abs_sum (c, load_le32 (plane_row (prev.planes[0], y) + 4 * x));
    add_stats (stats, d);
    return blend_px (p.table[d], c, p.blend) | 0xff000000u;
  });
}

void heatmap_yuv (const Frame &cur, const Frame &prev, const Frame &out, const HeatmapParams &p, DiffStats *stats)
{
  const Plane &o = out.planes[0];
  for (int y = 0; y < cur.height; y++) {
    for (int x = 0; x < cur.width; x++) {
      const YuvSample c = yuv_at (cur, x, y), q = yuv_at (prev, x, y);
      const int d = abs_diff (c.y, q.y) + abs_diff (c.u, q.u) + abs_diff (c.v, q.v);
      add_stats (stats, d);
      const uint32_t current = yuv_px (p.yuv, out.layout, c.y, c.u, c.v);
      store_le32 (o.data + static_cast<size_t> (y) * o.pitch + 4 * x, blend_px (p.table[d], current, p.blend) | 0xff000000u);
    }
  }
}

}  // namespace

void heatmap_reference (const Frame &cur, const Frame &prev, const Frame &out, const HeatmapParams &params, DiffStats *stats)
{
  *stats = DiffStats{};
  if (layout_is_rgb (cur.layout))
    heatmap_rgb (cur, prev, out, params, stats);
  else
    heatmap_yuv (cur, prev, out, params, stats);
}

}  // namespace cuv
