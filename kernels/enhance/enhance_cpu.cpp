/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernels/enhance/enhance.h"

#include <cmath>

#include "kernels/enhance/enhance_math.h"

namespace cuv {

void enhance_build_tables (const EnhanceParams &p, EnhanceTables *t)
{
  /* Same expressions, order and rounding (rint of a double) as videobalance. */
  for (int i = 0; i < 256; i++) {
    double y = 16 + ((i - 16) * p.contrast + p.brightness * 255);
    y = y < 0 ? 0 : y > 255 ? 255 : y;
    t->y[i] = static_cast<uint8_t> (std::rint (y));
  }
  for (int i = 0; i < 1024; i++) {
    double y = 64 + ((i - 64) * p.contrast + p.brightness * 1023);
    y = y < 0 ? 0 : y > 1023 ? 1023 : y;
    t->y10[i] = static_cast<uint16_t> (std::rint (y));
  }
  const double hue_cos = std::cos (M_PI * p.hue);
  const double hue_sin = std::sin (M_PI * p.hue);
  t->hue_cos16 = static_cast<int32_t> (std::lrint (hue_cos * p.saturation * 65536));
  t->hue_sin16 = static_cast<int32_t> (std::lrint (hue_sin * p.saturation * 65536));
  for (int i = -128; i < 128; i++) {
    for (int j = -128; j < 128; j++) {
      double u = 128 + ((i * hue_cos + j * hue_sin) * p.saturation);
      double v = 128 + ((-i * hue_sin + j * hue_cos) * p.saturation);
      u = u < 0 ? 0 : u > 255 ? 255 : u;
      v = v < 0 ? 0 : v > 255 ? 255 : v;
      t->uv[(i + 128) * 256 + (j + 128)] =
          static_cast<uint16_t> (static_cast<unsigned> (std::rint (u)) | static_cast<unsigned> (std::rint (v)) << 8);
    }
  }
  /* whether the pair table is one byte table for U and V alike, checked entry by entry */
  for (int k = 0; k < 256; k++)
    t->c[k] = static_cast<uint8_t> (t->uv[k * 256 + 128] & 0xff);
  t->chroma_by_byte = true;
  for (int u = 0; u < 256 && t->chroma_by_byte; u++)
    for (int v = 0; v < 256; v++)
      if (t->uv[u * 256 + v] != (t->c[u] | t->c[v] << 8)) {
        t->chroma_by_byte = false;
        break;
      }
}

void enhance_reference (const Frame &src, const Frame &dst, const EnhanceTables &t)
{
  if (layout_is_rgb (src.layout)) {
    const bool bgr = layout_is_bgr (src.layout);
    const Plane &s = src.planes[0];
    const Plane &d = dst.planes[0];
    for (int y = 0; y < s.height; y++) {
      const uint8_t *in = s.data + static_cast<size_t> (y) * s.pitch;
      uint8_t *out = d.data + static_cast<size_t> (y) * d.pitch;
      for (int x = 0; x < s.width; x++, in += 4, out += 4) {
        int r = in[bgr ? 2 : 0], g = in[1], b = in[bgr ? 0 : 2];
        uint32_t rgb = enhance_rgb (r, g, b, t.y, t.uv);
        uint8_t a = in[3];
        out[bgr ? 2 : 0] = rgb & 0xff;
        out[1] = (rgb >> 8) & 0xff;
        out[bgr ? 0 : 2] = (rgb >> 16) & 0xff;
        out[3] = a;
      }
    }
    return;
  }

  if (layout_is_16bit (src.layout)) {
    /* 16-bit little-endian samples: luma through tabley10, each chroma pair through the 10-bit
     * arithmetic */
    for (int y = 0; y < src.height; y++)
      for (int x = 0; x < src.width; x++)
        store_le16 (luma_at (dst, x, y), enhance_luma10 (t.y10, load_le16 (luma_at (src, x, y))));
    for (int y = 0; y < src.planes[1].height; y++) {
      for (int x = 0; x < src.planes[1].width; x++) {
        const ChromaAt in = chroma_at (src, x, y), out = chroma_at (dst, x, y);
        const uint32_t uv = enhance_chroma10 (t.hue_cos16, t.hue_sin16, load_le16 (in.u), load_le16 (in.v));
        store_le16 (out.u, uv & 0xffff);
        store_le16 (out.v, uv >> 16);
      }
    }
    return;
  }
  /* rows and tables through local pointers: a byte store may alias anything, so fields read
   * through the frames would be read again after every store */
  const uint8_t *ylut = t.y;
  const uint16_t *uvlut = t.uv;
  if (layout_is_packed422 (src.layout)) {
    /* pairs of pixels, whole in the plane's width: the Y bytes through tabley, U and V through
     * tableuv */
    const int yb = luma_byte (src.layout), ub = packed422_u_byte (src.layout);
    const Plane &s = src.planes[0], &d = dst.planes[0];
    for (int y = 0; y < s.height; y++) {
      const uint8_t *in = plane_row (s, y);
      uint8_t *out = plane_row (d, y);
      for (int x = 0, n = s.width / 2; x < n; x++, in += 4, out += 4) {
        const uint16_t uv = uvlut[in[ub] * 256 + in[ub + 2]];
        const uint8_t y0 = ylut[in[yb]], y1 = ylut[in[yb + 2]];
        out[yb] = y0;
        out[yb + 2] = y1;
        out[ub] = uv & 0xff;
        out[ub + 2] = uv >> 8;
      }
    }
    return;
  }
  const Plane &sy = src.planes[0];
  const Plane &dy = dst.planes[0];
  for (int y = 0; y < sy.height; y++) {
    const uint8_t *in = sy.data + static_cast<size_t> (y) * sy.pitch;
    uint8_t *out = dy.data + static_cast<size_t> (y) * dy.pitch;
    for (int x = 0, n = sy.width; x < n; x++)
      out[x] = ylut[in[x]];
  }

  if (src.layout == PixelLayout::NV12) {
    const Plane &s = src.planes[1];
    const Plane &d = dst.planes[1];
    for (int y = 0; y < s.height; y++) {
      const uint8_t *in = s.data + static_cast<size_t> (y) * s.pitch;
      uint8_t *out = d.data + static_cast<size_t> (y) * d.pitch;
      for (int x = 0, n = s.width; x < n; x++) {
        const uint16_t uv = uvlut[in[2 * x] * 256 + in[2 * x + 1]];
        out[2 * x] = uv & 0xff;
        out[2 * x + 1] = uv >> 8;
      }
    }
  } else {
    const Plane &su = src.planes[1], &sv = src.planes[2];
    const Plane &du = dst.planes[1], &dv = dst.planes[2];
    for (int y = 0; y < su.height; y++) {
      const uint8_t *u_in = su.data + static_cast<size_t> (y) * su.pitch, *v_in = sv.data + static_cast<size_t> (y) * sv.pitch;
      uint8_t *u_out = du.data + static_cast<size_t> (y) * du.pitch, *v_out = dv.data + static_cast<size_t> (y) * dv.pitch;
      for (int x = 0, n = su.width; x < n; x++) {
        const uint16_t uv = uvlut[u_in[x] * 256 + v_in[x]];
        u_out[x] = uv & 0xff;
        v_out[x] = uv >> 8;
      }
    }
  }
}

}  // namespace cuv
