/* The heat map and noise map kernels against their CPU references: every layout, docs/testing.md's
 * sizes, tight, padded, unaligned and offset pitches, the first frame (prev == cur), and the
 * parameters that select code paths (blend, colour maps, overlay, threshold, alpha). Bytes
 * outside the image stay untouched, the statistics agree, and each launch rearms its results.
 * Exits 77 without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cstring>

#include "tests/common/cuvdevice.h"
#include "tests/common/cuvdiff.h"
#include "kernels/heatmap/heatmap.h"
#include "kernels/noisemap/noisemap.h"

using namespace cuvtest;

namespace {

/* One set of results for every launch of a test, as an element keeps it: each launch must leave
 * it rearmed for the next, or the next comparison fails. */
using DeviceStats = DeviceResults<cuv::DiffStats, cuv::DiffStats>;

struct Case {
  cuv::PixelLayout layout;
  Size size;
  Stride stride;
  bool first_frame;
};

std::string case_name (const Case &k)
{
  return std::string (layout_name (k.layout)) + " " + std::to_string (k.size.w) + "x" + std::to_string (k.size.h) +
      " pad " + std::to_string (k.stride.pad) + " offset " + std::to_string (k.stride.offset) +
      (k.first_frame ? " first frame" : "");
}

/* Runs @cpu and @gpu on the same frames and compares output bytes, padding and statistics. */
template <typename Cpu, typename Gpu>
void compare (Checker &c, DeviceStats &stats, const Case &k, cuv::PixelLayout out_layout, const std::string &what,
    Cpu cpu, Gpu gpu)
{
  HostImage cur (k.layout, k.size.w, k.size.h, k.stride.pad, k.stride.offset);
  HostImage prev (k.layout, k.size.w, k.size.h, k.stride.pad + 16, k.stride.offset ? 3 : 0);
  fill_pattern (cur.storage, k.size.w * 31 + k.size.h);
  make_previous (cur, prev, k.size.w + 7);
  HostImage ref (out_layout, k.size.w, k.size.h, k.stride.pad, k.stride.offset);
  HostImage got (out_layout, k.size.w, k.size.h, k.stride.pad, k.stride.offset);
  const cuv::Frame &cpu_prev = k.first_frame ? cur.frame : prev.frame;
  cuv::DiffStats want;
  cpu (cur.frame, cpu_prev, ref.frame, &want);

  DeviceImage dcur (cur), dprev (prev), dout (got);
  dcur.upload (cur);
  dprev.upload (prev);
  dout.poison ();
  stats.poison ();
  const cuv::Frame &gpu_prev = k.first_frame ? dcur.frame : dprev.frame;
  CUVTEST_CHECK_CUDA (gpu (dcur.frame, gpu_prev, dout.frame, stats.to ()));
  CUVTEST_CHECK_CUDA (cudaDeviceSynchronize ());
  dout.download (got);
  const std::string name = what + " " + case_name (k);
  c.expect (max_diff (ref.frame, got.frame, name) == 0, name + ": GPU bytes differ from the CPU reference");
  c.expect (padding_written (got.frame, kPoison) == 0, name + ": the kernel wrote outside the image");
  const std::string sd = stats_diff (want, stats.out ());
  c.expect (sd.empty (), name + ": statistics differ (" + sd + ")");
  c.expect (stats.device_copy_matches (), name + ": the device copy of the statistics differs from the host's");
  c.expect (stats.rearmed (), name + ": the accumulator or the ticket was not zeroed for the next frame");
}

/* YUY2 and UYVY in even widths. Besides the shared sizes and strides, frames whose pitches (a pad
 * of 16 on widths of four pixels' multiples) let every plane take the kernels' widest words, P010's
 * 8-byte ones included, with a last tile row cut by the height: the word paths beside their edges. */
std::vector<Case> cases ()
{
  std::vector<Case> v;
  for (cuv::PixelLayout l : kDiffLayoutsAll) {
    const bool big = l == cuv::PixelLayout::RGBA || l == cuv::PixelLayout::NV12;
    for (Size s : sizes (big))
      for (Stride st : strides_for (s))
        v.push_back ({l, even_for (l, s), st, false});
    v.push_back ({l, even_for (l, {641, 479}), {0, 0}, true});
    for (Size s : {Size{20, 5}, Size{644, 479}})
      v.push_back ({l, s, {16, 0}, false});
  }
  return v;
}

