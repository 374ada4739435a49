/* gst-cudavision: what a temporal element keeps of the previous input frame (docs/design.md,
 * "Temporal elements"): the frame (PreviousFrame), or only its luma plane (PreviousLuma).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Kept the cheapest way the input allows:
 * - CUDA memory of the element's context: a reference on the input buffer itself, no copy, when
 *   its pool can spare it (no pool, or an unbounded one; the base class asks upstream for one
 *   more buffer in the allocation query). A bounded pool (a decoder's fixed pool) could stall
 *   while we hold one of its buffers, so then a device copy is kept instead.
 * - System memory with the CUDA backend: the staging buffer the frame was uploaded into; the
 *   base class alternates two of them, so this costs no copy either.
 * - The CPU backend: system memory out of place held by reference as CUDA memory is (when its
 *   pool can spare it), else a host copy.
 * Forgotten on FLUSH_STOP, on a caps change of the frames (it lives in the caps state; a change of
 * memory only hands it on, take ()) and on a DISCONT buffer. */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <vector>

#include "common/base/cuvcuda.h"
#include "kernels/base/image.h"

namespace cuv {

class PreviousFrame {
 public:
  PreviousFrame () = default;
  ~PreviousFrame () { reset (); }
  PreviousFrame (const PreviousFrame &) = delete;
  PreviousFrame &operator= (const PreviousFrame &) = delete;

  void reset ();

  /* Takes over @from's frame (and its storage, so that the view stays valid); @from is left
   * empty. Neither may be between begin () and end (). */
  void take (PreviousFrame &from);

  /* The view for this frame's transform (mapping a held buffer as @info describes, with
   * GST_MAP_CUDA when @device), or null when there is none; valid until end (). */
  const Frame *begin (const GstVideoInfo *info, PixelLayout layout, bool device);
  /* After the frame's work completed (the stream synchronized): unmaps, and lets go of a held
   * buffer that was replaced. */
  void end ();

  /* Whether upstream can spare @buf while we hold it (see above); caches the verdict per pool. */
  bool can_hold (GstObject *owner, GstBuffer *buf);

  /* After a frame: remember it. hold () comes after end (); the others may come before it (a
   * replaced buffer is then let go of in end ()). */
  void hold (GstBuffer *buf);
  void keep_view (const Frame &view);
  void keep_host_copy (const Frame &view);
#if CUV_HAVE_CUDA
  /* Copies @view into a device buffer of @ctx on @stream (the caller synchronizes before end ()). */
  cudaError_t keep_device_copy (GstCudaContext *ctx, const Frame &view, cudaStream_t stream);
#endif

 private:
  void set_view (const Frame &view);

  enum class Kind { None, Held, View };
  Kind kind_ = Kind::None;
  GstBuffer *held_ = nullptr;
  GstVideoFrame map_{};
  bool mapped_ = false;
  Frame view_{};
  GstBufferPool *checked_pool_ = nullptr;
  bool pool_ok_ = false;
  std::vector<uint8_t> host_;
#if CUV_HAVE_CUDA
  CudaBuffer device_;
#endif
};

/* The previous frame's luma plane, for an element that compares luma only (`temporal_luma`,
 * gstcudavisionfilter.h): two planes of the frame's size that alternate, on the host for the CPU
 * backend and on the device for the CUDA backend, which the element writes each frame's luma
 * into. It never holds an upstream buffer, so the element may work in place. Forgotten where
 * PreviousFrame is (the base class calls forget () from the same place). */
class PreviousLuma {
 public:
  PreviousLuma () = default;
  PreviousLuma (const PreviousLuma &) = delete;
  PreviousLuma &operator= (const PreviousLuma &) = delete;

  /* For this frame on the host: the plane its luma goes into (@current) and the previous
   * frame's (@previous, NULL when there is none), @width x @height. */
  void begin_host (int width, int height, Plane *current, const Plane **previous);
#if CUV_HAVE_CUDA
  /* The same on the device of @ctx (current), allocated on first use. */
  cudaError_t begin_device (GstCudaContext *ctx, int width, int height, Plane *current, const Plane **previous);
#endif
  /* After the element's transform: with @ok, this frame's plane becomes the previous one. */
  void end (bool ok);
  /* Forgets the previous plane (the memory stays for the next frame). */
  void forget () { have_previous_ = false; }
  /* Frees the planes (a caps change of the frames, stop; the GPU is done with them). */
  void release ();

 private:
  int width_ = 0;
  int height_ = 0;
  bool device_ = false;
  int current_ = 0;
  bool begun_ = false;
  bool have_previous_ = false;
  Plane planes_[2]{};
  Plane previous_{};

  /* the planes' shape for this frame: false when they must be made */
  bool shaped (int width, int height, bool device);
  void hand_out (Plane *current, const Plane **previous);
  std::vector<uint8_t> host_[2];
#if CUV_HAVE_CUDA
  CudaBuffer device_planes_[2];
#endif
};

}  // namespace cuv
