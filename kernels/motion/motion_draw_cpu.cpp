/* gst-cudavision: the colour-wheel table and the CPU references of the motion drawings.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernels/motion/motion_draw.h"

#include <algorithm>
#include <cmath>

#include "kernels/difference/difference.h"

namespace cuv {

uint32_t motion_frame_color (PixelLayout layout, double kr, double kb, bool full_range, int r, int g, int b)
{
  if (layout_is_rgb (layout))
    return pack_px (layout, r, g, b, 255);
  int y, u, v;
  rgb_to_yuv (kr, kb, full_range, r, g, b, &y, &u, &v);
  return static_cast<uint32_t> (y | u << 8 | v << 16);
}

MotionPalette motion_palette (PixelLayout layout, double kr, double kb, bool full_range)
{
  MotionPalette p;
  p.layout = layout;
  p.kr = kr;
  p.kb = kb;
  p.full_range = full_range;
  p.arrows.line = motion_frame_color (layout, kr, kb, full_range, 0, 255, 0);
  p.arrows.head = motion_frame_color (layout, kr, kb, full_range, 255, 0, 0);
  p.black = motion_frame_color (layout, kr, kb, full_range, 0, 0, 0);
  return p;
}

void motion_palette_wheel (MotionPalette *p, int range)
{
  if (p->table_range == range)
    return;
  p->table = motion_color_table (range, p->layout, p->kr, p->kb, p->full_range);
  p->table_range = range;
}

std::vector<uint32_t> motion_color_table (int range, PixelLayout layout, double kr, double kb, bool full_range)
{
  const int n = 2 * range;
  std::vector<uint32_t> table (static_cast<size_t> (n) * n);
  for (int dy = -range; dy < range; dy++) {
    for (int dx = -range; dx < range; dx++) {
      /* the content moved by (-dx, -dy); hue clockwise on screen from red for rightwards */
      const double mx = -dx, my = -dy;
      double hue = std::atan2 (my, mx) * 3.0 / M_PI; /* -3..3 sextants */
      if (hue < 0)
        hue += 6.0;
      const double value = std::min (1.0, std::hypot (mx, my) / range);
      const int sector = static_cast<int> (hue) % 6;
      const double f = hue - std::floor (hue);
      const double rgb_of[6][3] = {{1, f, 0}, {1 - f, 1, 0}, {0, 1, f}, {0, 1 - f, 1}, {f, 0, 1}, {1, 0, 1 - f}};
      const double *c = rgb_of[sector];
      auto byte = [value] (double x) { return static_cast<int> (std::lround (255.0 * value * x)); };
      table[static_cast<size_t> (dy + range) * n + (dx + range)] =
          motion_frame_color (layout, kr, kb, full_range, byte (c[0]), byte (c[1]), byte (c[2]));
    }
  }
  return table;
}

void motion_arrows_cpu (const MotionVector *vectors, const MotionGrid &g, const ArrowColors &colors, const Frame &frame)
{
  for (int uy = 0; uy < g.rows; uy++)
    for (int ux = 0; ux < g.cols; ux++)
      motion_draw_line (vectors[uy * g.cols + ux], ux, uy, g.unit, colors.line, frame);
  for (int uy = 0; uy < g.rows; uy++)
    for (int ux = 0; ux < g.cols; ux++)
      motion_draw_head (vectors[uy * g.cols + ux], ux, uy, g.unit, colors.head, frame);
}

void motion_wheel_cpu (const MotionVector *vectors, const MotionGrid &g, const uint32_t *table, int range,
    uint32_t black, const Frame &frame)
{
  for (int y = 0; y < frame.height; y++)
    for (int x = 0; x < frame.width; x++)
      motion_put_pixel (frame, x, y, motion_wheel_color (vectors, g, table, range, black, x, y));
}

}  // namespace cuv
