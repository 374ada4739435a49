/* The CPU references against definitions written independently here: the Sobel formula in double
 * precision with explicit clamped indexing, the threshold at its exact boundary, alpha and chroma
 * handling, and the enhance tables at their identity. Runs without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cmath>
#include <algorithm>
#include <cstring>
#include <vector>
#include <memory>

#include <hwy/targets.h>

#include "tests/common/cuvtest.h"
#include "kernels/enhance/enhance.h"
#include "kernels/sobel/sobel.h"
#include "kernels/sobel/sobel_math.h"

using namespace cuvtest;

namespace {

int at (const cuv::Plane &p, int x, int y, int bpp, int c)
{
  x = std::min (std::max (x, 0), p.width - 1);
  y = std::min (std::max (y, 0), p.height - 1);
  return p.data[static_cast<size_t> (y) * p.pitch + x * bpp + c];
}

/* Textbook Sobel on channel c (or on luma when c < 0), in double. Returns the exact value before
 * rounding, so that the caller can skip samples on a rounding boundary (float vs double). */
double sobel_exact (const cuv::Frame &f, int x, int y, int c, bool bgr, double scale)
{
  const cuv::Plane &p = f.planes[0];
  int bpp = cuv::layout_is_rgb (f.layout) ? 4
      : cuv::layout_is_packed422 (f.layout) || f.layout == cuv::PixelLayout::P010 ? 2
                                                                                   : 1;
  auto v = [&] (int dx, int dy) {
    if (c >= 0)
      return at (p, x + dx, y + dy, bpp, c);
    int r = at (p, x + dx, y + dy, 4, bgr ? 2 : 0), g = at (p, x + dx, y + dy, 4, 1), b = at (p, x + dx, y + dy, 4, bgr ? 0 : 2);
    return (77 * r + 150 * g + 29 * b) / 256;
  };
  const int kx[3][3] = {{-1, 0, 1}, {-2, 0, 2}, {-1, 0, 1}};
  const int ky[3][3] = {{-1, -2, -1}, {0, 0, 0}, {1, 2, 1}};
  double gx = 0, gy = 0;
  for (int j = -1; j <= 1; j++)
    for (int i = -1; i <= 1; i++) {
      gx += kx[j + 1][i + 1] * v (i, j);
      gy += ky[j + 1][i + 1] * v (i, j);
    }
  return scale * std::sqrt (gx * gx + gy * gy);
}

