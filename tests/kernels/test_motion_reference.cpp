/* The motion search, luma and drawing CPU references against what the test computes directly:
 * the tie-break order, the grid of whole blocks, known shifts up to the window's edges for every
 * block mode, static scenes, a brute-force search with its own comparisons, the partition choice,
 * luma of every layout, the colour wheel and the arrows' pixels, and the messages' statistics
 * (votes, tally, mean length, global vector) against a count of the vectors themselves.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <tuple>

#include <hwy/targets.h>

#include "tests/common/cuvmotion.h"
#include "kernels/difference/difference.h"
#include "kernels/luma/luma.h"
#include "kernels/motion/motion_draw.h"

using namespace cuvtest;

namespace {

void test_tie_break (Checker &c)
{
  std::vector<std::pair<uint32_t, std::tuple<int, int, int>>> all;
  bool decodes = true;
  for (int dy = -64; dy < 64; dy++) {
    for (int dx = -64; dx < 64; dx++) {
      const uint32_t tb = cuv::motion_tie_break (dx, dy);
      all.push_back ({tb, {std::abs (dx) + std::abs (dy), dy, dx}});
      int x, y;
      cuv::motion_key_vector (cuv::motion_key (4080, tb), &x, &y);
      decodes = decodes && x == dx && y == dy && (cuv::motion_key (4080, tb) >> 16) == 4080;
    }
  }
  std::sort (all.begin (), all.end ());
  bool ordered = true;
  for (size_t i = 1; i < all.size (); i++)
    ordered = ordered && all[i - 1].first < all[i].first && all[i - 1].second < all[i].second;
  c.expect (ordered, "tie-break: keys order candidates by |dx| + |dy|, then dy, then dx, all distinct");
  c.expect (decodes, "tie-break: every key decodes to its vector and SAD");
}

void test_grid (Checker &c)
{
  const struct {
    cuv::MotionBlock b;
    int w, h, cols, rows, unit;
  } cases[] = {
      {cuv::MotionBlock::Variable, 1, 1, 0, 0, 4}, {cuv::MotionBlock::Variable, 7, 100, 0, 24, 4},
      {cuv::MotionBlock::Variable, 17, 13, 4, 2, 4}, {cuv::MotionBlock::Variable, 1920, 1080, 480, 270, 4},
      {cuv::MotionBlock::B4, 3, 3, 0, 0, 4}, {cuv::MotionBlock::B4, 17, 13, 4, 3, 4},
      {cuv::MotionBlock::B8, 641, 479, 80, 59, 8}, {cuv::MotionBlock::B16, 1920, 1080, 120, 67, 16},
      {cuv::MotionBlock::B16, 15, 64, 0, 4, 16},
  };
  for (const auto &k : cases) {
    const cuv::MotionGrid g = cuv::motion_grid (k.b, k.w, k.h);
    c.expect (g.cols == k.cols && g.rows == k.rows && g.unit == k.unit,
        std::string ("grid: ") + block_name (k.b) + " " + std::to_string (k.w) + "x" + std::to_string (k.h) + " gives " +
            std::to_string (g.cols) + "x" + std::to_string (g.rows));
  }
}

using SearchFn = void (*) (const cuv::Plane &, const cuv::Plane &, const cuv::MotionParams &, cuv::MotionVector *);

/* The plain definition unless the test names the fast search. */
std::vector<cuv::MotionVector> search (const LumaImage &cur, const LumaImage &prev, cuv::MotionBlock b, int range,
    int penalty = 16, SearchFn fn = cuv::motion_search_reference)
{
  const cuv::MotionGrid g = cuv::motion_grid (b, cur.plane.width, cur.plane.height);
  std::vector<cuv::MotionVector> v (g.count ());
  fn (cur.plane, prev.plane, cuv::MotionParams{b, range, penalty}, v.data ());
  return v;
}

bool same_vectors (const std::vector<cuv::MotionVector> &a, const std::vector<cuv::MotionVector> &b)
{
  return a.size () == b.size () && (a.empty () || std::memcmp (a.data (), b.data (), a.size () * sizeof (a[0])) == 0);
}

/* The fast search (every SIMD target this CPU runs, as Highway dispatches them) gives the plain
 * definition's vectors and costs: noisy related and unrelated content, a still frame with a few
 * pixels changed (blocks equal to the reference, where the search may stop, beside blocks that
 * are not), odd sizes and pitches, every block mode, ranges from 1 to the largest, in one call and
 * in bands of block rows. */
