/* gst-cudavision: the fast CPU cudaenhance, as Highway builds it for each x86-64 or Arm target and
 * picks at run time; enhance_reference () is the definition, whose bytes this gives.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * 4:2:0 luma goes through its 256-byte table a vector at a time, and so does chroma when its pair
 * table is one byte table for U and V alike (EnhanceTables::chroma_by_byte: no hue turn). Where
 * AVX-512 VBMI is there, a byte permute looks 64 bytes up in 128 table bytes at once (vpermi2b,
 * which Highway 1.0 has no operation for): two of them and a select on the high bit. Elsewhere the
 * table is sixteen 16-byte pieces, each looked up by the low four bits of every byte (a byte
 * shuffle) and kept where the high four bits name that piece. YUY2/UYVY, whose bytes take turns
 * between the two tables, are split into their even and odd bytes (LoadInterleaved2), each half
 * looked up in its table and the two stored interleaved again; with a hue turn their Y bytes so,
 * their U and V pairs through the definition's table of pairs. P010 has no byte tables: its luma
 * samples are gathered from the 10-bit table, its chroma pairs go through enhance_chroma10 ()'s
 * integer arithmetic in 32-bit lanes (a pair a lane). Chroma with a hue turn (a 64 K-entry table
 * of pairs) and RGB go through the definition. */
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/enhance/enhance_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/enhance/enhance.h"

