/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernels/base/regions.h"

#include <algorithm>
#include <cstring>

namespace cuv {

std::vector<Region> connected_regions (const uint8_t *mask, int cols, int rows, int min_cells, const uint16_t *weights)
{
  std::vector<Region> regions;
  if (cols <= 0 || rows <= 0)
    return regions;
  const size_t n = static_cast<size_t> (cols) * rows;
  std::vector<uint8_t> seen (n, 0);
  std::vector<int> stack;
  for (size_t start = 0; start < n; start++) {
    /* most cells are not marked: skip to the next marked one (memchr reads many at a time) */
    const void *next = std::memchr (mask + start, 1, n - start);
    if (!next)
      break;
    start = static_cast<size_t> (static_cast<const uint8_t *> (next) - mask);
    if (seen[start])
      continue;
    /* a depth-first walk over the region from its first cell in raster order */
    const int sx = static_cast<int> (start % cols), sy = static_cast<int> (start / cols);
    int x0 = sx, x1 = sx, y0 = sy, y1 = sy, cells = 0;
    uint64_t weight = 0;
    seen[start] = 1;
    stack.assign (1, static_cast<int> (start));
    while (!stack.empty ()) {
      const int i = stack.back ();
      stack.pop_back ();
      const int x = i % cols, y = i / cols;
      cells++;
      weight += weights ? weights[i] : 0;
      x0 = std::min (x0, x);
      x1 = std::max (x1, x);
      y0 = std::min (y0, y);
      y1 = std::max (y1, y);
      for (int ny = std::max (y - 1, 0); ny <= std::min (y + 1, rows - 1); ny++) {
        for (int nx = std::max (x - 1, 0); nx <= std::min (x + 1, cols - 1); nx++) {
          const size_t j = static_cast<size_t> (ny) * cols + nx;
          if (mask[j] && !seen[j]) {
            seen[j] = 1;
            stack.push_back (static_cast<int> (j));
          }
        }
      }
    }
    if (cells >= min_cells)
      regions.push_back (Region{x0, y0, x1 - x0 + 1, y1 - y0 + 1, cells, weight});
  }
  return regions;
}

const std::vector<PixelRegion> &pixel_regions (const RegionGrid &grid, uint64_t min_area, const uint16_t *weights,
    RegionScratch *scratch)
{
  scratch->regions.clear ();
  const uint64_t cell_pixels = static_cast<uint64_t> (grid.cell) * grid.cell;
  for (const Region &r : connected_regions (scratch->mask.data (), grid.cols, grid.rows, 1, weights)) {
    const uint64_t area = weights ? r.weight : r.cells * cell_pixels;
    if (area < min_area)
      continue;
    const int x = r.x * grid.cell, y = r.y * grid.cell;
    const int w = std::min (grid.width - x, r.width * grid.cell), h = std::min (grid.height - y, r.height * grid.cell);
    scratch->regions.push_back (PixelRegion{x, y, w, h, area, static_cast<double> (area) / (static_cast<double> (w) * h)});
  }
  return scratch->regions;
}

}  // namespace cuv
