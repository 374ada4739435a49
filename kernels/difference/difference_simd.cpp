/* gst-cudavision: the fast CPU heat map and noise map, as Highway builds them for each x86-64
 * (SSSE3, SSE4, AVX2, AVX-512) or Arm target and picks at run time. heatmap_reference () and
 * noisemap_reference () are the definitions; these give their bytes and statistics.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Lanes run along the pixels of a row, in the integer arithmetic of the definitions:
 * - RGB layouts: one 32-bit lane a pixel. The byte differences come from the bytes' max - min,
 *   the heat map's colour from a gather of its table, the blend on the even and the odd bytes of
 *   the word as blend_px () does it.
 * - NV12/I420: the chroma row as NV12 has it (U, V, U, V...; I420's two planes are interleaved
 *   into a row of scratch first), so that a pair of lanes holds one 2x2 group's chroma. The heat
 *   map takes 32-bit lanes (a pixel's chroma by DupEven/DupOdd), the noise map 16-bit lanes (a
 *   group's mask over its lane pair).
 * - P010: as NV12, each 16-bit sample loaded whole and its high byte taken (a shift), the noise
 *   map's output written back as 16-bit samples (v << 8, or the input's sample where overlay mode
 *   leaves it).
 * - YUY2/UYVY: a pixel a lane, loaded as the 16-bit word of its Y and its chroma byte (U for the
 *   pair's first pixel, V for its second), so that a lane pair holds one pair's chroma as NV12's
 *   chroma row does; the noise map writes each lane's word back.
 * The columns a whole vector does not cover (and every column on the scalar target) go through
 * the definition on the frame's remaining columns (frame_cols). */
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/difference/difference_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <vector>

#include "kernels/heatmap/heatmap.h"
#include "kernels/noisemap/noisemap.h"

