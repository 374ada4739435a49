/* gst-cudavision: a frame's difference to the previous one as cudaheatmap and cudanoisemap both
 * measure it: the statistics of their operation (kernels/difference/difference.h) on either
 * backend, the first frame compared with itself (docs/design.md, "Temporal elements"), and the
 * memory the CUDA kernel's statistics come back through (common/results/cuvresults.h). What the
 * statistics mean, and the operation's parameters, are the element's. The statistics are the
 * frame's, in its results value (cuv::DifferenceResults); the element keeps one FrameDifference
 * for what spans frames. Two elements share it, so it is common/'s; element/'s, as it reports its
 * errors on the element and takes the frame's job (cuvframejob.h, below). Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "common/base/cuvcpupool.h"
#include "common/base/cuvcuda.h"
#include "common/element/gstcudavisionfilter.h"
#include "common/results/cuvframeresults.h"
#include "common/results/cuvresults.h"
#include "common/route/cuvframejob.h"
#include "kernels/difference/difference.h"

namespace cuv {

/* One frame's difference to the previous one, a results value (common/results/cuvframeresults.h):
 * cudaheatmap's, and the part of cudanoisemap's that FrameDifference writes. Published before the
 * element's next frame runs (a temporal element does not defer its results), so the CUDA
 * backend's statistics may stay in FrameDifference's page-locked memory. */
class DifferenceResults : public FrameResults {
 public:
  /* end_frame: whether the frame was measured. */
  bool measured () const { return stats_ != nullptr; }

  /* The frame's statistics, once measured; the CUDA backend's may be read once the base class has
   * waited for the frame's stream. */
  const DiffStats &stats () const { return *stats_; }

  /* Whether the frame had no previous frame and was compared with itself. */
  bool first_frame () const { return first_frame_; }

 private:
  friend class FrameDifference;
  const DiffStats *stats_ = nullptr; /* on the host once measured: cpu_stats_, or the kernel's */
  DiffStats cpu_stats_{};
  bool first_frame_ = false;
};

class FrameDifference {
 public:
  /* begin_frame: @results (a value of an earlier frame, reused) has no statistics until the
   * frame's transform gives them. */
  static void begin_frame (FrameResults *results) { value (results)->stats_ = nullptr; }

  /* transform_cpu: @op over the job's frames in bands of row pairs on the CPU backend's workers,
   * the bands' statistics added (light_bands: the operation is a few instructions a byte), into
   * the job's results value. */
  template <typename Params> static void run_cpu (const FrameJob &job, DiffCpu<Params> op, const Params &params)
  {
    DifferenceResults *r = value (job.results);
    const Frame &cur = *job.in, &out = *job.out;
    const Frame &prev = compared_with (job, r);
    r->cpu_stats_ = sum_over_row_pairs<DiffStats> (cur.height, light_bands (job.threads, cur),
        [&] (int y0, int y1) { return diff_rows_cpu (op, cur, prev, out, params, y0, y1); }, add_band_stats);
    r->stats_ = &r->cpu_stats_;
  }

#if CUV_HAVE_CUDA
  /* transform_cuda, before the frame's launch: the statistics' memory, made at the first frame and
   * zeroed on the job's stream ahead of the first launch. No work is queued once it is made. */
  bool ensure (GstCudaVisionFilter *filter, const FrameJob &job)
  {
    return CUV_CUDA_OK (filter, results_.ensure (job.context, job.stream));
  }

  /* Then @op on the job's stream, its statistics written by the kernel into page-locked memory,
   * which the job's results value points to: no copy and no host wait of its own (the base class
   * waits for the frame once). */
  template <typename Params>
  bool launch (GstCudaVisionFilter *filter, const FrameJob &job, DiffCuda<Params> op, const Params &params)
  {
    DifferenceResults *r = value (job.results);
    const Frame &prev = compared_with (job, r);
    if (!CUV_CUDA_OK (filter, op (*job.in, prev, *job.out, params, results_.to (), job.stream))) {
      results_.launch_failed ();
      return false;
    }
    r->stats_ = &results_.host ();
    return true;
  }
#endif

  /* release: at stop, once the frames in flight are finished and their results published. */
  void release ()
  {
#if CUV_HAVE_CUDA
    results_.reset ();
#endif
  }

 private:
  /* the element's value is a DifferenceResults, or derives from it */
  static DifferenceResults *value (FrameResults *results) { return static_cast<DifferenceResults *> (results); }

  /* what the job's frame is compared with: the previous frame, or without one the frame itself,
   * which gives no difference anywhere */
  static const Frame &compared_with (const FrameJob &job, DifferenceResults *r)
  {
    r->first_frame_ = job.previous == nullptr;
    return r->first_frame_ ? *job.in : *job.previous;
  }

#if CUV_HAVE_CUDA
  ResultBuffers<DiffStats, DiffStats> results_;
#endif
};

}  // namespace cuv
