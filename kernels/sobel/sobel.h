/* gst-cudavision: 3x3 Sobel edge magnitude.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Semantics, identical in both backends (bit-exact):
 *   gx, gy   the 3x3 Sobel responses, border pixels replicated;
 *   m        min(255, floor(fma(scale, sqrtf(gx^2 + gy^2), 0.5))), IEEE float: the root
 *            correctly rounded, scale * root + 0.5 rounded once (a fused multiply-add);
 *   output   threshold == 0 ? m : (m >= threshold ? 255 : 0).
 * RGB layouts: Color mode filters R, G and B independently; Luma mode filters the BT.601 luma
 * ((77 R + 150 G + 29 B) >> 8) and writes it to R, G and B. The fourth byte (alpha or x) is copied.
 * GRAY8: the single plane. NV12/I420: the luma plane; chroma is set to 128 (neutral grey).
 * YUY2/UYVY: the Y bytes, as a plane of the row's whole pairs (an odd width's padding pixel is
 * filtered with the others); U and V are set to 128. P010: the Y samples' top 8 bits, as NV12's
 * plane; the magnitude m is written as m << 8, chroma as 128 << 8 (docs/design.md). */
#pragma once

#include <vector>

#include "kernels/base/image.h"

#if CUV_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace cuv {

enum class SobelMode : int {
  Color,
  Luma,
};

struct SobelParams {
  SobelMode mode;
  float scale;
  int threshold;
  /* GPU only: take the magnitude from the hardware's approximate square root, which is faster;
   * set it only where sobel_fast_root_exact_cuda found it exact for this scale and device */
  bool fast_root = false;
};

/* The plain definition, per pixel as sobel_math.h states it: src and dst have the same layout and
 * size and must not overlap. The tests hold the fast version below and the kernels to it. */
void sobel_reference (const Frame &src, const Frame &dst, const SobelParams &params);

/* The output byte of each energy, from the energies where it steps up (sobel_threshold_energy):
 * table[e] below table.size (), @above from there on. Built once for a frame's bands. */
struct SobelOutput {
  std::vector<uint8_t> table;
  uint8_t above = 255;
  /* table, then @above, then 3 bytes: lookup[min (e, table.size ())] for every energy, and whole
   * 32-bit words at each of those indices for SIMD gathers */
  std::vector<uint8_t> lookup;
};
SobelOutput sobel_output (float scale, int threshold);

/* One output row of adjacent samples (a gray plane, or luma rows), from the rows above (@t), at
 * (@m) and below (@b), edges replicated, in SIMD (sobel_simd.cpp). */
void sobel_bytes_row (const uint8_t *t, const uint8_t *m, const uint8_t *b, int w, const SobelOutput &o, uint8_t *out);

/* The bytes at 2 x + @yb of @px for x < @w into @out: the luma of a YUY2/UYVY row (@w its plane's
 * width) or P010's high bytes; and back, @gray's bytes at 2 x + @yb of @o with @other between them
 * (sobel_simd.cpp). */
void sobel_luma_row (const uint8_t *px, int w, int yb, uint8_t *out);
void sobel_wide_row (const uint8_t *gray, int w, int yb, uint8_t other, uint8_t *o);

/* Rows [@y0, @y1) of the frame, reading the rows around them: the same bytes as the definition;
 * bands of rows may run on several threads at once. */
void sobel_rows_cpu (const Frame &src, const Frame &dst, const SobelParams &params, const SobelOutput &output, int y0,
    int y1);

/* The whole frame on this thread. */
void sobel_cpu (const Frame &src, const Frame &dst, const SobelParams &params);

/* The largest gx^2 + gy^2 of 8-bit samples. */
constexpr int kSobelMaxEnergy = 2 * 1020 * 1020;

/* The output byte for every energy 0..kSobelMaxEnergy, as the CPU reference computes it. */
void sobel_output_table_cpu (float scale, int threshold, uint8_t *out);

#if CUV_HAVE_CUDA
/* Launches on @stream and returns the launch status; never synchronizes. */
cudaError_t sobel_cuda (const Frame &src, const Frame &dst, const SobelParams &params,
    cudaStream_t stream);

/* The same table as the GPU kernels compute it (device memory, kSobelMaxEnergy + 1 bytes), so a test
 * can compare the two backends on every possible energy. */
cudaError_t sobel_output_table_cuda (float scale, int threshold, bool fast_root, uint8_t *out, cudaStream_t stream);

/* Whether the approximate square root gives the exact magnitude bytes for @scale on the current
 * device, checked there on every energy 0..kSobelMaxEnergy. It does for scale 1 (the default):
 * sqrt(e) for integer e < 255.5^2 is never within 4.8e-4 of a half integer, far more than the
 * approximation's error. Launches on @stream, allocates and synchronizes: for tests and
 * benchmarks. */
cudaError_t sobel_fast_root_exact_cuda (float scale, bool *exact, cudaStream_t stream);

/* The same check without a wait, for the streaming thread: launches on @stream and copies the
 * count of energies the approximate root gets wrong into @host_wrong (page-locked), which is
 * final once @stream has passed this point (an event); the root is exact when it is 0.
 * @device_wrong: one device word. */
cudaError_t sobel_fast_root_check_cuda (float scale, unsigned int *device_wrong, unsigned int *host_wrong,
    cudaStream_t stream);

/* When a stream of frames may take the approximate root (SobelParams::fast_root): once
 * sobel_fast_root_check_cuda has found it exact for the frame's scale on the frame's device. A
 * new scale or device starts a check on the frame's stream that a later frame reads once it has
 * run, so a controller's ramp of the scale never waits for the GPU; until the answer is in, frames
 * take the exact root, which gives the same bytes. One check at a time. Streaming thread only;
 * its calls run with the device's context current. */
class SobelFastRoot {
 public:
  SobelFastRoot () = default;
  SobelFastRoot (const SobelFastRoot &) = delete;
  SobelFastRoot &operator= (const SobelFastRoot &) = delete;
  ~SobelFastRoot () { release (); }

  /* Sets @fast to whether frames at @scale on @device take the approximate root now. */
  cudaError_t ask (float scale, int device, cudaStream_t stream, bool *fast);
  /* Frees the check's memory and forgets the answer (a next start asks again: the device may
   * differ). */
  void release ();

 private:
  float scale_ = -1.0f; /* what the answer is for */
  int device_ = -1;
  bool fast_ = false;
  bool checking_ = false; /* a check under way, for checking_scale_ on checking_device_ */
  float checking_scale_ = 0.0f;
  int checking_device_ = -1;
  unsigned int *device_wrong_ = nullptr;
  unsigned int *host_wrong_ = nullptr; /* page-locked */
  cudaEvent_t done_ = nullptr;
};
#endif

}  // namespace cuv
