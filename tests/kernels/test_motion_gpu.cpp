/* The motion search, luma, drawing and votes kernels against their CPU references: every block mode,
 * ranges from 1 to 64 (one, two and four passes of 32 dx), the sizes of docs/testing.md, padded and
 * unaligned pitches, related and unrelated content. Vectors past the grid and bytes outside the
 * image stay untouched. Exits 77 without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cstring>
#include <memory>
#include <random>

#include "tests/common/cuvdevice.h"
#include "tests/common/cuvmotion.h"
#include "kernels/luma/luma.h"
#include "kernels/motion/motion_draw.h"

using namespace cuvtest;

namespace {

/* A device mirror of a LumaImage. */
struct DevicePlane {
  uint8_t *base = nullptr;
  cuv::Plane plane;
  size_t bytes;
  explicit DevicePlane (const LumaImage &h) : bytes (h.storage.size ())
  {
    CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&base), bytes));
    CUVTEST_CHECK_CUDA (cudaMemcpy (base, h.storage.data (), bytes, cudaMemcpyHostToDevice));
    plane = h.plane;
    plane.data = base + (h.plane.data - h.storage.data ());
  }
  ~DevicePlane () { cudaFree (base); }
  void download (LumaImage &h) const
  {
    CUVTEST_CHECK_CUDA (cudaMemcpy (h.storage.data (), base, bytes, cudaMemcpyDeviceToHost));
  }
};

template <typename T> struct DeviceArray {
  T *data = nullptr;
  size_t n;
  explicit DeviceArray (size_t n_) : n (n_) { CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&data), n * sizeof (T) + 1)); }
  DeviceArray (const std::vector<T> &v) : DeviceArray (v.size ())
  {
    CUVTEST_CHECK_CUDA (cudaMemcpy (data, v.data (), n * sizeof (T), cudaMemcpyHostToDevice));
  }
  ~DeviceArray () { cudaFree (data); }
  std::vector<T> get () const
  {
    std::vector<T> v (n);
    CUVTEST_CHECK_CUDA (cudaMemcpy (v.data (), data, n * sizeof (T), cudaMemcpyDeviceToHost));
    return v;
  }
};

constexpr int kTail = 16; /* poisoned vectors past the grid */

void compare_search (Checker &c, cuv::MotionBlock b, int w, int h, int range, Stride st, bool related)
{
  LumaImage prev (w, h, st.pad, st.offset), cur (w, h, st.pad + 8, st.offset ? 2 : 0);
  fill_texture (prev, w * 3 + h + range);
  fill_shifted (cur, prev, range / 2, -range / 3);
  std::mt19937 rng (w + range);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      if (!related || rng () % 8 == 0)
        cur.at (x, y) = static_cast<uint8_t> (rng ());
  const cuv::MotionParams params{b, range, 16};
  const cuv::MotionGrid g = cuv::motion_grid (b, w, h);
  std::vector<cuv::MotionVector> want (g.count ());
  cuv::motion_search_reference (cur.plane, prev.plane, params, want.data ());

  DevicePlane dcur (cur), dprev (prev);
  DeviceArray<cuv::MotionVector> out (g.count () + kTail);
  CUVTEST_CHECK_CUDA (cudaMemset (out.data, 0xCD, out.n * sizeof (cuv::MotionVector)));
  CUVTEST_CHECK_CUDA (cuv::motion_search_cuda (dcur.plane, dprev.plane, params, out.data, nullptr));
  CUVTEST_CHECK_CUDA (cudaDeviceSynchronize ());
  const std::vector<cuv::MotionVector> got = out.get ();
  int wrong = 0;
  for (int i = 0; i < g.count (); i++) {
    if (!same_vector (want[i], got[i]) && wrong++ == 0)
      std::fprintf (stderr, "  unit %d: GPU (%d,%d) %dx%d cost %u, CPU (%d,%d) %dx%d cost %u\n", i, got[i].dx, got[i].dy,
          got[i].width, got[i].height, got[i].cost, want[i].dx, want[i].dy, want[i].width, want[i].height,
          want[i].cost);
  }
  bool tail = true;
  const uint8_t *t = reinterpret_cast<const uint8_t *> (got.data () + g.count ());
  for (size_t i = 0; i < kTail * sizeof (cuv::MotionVector); i++)
    tail = tail && t[i] == 0xCD;
  const std::string name = std::string ("search ") + block_name (b) + " " + std::to_string (w) + "x" +
      std::to_string (h) + " R=" + std::to_string (range) + " pad " + std::to_string (st.pad) + " offset " +
      std::to_string (st.offset) + (related ? "" : " unrelated");
  c.expect (wrong == 0, name + ": " + std::to_string (wrong) + " of " + std::to_string (g.count ()) + " units differ");
  c.expect (tail, name + ": the kernel wrote past the grid");
}