void test_sobel_formula (Checker &c)
{
  const cuv::PixelLayout layouts[] = {cuv::PixelLayout::RGBA, cuv::PixelLayout::BGRx, cuv::PixelLayout::GRAY8,
      cuv::PixelLayout::NV12, cuv::PixelLayout::I420, cuv::PixelLayout::YUY2, cuv::PixelLayout::UYVY,
      cuv::PixelLayout::P010};
  uint32_t seed = 7;
  for (cuv::PixelLayout l : layouts) {
    for (Size s : {Size{1, 1}, Size{2, 2}, Size{3, 3}, Size{17, 13}, Size{64, 33}}) {
      for (cuv::SobelMode mode : {cuv::SobelMode::Color, cuv::SobelMode::Luma}) {
        for (double scale : {1.0, 0.3, 3.7}) {
          HostImage in (l, s.w, s.h, 5), out (l, s.w, s.h, 5);
          fill_pattern (in.storage, seed++);
          cuv::SobelParams p{mode, static_cast<float> (scale), 0};
          cuv::sobel_cpu (in.frame, out.frame, p);
          const bool p010 = l == cuv::PixelLayout::P010;
          bool rgb = cuv::layout_is_rgb (l), bgr = cuv::layout_is_bgr (l), packed = cuv::layout_is_packed422 (l) || p010;
          /* YUY2: Y0 U Y1 V, UYVY: U Y0 V Y1, P010: 16-bit little-endian samples, filtered on their
           * high bytes and written as m << 8 */
          const int bpp = rgb ? 4 : packed ? 2 : 1, y_byte = l == cuv::PixelLayout::UYVY || p010 ? 1 : 0;
          int bad = 0, checked = 0;
          for (int y = 0; y < s.h; y++) {
            for (int x = 0; x < s.w; x++) {
              for (int ch = 0; ch < (rgb ? 3 : 1); ch++) {
                double m = sobel_exact (in.frame, x, y, rgb && mode == cuv::SobelMode::Color ? ch : (rgb ? -1 : y_byte), bgr, scale);
                if (std::fabs (m - std::floor (m) - 0.5) < 1e-4)
                  continue; /* a float/double tie: either rounding is right */
                int want = m >= 255 ? 255 : static_cast<int> (std::floor (m + 0.5));
                int got = out.frame.planes[0].data[static_cast<size_t> (y) * out.frame.planes[0].pitch + x * bpp + ch + (rgb ? 0 : y_byte)];
                bad += got != want;
                checked++;
              }
              if (rgb)
                bad += out.frame.planes[0].data[static_cast<size_t> (y) * out.frame.planes[0].pitch + x * 4 + 3] !=
                    in.frame.planes[0].data[static_cast<size_t> (y) * in.frame.planes[0].pitch + x * 4 + 3];
              if (packed) /* U or V neutral; P010's low byte 0 */
                bad += out.frame.planes[0].data[static_cast<size_t> (y) * out.frame.planes[0].pitch + x * 2 + 1 - y_byte] !=
                    (p010 ? 0 : 128);
            }
          }
          for (int pl = 1; pl < in.frame.n_planes; pl++) {
            const cuv::Plane &cp = out.frame.planes[pl];
            for (int y = 0; y < cp.height; y++)
              for (int x = 0; x < cp.width * cuv::plane_sample_bytes (l, pl); x++)
                bad += cp.data[static_cast<size_t> (y) * cp.pitch + x] != (p010 && x % 2 == 0 ? 0 : 128);
          }
          c.expect (bad == 0 && checked > 0, std::string ("sobel formula ") + layout_name (l) + " " + std::to_string (s.w) + "x" +
              std::to_string (s.h) + " scale " + std::to_string (scale) + ": " + std::to_string (bad) + " wrong");
        }
      }
    }
  }
}

/* A vertical step of height v gives gx = 4v in the middle column: m = 4v exactly. */
void test_sobel_threshold_boundary (Checker &c)
{
  HostImage in (cuv::PixelLayout::GRAY8, 3, 3, 0), out (cuv::PixelLayout::GRAY8, 3, 3, 0);
  for (int y = 0; y < 3; y++) {
    in.frame.planes[0].data[y * 3 + 0] = 0;
    in.frame.planes[0].data[y * 3 + 1] = 5;
    in.frame.planes[0].data[y * 3 + 2] = 10;
  }
  cuv::sobel_cpu (in.frame, out.frame, {cuv::SobelMode::Color, 1.0f, 0});
  c.expect (out.frame.planes[0].data[4] == 40, "sobel of a 0/5/10 ramp is 40 at the centre");
  cuv::sobel_cpu (in.frame, out.frame, {cuv::SobelMode::Color, 1.0f, 40});
  c.expect (out.frame.planes[0].data[4] == 255, "threshold equal to the magnitude gives 255");
  cuv::sobel_cpu (in.frame, out.frame, {cuv::SobelMode::Color, 1.0f, 41});
  c.expect (out.frame.planes[0].data[4] == 0, "threshold one above the magnitude gives 0");
  cuv::sobel_cpu (in.frame, out.frame, {cuv::SobelMode::Color, 7.0f, 0});
  c.expect (out.frame.planes[0].data[4] == 255, "scaled magnitude clips at 255");
}

