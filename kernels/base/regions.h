/* gst-cudavision: the regions of a grid of marked cells (moving blocks), as boxes: host code that
 * both backends share, since it reads their results on the host.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cstdint>
#include <vector>

namespace cuv {

/* A box of grid cells and how many marked cells of its region it holds. */
struct Region {
  int x, y, width, height;  /* cells */
  int cells;                /* the region's marked cells (at most width * height) */
  uint64_t weight;          /* the sum of @weights over those cells (0 without weights) */
};

/* The 8-connected regions of the cells of @mask (@cols x @rows, row by row, 1 = marked, 0 not)
 * that hold at least @min_cells marked cells, as their bounding boxes, in the raster order of
 * each region's first cell; with @weights (one per cell), each region's sum of them. */
std::vector<Region> connected_regions (const uint8_t *mask, int cols, int rows, int min_cells,
    const uint16_t *weights = nullptr);

}  // namespace cuv