void test_fast_equals_definition (Checker &c)
{
  const struct {
    int w, h, pad;
  } sizes[] = {{1, 1, 0}, {3, 9, 1}, {8, 8, 0}, {17, 13, 3}, {40, 24, 0}, {67, 45, 5}, {96, 64, 32}, {130, 70, 7}};
  for (int64_t target : hwy::SupportedAndGeneratedTargets ()) {
    hwy::SetSupportedTargetsForTest (target);
    int wrong = 0, cases = 0;
    for (const auto &sz : sizes) {
      for (bool still : {false, true}) {
        LumaImage prev (sz.w, sz.h, sz.pad, 1), cur (sz.w, sz.h, sz.pad + 2, 3);
        fill_texture (prev, 17 + sz.w);
        fill_shifted (cur, prev, still ? 0 : 2, still ? 0 : -1);
        std::mt19937 rng (sz.w * 31 + sz.h);
        for (int y = 0; y < sz.h; y++)
          for (int x = 0; x < sz.w; x++)
            if (rng () % (still ? 50 : 3) == 0)
              cur.at (x, y) = static_cast<uint8_t> (rng ());
        for (cuv::MotionBlock b : kBlocks) {
          for (int range : {1, 2, 5, 16, 33, cuv::kMotionMaxRange}) {
            if (range > 16 && sz.w > 70)
              continue; /* the definition's time grows with R squared */
            const int penalty = range * 3 % 50;
            const std::vector<cuv::MotionVector> want = search (cur, prev, b, range, penalty);
            cases++;
            wrong += !same_vectors (search (cur, prev, b, range, penalty, cuv::motion_search_cpu), want);
            /* in bands of one and of three block rows, as threads run it */
            const cuv::MotionParams params{b, range, penalty};
            cuv::MotionReference ref;
            cuv::motion_prepare_reference (prev.plane, range, &ref);
            const int rows = cuv::motion_search_block_rows (b, sz.h);
            for (int band : {1, 3}) {
              std::vector<cuv::MotionVector> got (want.size ());
              for (int r = 0; r < rows; r += band)
                cuv::motion_search_rows_cpu (cur.plane, ref, params, got.data (), r, std::min (rows, r + band));
              cases++;
              wrong += !same_vectors (got, want);
            }
          }
        }
      }
    }
    std::printf ("fast search %s: %d searches\n", hwy::TargetName (target), cases);
    c.expect (wrong == 0, std::string ("fast search (") + hwy::TargetName (target) + ") equals the definition: " +
        std::to_string (wrong) + " of " + std::to_string (cases) + " searches differ");
  }
  hwy::SetSupportedTargetsForTest (0);
}

/* Variable blocks where the partitioning is close to a tie: each macroblock's 4x4 blocks come from
 * the previous frame at one shift, at two (top and bottom or left and right) or at four, under
 * noise from none to all of the pixels (unrelated noise: the 4x4 blocks win by far), over penalties
 * on both sides of where the choice turns; the fast search (every target) gives the definition's
 * vectors, also where it bounds the larger blocks instead of searching them (after a macroblock of
 * 4x4 blocks). */
void test_variable_near_ties (Checker &c)
{
  const int w = 96, h = 64;
  LumaImage prev (w, h), cur (w, h);
  fill_texture (prev, 4242);
  std::mt19937 rng (77);
  for (int my = 0; my < h / 8; my++) {
    const unsigned noise = my * 37 % 101; /* percent of pixels */
    for (int mx = 0; mx < w / 8; mx++) {
      int shift[4][2];
      const int pattern = static_cast<int> (rng () % 4);
      for (int q = 0; q < 4; q++) {
        const int from = pattern == 0 ? 0 : pattern == 1 ? (q & 2) : pattern == 2 ? (q & 1) : q;
        if (from == q) {
          shift[q][0] = static_cast<int> (rng () % 9) - 4;
          shift[q][1] = static_cast<int> (rng () % 9) - 4;
        } else {
          shift[q][0] = shift[from][0];
          shift[q][1] = shift[from][1];
        }
      }
      for (int y = 0; y < 8; y++) {
        for (int x = 0; x < 8; x++) {
          const int q = (y / 4) * 2 + x / 4, px = mx * 8 + x, py = my * 8 + y;
          cur.at (px, py) = rng () % 100 < noise ? static_cast<uint8_t> (rng ())
                                                  : prev.at (std::clamp (px + shift[q][0], 0, w - 1),
                                                        std::clamp (py + shift[q][1], 0, h - 1));
        }
      }
    }
  }
  int wrong = 0, cases = 0, quarters = 0;
  for (int range : {5, 16}) {
    for (int penalty = 0; penalty <= 400; penalty += penalty < 64 ? 4 : 48) {
      const std::vector<cuv::MotionVector> want = search (cur, prev, cuv::MotionBlock::Variable, range, penalty);
      for (const cuv::MotionVector &v : want)
        quarters += v.width == 4 && v.height == 4;
      for (int64_t target : hwy::SupportedAndGeneratedTargets ()) {
        hwy::SetSupportedTargetsForTest (target);
        cases++;
        wrong += !same_vectors (search (cur, prev, cuv::MotionBlock::Variable, range, penalty, cuv::motion_search_cpu), want);
      }
      hwy::SetSupportedTargetsForTest (0);
    }
  }
  std::printf ("variable blocks near ties: %d searches, %d of the definition's units 4x4\n", cases, quarters);
  c.expect (wrong == 0, "variable blocks near ties: the fast search equals the definition: " + std::to_string (wrong) +
      " of " + std::to_string (cases) + " searches differ");
}