HWY_BEFORE_NAMESPACE ();
namespace cuv {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

/* whether this target has AVX-512 VBMI's byte permutes (set again for each target) */
#undef CUV_BYTE_PERMUTE
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3_DL
#define CUV_BYTE_PERMUTE 1
#else
#define CUV_BYTE_PERMUTE 0
#endif

#if HWY_TARGET != HWY_SCALAR
#if CUV_BYTE_PERMUTE
/* A 256-byte table in four registers. */
struct ByteTable {
  __m512i q[4];
  explicit ByteTable (const uint8_t table[256])
  {
    for (int k = 0; k < 4; k++)
      q[k] = _mm512_loadu_si512 (table + 64 * k);
  }
  /* each byte of @v through the table: each permute takes the index's low seven bits, the high
   * bit picks the half */
  __m512i bytes (__m512i v) const
  {
    const __m512i low = _mm512_permutex2var_epi8 (q[0], v, q[1]), high = _mm512_permutex2var_epi8 (q[2], v, q[3]);
    return _mm512_mask_blend_epi8 (_mm512_movepi8_mask (v), low, high);
  }
};

/* A vector of bytes through a 256-byte table, as lookup_row () does it. */
struct ByteLookup {
  ByteTable t;
  explicit ByteLookup (const uint8_t table[256]) : t (table) {}
  hn::Vec<hn::ScalableTag<uint8_t>> operator() (hn::Vec<hn::ScalableTag<uint8_t>> v) const
  {
    v.raw = t.bytes (v.raw);
    return v;
  }
};

/* @n bytes from @in through @table into @out: a vector of 64 at a time, the rest one by one. */
void lookup_row (const uint8_t *in, uint8_t *out, int n, const uint8_t table[256])
{
  const ByteTable t (table);
  int x = 0;
  for (; x + 64 <= n; x += 64)
    _mm512_storeu_si512 (out + x, t.bytes (_mm512_loadu_si512 (in + x)));
  for (; x < n; x++)
    out[x] = table[in[x]];
}

/* The first @n pixels (a multiple of 16) of a 4-byte RGB layout (R at byte @ri) as enhance_rgb ()
 * takes them, with U' and V' from the byte table (chroma_by_byte): 16 pixels a vector, one a 32-bit
 * lane, the matrices as pairwise 16-bit products (vpmaddwd) of the lane's even bytes (R, B), its
 * odd bytes (G, A) and of (Y', U') and (Y', V'). */
void rgb_row (const uint8_t *in, uint8_t *out, int n, int ri, const EnhanceTables &t)
{
  const ByteTable ty (t.y), tc (t.c);
  /* a 16-bit pair (low, high) in every lane; @r, @b the coefficients of R and B in the even pair */
  const auto pair = [] (int low, int high) {
    return _mm512_set1_epi32 (static_cast<int> ((static_cast<uint32_t> (low) & 0xffffu) | static_cast<uint32_t> (high) << 16));
  };
  const auto rb = [&] (int r, int b) { return ri ? pair (b, r) : pair (r, b); };
  const auto k = [] (int v) { return _mm512_set1_epi32 (v); };
  const __m512i bytes = k (0x00ff00ff), low = k (0xff), zero = _mm512_setzero_si512 ();
  const __m512i y_rb = rb (66, 25), y_g = pair (129, 0), u_rb = rb (-38, 112), u_g = pair (-74, 0);
  const __m512i v_rb = rb (112, -18), v_g = pair (-94, 0);
  const __m512i r_yv = pair (298, 409), g_yu = pair (298, -100), g_yv = pair (0, -208), b_yu = pair (298, 516);
  const auto clamp = [&] (__m512i v) { return _mm512_min_epi32 (_mm512_max_epi32 (v, zero), low); };
  const auto dot = [] (__m512i a, __m512i ka, __m512i b, __m512i kb, __m512i c) {
    return _mm512_srai_epi32 (_mm512_add_epi32 (_mm512_add_epi32 (_mm512_madd_epi16 (a, ka), _mm512_madd_epi16 (b, kb)), c), 8);
  };
  for (int x = 0; x < n; x += 16) {
    const __m512i px = _mm512_loadu_si512 (in + 4 * x);
    const __m512i even = _mm512_and_si512 (px, bytes), odd = _mm512_and_si512 (_mm512_srli_epi32 (px, 8), bytes);
    /* enhance_rgb (): the forward matrix, the tables, the inverse matrix */
    const __m512i y = dot (even, y_rb, odd, y_g, k (4096));
    const __m512i u = dot (even, u_rb, odd, u_g, k (32768));
    const __m512i v = dot (even, v_rb, odd, v_g, k (32768));
    const __m512i y2 = _mm512_and_si512 (ty.bytes (y), low);
    const __m512i uv = tc.bytes (_mm512_or_si512 (u, _mm512_slli_epi32 (v, 8)));
    const __m512i yu = _mm512_or_si512 (y2, _mm512_slli_epi32 (_mm512_and_si512 (uv, low), 16));
    const __m512i yv = _mm512_or_si512 (y2, _mm512_slli_epi32 (_mm512_and_si512 (uv, k (0xff00)), 8));
    const __m512i r2 = clamp (_mm512_srai_epi32 (_mm512_add_epi32 (_mm512_madd_epi16 (yv, r_yv), k (-57068)), 8));
    const __m512i g2 = clamp (dot (yu, g_yu, yv, g_yv, k (34707)));
    const __m512i b2 = clamp (_mm512_srai_epi32 (_mm512_add_epi32 (_mm512_madd_epi16 (yu, b_yu), k (-70870)), 8));
    const __m512i o = _mm512_or_si512 (_mm512_or_si512 (ri ? b2 : r2, _mm512_slli_epi32 (g2, 8)),
        _mm512_or_si512 (_mm512_slli_epi32 (ri ? r2 : b2, 16), _mm512_andnot_si512 (k (0xffffff), px)));
    _mm512_storeu_si512 (out + 4 * x, o);
  }
}
#else
/* A vector of bytes through a 256-byte table: sixteen 16-byte pieces, each looked up by the low four
 * bits of every byte and kept where the high four bits name it. */
struct ByteLookup {
  using D8 = hn::ScalableTag<uint8_t>;
  hn::Vec<D8> pieces[16];
  explicit ByteLookup (const uint8_t table[256])
  {
    const D8 d8;
    for (int k = 0; k < 16; k++)
      pieces[k] = hn::LoadDup128 (d8, table + 16 * k);
  }
  hn::Vec<D8> operator() (hn::Vec<D8> v) const
  {
    const D8 d8;
    const auto index = hn::And (v, hn::Set (d8, 0x0f));
    const auto piece = hn::ShiftRight<4> (v);
    auto r = hn::TableLookupBytes (pieces[0], index);
    for (int k = 1; k < 16; k++)
      r = hn::IfThenElse (hn::Eq (piece, hn::Set (d8, static_cast<uint8_t> (k))), hn::TableLookupBytes (pieces[k], index), r);
    return r;
  }
};

void lookup_row (const uint8_t *in, uint8_t *out, int n, const uint8_t table[256])
{
  const hn::ScalableTag<uint8_t> d8;
  const int lanes = static_cast<int> (hn::Lanes (d8));
  const ByteLookup t (table);
  int x = 0;
  for (; x + lanes <= n; x += lanes)
    hn::StoreU (t (hn::LoadU (d8, in + x)), d8, out + x);
  for (; x < n; x++)
    out[x] = table[in[x]];
}
#endif

/* The rows of a plane of @bytes_per_row bytes through a 256-byte table, in place or not. */
void lookup_plane (const Plane &s, const Plane &d, int bytes_per_row, const uint8_t table[256])
{
  for (int y = 0; y < s.height; y++)
    lookup_row (plane_row (s, y), plane_row (d, y), bytes_per_row, table);
}

/* The pixels of YUY2/UYVY rows covered by whole vectors of pairs: their even and their odd bytes
 * apart, each through its table (@even, @odd: tabley or the chroma byte table, as the layout
 * places Y), or with @odd null the odd bytes as they are. Returns the pixels done. */
int packed_rows (const Frame &src, const Frame &dst, const uint8_t *even, const uint8_t *odd)
{
  const hn::ScalableTag<uint8_t> d8;
  const int lanes = static_cast<int> (hn::Lanes (d8));
  /* a vector of even bytes and one of odd bytes: lanes pixels */
  const int xv = src.planes[0].width / lanes * lanes;
  const ByteLookup te (even ? even : odd), to (odd ? odd : even);
  for (int y = 0; y < src.height; y++) {
    const uint8_t *in = plane_row (src.planes[0], y);
    uint8_t *out = plane_row (dst.planes[0], y);
    for (int x = 0; x < xv; x += lanes) {
      hn::Vec<decltype (d8)> e, o;
      hn::LoadInterleaved2 (d8, in + 2 * x, e, o);
      hn::StoreInterleaved2 (even ? te (e) : e, odd ? to (o) : o, d8, out + 2 * x);
    }
  }
  return xv;
}

/* P010 luma rows: each sample's 10 bits gathered from tabley10 (two bytes read as the low half of
 * a word: the table is followed by more of EnhanceTables), written back << 6. */
void p010_luma (const Plane &s, const Plane &d, int width, const uint16_t *y10)
{
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<uint16_t, decltype (di)> d16;
  const hn::Repartition<uint8_t, decltype (d16)> db;
  const int lanes = static_cast<int> (hn::Lanes (di));
  const int32_t *words = reinterpret_cast<const int32_t *> (y10);
  const auto low = hn::Set (di, 0xffff);
  const int xv = width / lanes * lanes;
  for (int y = 0; y < s.height; y++) {
    const uint8_t *in = plane_row (s, y);
    uint8_t *out = plane_row (d, y);
    for (int x = 0; x < xv; x += lanes) {
      const auto sample = hn::BitCast (di, hn::PromoteTo (hn::RebindToUnsigned<decltype (di)> (),
          hn::BitCast (d16, hn::LoadU (db, in + 2 * x))));
      /* the byte offset of entry sample >> 6 */
      const auto offset = hn::ShiftLeft<1> (hn::ShiftRight<6> (sample));
      const auto v = hn::ShiftLeft<6> (hn::And (hn::GatherOffset (di, words, offset), low));
      hn::StoreU (hn::BitCast (db, hn::DemoteTo (d16, v)), db, out + 2 * x);
    }
    for (int x = xv; x < width; x++)
      store_le16 (out + 2 * x, enhance_luma10 (y10, load_le16 (in + 2 * x)));
  }
}

/* P010 chroma rows, a U V pair a 32-bit lane, through enhance_chroma10 ()'s arithmetic. */
void p010_chroma (const Plane &s, const Plane &d, const EnhanceTables &t)
{
  const hn::ScalableTag<int32_t> di;
  const hn::RebindToUnsigned<decltype (di)> du;
  const hn::Repartition<uint8_t, decltype (di)> db;
  const int lanes = static_cast<int> (hn::Lanes (di));
  const auto c = hn::Set (di, t.hue_cos16), sn = hn::Set (di, t.hue_sin16);
  const auto centre = hn::Set (di, 512), round = hn::Set (di, 32768), zero = hn::Zero (di), top = hn::Set (di, 1023);
  const auto low = hn::Set (du, 0xffffu);
  const int xv = s.width / lanes * lanes;
  for (int y = 0; y < s.height; y++) {
    const uint8_t *in = plane_row (s, y);
    uint8_t *out = plane_row (d, y);
    for (int x = 0; x < xv; x += lanes) {
      const auto w = hn::BitCast (du, hn::LoadU (db, in + 4 * x));
      const auto i = hn::Sub (hn::BitCast (di, hn::ShiftRight<6> (hn::And (w, low))), centre);
      const auto j = hn::Sub (hn::BitCast (di, hn::ShiftRight<22> (w)), centre);
      const auto u2 = hn::Min (hn::Max (hn::Add (centre, hn::ShiftRight<16> (hn::Add (hn::Add (hn::Mul (i, c), hn::Mul (j, sn)), round))), zero), top);
      const auto v2 = hn::Min (hn::Max (hn::Add (centre, hn::ShiftRight<16> (hn::Add (hn::Sub (hn::Mul (j, c), hn::Mul (i, sn)), round))), zero), top);
      hn::StoreU (hn::BitCast (db, hn::Or (hn::ShiftLeft<6> (u2), hn::ShiftLeft<22> (v2))), db, out + 4 * x);
    }
    for (int x = xv; x < s.width; x++) {
      const uint32_t uv = enhance_chroma10 (t.hue_cos16, t.hue_sin16, load_le16 (in + 4 * x), load_le16 (in + 4 * x + 2));
      store_le16 (out + 4 * x, uv & 0xffff);
      store_le16 (out + 4 * x + 2, uv >> 16);
    }
  }
}
#endif

}  // namespace

