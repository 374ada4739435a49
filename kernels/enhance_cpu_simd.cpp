/* gst-cudavision: the fast CPU cudaenhance, as Highway builds it for each x86-64 or Arm target and
 * picks at run time; enhance_reference () is the definition, whose bytes this gives.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * 4:2:0 luma goes through its 256-byte table a vector at a time: the table as sixteen 16-byte
 * pieces, each looked up by the low four bits of every byte (a byte shuffle) and kept where the
 * high four bits name that piece. Chroma (a 64 K-entry table of pairs) and RGB go through the
 * definition. */
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "enhance_cpu_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "enhance.h"

HWY_BEFORE_NAMESPACE ();
namespace cuv {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

#if HWY_TARGET != HWY_SCALAR
/* The rows of a plane through a 256-byte table, in place or not. */
void lookup_plane (const Plane &s, const Plane &d, const uint8_t table[256])
{
  const hn::ScalableTag<uint8_t> d8;
  const int lanes = static_cast<int> (hn::Lanes (d8));
  hn::Vec<decltype (d8)> pieces[16];
  for (int k = 0; k < 16; k++)
    pieces[k] = hn::LoadDup128 (d8, table + 16 * k);
  const auto low = hn::Set (d8, 0x0f);
  for (int y = 0; y < s.height; y++) {
    const uint8_t *in = plane_row (s, y);
    uint8_t *out = plane_row (d, y);
    int x = 0;
    for (; x + lanes <= s.width; x += lanes) {
      const auto v = hn::LoadU (d8, in + x);
      const auto index = hn::And (v, low);
      const auto piece = hn::ShiftRight<4> (v);
      auto r = hn::TableLookupBytes (pieces[0], index);
      for (int k = 1; k < 16; k++)
        r = hn::IfThenElse (hn::Eq (piece, hn::Set (d8, static_cast<uint8_t> (k))), hn::TableLookupBytes (pieces[k], index), r);
      hn::StoreU (r, d8, out + x);
    }
    for (; x < s.width; x++)
      out[x] = table[in[x]];
  }
}
#endif

}  // namespace

void EnhanceFast (const Frame &src, const Frame &dst, const EnhanceTables &t)
{
#if HWY_TARGET != HWY_SCALAR
  if (!layout_is_rgb (src.layout)) {
    lookup_plane (src.planes[0], dst.planes[0], t.y);
    /* the chroma planes through the definition, the luma plane left out */
    Frame chroma_src = src, chroma_dst = dst;
    chroma_src.planes[0].height = chroma_dst.planes[0].height = 0;
    enhance_reference (chroma_src, chroma_dst, t);
    return;
  }
#endif
  enhance_reference (src, dst, t);
}

}  // namespace HWY_NAMESPACE
}  // namespace cuv
HWY_AFTER_NAMESPACE ();

#if HWY_ONCE
namespace cuv {

HWY_EXPORT (EnhanceFast);

void enhance_cpu (const Frame &src, const Frame &dst, const EnhanceTables &tables)
{
  HWY_DYNAMIC_DISPATCH (EnhanceFast) (src, dst, tables);
}

}  // namespace cuv
#endif
