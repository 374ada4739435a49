/* The histogram kernel and the overlay kernel against their CPU references: every layout,
 * DESIGN.md's sizes, tight, padded and unaligned pitches, several ROIs and bin counts, and flat
 * frames (every thread of a warp in one bin). Exits 77 without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cstring>

#include "cuvdevice.h"
#include "histogram.h"

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

/* Two partials slots, as the element alternates them: a launch adds into ptr (zero on entry) and
 * zeroes next. */
struct DeviceResult {
  cuv::HistogramPartials *ptr = nullptr;
  cuv::HistogramPartials *next = nullptr;
  DeviceResult ()
  {
    CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&ptr), 2 * sizeof (*ptr)));
    next = ptr + 1;
    prepare ();
  }
  ~DeviceResult () { cudaFree (ptr); }
  /* ptr zero, next holding stale values that the launch must clear */
  void prepare ()
  {
    CUVTEST_CHECK_CUDA (cudaMemset (ptr, 0, sizeof (*ptr)));
    CUVTEST_CHECK_CUDA (cudaMemset (next, 0x5a, sizeof (*next)));
  }
  static cuv::HistogramPartials get (const cuv::HistogramPartials *p)
  {
    cuv::HistogramPartials r;
    CUVTEST_CHECK_CUDA (cudaMemcpy (&r, p, sizeof (r), cudaMemcpyDeviceToHost));
    return r;
  }
  /* this launch's partials, summed as the element sums them */
  cuv::HistogramResult get (int bins, cuv::PixelLayout l) const
  {
    const cuv::HistogramPartials p = get (ptr);
    cuv::HistogramResult r;
    cuv::histogram_finish (p, bins, l, &r);
    return r;
  }
  bool next_cleared () const
  {
    const cuv::HistogramPartials r = get (next);
    const uint8_t *b = reinterpret_cast<const uint8_t *> (&r);
    for (size_t i = 0; i < sizeof (r); i++)
      if (b[i])
        return false;
    return true;
  }
};

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
  cuv::histogram_cpu (img.frame, roi, bins, &ref);
  dres.prepare ();
  CUVTEST_CHECK_CUDA (cuv::histogram_cuda (d.frame, roi, dres.ptr, dres.next, nullptr));
  CUVTEST_CHECK_CUDA (cudaDeviceSynchronize ());
  std::string diff = result_diff (ref, dres.get (bins, img.frame.layout));
  c.expect (diff.empty (), what + ": GPU differs from the CPU reference (" + diff + ")");
  c.expect (dres.next_cleared (), what + ": the next frame's result slot was not zeroed");
}

void test_histogram (Checker &c, DeviceResult &dres)
{
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
void test_flat (Checker &c, DeviceResult &dres)
{
  for (cuv::PixelLayout l : {cuv::PixelLayout::RGBA, cuv::PixelLayout::GRAY8}) {
    HostImage img (l, 1920, 1080, 0);
    std::memset (img.storage.data (), 255, img.storage.size ());
    compare (c, img, {0, 0, 1920, 1080}, 256, dres, std::string ("histogram flat ") + layout_name (l));
  }
}

/* A region of 2^32 pixels or more would overflow the 32-bit partial counts: refused, no launch. */
void test_too_large (Checker &c, DeviceResult &dres)
{
  HostImage img (cuv::PixelLayout::GRAY8, 16, 16, 0);
  DeviceImage d (img);
  c.expect (cuv::histogram_cuda (d.frame, {0, 0, 65536, 65536}, dres.ptr, dres.next, nullptr) == cudaErrorInvalidValue,
      "a region of 2^32 pixels is refused");
  c.expect (cudaGetLastError () == cudaSuccess, "the refusal leaves no CUDA error behind");
}

void test_overlay (Checker &c, DeviceResult &dres)
{
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
          cuv::histogram_cpu (img.frame, roi, bins, &ref);
          HostImage want = img;
          want.frame = img.frame;
          for (int p = 0; p < want.frame.n_planes; p++)
            want.frame.planes[p].data = want.storage.data () + (img.frame.planes[p].data - img.storage.data ());
          cuv::histogram_overlay_cpu (want.frame, rect, bins, ref, static_cast<uint64_t> (s.w) * s.h);
          dres.prepare ();
          CUVTEST_CHECK_CUDA (cuv::histogram_cuda (d.frame, roi, dres.ptr, dres.next, nullptr));
          CUVTEST_CHECK_CUDA (cuv::histogram_overlay_cuda (d.frame, rect, bins, dres.ptr, static_cast<uint64_t> (s.w) * s.h, nullptr));
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
  if (!have_gpu ()) {
    std::printf ("no usable CUDA device: skipped\n");
    return kSkip;
  }
  Checker c;
  DeviceResult dres;
  return run_parts (argc, argv, "test_histogram_gpu", c, {
      {"flat", [&] { test_flat (c, dres); }},
      {"too_large", [&] { test_too_large (c, dres); }},
      {"histogram", [&] { test_histogram (c, dres); }},
      {"overlay", [&] { test_overlay (c, dres); }}});
}
