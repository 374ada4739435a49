/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernels/sobel/sobel.h"

#include <algorithm>
#include <cstring>

#include "kernels/sobel/sobel_math.h"

namespace cuv {

namespace {

/* Sample of channel @c at (x, y), coordinates clamped to the plane: the replicated border. */
template <typename Fetch>
int sobel_at (const Fetch &fetch, int x, int y, int w, int h, float scale, int threshold)
{
  int xl = std::max (x - 1, 0), xr = std::min (x + 1, w - 1);
  int yt = std::max (y - 1, 0), yb = std::min (y + 1, h - 1);
  int e = sobel_energy (fetch (xl, yt), fetch (x, yt), fetch (xr, yt), fetch (xl, y), fetch (xr, y),
      fetch (xl, yb), fetch (x, yb), fetch (xr, yb));
  return sobel_output_host (e, scale, threshold);
}

/* One byte of every @step, from byte @offset on, filtered as a plane: an 8-bit plane (1, 0), or
 * the Y bytes of YUY2/UYVY or P010's Y high bytes (2, luma_byte), a YUY2/UYVY plane's width
 * counting whole pairs. */
void sobel_plane (const Plane &s, const Plane &d, int step, int offset, float scale, int threshold)
{
  auto fetch = [&] (int x, int y) { return static_cast<int> (s.data[static_cast<size_t> (y) * s.pitch + step * x + offset]); };
  for (int y = 0; y < s.height; y++)
    for (int x = 0; x < s.width; x++)
      d.data[static_cast<size_t> (y) * d.pitch + step * x + offset] =
          static_cast<uint8_t> (sobel_at (fetch, x, y, s.width, s.height, scale, threshold));
}

/* Chroma plane @p of @l neutral: 128 in every sample (P010: 128 << 8, one row made and copied). */
void fill_neutral (const Plane &d, PixelLayout l, int p)
{
  const size_t bytes = static_cast<size_t> (d.width) * plane_sample_bytes (l, p);
  if (!layout_is_16bit (l)) {
    for (int y = 0; y < d.height; y++)
      std::memset (d.data + static_cast<size_t> (y) * d.pitch, 128, bytes);
    return;
  }
  std::vector<uint8_t> row (bytes);
  for (size_t i = 0; i < bytes; i += 2)
    put_sample8 (l, row.data () + i, 128);
  for (int y = 0; y < d.height; y++)
    std::memcpy (d.data + static_cast<size_t> (y) * d.pitch, row.data (), bytes);
}

void sobel_rgb (const Frame &src, const Frame &dst, const SobelParams &p)
{
  const Plane &s = src.planes[0];
  const Plane &d = dst.planes[0];
  bool bgr = layout_is_bgr (src.layout);
  auto px = [&] (int x, int y) { return s.data + static_cast<size_t> (y) * s.pitch + 4 * x; };
  for (int y = 0; y < s.height; y++) {
    for (int x = 0; x < s.width; x++) {
      uint8_t *o = d.data + static_cast<size_t> (y) * d.pitch + 4 * x;
      if (p.mode == SobelMode::Color) {
        for (int c = 0; c < 3; c++) {
          auto fetch = [&] (int xx, int yy) { return static_cast<int> (px (xx, yy)[c]); };
          o[c] = static_cast<uint8_t> (sobel_at (fetch, x, y, s.width, s.height, p.scale, p.threshold));
        }
      } else {
        auto fetch = [&] (int xx, int yy) {
          const uint8_t *q = px (xx, yy);
          return bgr ? luma_bt601 (q[2], q[1], q[0]) : luma_bt601 (q[0], q[1], q[2]);
        };
        uint8_t m = static_cast<uint8_t> (sobel_at (fetch, x, y, s.width, s.height, p.scale, p.threshold));
        o[0] = o[1] = o[2] = m;
      }
      o[3] = px (x, y)[3];
    }
  }
}

}  // namespace

void sobel_output_table_cpu (float scale, int threshold, uint8_t *out)
{
  for (int e = 0; e <= kSobelMaxEnergy; e++)
    out[e] = static_cast<uint8_t> (sobel_output_host (e, scale, threshold));
}

void sobel_reference (const Frame &src, const Frame &dst, const SobelParams &params)
{
  if (layout_is_rgb (src.layout)) {
    sobel_rgb (src, dst, params);
    return;
  }
  if (layout_has_luma_every_other_byte (src.layout)) {
    /* the Y bytes, then the other byte of each pixel: U and V neutral, P010's low bits 0 */
    const int yb = luma_byte (src.layout);
    const Plane &d = dst.planes[0];
    sobel_plane (src.planes[0], d, 2, yb, params.scale, params.threshold);
    for (int y = 0; y < d.height; y++)
      for (int x = 0; x < d.width; x++)
        plane_row (d, y)[2 * x + 1 - yb] = static_cast<uint8_t> (sobel_other_byte (src.layout));
  } else {
    sobel_plane (src.planes[0], dst.planes[0], 1, 0, params.scale, params.threshold);
  }
  for (int p = 1; p < src.n_planes; p++)
    fill_neutral (dst.planes[p], src.layout, p);
}

namespace {

/* One output row (samples 4 bytes apart) of one channel of a 4-byte layout, from the rows above
 * (@t), at (@m) and below (@b), edges replicated (adjacent samples go through sobel_bytes_row ()). */
void sobel_channel_row (const uint8_t *t, const uint8_t *m, const uint8_t *b, uint8_t *d, int w, const SobelOutput &o)
{
  const int n = static_cast<int> (o.table.size ());
  const uint8_t *lookup = o.lookup.data ();
  auto out = [&] (int xl, int x, int xr) {
    d[4 * x] = lookup[std::min (sobel_energy (t[4 * xl], t[4 * x], t[4 * xr], m[4 * xl], m[4 * xr], b[4 * xl], b[4 * x],
        b[4 * xr]), n)];
  };
  if (w == 1) {
    out (0, 0, 0);
    return;
  }
  out (0, 0, 1);
  for (int x = 1; x < w - 1; x++)
    out (x - 1, x, x + 1);
  out (w - 2, w - 1, w - 1);
}

const uint8_t *row_at (const Plane &p, int y)
{
  return p.data + static_cast<size_t> (std::clamp (y, 0, p.height - 1)) * p.pitch;
}

/* The luma of @w pixels of an RGB, YUY2/UYVY or P010 row. */
void luma_row (const uint8_t *px, int w, PixelLayout layout, uint8_t *out)
{
  if (layout_has_luma_every_other_byte (layout)) {
    sobel_luma_row (px, w, luma_byte (layout), out);
    return;
  }
  const bool bgr = layout_is_bgr (layout);
  for (int x = 0; x < w; x++, px += 4)
    out[x] = static_cast<uint8_t> (bgr ? luma_bt601 (px[2], px[1], px[0]) : luma_bt601 (px[0], px[1], px[2]));
}

}  // namespace

SobelOutput sobel_output (float scale, int threshold)
{
  SobelOutput o;
  auto with_lookup = [] (SobelOutput &r) -> SobelOutput & {
    r.lookup = r.table;
    r.lookup.push_back (r.above);
    r.lookup.insert (r.lookup.end (), 3, 0);
    return r;
  };
  if (threshold > 0) {
    const int e = sobel_threshold_energy (scale, threshold);
    o.table.assign (e == 0x7fffffff ? 0 : e, 0);
    o.above = e == 0x7fffffff ? 0 : 255;
    return with_lookup (o);
  }
  /* the energies where the magnitude reaches 1, 2, ... 255 */
  const int full = sobel_threshold_energy (scale, 255);
  o.table.assign (full == 0x7fffffff ? kSobelMaxEnergy + 1 : full, 0);
  int from = sobel_threshold_energy (scale, 1);
  for (int v = 1; v < 255 && from < static_cast<int> (o.table.size ()); v++) {
    const int to = std::min (sobel_threshold_energy (scale, v + 1), static_cast<int> (o.table.size ()));
    std::fill (o.table.begin () + from, o.table.begin () + to, static_cast<uint8_t> (v));
    from = std::max (from, to);
  }
  return with_lookup (o);
}

void sobel_rows_cpu (const Frame &src, const Frame &dst, const SobelParams &params, const SobelOutput &output, int y0,
    int y1)
{
  const Plane &s = src.planes[0], &d = dst.planes[0];
  const int w = s.width;
  /* chroma: neutral, in the rows of the chroma planes these luma rows cover */
  const Frame band = frame_rows (dst, y0, y1);
  for (int p = 1; p < band.n_planes; p++)
    fill_neutral (band.planes[p], src.layout, p);
  if (layout_is_byte_planes (src.layout)) {
    for (int y = y0; y < y1; y++)
      sobel_bytes_row (row_at (s, y - 1), row_at (s, y), row_at (s, y + 1), w, output,
          d.data + static_cast<size_t> (y) * d.pitch);
    return;
  }
  if (params.mode == SobelMode::Color && layout_is_rgb (src.layout)) {
    for (int y = y0; y < y1; y++) {
      uint8_t *o = d.data + static_cast<size_t> (y) * d.pitch;
      const uint8_t *t = row_at (s, y - 1), *m = row_at (s, y), *b = row_at (s, y + 1);
      for (int c = 0; c < 3; c++)
        sobel_channel_row (t + c, m + c, b + c, o + c, w, output);
      for (int x = 0; x < w; x++)
        o[4 * x + 3] = m[4 * x + 3];
    }
    return;
  }
  /* RGB's luma mode, YUY2/UYVY and P010: the luma of three rows, rolled down the band, and the
   * output's gray row */
  const bool packed = layout_has_luma_every_other_byte (src.layout);
  const int yb = luma_byte (src.layout), other = sobel_other_byte (src.layout);
  std::vector<uint8_t> rows (4 * static_cast<size_t> (w));
  uint8_t *l[3] = {rows.data (), rows.data () + w, rows.data () + 2 * w};
  uint8_t *gray = rows.data () + 3 * w;
  luma_row (row_at (s, y0 - 1), w, src.layout, l[0]);
  luma_row (row_at (s, y0), w, src.layout, l[1]);
  for (int y = y0; y < y1; y++) {
    luma_row (row_at (s, y + 1), w, src.layout, l[2]);
    uint8_t *o = d.data + static_cast<size_t> (y) * d.pitch;
    const uint8_t *m = row_at (s, y);
    sobel_bytes_row (l[0], l[1], l[2], w, output, gray);
    if (packed) {
      sobel_wide_row (gray, w, yb, static_cast<uint8_t> (other), o);
    } else {
      for (int x = 0; x < w; x++) {
        o[4 * x] = o[4 * x + 1] = o[4 * x + 2] = gray[x];
        o[4 * x + 3] = m[4 * x + 3];
      }
    }
    std::rotate (l, l + 1, l + 3);
  }
}

void sobel_cpu (const Frame &src, const Frame &dst, const SobelParams &params)
{
  sobel_rows_cpu (src, dst, params, sobel_output (params.scale, params.threshold), 0, src.height);
}

}  // namespace cuv