void test_enhance_identity_tables (Checker &c)
{
  auto t = std::make_unique<cuv::EnhanceTables> ();
  cuv::enhance_build_tables ({1.0, 0.0, 1.0, 0.0}, t.get ());
  int bad = 0;
  for (int i = 0; i < 256; i++)
    bad += t->y[i] != i;
  for (int u = 0; u < 256; u++)
    for (int v = 0; v < 256; v++)
      bad += t->uv[u * 256 + v] != (u | v << 8);
  c.expect (bad == 0, "identity parameters give identity tables");

  cuv::enhance_build_tables ({1.0, 0.0, 0.0, 0.0}, t.get ());
  bad = 0;
  for (int u = 0; u < 256; u++)
    for (int v = 0; v < 256; v++)
      bad += t->uv[u * 256 + v] != (128 | 128 << 8);
  c.expect (bad == 0, "saturation 0 maps every chroma to 128");

  cuv::enhance_build_tables ({1.0, 1.0, 1.0, 0.0}, t.get ());
  c.expect (t->y[0] == 255 && t->y[255] == 255, "brightness 1 saturates luma");
}

/* P010 through enhance_reference, sample by sample against the expressions of enhance.h written
 * out here in double precision: luma exactly (the same rounding of the same expression), chroma
 * within 1 of its 10 bits (the definition rounds the coefficients to 1/65536), exactly for identity
 * settings; every output sample's low 6 bits 0. */
void test_enhance_p010 (Checker &c)
{
  const cuv::EnhanceParams settings[] = {{1.0, 0.0, 1.0, 0.0}, {1.3, 0.1, 1.2, 0.0}, {0.0, 0.2, 0.0, 0.5},
      {2.0, -0.4, 2.0, -1.0}, {0.77, 0.13, 1.0, 0.25}};
  auto t = std::make_unique<cuv::EnhanceTables> ();
  for (const cuv::EnhanceParams &p : settings) {
    cuv::enhance_build_tables (p, t.get ());
    HostImage in (cuv::PixelLayout::P010, 37, 9, 4), out (cuv::PixelLayout::P010, 37, 9, 2);
    fill_pattern (in.storage, 17);
    cuv::enhance_reference (in.frame, out.frame, *t);
    auto sample = [] (const cuv::Plane &pl, int byte_x, int y) {
      const uint8_t *q = pl.data + static_cast<size_t> (y) * pl.pitch + byte_x;
      return q[0] | q[1] << 8;
    };
    int bad = 0, far = 0;
    for (int y = 0; y < 9; y++)
      for (int x = 0; x < 37; x++) {
        const int s = sample (in.frame.planes[0], 2 * x, y) >> 6, got = sample (out.frame.planes[0], 2 * x, y);
        const double want = std::clamp (64 + ((s - 64) * p.contrast + p.brightness * 1023), 0.0, 1023.0);
        bad += got != static_cast<int> (std::rint (want)) << 6;
      }
    const double cs = std::cos (M_PI * p.hue) * p.saturation, sn = std::sin (M_PI * p.hue) * p.saturation;
    for (int y = 0; y < 5; y++)
      for (int x = 0; x < 19; x++) {
        const int i = (sample (in.frame.planes[1], 4 * x, y) >> 6) - 512, j = (sample (in.frame.planes[1], 4 * x + 2, y) >> 6) - 512;
        const int gu = sample (out.frame.planes[1], 4 * x, y), gv = sample (out.frame.planes[1], 4 * x + 2, y);
        const double wu = std::clamp (512 + (i * cs + j * sn), 0.0, 1023.0), wv = std::clamp (512 + (-i * sn + j * cs), 0.0, 1023.0);
        bad += (gu & 63) != 0 || (gv & 63) != 0;
        const double tol = p.is_identity () ? 0.0 : 1.0;
        far += std::fabs ((gu >> 6) - wu) > tol || std::fabs ((gv >> 6) - wv) > tol;
      }
    const std::string what = "enhance P010 contrast " + std::to_string (p.contrast) + " hue " + std::to_string (p.hue);
    c.expect (bad == 0, what + ": " + std::to_string (bad) + " samples differ from the luma table or keep low bits");
    c.expect (far == 0, what + ": " + std::to_string (far) + " chroma pairs further than 1 from the expression");
  }
}

