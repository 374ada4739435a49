/* The histogram's CPU reference against counts and moments computed directly in this test, its
 * ROI clipping and its overlay geometry. Runs without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cmath>
#include <cstring>

#include <hwy/targets.h>

#include "tests/common/cuvtest.h"
#include "kernels/histogram/histogram_math.h"

using namespace cuvtest;

namespace {

const cuv::PixelLayout kLayouts[] = {cuv::PixelLayout::RGBA, cuv::PixelLayout::BGRA, cuv::PixelLayout::RGBx,
    cuv::PixelLayout::BGRx, cuv::PixelLayout::GRAY8, cuv::PixelLayout::NV12, cuv::PixelLayout::I420,
    cuv::PixelLayout::YUY2, cuv::PixelLayout::UYVY, cuv::PixelLayout::P010};

/* The histogram and moments written out from the definition: luma by its formula in floating
 * point, the bin by the luma range it covers. */
struct Direct {
  std::vector<uint64_t> counts;
  double sum_r = 0, sum_g = 0, sum_b = 0, sum_y = 0, sum_y2 = 0;
};

Direct direct_count (const cuv::Frame &f, const cuv::Roi &roi, int bins)
{
  Direct d;
  d.counts.assign (bins, 0);
  bool rgb = cuv::layout_is_rgb (f.layout);
  bool bgr = cuv::layout_is_bgr (f.layout);
  for (int y = roi.y; y < roi.y + roi.height; y++) {
    for (int x = roi.x; x < roi.x + roi.width; x++) {
      const uint8_t *p = f.planes[0].data + static_cast<size_t> (y) * f.planes[0].pitch;
      int l;
      if (rgb) {
        int r = p[4 * x + (bgr ? 2 : 0)], g = p[4 * x + 1], b = p[4 * x + (bgr ? 0 : 2)];
        l = static_cast<int> (std::floor ((0.30078125 * r + 0.5859375 * g + 0.11328125 * b) + 1e-9));
        d.sum_r += r;
        d.sum_g += g;
        d.sum_b += b;
      } else if (f.layout == cuv::PixelLayout::YUY2) {
        l = p[2 * x]; /* Y0 U Y1 V */
      } else if (f.layout == cuv::PixelLayout::UYVY) {
        l = p[2 * x + 1]; /* U Y0 V Y1 */
      } else if (f.layout == cuv::PixelLayout::P010) {
        l = (p[2 * x] | p[2 * x + 1] << 8) >> 8; /* a 16-bit sample's top 8 bits */
      } else {
        l = p[x];
      }
      /* bin k holds luma values from ceil(256 k / bins) to ceil(256 (k + 1) / bins) - 1 */
      int k = 0;
      while (k + 1 < bins && l * bins >= 256 * (k + 1))
        k++;
      d.counts[k]++;
      d.sum_y += l;
      d.sum_y2 += static_cast<double> (l) * l;
    }
  }
  return d;
}

void check_against_direct (Checker &c, const cuv::Frame &f, const cuv::Roi &roi, int bins, const std::string &what)
{
  cuv::HistogramResult r;
  cuv::histogram_reference (f, roi, bins, &r);
  Direct d = direct_count (f, roi, bins);
  bool counts_ok = true;
  uint64_t total = 0;
  for (int k = 0; k < cuv::kHistogramMaxBins; k++) {
    counts_ok &= k < bins ? r.counts[k] == d.counts[k] : r.counts[k] == 0;
    total += r.counts[k];
  }
  c.expect (counts_ok, what + ": counts differ from the direct count");
  c.expect (total == static_cast<uint64_t> (roi.width) * roi.height, what + ": counts do not add up to the ROI");
  c.expect (r.sum_y == d.sum_y && r.sum_y2 == d.sum_y2, what + ": luma sums differ");
  c.expect (r.sum_r == d.sum_r && r.sum_g == d.sum_g && r.sum_b == d.sum_b, what + ": channel sums differ");
}

void test_histogram_direct (Checker &c)
{
  const int bins[] = {256, 1, 2, 3, 7, 64, 100, 255};
  uint32_t seed = 7;
  for (cuv::PixelLayout l : kLayouts) {
    for (Size s : sizes (false)) {
      HostImage img (l, s.w, s.h, 5, 1);
      fill_pattern (img.storage, seed++);
      const cuv::Roi rois[] = {{0, 0, s.w, s.h}, {s.w / 3, s.h / 4, (s.w + 1) / 2, (s.h + 2) / 3}, {s.w - 1, s.h - 1, 1, 1}};
      for (const cuv::Roi &roi : rois)
        for (int b : bins)
          check_against_direct (c, img.frame, roi, b,
              std::string (layout_name (l)) + " " + std::to_string (s.w) + "x" + std::to_string (s.h) + " roi " +
                  std::to_string (roi.x) + "," + std::to_string (roi.y) + " bins " + std::to_string (b));
    }
  }
}

