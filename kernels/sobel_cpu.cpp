/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sobel.h"

#include <algorithm>
#include <cstring>

#include "sobel_math.h"

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

void sobel_plane (const Plane &s, const Plane &d, float scale, int threshold)
{
  auto fetch = [&] (int x, int y) { return static_cast<int> (s.data[static_cast<size_t> (y) * s.pitch + x]); };
  for (int y = 0; y < s.height; y++)
    for (int x = 0; x < s.width; x++)
      d.data[static_cast<size_t> (y) * d.pitch + x] =
          static_cast<uint8_t> (sobel_at (fetch, x, y, s.width, s.height, scale, threshold));
}

void fill_plane (const Plane &d, int bytes_per_sample, uint8_t value)
{
  for (int y = 0; y < d.height; y++)
    std::memset (d.data + static_cast<size_t> (y) * d.pitch, value, static_cast<size_t> (d.width) * bytes_per_sample);
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

void sobel_cpu (const Frame &src, const Frame &dst, const SobelParams &params)
{
  if (layout_is_rgb (src.layout)) {
    sobel_rgb (src, dst, params);
    return;
  }
  sobel_plane (src.planes[0], dst.planes[0], params.scale, params.threshold);
  for (int p = 1; p < src.n_planes; p++)
    fill_plane (dst.planes[p], plane_sample_bytes (src.layout, p), 128);
}

}  // namespace cuv