/* enhance_math.h leaves out videobalance's clamps on the RGB -> YUV step because they never bite:
 * check that on every 8-bit RGB triple. */
void test_enhance_forward_range (Checker &c)
{
  int lo = 255, hi = 0;
  for (int r = 0; r < 256; r++)
    for (int g = 0; g < 256; g++)
      for (int b = 0; b < 256; b++) {
        int y = (66 * r + 129 * g + 25 * b + 4096) >> 8;
        int u = (-38 * r - 74 * g + 112 * b + 32768) >> 8;
        int v = (112 * r - 94 * g - 18 * b + 32768) >> 8;
        lo = std::min ({lo, y, u, v});
        hi = std::max ({hi, y, u, v});
      }
  c.expect (lo >= 0 && hi <= 255, "RGB -> YUV stays in 0..255 without clamping (saw " + std::to_string (lo) + ".." +
      std::to_string (hi) + ")");
}

/* The threshold bound the GPU uses equals thresholding the magnitude, on every energy. */
void test_sobel_threshold_energy (Checker &c)
{
  std::vector<uint8_t> table (cuv::kSobelMaxEnergy + 1);
  for (float scale : {1.0f, 0.37f, 2.5f, 0.0f, 64.0f})
    for (int thr : {1, 40, 255}) {
      cuv::sobel_output_table_cpu (scale, thr, table.data ());
      int bound = cuv::sobel_threshold_energy (scale, thr);
      int bad = 0;
      for (int e = 0; e <= cuv::kSobelMaxEnergy; e++)
        bad += table[e] != (e >= bound ? 255 : 0);
      c.expect (bad == 0, "threshold energy bound, scale " + std::to_string (scale) + " threshold " + std::to_string (thr));
    }
}

}  // namespace

/* The fast Sobel (row pointers, an output table, bands of rows) gives the definition's bytes for
 * every layout, mode, scale and threshold, whole and in bands as threads run it. */
void test_sobel_fast_equals_definition (Checker &c)
{
  const cuv::PixelLayout layouts[] = {cuv::PixelLayout::RGBA, cuv::PixelLayout::BGRx, cuv::PixelLayout::GRAY8,
      cuv::PixelLayout::NV12, cuv::PixelLayout::I420, cuv::PixelLayout::YUY2, cuv::PixelLayout::UYVY,
      cuv::PixelLayout::P010};
  /* every SIMD target this CPU runs, as Highway dispatches them */
  for (int64_t target : hwy::SupportedAndGeneratedTargets ()) {
    hwy::SetSupportedTargetsForTest (target);
    uint32_t seed = 91;
    int wrong = 0, cases = 0;
    for (cuv::PixelLayout l : layouts) {
      for (Size s : {Size{1, 1}, Size{2, 3}, Size{3, 2}, Size{17, 13}, Size{64, 33}, Size{66, 3}, Size{131, 4}}) {
        for (cuv::SobelMode mode : {cuv::SobelMode::Color, cuv::SobelMode::Luma}) {
          for (float scale : {1.0f, 0.3f, 3.7f, 0.05f}) {
            for (int threshold : {0, 1, 40, 255, 256}) {
              HostImage in (l, s.w, s.h, 5, 1), want (l, s.w, s.h, 3), got (l, s.w, s.h, 7);
              fill_pattern (in.storage, seed++);
              const cuv::SobelParams p{mode, scale, threshold};
              cuv::sobel_reference (in.frame, want.frame, p);
              cuv::sobel_cpu (in.frame, got.frame, p);
              cases++;
              wrong += max_diff (got.frame, want.frame, "sobel fast", false) != 0;
              const cuv::SobelOutput o = cuv::sobel_output (scale, threshold);
              for (int band : {1, 2, 7}) {
                HostImage banded (l, s.w, s.h, 1);
                for (int y = 0; y < s.h; y += band)
                  cuv::sobel_rows_cpu (in.frame, banded.frame, p, o, y, std::min (s.h, y + band));
                cases++;
                wrong += max_diff (banded.frame, want.frame, "sobel bands", false) != 0;
              }
            }
          }
        }
      }
    }
    std::printf ("fast sobel %s: %d frames\n", hwy::TargetName (target), cases);
    c.expect (wrong == 0, std::string ("sobel (") + hwy::TargetName (target) + "): the fast version equals the definition: " +
        std::to_string (wrong) + " of " + std::to_string (cases) + " frames differ");
  }
  hwy::SetSupportedTargetsForTest (0);
}