void test_search (Checker &c)
{
  for (cuv::MotionBlock b : kBlocks) {
    for (Size s : {Size{1, 1}, Size{2, 2}, Size{3, 3}, Size{17, 13}, Size{40, 33}})
      for (int range : {1, 3, 16, 20, 64})
        for (Stride st : strides_for (s))
          compare_search (c, b, s.w, s.h, range, st, range != 3);
    compare_search (c, b, 96, 64, 64, Stride{0, 0}, true);
    compare_search (c, b, 641, 479, 16, Stride{3, 1}, true);
    compare_search (c, b, 641, 479, 7, Stride{64, 0}, false);
  }
  compare_search (c, cuv::MotionBlock::Variable, 641, 479, 20, Stride{0, 0}, true);
  compare_search (c, cuv::MotionBlock::Variable, 1920, 1080, 16, Stride{0, 0}, true);
  compare_search (c, cuv::MotionBlock::B16, 1920, 1080, 8, Stride{3, 1}, false);
  compare_search (c, cuv::MotionBlock::Variable, 3840, 2160, 4, Stride{0, 0}, true);
}

void test_luma (Checker &c)
{
  for (cuv::PixelLayout l : kAll) {
    for (Size s : sizes (true)) {
      for (Stride st : strides_for (s)) {
        HostImage in (l, s.w, s.h, st.pad, st.offset);
        fill_pattern (in.storage, s.w * 5 + s.h);
        LumaImage want (s.w, s.h, st.pad + 4, st.offset), got (s.w, s.h, st.pad + 4, st.offset);
        std::fill (want.storage.begin (), want.storage.end (), kPoison);
        std::fill (got.storage.begin (), got.storage.end (), kPoison);
        cuv::luma_plane_cpu (in.frame, want.plane);
        DeviceImage din (in);
        din.upload (in);
        DevicePlane dout (got);
        CUVTEST_CHECK_CUDA (cuv::luma_plane_cuda (din.frame, dout.plane, nullptr));
        CUVTEST_CHECK_CUDA (cudaDeviceSynchronize ());
        dout.download (got);
        c.expect (want.storage == got.storage, std::string ("luma ") + layout_name (l) + " " + std::to_string (s.w) +
                "x" + std::to_string (s.h) + " pad " + std::to_string (st.pad) + " offset " +
                std::to_string (st.offset) + ": GPU bytes (image and padding) differ from the CPU reference");
      }
    }
  }
}

/* Arrows and wheel on every layout, from the vectors of a real search. */
void test_draw (Checker &c)
{
  for (cuv::PixelLayout l : kAll) {
    for (Size s : {Size{3, 3}, Size{17, 13}, Size{67, 45}, Size{641, 479}}) {
      for (cuv::MotionBlock b : {cuv::MotionBlock::Variable, cuv::MotionBlock::B16}) {
        const int range = 6;
        LumaImage prev (s.w, s.h), cur (s.w, s.h);
        fill_texture (prev, s.w);
        fill_texture (cur, s.h);
        const cuv::MotionGrid g = cuv::motion_grid (b, s.w, s.h);
        std::vector<cuv::MotionVector> v (g.count ());
        cuv::motion_search_cpu (cur.plane, prev.plane, cuv::MotionParams{b, range, 0}, v.data ());
        const std::vector<uint32_t> table = cuv::motion_color_table (range, l, 0.2126, 0.0722, true);
        const uint32_t black = cuv::motion_frame_color (l, 0.2126, 0.0722, true, 0, 0, 0);
        const cuv::ArrowColors colors{cuv::motion_frame_color (l, 0.2126, 0.0722, true, 0, 255, 0),
            cuv::motion_frame_color (l, 0.2126, 0.0722, true, 255, 0, 0)};
        DeviceArray<cuv::MotionVector> dv (v);
        DeviceArray<uint32_t> dt (table);
        for (int mode = 0; mode < 2; mode++) {
          HostImage want (l, s.w, s.h, 5, 1), got (l, s.w, s.h, 5, 1);
          fill_pattern (want.storage, 3);
          DeviceImage dimg (want);
          dimg.poison ();
          CUVTEST_CHECK_CUDA (cudaMemcpy (dimg.base, want.storage.data (), want.storage.size (), cudaMemcpyHostToDevice));
          if (mode == 0) {
            cuv::motion_arrows_cpu (v.data (), g, colors, want.frame);
            CUVTEST_CHECK_CUDA (cuv::motion_arrows_cuda (dv.data, g, colors, dimg.frame, nullptr));
          } else {
            cuv::motion_wheel_cpu (v.data (), g, table.data (), range, black, want.frame);
            CUVTEST_CHECK_CUDA (cuv::motion_wheel_cuda (dv.data, g, dt.data, range, black, dimg.frame, nullptr));
          }
          CUVTEST_CHECK_CUDA (cudaDeviceSynchronize ());
          dimg.download (got);
          c.expect (want.storage == got.storage, std::string (mode ? "wheel " : "arrows ") + layout_name (l) + " " +
                  block_name (b) + " " + std::to_string (s.w) + "x" + std::to_string (s.h) +
                  ": GPU bytes (image and padding) differ from the CPU reference");
        }
      }
    }
  }
}

