/* gst-cudavision: a row of the fast CPU Sobel on adjacent samples (a gray plane, NV12/I420 luma,
 * cudasobel's luma mode), as Highway builds it for each x86-64 or Arm target and picks at run time;
 * and for YUY2/UYVY and P010, whose luma is every other byte, the split of a row into its luma
 * bytes and the interleave of the output row (LoadInterleaved2, StoreInterleaved2).
 * sobel_reference () is the definition; this gives its bytes.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The gradients of a vector of samples in 16-bit lanes (|gx|, |gy| <= 1020), their energy
 * gx^2 + gy^2 in 32-bit lanes, and the output byte of each energy gathered from the output table
 * (SobelOutput::lookup: the table, then the byte of every larger energy, then padding for the
 * gather's four bytes). The two edge samples, and the ones a whole vector does not cover, are
 * computed one at a time the same way. */
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/sobel/sobel_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>

#include "kernels/sobel/sobel.h"
#include "kernels/sobel/sobel_math.h"

HWY_BEFORE_NAMESPACE ();
namespace cuv {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void SobelBytesRow (const uint8_t *t, const uint8_t *m, const uint8_t *b, int w, const SobelOutput &o, uint8_t *out)
{
  const int n = static_cast<int> (o.table.size ());
  const uint8_t *lookup = o.lookup.data ();
  auto one = [&] (int xl, int x, int xr) {
    out[x] = lookup[std::min (sobel_energy (t[xl], t[x], t[xr], m[xl], m[xr], b[xl], b[x], b[xr]), n)];
  };
  if (w == 1) {
    one (0, 0, 0);
    return;
  }
  one (0, 0, 1);
  int x = 1;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<int16_t> d16;
  const hn::Rebind<uint8_t, decltype (d16)> d8;
  const hn::Rebind<uint16_t, decltype (d16)> du16;
  const hn::Half<decltype (d16)> dh16;
  const hn::Rebind<int32_t, decltype (dh16)> d32;
  const hn::Rebind<uint8_t, decltype (dh16)> dh8;
  const int lanes = static_cast<int> (hn::Lanes (d16));
  const auto limit = hn::Set (d32, n);
  const int32_t *words = reinterpret_cast<const int32_t *> (lookup);
  auto load = [&] (const uint8_t *p) { return hn::BitCast (d16, hn::PromoteTo (du16, hn::LoadU (d8, p))); };
  /* the output bytes of the energies of @gx, @gy's lanes in one half of the vector */
  auto bytes = [&] (hn::Vec<decltype (dh16)> gx, hn::Vec<decltype (dh16)> gy) {
    const auto x32 = hn::PromoteTo (d32, gx), y32 = hn::PromoteTo (d32, gy);
    const auto e = hn::Min (hn::Add (hn::Mul (x32, x32), hn::Mul (y32, y32)), limit);
    const auto word = hn::And (hn::GatherOffset (d32, words, e), hn::Set (d32, 0xff));
    return hn::DemoteTo (dh8, word);
  };
  for (; x + lanes <= w - 1; x += lanes) {
    const auto tl = load (t + x - 1), tc = load (t + x), tr = load (t + x + 1);
    const auto ml = load (m + x - 1), mr = load (m + x + 1);
    const auto bl = load (b + x - 1), bc = load (b + x), br = load (b + x + 1);
    const auto gx = hn::Sub (hn::Add (hn::Add (tr, hn::Add (mr, mr)), br), hn::Add (hn::Add (tl, hn::Add (ml, ml)), bl));
    const auto gy = hn::Sub (hn::Add (hn::Add (bl, hn::Add (bc, bc)), br), hn::Add (hn::Add (tl, hn::Add (tc, tc)), tr));
    hn::StoreU (bytes (hn::LowerHalf (dh16, gx), hn::LowerHalf (dh16, gy)), dh8, out + x);
    hn::StoreU (bytes (hn::UpperHalf (dh16, gx), hn::UpperHalf (dh16, gy)), dh8, out + x + lanes / 2);
  }
#endif
  for (; x < w - 1; x++)
    one (x - 1, x, x + 1);
  one (w - 2, w - 1, w - 1);
}

void SobelLumaRow (const uint8_t *px, int w, int yb, uint8_t *out)
{
  int x = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<uint8_t> d8;
  const int lanes = static_cast<int> (hn::Lanes (d8));
  for (; x + lanes <= w; x += lanes) {
    hn::Vec<decltype (d8)> even, odd;
    hn::LoadInterleaved2 (d8, px + 2 * x, even, odd);
    hn::StoreU (yb ? odd : even, d8, out + x);
  }
#endif
  for (; x < w; x++)
    out[x] = px[2 * x + yb];
}

void SobelWideRow (const uint8_t *gray, int w, int yb, uint8_t other, uint8_t *o)
{
  int x = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<uint8_t> d8;
  const int lanes = static_cast<int> (hn::Lanes (d8));
  const auto fill = hn::Set (d8, other);
  for (; x + lanes <= w; x += lanes) {
    const auto g = hn::LoadU (d8, gray + x);
    hn::StoreInterleaved2 (yb ? fill : g, yb ? g : fill, d8, o + 2 * x);
  }
#endif
  for (; x < w; x++) {
    o[2 * x + yb] = gray[x];
    o[2 * x + 1 - yb] = other;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cuv
HWY_AFTER_NAMESPACE ();

#if HWY_ONCE
namespace cuv {

HWY_EXPORT (SobelBytesRow);
HWY_EXPORT (SobelLumaRow);
HWY_EXPORT (SobelWideRow);

void sobel_bytes_row (const uint8_t *t, const uint8_t *m, const uint8_t *b, int w, const SobelOutput &o, uint8_t *out)
{
  HWY_DYNAMIC_DISPATCH (SobelBytesRow) (t, m, b, w, o, out);
}

void sobel_luma_row (const uint8_t *px, int w, int yb, uint8_t *out)
{
  HWY_DYNAMIC_DISPATCH (SobelLumaRow) (px, w, yb, out);
}

void sobel_wide_row (const uint8_t *gray, int w, int yb, uint8_t other, uint8_t *o)
{
  HWY_DYNAMIC_DISPATCH (SobelWideRow) (gray, w, yb, other, o);
}

}  // namespace cuv
#endif
