/* gst-cudavision: the per-pixel arithmetic of the histogram overlay, written once for the CUDA
 * kernel and its CPU reference.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The overlay rectangle holds, top to bottom, the histogram (one bar per bin, heights relative to
 * the fullest bin) and, when it is at least 20 pixels high, a strip of mean bars: R, G and B for
 * RGB layouts, luma for the others, each as long as mean / 255 of the width. Everything else in
 * the rectangle is the frame at half brightness; bars are blended 3/4 over it. */
#pragma once

#include "kernels/histogram/histogram.h"

namespace cuv {

constexpr int kOverlayMinStripHeight = 20;

enum OverlayCode : int {
  kOverlayShade = 0,
  kOverlayBar = 1,
  kOverlayMean = 2, /* + index of the mean (0..2) */
};

/* What the overlay draws, fixed for one frame. */
struct OverlayBars {
  int hist_h;          /* rows of the histogram */
  int band_h;          /* rows of each mean bar (0: no strip) */
  int n_means;         /* 3 for RGB, 1 for luma */
  int mean_len[3];     /* pixels of each mean bar */
  uint64_t max_count;  /* the fullest bin */
};

/* The grey levels of the bars; the colours of the mean bars are overlay_mean_colour (). */
constexpr int kOverlayBarLevel = 240;
constexpr int kOverlayLumaMeanLevel = 180;

/* Channel @channel (0 R, 1 G, 2 B) of mean bar @k: red, green, blue. */
CUV_HD int overlay_mean_colour (int k, int channel)
{
  return k == channel ? (k == 2 ? 255 : k == 1 ? 220 : 235) : (k == 2 ? (channel == 0 ? 70 : 110) : 60);
}

CUV_HD int histogram_bin (int luma, int bins)
{
  return (luma * bins) >> 8;
}

/* @sums: R, G, B for RGB layouts, or luma alone. Means are floored to integers first. */
CUV_HD OverlayBars overlay_bars (const OverlayRect &rect, bool rgb, const uint64_t sums[3], uint64_t pixels,
    uint64_t max_count)
{
  OverlayBars b{};
  b.n_means = rgb ? 3 : 1;
  int strip = rect.height >= kOverlayMinStripHeight ? rect.height / 5 : 0;
  b.band_h = strip / b.n_means;
  b.hist_h = rect.height - strip;
  for (int k = 0; k < b.n_means; k++) {
    uint64_t mean = pixels ? sums[k] / pixels : 0;
    b.mean_len[k] = static_cast<int> (mean * static_cast<uint64_t> (rect.width) / 255u);
  }
  b.max_count = max_count;
  return b;
}

/* The bins overlay column @lx covers: [*first, *last], at least one, so that a rectangle
 * narrower than the bin count still shows every bin. */
CUV_HD void overlay_column_bins (const OverlayRect &rect, int bins, int lx, int *first, int *last)
{
  int lo = static_cast<int> (static_cast<int64_t> (lx) * bins / rect.width);
  int hi = static_cast<int> (static_cast<int64_t> (lx + 1) * bins / rect.width) - 1;
  *first = lo;
  *last = hi > lo ? hi : lo;
}

/* The height a column stands for: the fullest of its bins. */
template <typename Counts>
CUV_HD uint64_t overlay_column_count (const Counts &counts, const OverlayRect &rect, int bins, int lx)
{
  int first, last;
  overlay_column_bins (rect, bins, lx, &first, &last);
  uint64_t m = 0;
  for (int b = first; b <= last; b++)
    m = counts[b] > m ? counts[b] : m;
  return m;
}

/* What pixel (@lx, @ly) of the rectangle shows; @count is overlay_column_count () of its column. */
CUV_HD int overlay_code (const OverlayBars &b, int lx, int ly, uint64_t count)
{
  if (ly < b.hist_h) {
    uint64_t bar = b.max_count ? count * static_cast<uint64_t> (b.hist_h) / b.max_count : 0;
    return static_cast<uint64_t> (b.hist_h - ly) <= bar ? kOverlayBar : kOverlayShade;
  }
  if (b.band_h == 0)
    return kOverlayShade;
  int k = (ly - b.hist_h) / b.band_h;
  return k < b.n_means && lx < b.mean_len[k] ? kOverlayMean + k : kOverlayShade;
}

CUV_HD uint8_t overlay_blend (int v, int level)
{
  return static_cast<uint8_t> ((v + 3 * level) >> 2);
}

CUV_HD uint8_t overlay_shade (int v)
{
  return static_cast<uint8_t> (v >> 1);
}

/* One RGB pixel (four bytes, R/G/B at @r/1/@b, the fourth kept) as @code shows it. */
CUV_HD uint32_t overlay_rgb_px (uint32_t px, int code, int r_index)
{
  uint32_t out = px & 0xff000000u;
  for (int c = 0; c < 3; c++) {
    int v = (px >> (8 * c)) & 0xff;
    int channel = c == 1 ? 1 : (c == r_index ? 0 : 2); /* 0 R, 1 G, 2 B */
    uint8_t o = code == kOverlayShade ? overlay_shade (v)
        : code == kOverlayBar ? overlay_blend (v, kOverlayBarLevel)
        : overlay_blend (v, overlay_mean_colour (code - kOverlayMean, channel));
    out |= static_cast<uint32_t> (o) << (8 * c);
  }
  return out;
}

/* One luma sample as @code shows it. */
CUV_HD uint8_t overlay_luma (int v, int code)
{
  return code == kOverlayShade ? overlay_shade (v)
      : code == kOverlayBar ? overlay_blend (v, kOverlayBarLevel)
      : overlay_blend (v, kOverlayLumaMeanLevel);
}

/* Chroma inside the rectangle is pulled halfway to neutral so that the bars read as grey. */
CUV_HD uint8_t overlay_chroma (int v)
{
  return static_cast<uint8_t> ((v + 128) >> 1);
}

}  // namespace cuv