/* Every luma value lands in the bin that covers it, for every bin count. */
void test_bin_ranges (Checker &c)
{
  bool ok = true;
  for (int bins = 1; bins <= 256; bins++) {
    int prev = 0;
    for (int l = 0; l < 256; l++) {
      int b = cuv::histogram_bin (l, bins);
      ok &= b >= prev && b <= prev + 1 && b < bins;
      prev = b;
    }
    ok &= cuv::histogram_bin (255, bins) == bins - 1;
  }
  c.expect (ok, "histogram_bin: bins are monotonic, contiguous and all used");
}

void test_clip_roi (Checker &c)
{
  cuv::Roi r;
  c.expect (cuv::histogram_clip_roi (640, 480, 0, 0, 0, 0, &r) && r.width == 640 && r.height == 480, "clip: full frame");
  c.expect (cuv::histogram_clip_roi (640, 480, 10, 20, 0, 0, &r) && r.width == 630 && r.height == 460, "clip: to the edge");
  c.expect (!cuv::histogram_clip_roi (640, 480, 600, 400, 100, 100, &r) && r.x == 600 && r.width == 40 && r.height == 80,
      "clip: past the edge is clipped");
  c.expect (!cuv::histogram_clip_roi (640, 480, 700, 0, 10, 10, &r) && r.width == 0 && r.height == 0,
      "clip: right of the frame is 0x0");
  c.expect (!cuv::histogram_clip_roi (640, 480, 0, 480, 0, 0, &r) && r.width == 0 && r.height == 0,
      "clip: below the frame is 0x0");
  c.expect (!cuv::histogram_clip_roi (640, 480, 700, 10, 0, 0, &r) && r.width == 0 && r.height == 0 && r.x == 640 &&
      r.y == 10, "clip: right of the frame, to the edge, is 0x0 at the frame's edge");
}

void test_overlay_rect (Checker &c)
{
  cuv::OverlayRect r = cuv::histogram_overlay_rect (1920, 1080, cuv::OverlayCorner::BottomRight, 25);
  c.expect (r.width == 480 && r.height == 240 && r.x == 1920 - 480 - 8 && r.y == 1080 - 240 - 8, "overlay rect bottom-right");
  r = cuv::histogram_overlay_rect (1920, 1080, cuv::OverlayCorner::TopLeft, 100);
  c.expect (r.width == 1920 && r.height == 960 && r.x == 0 && r.y == 8, "overlay rect full width");
  r = cuv::histogram_overlay_rect (3, 3, cuv::OverlayCorner::TopLeft, 25);
  c.expect (r.width == 0 && r.height == 0, "overlay rect: too small a frame gives none");
}

/* A frame of one grey level: its bin's column is a full-height bar, every other pixel of the
 * rectangle is shaded, the mean bar is as long as the level says, and nothing outside changes. */
