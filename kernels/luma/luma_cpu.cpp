/* gst-cudavision: the CPU reference of luma_plane (luma.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernels/luma/luma.h"

#include <cstring>

namespace cuv {

void luma_plane_cpu (const Frame &in, const Plane &out)
{
  const Plane &src = in.planes[0];
  const bool bgr = layout_is_bgr (in.layout);
  for (int y = 0; y < in.height; y++) {
    const uint8_t *s = src.data + static_cast<size_t> (y) * src.pitch;
    uint8_t *d = out.data + static_cast<size_t> (y) * out.pitch;
    if (layout_has_luma_every_other_byte (in.layout)) {
      for (int x = 0; x < in.width; x++)
        d[x] = s[2 * x + luma_byte (in.layout)];
      continue;
    }
    if (!layout_is_rgb (in.layout)) {
      std::memcpy (d, s, static_cast<size_t> (in.width));
      continue;
    }
    for (int x = 0; x < in.width; x++, s += 4)
      d[x] = static_cast<uint8_t> (bgr ? luma_bt601 (s[2], s[1], s[0]) : luma_bt601 (s[0], s[1], s[2]));
  }
}

}  // namespace cuv
