/* The CUDA kernels against their CPU references: every layout, the sizes of docs/testing.md, tight, padded
 * and unaligned pitches, several parameter sets; bit-exact, and no byte written outside the image.
 * Exits 77 without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cstring>
#include <functional>
#include <memory>

#include "tests/common/cuvdevice.h"
#include "tests/common/cuvtest.h"
#include "kernels/enhance/enhance.h"
#include "kernels/sobel/sobel.h"

using namespace cuvtest;

namespace {

/* Runs @gpu and @cpu on the same random image and compares. @in_place runs both on the input. */
void compare (Checker &c, cuv::PixelLayout layout, Size s, Stride st, uint32_t seed, bool in_place,
    const std::string &what, const std::function<cudaError_t (const cuv::Frame &, const cuv::Frame &)> &gpu,
    const std::function<void (const cuv::Frame &, const cuv::Frame &)> &cpu)
{
  HostImage in (layout, s.w, s.h, st.pad, st.offset);
  fill_pattern (in.storage, seed);
  HostImage ref (layout, s.w, s.h, st.pad, st.offset);
  std::memset (ref.storage.data (), kPoison, ref.storage.size ());
  HostImage got (layout, s.w, s.h, st.pad, st.offset);

  DeviceImage din (in), dout (in);
  din.upload (in);
  dout.poison ();
  if (in_place) {
    ref.storage = in.storage;
    cpu (ref.frame, ref.frame);
    CUVTEST_CHECK_CUDA (gpu (din.frame, din.frame));
    CUVTEST_CHECK_CUDA (cudaDeviceSynchronize ());
    din.download (got);
  } else {
    cpu (in.frame, ref.frame);
    CUVTEST_CHECK_CUDA (gpu (din.frame, dout.frame));
    CUVTEST_CHECK_CUDA (cudaDeviceSynchronize ());
    dout.download (got);
  }
  std::string name = what + " " + layout_name (layout) + " " + std::to_string (s.w) + "x" + std::to_string (s.h) +
      " pad " + std::to_string (st.pad) + " offset " + std::to_string (st.offset) + (in_place ? " in place" : "");
  c.expect (max_diff (ref.frame, got.frame, name) == 0, name + ": GPU differs from the CPU reference");
  if (!in_place)
    c.expect (padding_written (got.frame, kPoison) == 0, name + ": GPU wrote into the row padding");
}

void test_sobel (Checker &c)
{
  const cuv::SobelParams params[] = {
    {cuv::SobelMode::Color, 1.0f, 0}, {cuv::SobelMode::Luma, 1.0f, 0}, {cuv::SobelMode::Color, 2.5f, 0},
    {cuv::SobelMode::Luma, 1.0f, 60}, {cuv::SobelMode::Color, 0.37f, 200}, {cuv::SobelMode::Luma, 0.0f, 0},
  };
  /* the root the element would take for each setting: the approximate one where it is exact */
  bool fast[sizeof params / sizeof params[0]];
  for (size_t i = 0; i < sizeof params / sizeof params[0]; i++)
    CUVTEST_CHECK_CUDA (cuv::sobel_fast_root_exact_cuda (params[i].scale, &fast[i], nullptr));
  uint32_t seed = 1;
  for (cuv::PixelLayout l : kAll) {
    bool big = l == cuv::PixelLayout::RGBA || l == cuv::PixelLayout::NV12;
    for (Size s : sizes (big)) {
      for (Stride st : strides_for (s)) {
        for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
          const cuv::SobelParams &base = params[i];
          if (s.w >= 3840 && base.scale != 1.0f)
            continue;
          /* the element's root, and below 3840 wide the exact one as well */
          for (bool fast_root : {true, false}) {
            if ((fast_root && (!fast[i] || base.threshold > 0)) || (!fast_root && fast[i] && s.w >= 3840))
              continue;
            cuv::SobelParams p = base;
            p.fast_root = fast_root;
            std::string what = std::string ("sobel ") + (p.mode == cuv::SobelMode::Luma ? "luma" : "color") + " scale " +
                std::to_string (p.scale) + " threshold " + std::to_string (p.threshold) + (fast_root ? " fast root" : "");
            compare (c, l, s, st, seed++, false, what,
                [&] (const cuv::Frame &a, const cuv::Frame &b) { return cuv::sobel_cuda (a, b, p, nullptr); },
                [&] (const cuv::Frame &a, const cuv::Frame &b) { cuv::sobel_reference (a, b, p); });
          }
        }
      }
    }
  }
}

/* Every energy the filter can produce, on both backends: proves the GPU's square root and
 * threshold bound give the CPU's bytes, not only on the images sampled above. */
void test_sobel_every_energy (Checker &c)
{
  const int n = cuv::kSobelMaxEnergy + 1;
  std::vector<uint8_t> want (n), got (n);
  uint8_t *dev = nullptr;
  CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dev), n));
  int fast_scales = 0;
  for (float scale : {1.0f, 0.37f, 1.5f, 2.5f, 0.01f, 0.0f, 63.99f, 64.0f, 0.70710678f, 2.0f, 0.5f}) {
    bool fast = false;
    CUVTEST_CHECK_CUDA (cuv::sobel_fast_root_exact_cuda (scale, &fast, nullptr));
    fast_scales += fast;
    /* scale 1 (the default) is exact with the approximate root: sobel.h gives the margin */
    if (scale == 1.0f)
      c.expect (fast, "the approximate root must be exact for scale 1");
    for (int threshold : {0, 1, 40, 128, 254, 255}) {
      cuv::sobel_output_table_cpu (scale, threshold, want.data ());
      for (bool fast_root : {false, true}) {
        if (fast_root && !fast)
          continue;
        CUVTEST_CHECK_CUDA (cuv::sobel_output_table_cuda (scale, threshold, fast_root, dev, nullptr));
        CUVTEST_CHECK_CUDA (cudaMemcpy (got.data (), dev, n, cudaMemcpyDeviceToHost));
        int bad = 0, first = -1;
        for (int e = 0; e < n; e++)
          if (want[e] != got[e]) {
            bad++;
            if (first < 0)
              first = e;
          }
        c.expect (bad == 0, "sobel output for every energy, scale " + std::to_string (scale) + " threshold " +
            std::to_string (threshold) + (fast_root ? " fast root" : "") + ": " + std::to_string (bad) +
            " differ, first at energy " + std::to_string (first));
      }
    }
  }
  std::printf ("sobel: the approximate root is exact for %d of 11 scales\n", fast_scales);
  cudaFree (dev);
}

