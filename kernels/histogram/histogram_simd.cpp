/* gst-cudavision: the fast CPU histogram, as Highway builds it for each x86-64 or Arm target and
 * picks at run time; histogram_reference () is the definition, whose counts and sums this gives.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The pixels are counted by their luma value (0..255) into four tables that take turns, so that
 * neighbouring equal values do not wait on each other's increment; the bins, the luma sum and the
 * sum of squares come from those 256 counts at the end (exact: every pixel of a value adds the
 * same). RGB layouts first turn a row into luma in SIMD, (77 R + 150 G + 29 B) >> 8 in 16-bit
 * lanes, adding R, G and B up by eights of bytes on the way. */
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/histogram/histogram_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstring>
#include <vector>

#include "kernels/histogram/histogram_math.h"

HWY_BEFORE_NAMESPACE ();
namespace cuv {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

using LumaCounts = uint32_t[4][256];

/* Counts @n bytes @kStep apart (2: the Y bytes of a YUY2/UYVY row). */
template <int kStep> void count_bytes (const uint8_t *p, int n, LumaCounts counts)
{
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    counts[0][p[kStep * i]]++;
    counts[1][p[kStep * (i + 1)]]++;
    counts[2][p[kStep * (i + 2)]]++;
    counts[3][p[kStep * (i + 3)]]++;
  }
  for (; i < n; i++)
    counts[0][p[kStep * i]]++;
}

/* The luma of @n pixels of a 4-byte layout (R at byte @ri) into @luma; their R, G, B added to
 * @sums. One pixel a 32-bit lane: its even bytes (R, B) and odd bytes (G, A) as 16-bit pairs,
 * times (77, 29) and (150, 0) in 16 bits (at most 57,885 in a half), the halves added; the pairs
 * added up per lane too, a half at most 255 * 256 before it is moved into @sums. */
void luma_row (const uint8_t *px, int n, int ri, uint8_t *luma, uint64_t sums[3])
{
  int x = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<uint32_t> d32;
  const hn::Repartition<uint16_t, decltype (d32)> d16;
  const hn::Rebind<uint8_t, decltype (d32)> d8;
  const hn::RebindToSigned<decltype (d32)> di32;
  const int lanes = static_cast<int> (hn::Lanes (d32));
  const auto pairs = hn::Set (d32, 0x00ff00ffu), half = hn::Set (d32, 0xffffu);
  /* R's weight in the half that holds R */
  const auto k_rb = hn::BitCast (d16, hn::Set (d32, ri ? 77u << 16 | 29u : 29u << 16 | 77u));
  const auto k_g = hn::BitCast (d16, hn::Set (d32, 150u));
  const auto flush = [&] (hn::Vec<decltype (d32)> &acc, uint64_t *low, uint64_t *high) {
    *low += hn::GetLane (hn::SumOfLanes (d32, hn::And (acc, half)));
    *high += hn::GetLane (hn::SumOfLanes (d32, hn::ShiftRight<16> (acc)));
    acc = hn::Zero (d32);
  };
  auto acc_rb = hn::Zero (d32), acc_g = hn::Zero (d32);
  uint64_t rb[2] = {0, 0}, ga[2] = {0, 0};
  int added = 0;
  for (; x + lanes <= n; x += lanes) {
    const auto v = hn::BitCast (d32, hn::LoadU (hn::Repartition<uint8_t, decltype (d32)> (), px + 4 * x));
    const auto even = hn::And (v, pairs), odd = hn::And (hn::ShiftRight<8> (v), pairs);
    const auto w = hn::BitCast (d32, hn::Add (hn::Mul (hn::BitCast (d16, even), k_rb), hn::Mul (hn::BitCast (d16, odd), k_g)));
    const auto y = hn::ShiftRight<8> (hn::Add (hn::And (w, half), hn::ShiftRight<16> (w)));
    hn::StoreU (hn::DemoteTo (d8, hn::BitCast (di32, y)), d8, luma + x);
    acc_rb = hn::Add (acc_rb, even);
    acc_g = hn::Add (acc_g, odd);
    if (++added == 256) {
      flush (acc_rb, &rb[0], &rb[1]);
      flush (acc_g, &ga[0], &ga[1]);
      added = 0;
    }
  }
  flush (acc_rb, &rb[0], &rb[1]);
  flush (acc_g, &ga[0], &ga[1]);
  sums[0] += rb[ri ? 1 : 0];
  sums[1] += ga[0];
  sums[2] += rb[ri ? 0 : 1];
#endif
  for (; x < n; x++) {
    const uint8_t *p = px + 4 * x;
    const int r = p[ri], g = p[1], b = p[2 - ri];
    luma[x] = static_cast<uint8_t> (luma_bt601 (r, g, b));
    sums[0] += r;
    sums[1] += g;
    sums[2] += b;
  }
}

}  // namespace

void HistogramFast (const Frame &src, const Roi &roi, int bins, HistogramResult *res)
{
  std::memset (res, 0, sizeof (*res));
  if (roi.width <= 0 || roi.height <= 0)
    return;
  LumaCounts counts;
  std::memset (counts, 0, sizeof (counts));
  const Plane &pl = src.planes[0];
  const bool rgb = layout_is_rgb (src.layout);
  std::vector<uint8_t> luma (rgb ? roi.width : 0);
  uint64_t sums[3] = {0, 0, 0};
  for (int y = roi.y; y < roi.y + roi.height; y++) {
    const uint8_t *row = plane_row (pl, y);
    if (rgb) {
      luma_row (row + 4 * static_cast<size_t> (roi.x), roi.width, layout_is_bgr (src.layout) ? 2 : 0, luma.data (), sums);
      count_bytes<1> (luma.data (), roi.width, counts);
    } else if (layout_has_luma_every_other_byte (src.layout)) {
      count_bytes<2> (row + 2 * static_cast<size_t> (roi.x) + luma_byte (src.layout), roi.width, counts);
    } else {
      count_bytes<1> (row + roi.x, roi.width, counts);
    }
  }
  for (int v = 0; v < 256; v++) {
    const uint64_t n = static_cast<uint64_t> (counts[0][v]) + counts[1][v] + counts[2][v] + counts[3][v];
    res->counts[histogram_bin (v, bins)] += n;
    res->sum_y += n * v;
    res->sum_y2 += n * v * v;
  }
  res->sum_r = sums[0];
  res->sum_g = sums[1];
  res->sum_b = sums[2];
}

}  // namespace HWY_NAMESPACE
}  // namespace cuv
HWY_AFTER_NAMESPACE ();

#if HWY_ONCE
namespace cuv {

HWY_EXPORT (HistogramFast);

void histogram_cpu (const Frame &src, const Roi &roi, int bins, HistogramResult *result)
{
  HWY_DYNAMIC_DISPATCH (HistogramFast) (src, roi, bins, result);
}

}  // namespace cuv
#endif