void test_heatmap (Checker &c)
{
  const struct {
    cuv::Colormap map;
    double gain;
    int blend;
  } settings[] = {{cuv::Colormap::Sine, 1.0, 256}, {cuv::Colormap::Inferno, 8.0, 100}, {cuv::Colormap::Jet, 64.0, 0}};
  uint32_t *dtable = nullptr;
  CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dtable), cuv::kHeatmapTableSize * 4));
  const cuv::YuvToRgb yuv = cuv::yuv_to_rgb_coefficients (0.2126, 0.0722, false);
  DeviceStats stats;
  for (const Case &k : cases ()) {
    const cuv::PixelLayout ol = cuv::heatmap_out_layout (k.layout);
    for (const auto &s : settings) {
      if (k.size.w >= 1920 && s.blend == 100)
        continue;
      uint32_t table[cuv::kHeatmapTableSize];
      cuv::heatmap_build_table (s.map, s.gain, ol, table);
      CUVTEST_CHECK_CUDA (cudaMemcpy (dtable, table, sizeof (table), cudaMemcpyHostToDevice));
      const cuv::HeatmapParams hp{table, s.blend, yuv}, dp{dtable, s.blend, yuv};
      compare (c, stats, k, ol, "heatmap blend " + std::to_string (s.blend),
          [&] (const cuv::Frame &a, const cuv::Frame &b, const cuv::Frame &o, cuv::DiffStats *st) {
            cuv::heatmap_reference (a, b, o, hp, st);
          },
          [&] (const cuv::Frame &a, const cuv::Frame &b, const cuv::Frame &o, const cuv::DiffResults &to) {
            return cuv::heatmap_cuda (a, b, o, dp, to, nullptr);
          });
    }
  }
  cudaFree (dtable);
}

void test_noisemap (Checker &c)
{
  const struct {
    int threshold;
    bool overlay;
    int alpha;
  } settings[] = {{20, false, 255}, {20, true, 255}, {0, true, 128}, {3, false, 77}};
  DeviceStats stats;
  for (const Case &k : cases ()) {
    for (const auto &s : settings) {
      if (k.size.w >= 1920 && s.threshold != 20)
        continue;
      cuv::NoisemapParams p{};
      p.threshold = s.threshold;
      p.overlay = s.overlay;
      p.alpha = cuv::alpha256 (s.alpha);
      p.color = cuv::pack_px (k.layout, 250, 40, 10, 255);
      int y, u, v;
      cuv::rgb_to_yuv (0.2126, 0.0722, false, 250, 40, 10, &y, &u, &v);
      p.yuv[0] = static_cast<uint8_t> (y);
      p.yuv[1] = static_cast<uint8_t> (u);
      p.yuv[2] = static_cast<uint8_t> (v);
      p.y_black = 16;
      compare (c, stats, k, k.layout,
          "noisemap threshold " + std::to_string (s.threshold) + (s.overlay ? " overlay" : " map") + " alpha " +
              std::to_string (s.alpha),
          [&] (const cuv::Frame &a, const cuv::Frame &b, const cuv::Frame &o, cuv::DiffStats *st) {
            cuv::noisemap_reference (a, b, o, p, st);
          },
          [&] (const cuv::Frame &a, const cuv::Frame &b, const cuv::Frame &o, const cuv::DiffResults &to) {
            return cuv::noisemap_cuda (a, b, o, p, to, nullptr);
          });
    }
  }
}

/* The tile counts of the regions against the reference, with a guard past the last count. */
void test_noisemap_tiles (Checker &c)
{
  for (const Case &k : cases ()) {
    HostImage cur (k.layout, k.size.w, k.size.h, k.stride.pad, k.stride.offset);
    HostImage prev (k.layout, k.size.w, k.size.h, k.stride.pad + 16, k.stride.offset ? 3 : 0);
    fill_pattern (cur.storage, k.size.w * 17 + k.size.h);
    make_previous (cur, prev, k.size.w + 3);
    const size_t n = static_cast<size_t> (cuv::noise_tile_cols (k.size.w)) * cuv::noise_tile_rows (k.size.h);
    for (int threshold : {0, 20, 200}) {
      std::vector<uint16_t> want (n), got (n + 8);
      const cuv::Frame &cpu_prev = k.first_frame ? cur.frame : prev.frame;
      cuv::noisemap_tiles_reference (cur.frame, cpu_prev, threshold, want.data ());
      DeviceImage dcur (cur), dprev (prev);
      dcur.upload (cur);
      dprev.upload (prev);
      uint16_t *dcounts = nullptr;
      CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&dcounts), got.size () * sizeof (uint16_t)));
      CUVTEST_CHECK_CUDA (cudaMemset (dcounts, 0xa5, got.size () * sizeof (uint16_t)));
      CUVTEST_CHECK_CUDA (cuv::noisemap_tiles_cuda (dcur.frame, k.first_frame ? dcur.frame : dprev.frame, threshold, dcounts,
          nullptr));
      CUVTEST_CHECK_CUDA (cudaMemcpy (got.data (), dcounts, got.size () * sizeof (uint16_t), cudaMemcpyDeviceToHost));
      cudaFree (dcounts);
      int bad = 0, past = 0;
      for (size_t i = 0; i < n; i++)
        bad += got[i] != want[i];
      for (size_t i = n; i < got.size (); i++)
        past += got[i] != 0xa5a5;
      const std::string name = "noisemap tiles threshold " + std::to_string (threshold) + " " + case_name (k);
      c.expect (bad == 0, name + ": " + std::to_string (bad) + " of " + std::to_string (n) + " counts differ from the reference");
      c.expect (past == 0, name + ": the kernel wrote past the last tile");
    }
  }
}

}  // namespace

int main (int argc, char **argv)
{
  Checker c;
  return run_gpu_parts (argc, argv, "difference-gpu", c, {
      {"heatmap", [&] { test_heatmap (c); }},
      {"noisemap", [&] { test_noisemap (c); }},
      {"noisemap-tiles", [&] { test_noisemap_tiles (c); }}});
}
