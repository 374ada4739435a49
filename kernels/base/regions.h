/* gst-cudavision: the regions of a grid of marked cells (moving blocks, changing tiles), as boxes:
 * host code that both backends share, since it reads their results on the host.
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

/* A grid of square cells over a frame: @cols x @rows cells of @cell x @cell pixels over @width x
 * @height pixels (the last column and row of cells may be cut by the frame's edges). */
struct RegionGrid {
  int cols, rows, cell;
  int width, height;
};

/* A region as an analyser attaches it (docs/results.md, "Regions"): its box in pixels, its area
 * (the pixels in it that count: changed, moving) and its confidence, the share of the box that
 * the area covers. */
struct PixelRegion {
  int x, y, width, height;
  uint64_t area;
  double confidence;
};

/* What finding a frame's regions keeps from one frame to the next, so that a frame allocates it
 * only when it grows: the mask of marked cells (a byte a cell, connected_regions ()'s) and the
 * regions found. */
struct RegionScratch {
  std::vector<uint8_t> mask;
  std::vector<PixelRegion> regions;
};

/* The regions of @scratch's mask over @grid (connected_regions (), in its order) whose area is at
 * least @min_area, as boxes in pixels cut at the frame's edges, into @scratch's regions, which it
 * returns. A region's area is the sum of @weights over its cells where given, else its cells'
 * pixels (a grid without weights lies whole inside the frame, as whole blocks do). */
const std::vector<PixelRegion> &pixel_regions (const RegionGrid &grid, uint64_t min_area, const uint16_t *weights,
    RegionScratch *scratch);

}  // namespace cuv
