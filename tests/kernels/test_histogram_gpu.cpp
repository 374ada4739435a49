/* The histogram kernel and the overlay kernel against their CPU references: every layout,
 * the sizes of docs/testing.md, tight, padded and unaligned pitches, several ROIs and bin counts, and flat
 * frames (every thread of a warp in one bin). Exits 77 without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cstring>

#include "tests/common/cuvdevice.h"
#include "kernels/histogram/histogram.h"

using namespace cuvtest;

namespace {

std::string result_diff (const cuv::HistogramResult &a, const cuv::HistogramResult &b)
{
  for (int k = 0; k < cuv::kHistogramMaxBins; k++)
    if (a.counts[k] != b.counts[k])
      return "bin " + std::to_string (k) + ": " + std::to_string (a.counts[k]) + " vs " + std::to_string (b.counts[k]);
  const uint64_t sa[5] = {a.sum_r, a.sum_g, a.sum_b, a.sum_y, a.sum_y2};
  const uint64_t sb[5] = {b.sum_r, b.sum_g, b.sum_b, b.sum_y, b.sum_y2};
  for (int k = 0; k < 5; k++)
    if (sa[k] != sb[k])
      return "sum " + std::to_string (k) + ": " + std::to_string (sa[k]) + " vs " + std::to_string (sb[k]);
  return "";
}

/* One set of results for every launch, as an element keeps it: each launch must leave it rearmed
 * for the next, or the next comparison fails. */
using DeviceResult = DeviceResults<cuv::HistogramPartials, cuv::HistogramResult>;

std::vector<cuv::Roi> rois_for (Size s)
{
  std::vector<cuv::Roi> r = {{0, 0, s.w, s.h}};
  if (s.w >= 3)
    r.push_back ({1, 1, s.w - 2, s.h - 2});
  if (s.w >= 17) {
    r.push_back ({s.w / 3, s.h / 4, (s.w + 1) / 2, (s.h + 2) / 3});
    r.push_back ({5, 3, 3, 2});     /* narrower than one 16-byte chunk */
    r.push_back ({0, s.h - 1, s.w, 1});
  }
  r.push_back ({0, 0, 0, 0});       /* empty */
  return r;
}

void compare (Checker &c, const HostImage &img, const cuv::Roi &roi, int bins, DeviceResult &dres, const std::string &what)
{
  DeviceImage d (img);
  d.upload (img);
  cuv::HistogramResult ref;
  cuv::histogram_reference (img.frame, roi, bins, &ref);
  dres.poison ();
  CUVTEST_CHECK_CUDA (cuv::histogram_cuda (d.frame, roi, bins, dres.to (), nullptr));
  CUVTEST_CHECK_CUDA (cudaDeviceSynchronize ());
  std::string diff = result_diff (ref, dres.out ());
  c.expect (diff.empty (), what + ": GPU differs from the CPU reference (" + diff + ")");
  c.expect (dres.device_copy_matches (), what + ": the device copy of the result differs from the host's");
  c.expect (dres.rearmed (), what + ": the partials or the ticket were not zeroed for the next frame");
}

void test_histogram (Checker &c)
{
  DeviceResult dres;
  const int bins[] = {256, 64, 7, 1};
  uint32_t seed = 11;
  for (cuv::PixelLayout l : kAll) {
    bool big = l == cuv::PixelLayout::RGBA || l == cuv::PixelLayout::NV12;
    for (Size s : sizes (big)) {
      for (Stride st : strides_for (s)) {
        HostImage img (l, s.w, s.h, st.pad, st.offset);
        fill_pattern (img.storage, seed++);
        for (const cuv::Roi &roi : rois_for (s))
          for (int b : bins) {
            if (s.w >= 1920 && b != 256 && b != 7)
              continue;
            compare (c, img, roi, b, dres,
                std::string ("histogram ") + layout_name (l) + " " + std::to_string (s.w) + "x" + std::to_string (s.h) +
                    " pad " + std::to_string (st.pad) + " offset " + std::to_string (st.offset) + " roi " +
                    std::to_string (roi.x) + "," + std::to_string (roi.y) + " " + std::to_string (roi.width) + "x" +
                    std::to_string (roi.height) + " bins " + std::to_string (b));
          }
      }
    }
  }
}