void test_overlay_flat (Checker &c)
{
  for (cuv::PixelLayout l : {cuv::PixelLayout::RGBA, cuv::PixelLayout::BGRx, cuv::PixelLayout::GRAY8, cuv::PixelLayout::NV12,
           cuv::PixelLayout::YUY2, cuv::PixelLayout::UYVY, cuv::PixelLayout::P010}) {
    HostImage img (l, 200, 120, 0);
    std::memset (img.storage.data (), 200, img.storage.size ());
    const cuv::Roi roi{0, 0, 200, 120};
    cuv::HistogramResult res;
    cuv::histogram_reference (img.frame, roi, 256, &res);
    cuv::OverlayRect rect = cuv::histogram_overlay_rect (200, 120, cuv::OverlayCorner::TopLeft, 50);
    cuv::histogram_overlay_cpu (img.frame, rect, 256, res, 200 * 120);
    const bool p010 = l == cuv::PixelLayout::P010;
    const int bpp = cuv::layout_is_rgb (l) ? 4 : cuv::layout_is_packed422 (l) || p010 ? 2 : 1;
    const int luma_byte = cuv::layout_is_rgb (l) ? 1 : cuv::luma_byte (l);
    const cuv::Plane &pl = img.frame.planes[0];
    int bars = 0, shaded = 0, means = 0, outside_changed = 0, low_bytes_wrong = 0;
    int bar_col = -1;
    for (int y = 0; y < 120; y++)
      for (int x = 0; x < 200; x++) {
        int v = pl.data[static_cast<size_t> (y) * pl.pitch + bpp * x + luma_byte];
        bool inside = x >= rect.x && x < rect.x + rect.width && y >= rect.y && y < rect.y + rect.height;
        /* P010: an 8-bit value drawn as v << 8, its low byte 0; outside, the sample as it was */
        if (p010)
          low_bytes_wrong += pl.data[static_cast<size_t> (y) * pl.pitch + 2 * x] != (inside ? 0 : 200);
        if (!inside) {
          outside_changed += v != 200;
        } else if (v == (200 + 3 * 240) / 4) {
          bars++;
          bar_col = x - rect.x;
        } else if (v == 100) {
          shaded++;
        } else {
          means++;
        }
      }
    std::string what = std::string ("overlay flat ") + layout_name (l);
    int strip = rect.height / 5;
    int hist_h = rect.height - strip;
    int cols = 0;
    for (int lx = 0; lx < rect.width; lx++) {
      int first, last;
      cuv::overlay_column_bins (rect, 256, lx, &first, &last);
      cols += first <= 200 && 200 <= last;
    }
    c.expect (outside_changed == 0 && low_bytes_wrong == 0, what + ": nothing outside the rectangle changes" +
        (p010 ? ", inside each sample is v << 8" : ""));
    c.expect (cols == 1 && bars == hist_h && bar_col >= 0, what + ": one full bar, in the column of bin 200");
    int n_means = cuv::layout_is_rgb (l) ? 3 : 1;
    int mean_len = 200 * rect.width / 255;
    c.expect (means == n_means * (strip / n_means) * mean_len, what + ": mean bars of the level's length");
    c.expect (bars + shaded + means == rect.width * rect.height, what + ": every pixel of the rectangle is drawn");
    if (cuv::layout_is_packed422 (l)) {
      /* a pair's U and V are drawn (halved towards 128) when its left pixel lies in the rectangle */
      int wrong_chroma = 0;
      for (int y = 0; y < 120; y++)
        for (int x = 0; x < 200; x += 2) {
          bool inside = x >= rect.x && x < rect.x + rect.width && y >= rect.y && y < rect.y + rect.height;
          const uint8_t *u = pl.data + static_cast<size_t> (y) * pl.pitch + 2 * x + cuv::packed422_u_byte (l);
          wrong_chroma += u[0] != (inside ? 164 : 200) || u[2] != (inside ? 164 : 200);
        }
      c.expect (wrong_chroma == 0, what + ": the U and V of the pairs inside, and only those, are drawn");
    }
    if (p010) {
      /* a chroma sample is drawn (as 164 << 8) when its group's top-left pixel lies in the rectangle */
      int wrong_chroma = 0;
      const cuv::Plane &cp = img.frame.planes[1];
      for (int y = 0; y < 60; y++)
        for (int x = 0; x < 200; x++) {
          const bool inside = 2 * (x / 2) >= rect.x && 2 * (x / 2) < rect.x + rect.width && 2 * y >= rect.y &&
              2 * y < rect.y + rect.height;
          const uint8_t *s = cp.data + static_cast<size_t> (y) * cp.pitch + 2 * x;
          wrong_chroma += inside ? s[0] != 0 || s[1] != 164 : s[0] != 200 || s[1] != 200;
        }
      c.expect (wrong_chroma == 0, what + ": the chroma of the groups inside, and only those, is drawn as 164 << 8");
    }
  }
}

/* The fast histogram (every SIMD target this CPU runs, as Highway dispatches them) gives the
 * definition's counts and sums: every layout, widths around each vector length, padded and
 * unaligned rows, ROIs that start at odd columns, every bin count's rounding; rows longer than
 * the RGB sums' 256 vectors between flushes (4,096 pixels at 16 lanes), white as well as random. */
void test_fast_equals_definition (Checker &c)
{
  const Size shapes[] = {{1, 1}, {3, 2}, {15, 3}, {16, 5}, {63, 4}, {64, 3}, {65, 2}, {129, 7}, {300, 9}, {4200, 2}};
  for (int64_t target : hwy::SupportedAndGeneratedTargets ()) {
    hwy::SetSupportedTargetsForTest (target);
    int wrong = 0, cases = 0;
    for (cuv::PixelLayout l : kLayouts) {
      for (Size s : shapes) {
        HostImage img (l, s.w, s.h, s.w % 5, s.h % 3);
        fill_pattern (img.storage, s.w * 3 + s.h);
        if (s.w > 4096 && s.h > 1)
          std::memset (cuv::plane_row (img.frame.planes[0], 1), 0xff, static_cast<size_t> (img.frame.planes[0].pitch));
        const cuv::Roi rois[] = {{0, 0, s.w, s.h}, {s.w / 3, s.h / 2, s.w - s.w / 3, s.h - s.h / 2},
            {1 % s.w, 0, s.w - 1 % s.w, 1}};
        for (const cuv::Roi &roi : rois) {
          if (roi.width <= 0 || roi.height <= 0)
            continue;
          for (int bins : {256, 100, 7, 1}) {
            cuv::HistogramResult want, got;
            cuv::histogram_reference (img.frame, roi, bins, &want);
            cuv::histogram_cpu (img.frame, roi, bins, &got);
            cases++;
            wrong += std::memcmp (&want, &got, sizeof (want)) != 0;
          }
        }
      }
    }
    std::printf ("fast histogram %s: %d cases\n", hwy::TargetName (target), cases);
    c.expect (wrong == 0, std::string ("fast histogram (") + hwy::TargetName (target) + ") equals the definition: " +
        std::to_string (wrong) + " of " + std::to_string (cases) + " cases differ");
  }
  hwy::SetSupportedTargetsForTest (0);
}

}  // namespace

int main ()
{
  Checker c;
  test_bin_ranges (c);
  test_clip_roi (c);
  test_histogram_direct (c);
  test_fast_equals_definition (c);
  test_overlay_rect (c);
  test_overlay_flat (c);
  return c.finish ("test_histogram_reference");
}
