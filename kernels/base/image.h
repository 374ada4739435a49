/* gst-cudavision: image views shared by the CUDA kernels and their CPU references.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * No GStreamer headers here: a view is a plain description of memory (host or device) that both
 * backends index the same way, always through the pitch. */
#pragma once

#include <cstddef>
#include <cstdint>

/* Arithmetic shared by a kernel and its CPU reference is written once, for both compilers. */
#ifdef __CUDACC__
#define CUV_HD __host__ __device__ __forceinline__
#else
#define CUV_HD inline
#endif

namespace cuv {

enum class PixelLayout : int {
  RGBA,
  BGRA,
  RGBx,
  BGRx,
  GRAY8,
  NV12,
  I420,
  YUY2, /* packed 4:2:2, one plane: Y0 U Y1 V */
  UYVY, /* packed 4:2:2, one plane: U Y0 V Y1 */
  P010, /* P010_10LE: NV12 of little-endian 16-bit samples, the 10 bits at the top */
};

/* One plane. width/height count samples of the plane (for NV12's UV plane: pairs), not bytes. */
struct Plane {
  uint8_t *data;
  int pitch;
  int width;
  int height;
};

struct Frame {
  PixelLayout layout;
  int width;
  int height;
  int n_planes;
  Plane planes[3];
};

inline constexpr bool layout_is_rgb (PixelLayout l)
{
  return l == PixelLayout::RGBA || l == PixelLayout::BGRA || l == PixelLayout::RGBx ||
      l == PixelLayout::BGRx;
}

/* YUY2 and UYVY: one plane of two bytes a pixel, each pair of pixels sharing its U and V. */
inline constexpr bool layout_is_packed422 (PixelLayout l)
{
  return l == PixelLayout::YUY2 || l == PixelLayout::UYVY;
}

/* Where a pixel's bytes lie in its pair of a YUY2/UYVY row: its Y at 2 x + luma_byte () (below),
 * the pair's U at 4 (x / 2) + packed422_u_byte and V two bytes after U. */
inline constexpr int packed422_u_byte (PixelLayout l)
{
  return l == PixelLayout::UYVY ? 0 : 1;
}

/* P010: every element reads a sample's top 8 bits, its high byte, so that a P010 frame gives the
 * results of the NV12 frame those bytes make; an 8-bit value v written into it is written as
 * v << 8 (docs/design.md, "10-bit samples"). */
inline constexpr bool layout_is_16bit (PixelLayout l)
{
  return l == PixelLayout::P010;
}

/* Layouts where pixel x's 8-bit luma is the byte at 2 x + luma_byte () of plane 0's row: the Y of
 * YUY2 and UYVY, the high byte of P010's Y sample. */
inline constexpr bool layout_has_luma_every_other_byte (PixelLayout l)
{
  return layout_is_packed422 (l) || layout_is_16bit (l);
}

inline constexpr int luma_byte (PixelLayout l)
{
  return l == PixelLayout::UYVY || l == PixelLayout::P010 ? 1 : 0;
}

/* NV12 and P010: the chroma of a 2x2 group as one interleaved pair in plane 1. */
inline constexpr bool layout_is_semiplanar (PixelLayout l)
{
  return l == PixelLayout::NV12 || l == PixelLayout::P010;
}

/* GRAY8, NV12, I420: planes of one byte a sample, what the CPU backend's byte-wise SIMD paths
 * take (the others go through their definitions there). */
inline constexpr bool layout_is_byte_planes (PixelLayout l)
{
  return l == PixelLayout::GRAY8 || l == PixelLayout::NV12 || l == PixelLayout::I420;
}

/* 4:2:0 layouts: the chroma of each 2x2 group of pixels once. */
inline constexpr bool layout_is_420 (PixelLayout l)
{
  return layout_is_semiplanar (l) || l == PixelLayout::I420;
}

inline constexpr bool layout_is_bgr (PixelLayout l)
{
  return l == PixelLayout::BGRA || l == PixelLayout::BGRx;
}

/* Bytes one sample of plane @p takes (NV12's UV plane: 2, P010's: 4). */
inline constexpr int plane_sample_bytes (PixelLayout l, int p)
{
  return layout_is_rgb (l) ? 4
      : l == PixelLayout::P010 ? 2 + 2 * p
      : layout_is_packed422 (l) || (l == PixelLayout::NV12 && p == 1) ? 2
                                                                       : 1;
}

inline constexpr int layout_n_planes (PixelLayout l)
{
  return layout_is_semiplanar (l) ? 2 : l == PixelLayout::I420 ? 3 : 1;
}

/* The samples of plane 0 in a row: the frame's width, or for YUY2/UYVY its pixels rounded up to
 * whole pairs (an odd width's last pixel still has its pair's U and V, as GStreamer lays it out). */
inline constexpr int plane0_width (PixelLayout l, int width)
{
  return layout_is_packed422 (l) ? (width + 1) / 2 * 2 : width;
}

/* Fills @f for a frame whose planes lie in one block at @base with the given pitches; used for
 * staging buffers and in tests. Chroma of NV12/I420/P010 is subsampled 2x2, rounding up. */
inline Frame make_frame (PixelLayout l, int width, int height, uint8_t *base, const int pitches[3])
{
  Frame f{};
  f.layout = l;
  f.width = width;
  f.height = height;
  f.n_planes = layout_n_planes (l);
  uint8_t *p = base;
  for (int i = 0; i < f.n_planes; i++) {
    int w = i == 0 ? plane0_width (l, width) : (width + 1) / 2;
    int h = i == 0 ? height : (height + 1) / 2;
    f.planes[i] = Plane{p, pitches[i], w, h};
    if (p)
      p += static_cast<size_t> (pitches[i]) * h;
  }
  return f;
}

/* Where row (or column) @v of a frame @extent rows (columns) falls in a plane of @plane_extent. */
inline int plane_index (int v, int plane_extent, int extent)
{
  return static_cast<int> (static_cast<long long> (v) * plane_extent / extent);
}

/* Rows [@y0, @y1) of @f as a frame of their own; each plane keeps the rows that cover them (for
 * 4:2:0 layouts @y0 and @y1 are even, or @y1 is the frame's height). For operations on each pixel
 * alone, run on bands of a frame. */
inline Frame frame_rows (const Frame &f, int y0, int y1)
{
  Frame r = f;
  r.height = y1 - y0;
  for (int p = 0; p < f.n_planes; p++) {
    const Plane &pl = f.planes[p];
    const int p0 = plane_index (y0, pl.height, f.height);
    r.planes[p] = Plane{pl.data + static_cast<ptrdiff_t> (p0) * pl.pitch, pl.pitch, pl.width,
        plane_index (y1, pl.height, f.height) - p0};
  }
  return r;
}

/* Columns [@x0, @x1) of @f as a frame of their own, as frame_rows () takes rows (for 4:2:0
 * layouts @x0 and @x1 are even, or @x1 is the frame's width). */
inline Frame frame_cols (const Frame &f, int x0, int x1)
{
  Frame r = f;
  r.width = x1 - x0;
  for (int p = 0; p < f.n_planes; p++) {
    const Plane &pl = f.planes[p];
    const int p0 = plane_index (x0, pl.width, f.width);
    r.planes[p] = Plane{pl.data + static_cast<ptrdiff_t> (p0) * plane_sample_bytes (f.layout, p), pl.pitch,
        plane_index (x1, pl.width, f.width) - p0, pl.height};
  }
  return r;
}

/* Row @y of plane @p. */
inline uint8_t *plane_row (const Plane &p, int y)
{
  return p.data + static_cast<ptrdiff_t> (y) * p.pitch;
}

/* Bytes of the block make_frame() describes. */
inline size_t frame_bytes (const Frame &f)
{
  size_t n = 0;
  for (int i = 0; i < f.n_planes; i++)
    n += static_cast<size_t> (f.planes[i].pitch) * f.planes[i].height;
  return n;
}

/* Smallest pitch for plane @p, rounded up to @align bytes. */
inline int min_pitch (PixelLayout l, int width, int p, int align)
{
  int w = p == 0 ? plane0_width (l, width) : (width + 1) / 2;
  int bytes = w * plane_sample_bytes (l, p);
  return (bytes + align - 1) / align * align;
}

/* The 8-bit value of the sample at @s of a @l frame: its byte, or P010's high byte (image.h's
 * layout_is_16bit ()). */
CUV_HD int sample8 (PixelLayout l, const uint8_t *s)
{
  return s[layout_is_16bit (l)];
}

/* Writes 8-bit @v as the sample at @s: the byte, or for P010 v << 8. */
CUV_HD void put_sample8 (PixelLayout l, uint8_t *s, int v)
{
  if (layout_is_16bit (l)) {
    s[0] = 0;
    s[1] = static_cast<uint8_t> (v);
  } else {
    s[0] = static_cast<uint8_t> (v);
  }
}

/* A P010 sample, little-endian, at @s. */
CUV_HD uint32_t load_le16 (const uint8_t *s)
{
  return static_cast<uint32_t> (s[0] | s[1] << 8);
}

CUV_HD void store_le16 (uint8_t *s, uint32_t v)
{
  s[0] = static_cast<uint8_t> (v);
  s[1] = static_cast<uint8_t> (v >> 8);
}

/* Pixel (@x, @y)'s sample in plane 0 of GRAY8, NV12, I420 or P010. */
CUV_HD uint8_t *luma_at (const Frame &f, int x, int y)
{
  return f.planes[0].data + static_cast<size_t> (y) * f.planes[0].pitch + static_cast<size_t> (x) * (layout_is_16bit (f.layout) ? 2 : 1);
}

/* The chroma samples of 2x2 group (@cx, @cy) of a 4:2:0 frame (NV12, I420, P010), to be read and
 * written through sample8 () and put_sample8 (). */
struct ChromaAt {
  uint8_t *u;
  uint8_t *v;
};

CUV_HD ChromaAt chroma_at (const Frame &f, int cx, int cy)
{
  if (layout_is_semiplanar (f.layout)) {
    const int bytes = plane_sample_bytes (f.layout, 1);
    uint8_t *uv = f.planes[1].data + static_cast<size_t> (cy) * f.planes[1].pitch + static_cast<size_t> (cx) * bytes;
    return ChromaAt{uv, uv + bytes / 2};
  }
  return ChromaAt{f.planes[1].data + static_cast<size_t> (cy) * f.planes[1].pitch + cx,
      f.planes[2].data + static_cast<size_t> (cy) * f.planes[2].pitch + cx};
}

/* BT.601 luma in integer form, the one every element uses: (77 R + 150 G + 29 B) >> 8. */
inline constexpr int luma_bt601 (int r, int g, int b)
{
  return (77 * r + 150 * g + 29 * b) >> 8;
}

}  // namespace cuv