/* One grey level everywhere: every atomic of a warp hits one bin. */
void test_flat (Checker &c)
{
  DeviceResult dres;
  for (cuv::PixelLayout l : {cuv::PixelLayout::RGBA, cuv::PixelLayout::GRAY8}) {
    HostImage img (l, 1920, 1080, 0);
    std::memset (img.storage.data (), 255, img.storage.size ());
    compare (c, img, {0, 0, 1920, 1080}, 256, dres, std::string ("histogram flat ") + layout_name (l));
  }
}

/* A region of 2^32 pixels or more would overflow the 32-bit partial counts, and bins outside
 * 1..256 do not exist: refused, no launch. */
void test_too_large (Checker &c)
{
  DeviceResult dres;
  HostImage img (cuv::PixelLayout::GRAY8, 16, 16, 0);
  DeviceImage d (img);
  c.expect (cuv::histogram_cuda (d.frame, {0, 0, 65536, 65536}, 256, dres.to (), nullptr) == cudaErrorInvalidValue,
      "a region of 2^32 pixels is refused");
  c.expect (cuv::histogram_cuda (d.frame, {0, 0, 16, 16}, 0, dres.to (), nullptr) == cudaErrorInvalidValue &&
          cuv::histogram_cuda (d.frame, {0, 0, 16, 16}, 257, dres.to (), nullptr) == cudaErrorInvalidValue,
      "bins outside 1..256 are refused");
  c.expect (cudaGetLastError () == cudaSuccess, "the refusal leaves no CUDA error behind");
}

void test_overlay (Checker &c)
{
  DeviceResult dres;
  const cuv::OverlayCorner corners[] = {cuv::OverlayCorner::TopLeft, cuv::OverlayCorner::TopRight,
      cuv::OverlayCorner::BottomLeft, cuv::OverlayCorner::BottomRight};
  uint32_t seed = 99;
  for (cuv::PixelLayout l : kAll) {
    for (Size s : sizes (false)) {
      for (Stride st : strides_for (s)) {
        for (int size : {25, 100, 7}) {
          HostImage img (l, s.w, s.h, st.pad, st.offset);
          fill_pattern (img.storage, seed++);
          const cuv::Roi roi{0, 0, s.w, s.h};
          const int bins = size == 7 ? 13 : 256;
          cuv::OverlayRect rect = cuv::histogram_overlay_rect (s.w, s.h, corners[seed % 4], size);
          DeviceImage d (img);
          d.upload (img);
          cuv::HistogramResult ref;
          cuv::histogram_reference (img.frame, roi, bins, &ref);
          HostImage want = img;
          want.frame = img.frame;
          for (int p = 0; p < want.frame.n_planes; p++)
            want.frame.planes[p].data = want.storage.data () + (img.frame.planes[p].data - img.storage.data ());
          cuv::histogram_overlay_cpu (want.frame, rect, bins, ref, static_cast<uint64_t> (s.w) * s.h);
          dres.poison ();
          CUVTEST_CHECK_CUDA (cuv::histogram_cuda (d.frame, roi, bins, dres.to (), nullptr));
          CUVTEST_CHECK_CUDA (cuv::histogram_overlay_cuda (d.frame, rect, bins, dres.to ().device_out,
              static_cast<uint64_t> (s.w) * s.h, nullptr));
          CUVTEST_CHECK_CUDA (cudaDeviceSynchronize ());
          HostImage got = want;
          for (int p = 0; p < got.frame.n_planes; p++)
            got.frame.planes[p].data = got.storage.data () + (img.frame.planes[p].data - img.storage.data ());
          d.download (got);
          std::string what = std::string ("overlay ") + layout_name (l) + " " + std::to_string (s.w) + "x" +
              std::to_string (s.h) + " pad " + std::to_string (st.pad) + " offset " + std::to_string (st.offset) +
              " size " + std::to_string (size);
          c.expect (max_diff (want.frame, got.frame, what) == 0, what + ": GPU differs from the CPU reference");
          c.expect (want.storage == got.storage, what + ": bytes outside the image differ");
        }
      }
    }
  }
}

}  // namespace

int main (int argc, char **argv)
{
  Checker c;
  return run_gpu_parts (argc, argv, "test_histogram_gpu", c, {
      {"flat", [&] { test_flat (c); }},
      {"too_large", [&] { test_too_large (c); }},
      {"histogram", [&] { test_histogram (c); }},
      {"overlay", [&] { test_overlay (c); }}});
}