/* The fast cudaenhance (every SIMD target) gives the definition's bytes: every layout, odd sizes
 * and padded rows, in place and not, over settings that reach both ends of the tables. */
void test_enhance_fast_equals_definition (Checker &c)
{
  const cuv::PixelLayout layouts[] = {cuv::PixelLayout::RGBA, cuv::PixelLayout::BGRx, cuv::PixelLayout::NV12,
      cuv::PixelLayout::I420, cuv::PixelLayout::YUY2, cuv::PixelLayout::UYVY, cuv::PixelLayout::P010};
  /* saturation 0.5 without a hue turn puts P010's chroma products on exact halves (i x 32768),
   * where the rounding of enhance_chroma10 () decides */
  const cuv::EnhanceParams settings[] = {{1.3, 0.0, 1.2, 0.0}, {1.5, 0.0, 1.0, 0.0}, {0.0, 0.2, 0.0, 0.5},
      {2.0, -0.4, 2.0, -1.0}, {0.77, 0.13, 1.0, 0.25}, {1.0, 0.0, 1.0, 0.0}, {1.0, 0.0, 0.5, 0.0}};
  auto tables = std::make_unique<cuv::EnhanceTables> ();
  for (int64_t target : hwy::SupportedAndGeneratedTargets ()) {
    hwy::SetSupportedTargetsForTest (target);
    int wrong = 0, cases = 0;
    for (const cuv::EnhanceParams &p : settings) {
      cuv::enhance_build_tables (p, tables.get ());
      for (cuv::PixelLayout l : layouts) {
        for (Size s : {Size{1, 1}, Size{3, 2}, Size{17, 5}, Size{64, 4}, Size{131, 3}}) {
          HostImage in (l, s.w, s.h, 3, 1), want (l, s.w, s.h, 1), got (l, s.w, s.h, 5);
          fill_pattern (in.storage, static_cast<uint32_t> (s.w * 7 + cases));
          cuv::enhance_reference (in.frame, want.frame, *tables);
          cuv::enhance_cpu (in.frame, got.frame, *tables);
          cases++;
          wrong += max_diff (got.frame, want.frame, "enhance fast", false) != 0;
          /* in place */
          cuv::enhance_cpu (in.frame, in.frame, *tables);
          cases++;
          wrong += max_diff (in.frame, want.frame, "enhance fast in place", false) != 0;
        }
      }
    }
    std::printf ("fast enhance %s: %d frames\n", hwy::TargetName (target), cases);
    c.expect (wrong == 0, std::string ("enhance (") + hwy::TargetName (target) + "): the fast version equals the definition: " +
        std::to_string (wrong) + " of " + std::to_string (cases) + " frames differ");
  }
  hwy::SetSupportedTargetsForTest (0);
}

int main ()
{
  Checker c;
  test_sobel_formula (c);
  test_sobel_threshold_boundary (c);
  test_enhance_identity_tables (c);
  test_enhance_forward_range (c);
  test_enhance_fast_equals_definition (c);
  test_enhance_p010 (c);
  test_sobel_threshold_energy (c);
  test_sobel_fast_equals_definition (c);
  return c.finish ("test_reference");
}