void test_enhance (Checker &c)
{
  const cuv::EnhanceParams params[] = {
    {1.4, 0.0, 1.0, 0.0}, {0.5, 0.2, 1.7, 0.3}, {2.0, -0.5, 0.0, -1.0}, {1.0, 0.0, 1.0, 0.5}, {0.0, 1.0, 2.0, 0.77},
  };
  cuv::EnhanceTables *dtables = nullptr;
  CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dtables), sizeof (cuv::EnhanceTables)));
  auto tables = std::make_unique<cuv::EnhanceTables> ();
  uint32_t seed = 1000;
  for (cuv::PixelLayout l : kAll) {
    if (l == cuv::PixelLayout::GRAY8)
      continue;
    bool big = l == cuv::PixelLayout::RGBA || l == cuv::PixelLayout::NV12;
    for (Size s : sizes (big)) {
      for (Stride st : strides_for (s)) {
        for (const cuv::EnhanceParams &p : params) {
          cuv::enhance_build_tables (p, tables.get ());
          CUVTEST_CHECK_CUDA (cudaMemcpy (dtables, tables.get (), sizeof (cuv::EnhanceTables), cudaMemcpyHostToDevice));
          char what[128];
          std::snprintf (what, sizeof what, "enhance c=%.2f b=%.2f s=%.2f h=%.2f", p.contrast, p.brightness,
              p.saturation, p.hue);
          for (bool in_place : {false, true})
            compare (c, l, s, st, seed++, in_place, what,
                [&] (const cuv::Frame &a, const cuv::Frame &b) { return cuv::enhance_cuda (a, b, dtables, nullptr); },
                [&] (const cuv::Frame &a, const cuv::Frame &b) { cuv::enhance_reference (a, b, *tables); });
        }
      }
    }
  }
  cudaFree (dtables);
}

/* NV12 and I420 whose rows start 8-byte aligned while the width is not a multiple of 8 (or 4): the
 * wide stores of the chroma planes (sobel's neutral chroma, enhance's four NV12 pairs a thread)
 * and their narrow tails at the right edge, which the sizes and pitches above never combine. */
void test_yuv_vector_edges (Checker &c)
{
  cuv::EnhanceTables *dtables = nullptr;
  CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dtables), sizeof (cuv::EnhanceTables)));
  auto tables = std::make_unique<cuv::EnhanceTables> ();
  cuv::enhance_build_tables ({1.4, 0.05, 1.3, 0.1}, tables.get ());
  CUVTEST_CHECK_CUDA (cudaMemcpy (dtables, tables.get (), sizeof (cuv::EnhanceTables), cudaMemcpyHostToDevice));
  bool fast = false;
  CUVTEST_CHECK_CUDA (cuv::sobel_fast_root_exact_cuda (1.0f, &fast, nullptr));
  uint32_t seed = 5000;
  for (cuv::PixelLayout l : {cuv::PixelLayout::NV12, cuv::PixelLayout::I420}) {
    for (Size s : {Size{2, 2}, Size{18, 10}, Size{20, 6}, Size{36, 4}, Size{642, 480}, Size{1922, 8}, Size{1924, 6}}) {
      const int tight = cuv::min_pitch (l, s.w, 0, 1);
      for (int pad : {(8 - tight % 8) % 8, (8 - tight % 8) % 8 + 8}) {
        const Stride st{pad, 0};
        for (cuv::SobelMode mode : {cuv::SobelMode::Color, cuv::SobelMode::Luma}) {
          const cuv::SobelParams p{mode, 1.0f, 0, fast};
          compare (c, l, s, st, seed++, false, mode == cuv::SobelMode::Luma ? "sobel luma" : "sobel color",
              [&] (const cuv::Frame &a, const cuv::Frame &b) { return cuv::sobel_cuda (a, b, p, nullptr); },
              [&] (const cuv::Frame &a, const cuv::Frame &b) { cuv::sobel_reference (a, b, p); });
        }
        for (bool in_place : {false, true})
          compare (c, l, s, st, seed++, in_place, "enhance",
              [&] (const cuv::Frame &a, const cuv::Frame &b) { return cuv::enhance_cuda (a, b, dtables, nullptr); },
              [&] (const cuv::Frame &a, const cuv::Frame &b) { cuv::enhance_reference (a, b, *tables); });
      }
    }
  }
  cudaFree (dtables);
}

}  // namespace

int main (int argc, char **argv)
{
  Checker c;
  return run_gpu_parts (argc, argv, "test_kernels_gpu", c, {
      {"sobel_every_energy", [&] { test_sobel_every_energy (c); }},
      {"sobel", [&] { test_sobel (c); }},
      {"enhance", [&] { test_enhance (c); }},
      {"yuv_vector_edges", [&] { test_yuv_vector_edges (c); }}});
}