/* The votes kernel against motion_votes_cpu: ranges 1 to 64, unit counts around a block's 4,096
 * and up to 3840x2160's 518,400, vectors all different, all the same (a warp's lanes on one
 * count) and from a real search, thresholds that no unit, some and every non-zero unit passes;
 * launches one after another on the same accumulator (each must find it zeroed), and the votes
 * outside the launch's range left as they were in the host's results. */
void test_votes (Checker &c)
{
  cuv::MotionVotes *accum = nullptr, *out = nullptr;
  unsigned int *ticket = nullptr;
  CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&accum), sizeof (cuv::MotionVotes)));
  CUVTEST_CHECK_CUDA (cudaMalloc (reinterpret_cast<void **> (&ticket), sizeof (unsigned int)));
  CUVTEST_CHECK_CUDA (cudaMallocHost (reinterpret_cast<void **> (&out), sizeof (cuv::MotionVotes)));
  CUVTEST_CHECK_CUDA (cudaMemset (accum, 0, sizeof (cuv::MotionVotes)));
  CUVTEST_CHECK_CUDA (cudaMemset (ticket, 0, sizeof (unsigned int)));
  const cuv::ResultsTo<cuv::MotionVotes, cuv::MotionVotes> to{accum, ticket, out, nullptr};
  std::mt19937 rng (7);
  auto check = [&] (const std::vector<cuv::MotionVector> &v, int range, uint32_t threshold, const std::string &what) {
    auto want = std::make_unique<cuv::MotionVotes> ();
    std::memset (want.get (), 0, sizeof (cuv::MotionVotes));
    cuv::motion_votes_cpu (v.data (), static_cast<int> (v.size ()), threshold, want.get ());
    std::memset (out, 0xa5, sizeof (cuv::MotionVotes));
    DeviceArray<cuv::MotionVector> dv (v);
    CUVTEST_CHECK_CUDA (cuv::motion_votes_cuda (dv.data, static_cast<int> (v.size ()), range, threshold, to, nullptr));
    CUVTEST_CHECK_CUDA (cudaDeviceSynchronize ());
    int wrong = 0, outside = 0;
    for (int dy = -cuv::kMotionMaxRange; dy < cuv::kMotionMaxRange; dy++)
      for (int dx = -cuv::kMotionMaxRange; dx < cuv::kMotionMaxRange; dx++) {
        const int k = cuv::motion_vote_index (dx, dy);
        if (dx >= -range && dx < range && dy >= -range && dy < range)
          wrong += out->votes[k] != want->votes[k];
        else
          outside += out->votes[k] != 0xa5a5a5a5u;
      }
    const std::string name = what + ", " + std::to_string (v.size ()) + " units, range " + std::to_string (range) +
        ", threshold " + std::to_string (threshold);
    c.expect (wrong == 0, name + ": " + std::to_string (wrong) + " votes differ from the CPU reference");
    c.expect (outside == 0, name + ": " + std::to_string (outside) + " votes outside the range were written");
    c.expect (out->moving == want->moving, name + ": " + std::to_string (out->moving) + " moving units, the CPU " +
            std::to_string (want->moving));
  };
  for (int range : {1, 3, 16, 64}) {
    for (int n : {1, 31, 4095, 4096, 4097, 129600, 518400}) {
      std::vector<cuv::MotionVector> random (n), same (n);
      std::uniform_int_distribution<int> d (-range, range - 1), size (0, 2), cost (0, 4096);
      for (cuv::MotionVector &v : random) {
        const auto side = static_cast<uint8_t> (4 << size (rng));
        v = cuv::MotionVector{static_cast<int8_t> (d (rng)), static_cast<int8_t> (d (rng)), side, side,
            static_cast<uint32_t> (cost (rng))};
      }
      for (cuv::MotionVector &v : same)
        v = cuv::MotionVector{static_cast<int8_t> (-range), static_cast<int8_t> (range - 1), 8, 8, 100};
      for (uint32_t threshold : {0u, 16u, 1000000u}) {
        check (random, range, threshold, "random vectors");
        check (same, range, threshold, "one vector");
      }
    }
  }
  for (int range : {4, 16}) {
    LumaImage prev (641, 479), cur (641, 479);
    fill_texture (prev, 11);
    fill_shifted (cur, prev, range / 2, -range / 3);
    const cuv::MotionGrid g = cuv::motion_grid (cuv::MotionBlock::Variable, 641, 479);
    std::vector<cuv::MotionVector> v (g.count ());
    cuv::motion_search_cpu (cur.plane, prev.plane, cuv::MotionParams{cuv::MotionBlock::Variable, range, 16}, v.data ());
    check (v, range, 16, "a search's vectors");
  }
  cudaFreeHost (out);
  cudaFree (ticket);
  cudaFree (accum);
}

}  // namespace

int main (int argc, char **argv)
{
  Checker c;
  return run_gpu_parts (argc, argv, "motion-gpu", c, {
      {"luma", [&] { test_luma (c); }},
      {"draw", [&] { test_draw (c); }},
      {"search", [&] { test_search (c); }},
      {"votes", [&] { test_votes (c); }}});
}
