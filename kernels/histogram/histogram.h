/* gst-cudavision: a luma histogram and the channel sums of a region, in one pass; and the
 * histogram overlay drawn from those results.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Semantics (both backends, integer arithmetic, so they agree exactly):
 *   luma = (77 R + 150 G + 29 B) >> 8 for RGB layouts, the Y plane for NV12/I420/GRAY8, the Y
 *   bytes for YUY2/UYVY, each Y sample's top 8 bits for P010;
 *   bin = (luma * bins) >> 8, so each of the @bins bins covers 256 / bins luma values (the first
 *   ones one more where bins does not divide 256);
 *   sums of R, G, B (RGB layouts only), luma and luma squared over the region.
 * The region is clipped by the caller (histogram_clip_roi). */
#pragma once

#include "kernels/base/image.h"
#include "kernels/base/results.h"

#if CUV_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace cuv {

constexpr int kHistogramMaxBins = 256;

/* A rectangle of frame pixels; for NV12/I420 it is in luma samples. */
struct Roi {
  int x;
  int y;
  int width;
  int height;
};

struct HistogramResult {
  uint64_t counts[kHistogramMaxBins]; /* bins past the requested count stay 0 */
  uint64_t sum_r;
  uint64_t sum_g;
  uint64_t sum_b;
  uint64_t sum_y;
  uint64_t sum_y2;
};

/* Adds @r's counts and sums to @sum's (a band's to its frame's, a frame's to an interval's). */
inline void add_histogram (HistogramResult *sum, const HistogramResult &r)
{
  for (int i = 0; i < kHistogramMaxBins; i++)
    sum->counts[i] += r.counts[i];
  sum->sum_r += r.sum_r;
  sum->sum_g += r.sum_g;
  sum->sum_b += r.sum_b;
  sum->sum_y += r.sum_y;
  sum->sum_y2 += r.sum_y2;
}

/* What the GPU kernel's blocks add into: kHistogramCopies partial counts of the 256 luma values
 * and partial sums of pixel bytes 0, 1, 2 (RGB layouts); the block that ends last sums them into
 * the frame's HistogramResult (results.h). Thousands of blocks add their counts into one of the
 * copies, chosen by block: with a single copy their atomics would queue on the same 256 addresses
 * (docs/performance-log.md). 32-bit counts hold any region below 2^32 pixels, which histogram_cuda
 * checks. */
constexpr int kHistogramCopies = 8;

struct HistogramPartials {
  uint32_t counts[kHistogramCopies][kHistogramMaxBins];
  uint64_t sums[kHistogramCopies][3];
};

/* Where the GPU histogram goes: results.h. */
using HistogramResults = ResultsTo<HistogramPartials, HistogramResult>;

/* @x, @y, @width, @height as the element's properties give them (width/height 0 = to the edge),
 * clipped to a @frame_width x @frame_height frame; returns false when clipping changed them. An
 * ROI that starts outside the frame becomes empty (width or height 0). */
bool histogram_clip_roi (int frame_width, int frame_height, int x, int y, int width, int height, Roi *out);

/* The definition, pixel by pixel (histogram_cpu.cpp): what the tests hold the others to. */
void histogram_reference (const Frame &src, const Roi &roi, int bins, HistogramResult *result);

/* The same counts and sums, counted by luma value in four tables with SIMD luma for RGB
 * (histogram_simd.cpp): what the CPU backend runs. */
void histogram_cpu (const Frame &src, const Roi &roi, int bins, HistogramResult *result);

/* Where the overlay goes: a rectangle of the frame. */
struct OverlayRect {
  int x;
  int y;
  int width;
  int height;
};

enum class OverlayCorner : int { TopLeft, TopRight, BottomLeft, BottomRight };

/* The overlay's rectangle: @size_percent of the frame's width wide, half as high, 8 pixels (or
 * less, on small frames) from the corner. Empty (0x0) when the frame cannot hold one pixel of it. */
OverlayRect histogram_overlay_rect (int frame_width, int frame_height, OverlayCorner corner, int size_percent);

/* Draws @result (of a region of @pixels pixels) into @frame, in place, semi-transparent. */
void histogram_overlay_cpu (const Frame &frame, const OverlayRect &rect, int bins, const HistogramResult &result,
    uint64_t pixels);

#if CUV_HAVE_CUDA
/* The histogram of the region with @bins bins, as histogram_cpu gives it, into @results' outputs
 * by the kernel itself (results.h); an empty region gives an empty result. Launches on @stream;
 * never synchronizes. cudaErrorInvalidValue for a region of 2^32 pixels or more, or @bins outside
 * 1..256. */
cudaError_t histogram_cuda (const Frame &src, const Roi &roi, int bins, const HistogramResults &results,
    cudaStream_t stream);

/* The overlay from the device copy of the frame's result (@results.device_out of histogram_cuda),
 * in stream order after it. */
cudaError_t histogram_overlay_cuda (const Frame &frame, const OverlayRect &rect, int bins,
    const HistogramResult *result, uint64_t pixels, cudaStream_t stream);
#endif

}  // namespace cuv