HWY_BEFORE_NAMESPACE ();
namespace cuv {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

#if HWY_TARGET != HWY_SCALAR
using D32 = hn::ScalableTag<uint32_t>;
using V32 = hn::Vec<D32>;
using D16 = hn::ScalableTag<uint16_t>;
using V16 = hn::Vec<D16>;

#endif  // HWY_TARGET != HWY_SCALAR

/* Adds the definition's result on the columns from @x0 on. */
template <typename Reference, typename Params>
void finish_columns (Reference reference, const Frame &cur, const Frame &prev, const Frame &out, const Params &p,
    int x0, DiffStats *stats)
{
  if (x0 >= cur.width)
    return;
  DiffStats tail;
  reference (frame_cols (cur, x0, cur.width), frame_cols (prev, x0, cur.width), frame_cols (out, x0, cur.width), p, &tail);
  add_band_stats (stats, tail);
}

#if HWY_TARGET != HWY_SCALAR

/* Each byte of @top over @bottom with weight @a / 256 (0 < a < 256), as blend_px (): the even and
 * the odd bytes of the word apart, in 16 bits each. */
HWY_INLINE V32 blend_words (D32 d, V32 top, V32 bottom, uint32_t a)
{
  const V32 m = hn::Set (d, 0x00ff00ffu), A = hn::Set (d, a), NA = hn::Set (d, 256 - a), R = hn::Set (d, 0x00800080u);
  const V32 even = hn::ShiftRight<8> (hn::Add (hn::Add (hn::Mul (hn::And (top, m), A), hn::Mul (hn::And (bottom, m), NA)), R));
  const V32 odd = hn::Add (hn::Add (hn::Mul (hn::And (hn::ShiftRight<8> (top), m), A),
      hn::Mul (hn::And (hn::ShiftRight<8> (bottom), m), NA)), R);
  return hn::Or (hn::And (even, m), hn::And (odd, hn::Set (d, 0xff00ff00u)));
}

/* The heat map's colour of each lane's difference over @below, opaque. */
HWY_INLINE V32 heat_over (D32 d, const HeatmapParams &p, V32 diff, V32 below)
{
  const V32 opaque = hn::Set (d, 0xff000000u);
  if (p.blend <= 0)
    return hn::Or (below, opaque);
  const hn::RebindToSigned<D32> di;
  const V32 heat = hn::GatherIndex (d, p.table, hn::BitCast (di, diff));
  if (p.blend >= 256)
    return hn::Or (heat, opaque);
  return hn::Or (blend_words (d, heat, below, static_cast<uint32_t> (p.blend)), opaque);
}

/* Per-lane sums and maxima of d over a band, added into @stats at the end of each row. */
struct LaneStats {
  V32 sum, max;
  explicit LaneStats (D32 d) : sum (hn::Zero (d)), max (hn::Zero (d)) {}
  void add (V32 diff)
  {
    sum = hn::Add (sum, diff);
    max = hn::Max (max, diff);
  }
  /* a row's lane sums stay below 2^32: 765 * width / lanes */
  void end_row (D32 d, DiffStats *stats)
  {
    stats->sum_difference += hn::GetLane (hn::SumOfLanes (d, sum));
    const unsigned m = hn::GetLane (hn::MaxOfLanes (d, max));
    stats->max_difference = m > stats->max_difference ? m : stats->max_difference;
    sum = hn::Zero (d);
  }
};

/* |a - b| of the bytes of two words. */
HWY_INLINE V32 byte_diffs (D32 d, V32 a, V32 b)
{
  const hn::Repartition<uint8_t, D32> d8;
  const auto a8 = hn::BitCast (d8, a), b8 = hn::BitCast (d8, b);
  return hn::BitCast (d, hn::Sub (hn::Max (a8, b8), hn::Min (a8, b8)));
}

HWY_INLINE V32 load_words (D32 d, const uint8_t *p)
{
  const hn::Repartition<uint8_t, D32> d8;
  return hn::BitCast (d, hn::LoadU (d8, p));
}

HWY_INLINE void store_words (D32, V32 v, uint8_t *p)
{
  const hn::Repartition<uint8_t, D32> d8;
  hn::StoreU (hn::BitCast (d8, v), d8, p);
}

void heatmap_rgb (const Frame &cur, const Frame &prev, const Frame &out, const HeatmapParams &p, int xv, DiffStats *stats)
{
  const D32 d;
  const size_t n = hn::Lanes (d);
  const V32 low = hn::Set (d, 0xffu);
  LaneStats ls (d);
  for (int y = 0; y < cur.height; y++) {
    const uint8_t *crow = plane_row (cur.planes[0], y);
    const uint8_t *prow = plane_row (prev.planes[0], y);
    uint8_t *orow = plane_row (out.planes[0], y);
    for (int x = 0; x < xv; x += static_cast<int> (n)) {
      const V32 c = load_words (d, crow + 4 * x);
      const V32 ad = byte_diffs (d, c, load_words (d, prow + 4 * x));
      const V32 diff = hn::Add (hn::Add (hn::And (ad, low), hn::And (hn::ShiftRight<8> (ad), low)),
          hn::And (hn::ShiftRight<16> (ad), low));
      ls.add (diff);
      store_words (d, heat_over (d, p, diff, c), orow + 4 * x);
    }
    ls.end_row (d, stats);
  }
}

/* Chroma row @cy of a 4:2:0 frame as NV12 lays it out: the frame's own row, or I420's planes
 * interleaved into @scratch. */
const uint8_t *uv_row (const Frame &f, int cy, std::vector<uint8_t> &scratch)
{
  if (f.layout == PixelLayout::NV12)
    return plane_row (f.planes[1], cy);
  const uint8_t *u = plane_row (f.planes[1], cy);
  const uint8_t *v = plane_row (f.planes[2], cy);
  scratch.resize (2 * static_cast<size_t> (f.planes[1].width));
  for (int i = 0; i < f.planes[1].width; i++) {
    scratch[2 * i] = u[i];
    scratch[2 * i + 1] = v[i];
  }
  return scratch.data ();
}

/* The row shapes of the YUV layouts (image.h): NV12/I420's bytes, P010's 16-bit samples, and
 * YUY2/UYVY's words of a Y and a chroma byte. */
enum class YuvRows { Bytes, Wide, Packed };

/* The 8-bit Y and chroma of pixels x .. x + lanes - 1 in 32-bit lanes: chroma lane i holds the U of
 * pixel i's group (or pair) for even i and its V for odd i, as NV12's chroma row lies. @yrow is the
 * luma row (YUY2/UYVY: the row), @crow the chroma row as NV12 (or P010) lays it out; @yb the
 * packed layouts' luma byte. */
template <YuvRows K>
HWY_INLINE void load_yc32 (D32 d, const uint8_t *yrow, const uint8_t *crow, int x, int yb, V32 &y, V32 &c)
{
  const hn::Rebind<uint8_t, D32> d8;
  const hn::Rebind<uint16_t, D32> d16;
  const hn::Repartition<uint8_t, decltype (d16)> d16b;
  if (K == YuvRows::Bytes) {
    y = hn::PromoteTo (d, hn::LoadU (d8, yrow + x));
    c = hn::PromoteTo (d, hn::LoadU (d8, crow + x));
  } else if (K == YuvRows::Wide) {
    y = hn::ShiftRight<8> (hn::PromoteTo (d, hn::BitCast (d16, hn::LoadU (d16b, yrow + 2 * x))));
    c = hn::ShiftRight<8> (hn::PromoteTo (d, hn::BitCast (d16, hn::LoadU (d16b, crow + 2 * x))));
  } else {
    const V32 w = hn::PromoteTo (d, hn::BitCast (d16, hn::LoadU (d16b, yrow + 2 * x)));
    const V32 low = hn::And (w, hn::Set (d, 0xffu)), high = hn::ShiftRight<8> (w);
    y = yb ? high : low;
    c = yb ? low : high;
  }
}

/* The chroma row that goes with luma row @y: NV12/I420's (uv_row), P010's plane row, or the
 * packed row itself. */
template <YuvRows K>
const uint8_t *chroma_row_for (const Frame &f, int y, std::vector<uint8_t> &scratch)
{
  if (K == YuvRows::Bytes)
    return uv_row (f, y / 2, scratch);
  if (K == YuvRows::Wide)
    return plane_row (f.planes[1], y / 2);
  return plane_row (f.planes[0], y);
}

template <YuvRows K>
void heatmap_yuv (const Frame &cur, const Frame &prev, const Frame &out, const HeatmapParams &p, int xv, DiffStats *stats)
{
  const D32 d;
  const hn::RebindToSigned<D32> di;
  const size_t n = hn::Lanes (d);
  const YuvToRgb &k = p.yuv;
  const bool bgr = layout_is_bgr (out.layout);
  const int yb = luma_byte (cur.layout);
  const auto y_offset = hn::Set (di, k.y_offset), y_gain = hn::Set (di, k.y_gain), round = hn::Set (di, 32768);
  const auto c128 = hn::Set (di, 128), zero = hn::Zero (di), top = hn::Set (di, 255);
  const auto rv = hn::Set (di, k.rv), gu = hn::Set (di, k.gu), gv = hn::Set (di, k.gv), bu = hn::Set (di, k.bu);
  LaneStats ls (d);
  std::vector<uint8_t> cur_uv, prev_uv;
  for (int y = 0; y < cur.height; y++) {
    const uint8_t *cy_row = plane_row (cur.planes[0], y);
    const uint8_t *py_row = plane_row (prev.planes[0], y);
    const uint8_t *cuv = chroma_row_for<K> (cur, y, cur_uv), *puv = chroma_row_for<K> (prev, y, prev_uv);
    uint8_t *orow = plane_row (out.planes[0], y);
    for (int x = 0; x < xv; x += static_cast<int> (n)) {
      V32 yc, yp, uvc, uvp;
      load_yc32<K> (d, cy_row, cuv, x, yb, yc, uvc);
      load_yc32<K> (d, py_row, puv, x, yb, yp, uvp);
      /* lanes u0 v0 u1 v1 ...: pixel x's group is x / 2 */
      const V32 uc = hn::DupEven (uvc), vc = hn::DupOdd (uvc);
      const V32 duv = hn::Sub (hn::Max (uvc, uvp), hn::Min (uvc, uvp));
      const V32 diff = hn::Add (hn::Sub (hn::Max (yc, yp), hn::Min (yc, yp)), hn::Add (hn::DupEven (duv), hn::DupOdd (duv)));
      ls.add (diff);
      /* yuv_px () */
      const auto yy = hn::Add (hn::Mul (y_gain, hn::Sub (hn::BitCast (di, yc), y_offset)), round);
      const auto cu = hn::Sub (hn::BitCast (di, uc), c128), cv = hn::Sub (hn::BitCast (di, vc), c128);
      const auto r = hn::Min (hn::Max (hn::ShiftRight<16> (hn::Add (yy, hn::Mul (rv, cv))), zero), top);
      const auto g = hn::Min (hn::Max (hn::ShiftRight<16> (hn::Add (hn::Add (yy, hn::Mul (gu, cu)), hn::Mul (gv, cv))), zero), top);
      const auto b = hn::Min (hn::Max (hn::ShiftRight<16> (hn::Add (yy, hn::Mul (bu, cu))), zero), top);
      const V32 c0 = hn::BitCast (d, bgr ? b : r), c2 = hn::BitCast (d, bgr ? r : b);
      const V32 below = hn::Or (hn::Or (c0, hn::ShiftLeft<8> (hn::BitCast (d, g))), hn::ShiftLeft<16> (c2));
      store_words (d, heat_over (d, p, diff, below), orow + 4 * x);
    }
    ls.end_row (d, stats);
  }
}

void noisemap_rgb (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &p, int xv, DiffStats *stats)
{
  const D32 d;
  const hn::Repartition<uint8_t, D32> d8;
  const size_t n = hn::Lanes (d);
  const V32 colour_bytes = hn::Set (d, 0x00ffffffu), fourth = hn::Set (d, 0xff000000u);
  const auto thr = hn::Set (d8, static_cast<uint8_t> (p.threshold));
  const V32 colour = hn::Set (d, p.color);
  const V32 painted_black = hn::Set (d, blend_px (p.color, 0, p.alpha) | 0xff000000u);
  const bool overlay = p.overlay;
  const int alpha = p.alpha;
  uint64_t changed = 0;
  for (int y = 0; y < cur.height; y++) {
    const uint8_t *crow = plane_row (cur.planes[0], y);
    const uint8_t *prow = plane_row (prev.planes[0], y);
    uint8_t *orow = plane_row (out.planes[0], y);
    for (int x = 0; x < xv; x += static_cast<int> (n)) {
      const V32 c = load_words (d, crow + 4 * x);
      /* a colour byte's difference above the threshold leaves something after subtracting it */
      const V32 over = hn::BitCast (d, hn::SaturatedSub (hn::BitCast (d8, hn::And (byte_diffs (d, c, load_words (d, prow + 4 * x)),
          colour_bytes)), thr));
      const auto noisy = hn::Ne (over, hn::Zero (d));
      changed += hn::CountTrue (d, noisy);
      V32 v;
      if (overlay) {
        const V32 painted = alpha >= 256 ? colour : alpha <= 0 ? c : blend_words (d, colour, c, alpha);
        v = hn::IfThenElse (noisy, hn::Or (hn::And (painted, colour_bytes), hn::And (c, fourth)), c);
      } else {
        v = hn::IfThenElse (noisy, painted_black, fourth);
      }
      store_words (d, v, orow + 4 * x);
    }
  }
  stats->changed += changed;
}

/* (k + v * (256 - a)) >> 8 per 16-bit lane, k = colour * a + 128: blend_byte () with the colour
 * folded into @k. */
HWY_INLINE V16 blend_lanes (V16 k, V16 v, V16 na)
{
  return hn::ShiftRight<8> (hn::Add (k, hn::Mul (v, na)));
}

/* Lanes of @v that are not all zero as a 32-bit pair, as a mask of both 16-bit lanes. */
HWY_INLINE hn::Mask<D16> pair_any (D16 d, V16 v)
{
  const hn::Repartition<uint32_t, D16> d32;
  const auto any = hn::Ne (hn::BitCast (d32, v), hn::Zero (d32));
  return hn::MaskFromVec (hn::BitCast (d, hn::VecFromMask (d32, any)));
}

/* The 8-bit values of @n samples from sample @x of a row of bytes, or of P010's 16-bit samples
 * (@wide: their high bytes, and the samples whole in @raw), in 16-bit lanes. */
template <bool kWide>
HWY_INLINE V16 load8_16 (D16 d, const uint8_t *row, int x, V16 &raw)
{
  if (kWide) {
    const hn::Repartition<uint8_t, D16> db;
    raw = hn::BitCast (d, hn::LoadU (db, row + 2 * x));
    return hn::ShiftRight<8> (raw);
  }
  const hn::Rebind<uint8_t, D16> d8;
  return hn::PromoteTo (d, hn::LoadU (d8, row + x));
}

/* 8-bit values @v as samples from sample @x on: bytes, or P010's v << 8. */
template <bool kWide>
HWY_INLINE void store8_16 (D16 d, V16 v, uint8_t *row, int x)
{
  if (kWide) {
    const hn::Repartition<uint8_t, D16> db;
    hn::StoreU (hn::BitCast (db, hn::ShiftLeft<8> (v)), db, row + 2 * x);
    return;
  }
  const hn::Rebind<uint8_t, D16> d8;
  const hn::RebindToSigned<D16> di;
  hn::StoreU (hn::DemoteTo (d8, hn::BitCast (di, v)), d8, row + x);
}

/* noisemap_put_sample () on lanes: @paint (k = colour * a + 128) blended over @below where
 * @noisy, else @below, stored as samples; P010's unpainted samples keep their 16 bits in overlay
 * mode (@raw). */
template <bool kWide>
HWY_INLINE void put_samples (D16 d, hn::Mask<D16> noisy, V16 paint, V16 below, V16 na, V16 raw, bool overlay,
    uint8_t *row, int x)
{
  const V16 painted = blend_lanes (paint, below, na);
  if (kWide && overlay) {
    const hn::Repartition<uint8_t, D16> db;
    hn::StoreU (hn::BitCast (db, hn::IfThenElse (noisy, hn::ShiftLeft<8> (painted), raw)), db, row + 2 * x);
    return;
  }
  store8_16<kWide> (d, hn::IfThenElse (noisy, painted, below), row, x);
}

/* NV12/I420 (bytes) and P010 (kWide), a chroma row of 2x2 groups at a time. */
template <bool kWide>
void noisemap_yuv (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &p, int xv, DiffStats *stats)
{
  const D16 d;
  const hn::Repartition<uint32_t, D16> d32;
  const size_t n = hn::Lanes (d);
  const V16 thr = hn::Set (d, static_cast<uint16_t> (p.threshold));
  const V16 na = hn::Set (d, static_cast<uint16_t> (256 - p.alpha));
  const V16 k_y = hn::Set (d, static_cast<uint16_t> (p.yuv[0] * p.alpha + 128));
  const V16 k_uv = hn::BitCast (d, hn::Set (d32, static_cast<uint32_t> (p.yuv[1] * p.alpha + 128) |
      static_cast<uint32_t> (p.yuv[2] * p.alpha + 128) << 16));
  const V16 y_black = hn::Set (d, p.y_black), neutral = hn::Set (d, 128);
  std::vector<uint8_t> cur_uv, prev_uv, out_uv;
  /* NV12 and P010 write their chroma row in place, I420 through scratch */
  const bool direct = layout_is_semiplanar (out.layout);
  for (int gy = 0; gy < cur.planes[1].height; gy++) {
    const uint8_t *cuv = kWide ? plane_row (cur.planes[1], gy) : uv_row (cur, gy, cur_uv);
    const uint8_t *puv = kWide ? plane_row (prev.planes[1], gy) : uv_row (prev, gy, prev_uv);
    if (!direct)
      out_uv.resize (2 * static_cast<size_t> (out.planes[1].width));
    uint8_t *ouv = direct ? plane_row (out.planes[1], gy) : out_uv.data ();
    const int rows = cur.height - 2 * gy < 2 ? 1 : 2;
    for (int x = 0; x < xv; x += static_cast<int> (n)) {
      V16 uv_raw = hn::Zero (d), unused;
      const V16 uvc = load8_16<kWide> (d, cuv, x, uv_raw), uvp = load8_16<kWide> (d, puv, x, unused);
      const V16 chroma_over = hn::VecFromMask (d, hn::Gt (hn::Sub (hn::Max (uvc, uvp), hn::Min (uvc, uvp)), thr));
      const auto chroma_changed = pair_any (d, chroma_over);
      V16 any = hn::Zero (d);
      for (int r = 0; r < rows; r++) {
        const int yi = 2 * gy + r;
        V16 y_raw = hn::Zero (d);
        const V16 yc = load8_16<kWide> (d, plane_row (cur.planes[0], yi), x, y_raw);
        const V16 yp = load8_16<kWide> (d, plane_row (prev.planes[0], yi), x, unused);
        const auto noisy = hn::Or (chroma_changed, hn::Gt (hn::Sub (hn::Max (yc, yp), hn::Min (yc, yp)), thr));
        stats->changed += hn::CountTrue (d, noisy);
        any = hn::Or (any, hn::VecFromMask (d, noisy));
        put_samples<kWide> (d, noisy, k_y, p.overlay ? yc : y_black, na, y_raw, p.overlay, plane_row (out.planes[0], yi), x);
      }
      put_samples<kWide> (d, pair_any (d, any), k_uv, p.overlay ? uvc : neutral, na, uv_raw, p.overlay, ouv, x);
    }
    if (!direct) {
      uint8_t *u = plane_row (out.planes[1], gy);
      uint8_t *v = plane_row (out.planes[2], gy);
      for (int i = 0; i < xv / 2; i++) {
        u[i] = ouv[2 * i];
        v[i] = ouv[2 * i + 1];
      }
    }
  }
}

/* YUY2/UYVY, a pixel a 16-bit lane (its Y and its chroma byte, the pair's U or V): a pair's U and
 * V painted when either of its pixels is noisy, each word written back. */
void noisemap_packed (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &p, int xv,
    DiffStats *stats)
{
  const D16 d;
  const hn::Repartition<uint8_t, D16> db;
  const hn::Repartition<uint32_t, D16> d32;
  const size_t n = hn::Lanes (d);
  const int yb = luma_byte (cur.layout);
  const V16 low = hn::Set (d, 0xff);
  const V16 thr = hn::Set (d, static_cast<uint16_t> (p.threshold));
  const V16 na = hn::Set (d, static_cast<uint16_t> (256 - p.alpha));
  const V16 k_y = hn::Set (d, static_cast<uint16_t> (p.yuv[0] * p.alpha + 128));
  const V16 k_uv = hn::BitCast (d, hn::Set (d32, static_cast<uint32_t> (p.yuv[1] * p.alpha + 128) |
      static_cast<uint32_t> (p.yuv[2] * p.alpha + 128) << 16));
  const V16 y_black = hn::Set (d, p.y_black), neutral = hn::Set (d, 128);
  uint64_t changed = 0;
  for (int y = 0; y < cur.height; y++) {
    const uint8_t *crow = plane_row (cur.planes[0], y), *prow = plane_row (prev.planes[0], y);
    uint8_t *orow = plane_row (out.planes[0], y);
    for (int x = 0; x < xv; x += static_cast<int> (n)) {
      const V16 wc = hn::BitCast (d, hn::LoadU (db, crow + 2 * x)), wp = hn::BitCast (d, hn::LoadU (db, prow + 2 * x));
      const V16 yc = yb ? hn::ShiftRight<8> (wc) : hn::And (wc, low), yp = yb ? hn::ShiftRight<8> (wp) : hn::And (wp, low);
      const V16 cc = yb ? hn::And (wc, low) : hn::ShiftRight<8> (wc), cp = yb ? hn::And (wp, low) : hn::ShiftRight<8> (wp);
      const auto chroma_changed = pair_any (d, hn::VecFromMask (d, hn::Gt (hn::Sub (hn::Max (cc, cp), hn::Min (cc, cp)), thr)));
      const auto noisy = hn::Or (chroma_changed, hn::Gt (hn::Sub (hn::Max (yc, yp), hn::Min (yc, yp)), thr));
      changed += hn::CountTrue (d, noisy);
      const V16 below = p.overlay ? yc : y_black;
      const V16 yo = hn::IfThenElse (noisy, blend_lanes (k_y, below, na), below);
      const V16 base = p.overlay ? cc : neutral;
      const V16 co = hn::IfThenElse (pair_any (d, hn::VecFromMask (d, noisy)), blend_lanes (k_uv, base, na), base);
      const V16 o = yb ? hn::Or (hn::ShiftLeft<8> (yo), co) : hn::Or (yo, hn::ShiftLeft<8> (co));
      hn::StoreU (hn::BitCast (db, o), db, orow + 2 * x);
    }
  }
  stats->changed += changed;
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace

void HeatmapFast (const Frame &cur, const Frame &prev, const Frame &out, const HeatmapParams &p, DiffStats *stats)
{
  *stats = DiffStats{};
  int xv = 0;
#if HWY_TARGET != HWY_SCALAR
  const int n = static_cast<int> (hn::Lanes (D32 ()));
  xv = cur.width / n * n;
  if (xv == 0)
    return finish_columns (heatmap_reference, cur, prev, out, p, 0, stats);
  if (layout_is_rgb (cur.layout))
    heatmap_rgb (cur, prev, out, p, xv, stats);
  else if (layout_is_packed422 (cur.layout))
    heatmap_yuv<YuvRows::Packed> (cur, prev, out, p, xv, stats);
  else if (layout_is_16bit (cur.layout))
    heatmap_yuv<YuvRows::Wide> (cur, prev, out, p, xv, stats);
  else
    heatmap_yuv<YuvRows::Bytes> (cur, prev, out, p, xv, stats);
#endif
  finish_columns (heatmap_reference, cur, prev, out, p, xv, stats);
}

void NoisemapFast (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &p, DiffStats *stats)
{
  *stats = DiffStats{};
  int xv = 0;
#if HWY_TARGET != HWY_SCALAR
  const bool rgb = layout_is_rgb (cur.layout);
  const int n = static_cast<int> (rgb ? hn::Lanes (D32 ()) : hn::Lanes (D16 ()));
  xv = cur.width / n * n;
  if (xv == 0)
    return finish_columns (noisemap_reference, cur, prev, out, p, 0, stats);
  if (rgb)
    noisemap_rgb (cur, prev, out, p, xv, stats);
  else if (layout_is_packed422 (cur.layout))
    noisemap_packed (cur, prev, out, p, xv, stats);
  else if (layout_is_16bit (cur.layout))
    noisemap_yuv<true> (cur, prev, out, p, xv, stats);
  else
    noisemap_yuv<false> (cur, prev, out, p, xv, stats);
#endif
  finish_columns (noisemap_reference, cur, prev, out, p, xv, stats);
}

}  // namespace HWY_NAMESPACE
}  // namespace cuv
HWY_AFTER_NAMESPACE ();

#if HWY_ONCE
namespace cuv {

HWY_EXPORT (HeatmapFast);
HWY_EXPORT (NoisemapFast);

void heatmap_cpu (const Frame &cur, const Frame &prev, const Frame &out, const HeatmapParams &params, DiffStats *stats)
{
  HWY_DYNAMIC_DISPATCH (HeatmapFast) (cur, prev, out, params, stats);
}

void noisemap_cpu (const Frame &cur, const Frame &prev, const Frame &out, const NoisemapParams &params, DiffStats *stats)
{
  HWY_DYNAMIC_DISPATCH (NoisemapFast) (cur, prev, out, params, stats);
}

}  // namespace cuv
#endif