void EnhanceFast (const Frame &src, const Frame &dst, const EnhanceTables &t)
{
#if HWY_TARGET != HWY_SCALAR
  if (layout_is_16bit (src.layout)) {
    p010_luma (src.planes[0], dst.planes[0], src.width, t.y10);
    p010_chroma (src.planes[1], dst.planes[1], t);
    return;
  }
  if (layout_is_packed422 (src.layout)) {
    const bool uyvy = luma_byte (src.layout) == 1;
    if (t.chroma_by_byte) {
      const int xv = packed_rows (src, dst, uyvy ? t.c : t.y, uyvy ? t.y : t.c);
      /* the pairs a vector does not cover through the definition */
      if (xv < src.width)
        enhance_reference (frame_cols (src, xv, src.width), frame_cols (dst, xv, src.width), t);
      return;
    }
    /* the Y bytes in SIMD, the U V pairs through the definition's table of pairs (read back from
     * @dst, which holds them as they came) */
    const int xv = packed_rows (src, dst, uyvy ? nullptr : t.y, uyvy ? t.y : nullptr);
    if (xv < src.width)
      enhance_reference (frame_cols (src, xv, src.width), frame_cols (dst, xv, src.width), t);
    const int ub = packed422_u_byte (src.layout);
    for (int y = 0; y < dst.height; y++) {
      uint8_t *out = plane_row (dst.planes[0], y);
      for (int x = 0; x < xv / 2; x++, out += 4) {
        const uint16_t uv = t.uv[out[ub] * 256 + out[ub + 2]];
        out[ub] = uv & 0xff;
        out[ub + 2] = uv >> 8;
      }
    }
    return;
  }
  if (layout_is_byte_planes (src.layout)) {
    lookup_plane (src.planes[0], dst.planes[0], src.planes[0].width, t.y);
    if (t.chroma_by_byte) {
      if (src.layout == PixelLayout::NV12) {
        lookup_plane (src.planes[1], dst.planes[1], 2 * src.planes[1].width, t.c);
      } else {
        lookup_plane (src.planes[1], dst.planes[1], src.planes[1].width, t.c);
        lookup_plane (src.planes[2], dst.planes[2], src.planes[2].width, t.c);
      }
      return;
    }
    /* the chroma planes through the definition, the luma plane left out */
    Frame chroma_src = src, chroma_dst = dst;
    chroma_src.planes[0].height = chroma_dst.planes[0].height = 0;
    enhance_reference (chroma_src, chroma_dst, t);
    return;
  }
#endif
#if CUV_BYTE_PERMUTE
  if (t.chroma_by_byte && layout_is_rgb (src.layout)) {
    const int ri = layout_is_bgr (src.layout) ? 2 : 0, xv = src.width / 16 * 16;
    for (int y = 0; y < src.height; y++)
      rgb_row (plane_row (src.planes[0], y), plane_row (dst.planes[0], y), xv, ri, t);
    /* the columns a vector does not cover through the definition */
    enhance_reference (frame_cols (src, xv, src.width), frame_cols (dst, xv, src.width), t);
    return;
  }
#endif
  enhance_reference (src, dst, t);
}

bool EnhanceIsLight (const EnhanceTables &t, PixelLayout layout)
{
  return t.chroma_by_byte &&
      (layout_is_byte_planes (layout) || layout_is_packed422 (layout) || (CUV_BYTE_PERMUTE && layout_is_rgb (layout))) &&
      HWY_TARGET != HWY_SCALAR;
}

}  // namespace HWY_NAMESPACE
}  // namespace cuv
HWY_AFTER_NAMESPACE ();

#if HWY_ONCE
namespace cuv {

HWY_EXPORT (EnhanceFast);
HWY_EXPORT (EnhanceIsLight);

void enhance_cpu (const Frame &src, const Frame &dst, const EnhanceTables &tables)
{
  HWY_DYNAMIC_DISPATCH (EnhanceFast) (src, dst, tables);
}

bool enhance_cpu_is_light (const EnhanceTables &tables, PixelLayout layout)
{
  return HWY_DYNAMIC_DISPATCH (EnhanceIsLight) (tables, layout);
}

}  // namespace cuv
#endif
