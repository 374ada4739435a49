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
#define HWY_TARGET_INCLUDE "histogram_cpu_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstring>
#include <vector>

#include "histogram_math.h"

HWY_BEFORE_NAMESPACE ();
namespace cuv {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

using LumaCounts = uint32_t[4][256];

void count_bytes (const uint8_t *p, int n, LumaCounts counts)
{
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    counts[0][p[i]]++;
    counts[1][p[i + 1]]++;
    counts[2][p[i + 2]]++;
    counts[3][p[i + 3]]++;
  }
  for (; i < n; i++)
    counts[0][p[i]]++;
}

/* The luma of @n pixels of a 4-byte layout (R at byte @ri) into @luma; their R, G, B added to
 * @sums. */
void luma_row (const uint8_t *px, int n, int ri, uint8_t *luma, uint64_t sums[3])
{
  int x = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<uint8_t> d8;
  const hn::Half<decltype (d8)> dh8;
  const hn::Rebind<uint16_t, decltype (dh8)> d16;
  const hn::RebindToSigned<decltype (d16)> di16;
  const hn::Repartition<uint64_t, decltype (d8)> d64;
  const int lanes = static_cast<int> (hn::Lanes (d8));
  const auto k77 = hn::Set (d16, 77), k150 = hn::Set (d16, 150), k29 = hn::Set (d16, 29);
  auto acc_r = hn::Zero (d64), acc_g = hn::Zero (d64), acc_b = hn::Zero (d64);
  for (; x + lanes <= n; x += lanes) {
    hn::Vec<decltype (d8)> c0, c1, c2, c3;
    hn::LoadInterleaved4 (d8, px + 4 * x, c0, c1, c2, c3);
    const auto r = ri ? c2 : c0, g = c1, b = ri ? c0 : c2;
    acc_r = hn::Add (acc_r, hn::SumsOf8 (r));
    acc_g = hn::Add (acc_g, hn::SumsOf8 (g));
    acc_b = hn::Add (acc_b, hn::SumsOf8 (b));
    const auto lo = hn::ShiftRight<8> (hn::Add (hn::Add (hn::Mul (hn::PromoteTo (d16, hn::LowerHalf (dh8, r)), k77),
        hn::Mul (hn::PromoteTo (d16, hn::LowerHalf (dh8, g)), k150)), hn::Mul (hn::PromoteTo (d16, hn::LowerHalf (dh8, b)), k29)));
    const auto hi = hn::ShiftRight<8> (hn::Add (hn::Add (hn::Mul (hn::PromoteTo (d16, hn::UpperHalf (dh8, r)), k77),
        hn::Mul (hn::PromoteTo (d16, hn::UpperHalf (dh8, g)), k150)), hn::Mul (hn::PromoteTo (d16, hn::UpperHalf (dh8, b)), k29)));
    hn::StoreU (hn::Combine (d8, hn::DemoteTo (dh8, hn::BitCast (di16, hi)), hn::DemoteTo (dh8, hn::BitCast (di16, lo))), d8,
        luma + x);
  }
  sums[0] += hn::GetLane (hn::SumOfLanes (d64, acc_r));
  sums[1] += hn::GetLane (hn::SumOfLanes (d64, acc_g));
  sums[2] += hn::GetLane (hn::SumOfLanes (d64, acc_b));
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
      count_bytes (luma.data (), roi.width, counts);
    } else {
      count_bytes (row + roi.x, roi.width, counts);
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