/* Every block whose content lies inside the previous frame finds the shift at SAD 0. */
void test_shift (Checker &c, cuv::MotionBlock b, int range, int w, int h, int dx, int dy)
{
  LumaImage prev (w, h), cur (w, h);
  fill_texture (prev, 1000 + w + range);
  fill_shifted (cur, prev, dx, dy);
  const std::vector<cuv::MotionVector> v = search (cur, prev, b, range);
  const cuv::MotionGrid g = cuv::motion_grid (b, w, h);
  const int s = cuv::motion_search_size (b);
  int checked = 0, wrong = 0;
  for (int uy = 0; uy < g.rows; uy++) {
    for (int ux = 0; ux < g.cols; ux++) {
      const int bx = ux * g.unit / s * s, by = uy * g.unit / s * s;
      if (!block_inside (prev.plane, bx, by, s, dx, dy))
        continue;
      checked++;
      const cuv::MotionVector &m = v[uy * g.cols + ux];
      wrong += !(m.dx == dx && m.dy == dy && m.cost == 0 && m.width == s && m.height == s);
    }
  }
  const std::string name = std::string ("shift ") + block_name (b) + " R=" + std::to_string (range) + " (" +
      std::to_string (dx) + "," + std::to_string (dy) + ") " + std::to_string (w) + "x" + std::to_string (h);
  c.expect (checked > 0 && wrong == 0,
      name + ": " + std::to_string (wrong) + " of " + std::to_string (checked) + " interior blocks wrong");
}

void test_static (Checker &c, cuv::MotionBlock b)
{
  LumaImage prev (45, 37);
  fill_texture (prev, 7);
  bool ok = true;
  for (const cuv::MotionVector &m : search (prev, prev, b, 16))
    ok = ok && m.dx == 0 && m.dy == 0 && m.cost == 0 && m.width == cuv::motion_search_size (b);
  /* flat: every candidate has SAD 0, the tie-break picks (0, 0) */
  LumaImage flat (40, 24);
  std::fill (flat.storage.begin (), flat.storage.end (), 90);
  for (const cuv::MotionVector &m : search (flat, flat, b, 5))
    ok = ok && m.dx == 0 && m.dy == 0 && m.cost == 0;
  c.expect (ok, std::string ("static ") + block_name (b) + ": every vector is (0, 0) at cost 0");
}

/* The brute force of the test: SADs computed here, best by comparing (SAD, |dx| + |dy|, dy, dx). */
using Best = std::tuple<uint32_t, int, int, int>;

uint32_t direct_sad (const LumaImage &cur, const LumaImage &prev, int x, int y, int bw, int bh, int dx, int dy)
{
  uint32_t s = 0;
  for (int j = 0; j < bh; j++)
    for (int i = 0; i < bw; i++)
      s += std::abs (cur.at (x + i, y + j) - prev.at (std::clamp (x + i + dx, 0, prev.plane.width - 1),
                                                   std::clamp (y + j + dy, 0, prev.plane.height - 1)));
  return s;
}

Best direct_best (const LumaImage &cur, const LumaImage &prev, int x, int y, int bw, int bh, int range)
{
  Best best{UINT32_MAX, 0, 0, 0};
  for (int dy = -range; dy < range; dy++)
    for (int dx = -range; dx < range; dx++)
      best = std::min (best, Best{direct_sad (cur, prev, x, y, bw, bh, dx, dy), std::abs (dx) + std::abs (dy), dy, dx});
  return best;
}

bool matches (const cuv::MotionVector &m, const Best &b, int w, int h)
{
  return m.cost == std::get<0> (b) && m.dy == std::get<2> (b) && m.dx == std::get<3> (b) && m.width == w && m.height == h;
}

