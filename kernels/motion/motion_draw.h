/* gst-cudavision: drawing motion vectors (motion.h) into a frame.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Colours are "frame colours": for RGB layouts a packed pixel (pack_px (), fourth byte 255), for
 * GRAY8/NV12/I420/YUY2/UYVY/P010 Y | U << 8 | V << 16. Writing a colour at (x, y) of a YUV frame
 * sets Y there and the chroma of its 2x2 group (4:2:0) or its pair (YUY2, UYVY); P010 gets each
 * byte as its sample's top 8 bits.
 *
 * Arrows: for each partition block with a non-zero vector, a line in `line` from the block's
 * centre (x + w / 2, y + h / 2) to centre + 2 * (dx, dy), where the content came from, drawn at
 * twice the vector's length so that a one-pixel motion shows; then, over all lines, a 2x2 head in
 * `head` on the centre's top-left neighbourhood (centre - 1 .. centre), so the arrow points the
 * way the content moves. Pixels outside the frame are skipped. Lines first, heads second: where
 * they overlap the result does not depend on the drawing order.
 *
 * Colour wheel: each pixel of the grid gets the table's colour of its unit's vector (hue for the
 * direction of the motion (-dx, -dy), brightness for its length over R); pixels outside the grid
 * (partial blocks at the edges) get `black`. */
#pragma once

#include "kernels/motion/motion.h"

#include <vector>

namespace cuv {

struct ArrowColors {
  uint32_t line;
  uint32_t head;
};

/* The colour-wheel table: (2R)^2 frame colours, entry (dy + R) * 2R + (dx + R). Built on the host
 * with floating point; both backends only look it up. */
std::vector<uint32_t> motion_color_table (int range, PixelLayout layout, double kr, double kb, bool full_range);

/* The frame colour of (r, g, b) for @layout. */
uint32_t motion_frame_color (PixelLayout layout, double kr, double kb, bool full_range, int r, int g, int b);

/* What the drawings of one negotiated format use: the arrows' colours, black, and the colour
 * wheel of the last range asked for. */
struct MotionPalette {
  PixelLayout layout = PixelLayout::RGBA;
  double kr = 0, kb = 0;
  bool full_range = false;
  ArrowColors arrows{};
  uint32_t black = 0;
  std::vector<uint32_t> table; /* motion_color_table () of table_range; empty until asked for */
  int table_range = 0;
};

/* The palette of @layout with its colour matrix (green lines, red heads, no wheel yet). */
MotionPalette motion_palette (PixelLayout layout, double kr, double kb, bool full_range);
/* Builds @p's colour wheel for @range where it holds another range's. */
void motion_palette_wheel (MotionPalette *p, int range);

/* @vectors: grid.count () vectors as motion_search_* () wrote them for @params.block. */
void motion_arrows_cpu (const MotionVector *vectors, const MotionGrid &grid, const ArrowColors &colors,
    const Frame &frame);
void motion_wheel_cpu (const MotionVector *vectors, const MotionGrid &grid, const uint32_t *table, int range,
    uint32_t black, const Frame &frame);

/* Where the line of a vector goes: point @t of @n + 1 (t = 0 is the centre). */
CUV_HD int motion_line_steps (int dx, int dy)
{
  const int ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy;
  return 2 * (ax > ay ? ax : ay);
}

CUV_HD int motion_round_div (int a, int n)
{
  return a >= 0 ? (2 * a + n) / (2 * n) : -((-2 * a + n) / (2 * n));
}

/* Whether unit (ux, uy) is the top-left unit of its partition block. */
CUV_HD bool motion_block_origin (const MotionVector &v, int ux, int uy, int unit)
{
  return (ux * unit) % v.width == 0 && (uy * unit) % v.height == 0;
}

CUV_HD void motion_put_pixel (const Frame &f, int x, int y, uint32_t color)
{
  if (x < 0 || y < 0 || x >= f.width || y >= f.height)
    return;
  const Plane &p0 = f.planes[0];
  if (layout_is_rgb (f.layout)) {
    uint8_t *d = p0.data + static_cast<size_t> (y) * p0.pitch + static_cast<size_t> (x) * 4;
    d[0] = color & 0xff;
    d[1] = color >> 8 & 0xff;
    d[2] = color >> 16 & 0xff;
    d[3] = color >> 24;
    return;
  }
  if (layout_is_packed422 (f.layout)) {
    /* Y of the pixel, and the U and V its pair shares */
    uint8_t *pair = p0.data + static_cast<size_t> (y) * p0.pitch + static_cast<size_t> (x / 2) * 4;
    const bool uyvy = f.layout == PixelLayout::UYVY;
    pair[2 * (x & 1) + uyvy] = color & 0xff;
    pair[uyvy ? 0 : 1] = color >> 8 & 0xff;
    pair[uyvy ? 2 : 3] = color >> 16 & 0xff;
    return;
  }
  put_sample8 (f.layout, luma_at (f, x, y), color & 0xff);
  if (f.layout == PixelLayout::GRAY8)
    return;
  const ChromaAt c = chroma_at (f, x / 2, y / 2);
  put_sample8 (f.layout, c.u, color >> 8 & 0xff);
  put_sample8 (f.layout, c.v, color >> 16 & 0xff);
}

/* The line of unit (ux, uy), drawn by the unit that is its block's origin. */
CUV_HD void motion_draw_line (const MotionVector &v, int ux, int uy, int unit, uint32_t color, const Frame &f)
{
  if ((v.dx == 0 && v.dy == 0) || !motion_block_origin (v, ux, uy, unit))
    return;
  const int cx = ux * unit + v.width / 2, cy = uy * unit + v.height / 2;
  const int lx = 2 * v.dx, ly = 2 * v.dy, n = motion_line_steps (v.dx, v.dy);
  for (int t = 0; t <= n; t++)
    motion_put_pixel (f, cx + motion_round_div (lx * t, n), cy + motion_round_div (ly * t, n), color);
}

CUV_HD void motion_draw_head (const MotionVector &v, int ux, int uy, int unit, uint32_t color, const Frame &f)
{
  if ((v.dx == 0 && v.dy == 0) || !motion_block_origin (v, ux, uy, unit))
    return;
  const int cx = ux * unit + v.width / 2, cy = uy * unit + v.height / 2;
  for (int j = -1; j <= 0; j++)
    for (int i = -1; i <= 0; i++)
      motion_put_pixel (f, cx + i, cy + j, color);
}

/* The wheel colour of pixel (x, y). */
CUV_HD uint32_t motion_wheel_color (const MotionVector *vectors, const MotionGrid &g, const uint32_t *table, int range,
    uint32_t black, int x, int y)
{
  const int ux = x / g.unit, uy = y / g.unit;
  if (ux >= g.cols || uy >= g.rows)
    return black;
  const MotionVector &v = vectors[uy * g.cols + ux];
  return table[(v.dy + range) * 2 * range + (v.dx + range)];
}

#if CUV_HAVE_CUDA
/* On the device (@vectors and @table in device memory); launch on @stream, no synchronization. */
cudaError_t motion_arrows_cuda (const MotionVector *vectors, const MotionGrid &grid, const ArrowColors &colors,
    const Frame &frame, cudaStream_t stream);
cudaError_t motion_wheel_cuda (const MotionVector *vectors, const MotionGrid &grid, const uint32_t *table, int range,
    uint32_t black, const Frame &frame, cudaStream_t stream);
#endif

}  // namespace cuv