void test_direct (Checker &c, int w, int h, int range, int penalty, bool unrelated)
{
  LumaImage prev (w, h, 5, 1), cur (w, h, 0, 3);
  fill_texture (prev, 11 + w);
  /* similar content with noise, so that SADs are small but not zero and partitions vary */
  fill_shifted (cur, prev, 1, -1);
  if (unrelated) /* no true vector: the partitions vary most */
    fill_texture (cur, 5 + h);
  std::mt19937 rng (w * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      if (rng () % 4 == 0)
        cur.at (x, y) = static_cast<uint8_t> (rng ());
  const std::string name =
      "direct " + std::to_string (w) + "x" + std::to_string (h) + " R=" + std::to_string (range) + " penalty " +
      std::to_string (penalty);
  for (cuv::MotionBlock b : {cuv::MotionBlock::B4, cuv::MotionBlock::B8, cuv::MotionBlock::B16}) {
    const std::vector<cuv::MotionVector> v = search (cur, prev, b, range, penalty);
    const cuv::MotionGrid g = cuv::motion_grid (b, w, h);
    int wrong = 0;
    for (int uy = 0; uy < g.rows; uy++)
      for (int ux = 0; ux < g.cols; ux++)
        wrong += !matches (v[uy * g.cols + ux], direct_best (cur, prev, ux * g.unit, uy * g.unit, g.unit, g.unit, range),
            g.unit, g.unit);
    c.expect (wrong == 0 && g.count () > 0, name + " " + block_name (b) + ": " + std::to_string (wrong) + " blocks differ");
  }
  /* variable: nine partition blocks per macroblock, then the cheapest partitioning */
  const std::vector<cuv::MotionVector> v = search (cur, prev, cuv::MotionBlock::Variable, range, penalty);
  const cuv::MotionGrid g = cuv::motion_grid (cuv::MotionBlock::Variable, w, h);
  int wrong = 0, kinds[4] = {0, 0, 0, 0};
  for (int my = 0; my < g.rows / 2; my++) {
    for (int mx = 0; mx < g.cols / 2; mx++) {
      const int x = mx * 8, y = my * 8;
      const Best b88 = direct_best (cur, prev, x, y, 8, 8, range);
      const Best b84[2] = {direct_best (cur, prev, x, y, 8, 4, range), direct_best (cur, prev, x, y + 4, 8, 4, range)};
      const Best b48[2] = {direct_best (cur, prev, x, y, 4, 8, range), direct_best (cur, prev, x + 4, y, 4, 8, range)};
      Best b4[4];
      for (int i = 0; i < 4; i++)
        b4[i] = direct_best (cur, prev, x + (i & 1) * 4, y + (i >> 1) * 4, 4, 4, range);
      const uint32_t p = static_cast<uint32_t> (penalty);
      const uint32_t costs[4] = {std::get<0> (b88), std::get<0> (b84[0]) + std::get<0> (b84[1]) + p,
          std::get<0> (b48[0]) + std::get<0> (b48[1]) + p,
          std::get<0> (b4[0]) + std::get<0> (b4[1]) + std::get<0> (b4[2]) + std::get<0> (b4[3]) + 3 * p};
      const int kind = static_cast<int> (std::min_element (costs, costs + 4) - costs);
      kinds[kind]++;
      for (int i = 0; i < 4; i++) {
        const cuv::MotionVector &m = v[(my * 2 + (i >> 1)) * g.cols + mx * 2 + (i & 1)];
        const bool ok = kind == 0 ? matches (m, b88, 8, 8)
            : kind == 1           ? matches (m, b84[i >> 1], 8, 4)
            : kind == 2           ? matches (m, b48[i & 1], 4, 8)
                                  : matches (m, b4[i], 4, 4);
        wrong += !ok;
      }
    }
  }
  c.expect (wrong == 0 && g.count () > 0, name + " variable: " + std::to_string (wrong) + " units differ");
  std::printf ("%s: partitions 8x8 %d, 8x4 %d, 4x8 %d, 4x4 %d\n", name.c_str (), kinds[0], kinds[1], kinds[2], kinds[3]);
}

/* Macroblocks whose halves or quarters move apart choose the partition that follows them. */
void test_partitions (Checker &c)
{
  const int w = 64, h = 48, range = 8;
  LumaImage prev (w, h);
  fill_texture (prev, 99);
  const struct {
    const char *name;
    int w, h; /* the expected partition */
    int v[4][2]; /* the shift of each quarter: top-left, top-right, bottom-left, bottom-right */
  } cases[] = {
      {"8x8", 8, 8, {{2, 1}, {2, 1}, {2, 1}, {2, 1}}},
      {"8x4", 8, 4, {{2, 0}, {2, 0}, {-3, 1}, {-3, 1}}},
      {"4x8", 4, 8, {{0, -2}, {4, 3}, {0, -2}, {4, 3}}},
      {"4x4", 4, 4, {{1, 1}, {-1, 2}, {3, -4}, {0, 5}}},
  };
  for (const auto &k : cases) {
    LumaImage cur (w, h);
    for (int y = 0; y < h; y++) {
      for (int x = 0; x < w; x++) {
        const int *s = k.v[(y % 8 >= 4) * 2 + (x % 8 >= 4)];
        cur.at (x, y) = prev.at (std::clamp (x + s[0], 0, w - 1), std::clamp (y + s[1], 0, h - 1));
      }
    }
    const std::vector<cuv::MotionVector> v = search (cur, prev, cuv::MotionBlock::Variable, range, 16);
    const cuv::MotionGrid g = cuv::motion_grid (cuv::MotionBlock::Variable, w, h);
    int wrong = 0, checked = 0;
    for (int uy = 2; uy < g.rows - 2; uy++) {
      for (int ux = 2; ux < g.cols - 2; ux++) {
        const cuv::MotionVector &m = v[uy * g.cols + ux];
        const int *s = k.v[(uy & 1) * 2 + (ux & 1)];
        checked++;
        wrong += !(m.dx == s[0] && m.dy == s[1] && m.cost == 0 && m.width == k.w && m.height == k.h);
      }
    }
    c.expect (checked > 0 && wrong == 0,
        std::string ("partition ") + k.name + ": " + std::to_string (wrong) + " interior units wrong");
    /* a penalty larger than any SAD forces one vector per macroblock */
    bool one = true;
    for (const cuv::MotionVector &m : search (cur, prev, cuv::MotionBlock::Variable, range, 1 << 20))
      one = one && m.width == 8 && m.height == 8;
    c.expect (one, std::string ("partition ") + k.name + ": a huge penalty keeps 8x8");
  }
}

void test_luma (Checker &c)
{
  for (cuv::PixelLayout l : {cuv::PixelLayout::RGBA, cuv::PixelLayout::BGRA, cuv::PixelLayout::RGBx,
           cuv::PixelLayout::BGRx, cuv::PixelLayout::GRAY8, cuv::PixelLayout::NV12, cuv::PixelLayout::I420,
           cuv::PixelLayout::YUY2, cuv::PixelLayout::UYVY, cuv::PixelLayout::P010}) {
    for (Size s : sizes (false)) {
      HostImage in (l, s.w, s.h, 3, 1);
      fill_pattern (in.storage, s.w + s.h);
      LumaImage out (s.w, s.h, 7);
      cuv::luma_plane_cpu (in.frame, out.plane);
      int wrong = 0;
      const cuv::Plane &p = in.frame.planes[0];
      for (int y = 0; y < s.h; y++) {
        for (int x = 0; x < s.w; x++) {
          const uint8_t *px = p.data + static_cast<size_t> (y) * p.pitch + x * cuv::plane_sample_bytes (l, 0);
          /* UYVY's Y after U, P010's top 8 bits in its sample's high byte */
          int want = px[l == cuv::PixelLayout::UYVY || l == cuv::PixelLayout::P010 ? 1 : 0];
          if (cuv::layout_is_rgb (l))
            want = cuv::layout_is_bgr (l) ? (77 * px[2] + 150 * px[1] + 29 * px[0]) >> 8
                                          : (77 * px[0] + 150 * px[1] + 29 * px[2]) >> 8;
          wrong += out.at (x, y) != want;
        }
      }
      c.expect (wrong == 0, std::string ("luma ") + layout_name (l) + " " + std::to_string (s.w) + "x" +
              std::to_string (s.h) + ": " + std::to_string (wrong) + " pixels wrong");
    }
  }
}

uint32_t px_at (const cuv::Frame &f, int x, int y)
{
  return cuv::load_le32 (f.planes[0].data + static_cast<size_t> (y) * f.planes[0].pitch + x * 4);
}

/* motion_put_pixel on YUY2 and UYVY, byte by byte: Y of the pixel, U and V of its pair, nothing
 * else; an odd width's last pixel has its pair's chroma inside the row. */
void test_put_pixel_422 (Checker &c)
{
  for (cuv::PixelLayout l : {cuv::PixelLayout::YUY2, cuv::PixelLayout::UYVY}) {
    HostImage img (l, 5, 2, 0);
    std::fill (img.storage.begin (), img.storage.end (), 0);
    cuv::motion_put_pixel (img.frame, 2, 1, 0x332211);
    cuv::motion_put_pixel (img.frame, 3, 1, 0x665544);
    cuv::motion_put_pixel (img.frame, 4, 0, 0x998877);
    cuv::motion_put_pixel (img.frame, 5, 0, 0xffffff); /* outside: skipped */
    const bool uyvy = l == cuv::PixelLayout::UYVY;
    std::vector<uint8_t> want (img.storage.size (), 0);
    const int pitch = img.frame.planes[0].pitch;
    const uint8_t pair1[4] = {0x11, 0x55, 0x44, 0x66}, pair1_uyvy[4] = {0x55, 0x11, 0x66, 0x44};
    const uint8_t pair2[4] = {0x77, 0x88, 0x00, 0x99}, pair2_uyvy[4] = {0x88, 0x77, 0x99, 0x00};
    for (int i = 0; i < 4; i++) {
      want[pitch + 4 + i] = uyvy ? pair1_uyvy[i] : pair1[i];
      want[8 + i] = uyvy ? pair2_uyvy[i] : pair2[i];
    }
    c.expect (pitch == 12 && img.storage == want,
        std::string ("put_pixel ") + layout_name (l) + ": Y at the pixel, U and V of its pair, nothing else");
  }
}

/* motion_put_pixel on P010: the pixel's Y sample and its group's U and V samples as v << 8, nothing
 * else. */
void test_put_pixel_p010 (Checker &c)
{
  HostImage img (cuv::PixelLayout::P010, 5, 3, 2);
  std::fill (img.storage.begin (), img.storage.end (), 0xaa);
  const std::vector<uint8_t> before = img.storage;
  cuv::motion_put_pixel (img.frame, 3, 2, 0x332211);
  cuv::motion_put_pixel (img.frame, 5, 0, 0xffffff); /* outside: skipped */
  std::vector<uint8_t> want = before;
  const int pitch0 = img.frame.planes[0].pitch, pitch1 = img.frame.planes[1].pitch;
  const size_t y_at = static_cast<size_t> (2) * pitch0 + 2 * 3, uv_at = static_cast<size_t> (3) * pitch0 + pitch1 + 4 * 1;
  want[y_at] = 0, want[y_at + 1] = 0x11;
  want[uv_at] = 0, want[uv_at + 1] = 0x22, want[uv_at + 2] = 0, want[uv_at + 3] = 0x33;
  c.expect (img.storage == want, "put_pixel P010: the Y sample, and the U and V samples of its group, as v << 8");
}

void test_wheel (Checker &c)
{
  const int r = 8;
  const std::vector<uint32_t> t = cuv::motion_color_table (r, cuv::PixelLayout::RGBA, 0.299, 0.114, false);
  auto at = [&] (int dx, int dy) { return t[(dy + r) * 2 * r + dx + r]; };
  c.expect (at (0, 0) == 0xff000000u, "wheel: no motion is black");
  c.expect (at (-r, 0) == 0xff0000ffu, "wheel: moving right at full range is red");
  const uint32_t dim = static_cast<uint32_t> (std::lround (255.0 * (r - 1) / r));
  c.expect (at (r - 1, 0) == (0xff000000u | dim << 16 | dim << 8), "wheel: moving left is cyan, at (R-1)/R brightness");
  c.expect (at (0, -r) == (0xff000000u | 128 | 255 << 8), "wheel: moving down is chartreuse (hue 90)");
  const std::vector<uint32_t> tb = cuv::motion_color_table (r, cuv::PixelLayout::BGRA, 0.299, 0.114, false);
  c.expect (tb[r * 2 * r + 0] == 0xffff0000u, "wheel: BGRA packs red as B, G, R");
  const std::vector<uint32_t> ty = cuv::motion_color_table (r, cuv::PixelLayout::NV12, 0.299, 0.114, false);
  c.expect (ty[r * 2 * r + r] == (16u | 128u << 8 | 128u << 16), "wheel: limited-range black is Y 16, U = V = 128");

  /* a frame: each pixel of the grid has its unit's colour, the partial edge is black */
  HostImage img (cuv::PixelLayout::RGBA, 21, 10, 4);
  const cuv::MotionGrid g = cuv::motion_grid (cuv::MotionBlock::B4, 21, 10);
  std::vector<cuv::MotionVector> v (g.count ());
  for (int i = 0; i < g.count (); i++)
    v[i] = cuv::MotionVector{static_cast<int8_t> (i % 16 - 8), static_cast<int8_t> (i % 5 - 2), 4, 4, 0};
  cuv::motion_wheel_cpu (v.data (), g, t.data (), r, 0xff000000u, img.frame);
  int wrong = 0;
  for (int y = 0; y < 10; y++) {
    for (int x = 0; x < 21; x++) {
      const bool in = x < g.cols * 4 && y < g.rows * 4;
      const cuv::MotionVector &m = v[in ? (y / 4) * g.cols + x / 4 : 0];
      wrong += px_at (img.frame, x, y) != (in ? at (m.dx, m.dy) : 0xff000000u);
    }
  }
  c.expect (wrong == 0, "wheel: every pixel has its unit's colour, black outside the grid");
}

void test_arrows (Checker &c)
{
  const int w = 40, h = 32;
  HostImage img (cuv::PixelLayout::RGBx, w, h, 0);
  std::fill (img.storage.begin (), img.storage.end (), 7);
  const cuv::MotionGrid g = cuv::motion_grid (cuv::MotionBlock::Variable, w, h);
  std::vector<cuv::MotionVector> v (g.count (), cuv::MotionVector{0, 0, 8, 8, 0});
  /* the macroblock at (16, 8) is an 8x4 pair: the top half came from (+3, -1), the bottom is still */
  const int ux = 4, uy = 2;
  for (int i = 0; i < 2; i++) {
    v[uy * g.cols + ux + i] = cuv::MotionVector{3, -1, 8, 4, 5};
    v[(uy + 1) * g.cols + ux + i] = cuv::MotionVector{0, 0, 8, 4, 0};
  }
  const cuv::ArrowColors colors{0xff00ff00u, 0xff0000ffu};
  cuv::motion_arrows_cpu (v.data (), g, colors, img.frame);
  /* the line from the centre (20, 10) to (26, 8), then the head over (19..20, 9..10) */
  std::vector<uint32_t> want (w * h, 0x07070707u);
  for (int t = 0; t <= 6; t++)
    want[(10 + cuv::motion_round_div (-2 * t, 6)) * w + 20 + t] = colors.line;
  for (int j = 9; j <= 10; j++)
    for (int i = 19; i <= 20; i++)
      want[j * w + i] = colors.head;
  int wrong = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      wrong += px_at (img.frame, x, y) != want[y * w + x];
  c.expect (wrong == 0, "arrows: one 8x4 vector draws its line and head and nothing else (" + std::to_string (wrong) +
          " pixels wrong)");
  c.expect (cuv::motion_round_div (-2 * 3, 6) == -1 && cuv::motion_round_div (-3, 6) == -1 &&
          cuv::motion_round_div (3, 6) == 1 && cuv::motion_round_div (2, 6) == 0,
      "arrows: line points round half away from zero");
}

/* An interval's statistics as cudamotionest's message gives them (units, moving, the mean length
 * and the global vector), computed from the frames' vectors one by one with nothing of the
 * kernels' but the vectors: a map of counts, a square root per vector, and the search's order of
 * candidates written out (|dx| + |dy|, then dy, then dx). Frames of random sizes, ranges,
 * thresholds and vector spreads, some in several bands as the element counts them. */
void test_statistics (Checker &c)
{
  std::mt19937 rng (20261201);
  for (int trial = 0; trial < 300; trial++) {
    const int range = 1 + static_cast<int> (rng () % cuv::kMotionMaxRange);
    const uint32_t threshold = rng () % 64;
    const int frames = 1 + static_cast<int> (rng () % 4);
    /* a small spread makes ties for the global vector likely */
    const int spread = trial % 3 == 0 ? 2 : range;
    cuv::MotionTally tally;
    std::map<std::pair<int, int>, uint64_t> count;
    uint64_t units = 0, moving = 0;
    double length = 0;
    for (int f = 0; f < frames; f++) {
      const int n = static_cast<int> (rng () % (trial % 10 == 0 ? 70000 : 3000));
      std::vector<cuv::MotionVector> v (n);
      for (auto &m : v) {
        const int lo = std::max (-range, -spread), hi = std::min (range - 1, spread - 1);
        m.dx = static_cast<int8_t> (lo + static_cast<int> (rng () % (hi - lo + 1)));
        m.dy = static_cast<int8_t> (lo + static_cast<int> (rng () % (hi - lo + 1)));
        m.width = rng () % 2 ? 4 : 8;
        m.height = rng () % 2 ? 4 : 8;
        m.cost = rng () % (64u * m.width * m.height);
        count[{m.dx, m.dy}]++;
        moving += (m.dx != 0 || m.dy != 0) && m.cost < threshold * m.width * m.height;
        length += std::sqrt (static_cast<double> (m.dx * m.dx + m.dy * m.dy));
      }
      units += n;
      /* in bands, each with votes of its own, as the element's CPU backend counts them */
      const int bands = 1 + static_cast<int> (rng () % 4);
      for (int b = 0; b < bands; b++) {
        const int begin = n * b / bands, end = n * (b + 1) / bands;
        auto votes = std::make_unique<cuv::MotionVotes> ();
        std::memset (votes.get (), 0, sizeof (cuv::MotionVotes));
        cuv::motion_votes_cpu (v.data () + begin, end - begin, threshold, votes.get ());
        cuv::motion_tally_add (&tally, *votes, range);
      }
      tally.units += n;
    }
    std::pair<int, int> best{0, 0};
    uint64_t best_count = 0;
    const auto order = [] (std::pair<int, int> v) {
      return std::make_tuple (std::abs (v.first) + std::abs (v.second), v.second, v.first);
    };
    for (const auto &[vec, k] : count)
      if (k > best_count || (k == best_count && order (vec) < order (best))) {
        best = vec;
        best_count = k;
      }
    bool votes_match = true;
    for (int dy = -cuv::kMotionMaxRange; dy < cuv::kMotionMaxRange; dy++)
      for (int dx = -cuv::kMotionMaxRange; dx < cuv::kMotionMaxRange; dx++) {
        const auto it = count.find ({dx, dy});
        votes_match = votes_match && tally.votes[cuv::motion_vote_index (dx, dy)] == (it == count.end () ? 0 : it->second);
      }
    int gdx, gdy;
    cuv::motion_global_vector (tally, &gdx, &gdy);
    const double summed = cuv::motion_summed_magnitude (tally);
    const std::string what = "statistics: trial " + std::to_string (trial) + " (range " + std::to_string (range) +
        ", threshold " + std::to_string (threshold) + ", " + std::to_string (units) + " units)";
    c.expect (tally.units == units && tally.moving == moving, what + ": units and moving units");
    c.expect (votes_match, what + ": a vote for each vector");
    c.expect (std::abs (summed - length) <= 1e-9 * std::max (1.0, length), what + ": summed length " +
        std::to_string (summed) + ", counted " + std::to_string (length));
    c.expect (gdx == best.first && gdy == best.second, what + ": global vector (" + std::to_string (gdx) + ", " +
        std::to_string (gdy) + "), counted (" + std::to_string (best.first) + ", " + std::to_string (best.second) + ")");
  }
  /* no vectors: no votes, (0, 0), length 0 */
  cuv::MotionTally empty;
  int gdx = 1, gdy = 1;
  cuv::motion_global_vector (empty, &gdx, &gdy);
  c.expect (gdx == 0 && gdy == 0 && cuv::motion_summed_magnitude (empty) == 0.0, "statistics: an empty interval");
  /* the votes outside the frame's range are not the frame's (motion_votes_cuda leaves them) */
  auto stale = std::make_unique<cuv::MotionVotes> ();
  std::memset (stale.get (), 0, sizeof (cuv::MotionVotes));
  stale->votes[cuv::motion_vote_index (5, 5)] = 7;
  stale->votes[cuv::motion_vote_index (-1, 0)] = 2;
  cuv::MotionTally t;
  cuv::motion_tally_add (&t, *stale, 2);
  cuv::motion_global_vector (t, &gdx, &gdy);
  c.expect (t.votes[cuv::motion_vote_index (5, 5)] == 0 && gdx == -1 && gdy == 0,
      "statistics: only the votes of the frame's range are added");
}

}  // namespace

int main ()
{
  Checker c;
  test_tie_break (c);
  test_grid (c);
  for (cuv::MotionBlock b : kBlocks) {
    for (int range : {4, 16}) {
      const int shifts[][2] = {{0, 0}, {1, 0}, {0, -1}, {3, -3}, {-range, -range}, {range - 1, range - 1},
          {-range, range - 1}, {range - 1, -range}, {-range / 2, 1}};
      for (const auto &s : shifts)
        test_shift (c, b, range, 96, 80, s[0], s[1]);
    }
    test_shift (c, b, 1, 41, 35, -1, 0);
    test_shift (c, b, 20, 99, 77, 19, -20);
    test_static (c, b);
  }
  test_direct (c, 24, 16, 3, 16, false);
  test_direct (c, 33, 18, 5, 0, false);
  test_direct (c, 40, 40, 2, 40, false);
  test_direct (c, 48, 32, 4, 0, true);
  test_direct (c, 41, 27, 3, 60, true);
  test_partitions (c);
  test_fast_equals_definition (c);
  test_variable_near_ties (c);
  test_luma (c);
  test_wheel (c);
  test_put_pixel_422 (c);
  test_put_pixel_p010 (c);
  test_arrows (c);
  test_statistics (c);
  return c.finish ("motion-reference");
}
