/* gst-cudavision: what GstCudaVisionFilter's per-frame route holds: the caps state (the infos,
 * the memory type of each side, the staging buffers, a temporal element's previous frame), the
 * element's operation and the Route from start to stop (context, backend, streams, the frames in
 * flight, what a temporal element keeps): what lives from start to stop, nothing of one frame
 * (cuvframetask.h holds that). The base class (gstcudavisionfilter.cpp) owns a Route and takes
 * each buffer through it on the backend chosen at start (process_cpu, cuvcpuroute.h;
 * process_cuda, cuvcudaroute.h). Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "common/base/cuvcuda.h"
#include "common/route/cuvframe.h"
#include "common/route/cuvframejob.h"
#include "common/route/cuvprevious.h"
#include "common/results/cuvframeresults.h"
#include "common/results/cuvresultsmeta.h"
#include "common/cuda/cuvstreampool.h"
#include "common/route/cuvtemporal.h"

typedef struct _GstCudaVisionFilter GstCudaVisionFilter;

/* What one negotiation fixes: the infos, the memory type of each side and, for the CUDA
 * backend, the staging buffers of a side that is system memory (allocated on first use). */
struct CapsState {
  GstVideoInfo in_info;
  GstVideoInfo out_info;
  cuv::PixelLayout in_layout;
  cuv::PixelLayout out_layout;
  bool in_cuda_caps = false;
  bool out_cuda_caps = false;
#if CUV_HAVE_CUDA
  /* a device frame for a side in system memory */
  struct Staging {
    cuv::CudaBuffer device;
    cuv::Frame device_frame{};
    /* page-locked, laid out as device_frame: where pageable memory is copied on its way up or
     * down (cuvhostcopy.h); made on first use */
    cuv::CudaBuffer host;
    cuv::Frame host_frame{};
  };
  Staging in_stage;
  Staging out_stage;
  /* a temporal element's previous staged input; it and in_stage swap after each frame */
  Staging prev_stage;
  /* the CPU backend's host copies of CUDA-memory frames */
  std::vector<uint8_t> cpu_in_host;
  std::vector<uint8_t> cpu_out_host;
#endif
  /* temporal elements only */
  cuv::PreviousFrame previous;

  /* Takes over @from's previous frame, with the staging buffer it may live in: for caps that
   * describe the same frames in another memory (the stream goes on). */
  void take_previous (CapsState &from)
  {
    previous.take (from.previous);
#if CUV_HAVE_CUDA
    prev_stage = std::move (from.prev_stage);
#endif
  }
};

namespace cuv {

/* The element's operation, from its class (gstcudavisionfilter.h documents each). */
struct Operation {
  GstFlowReturn (*transform_cpu) (GstCudaVisionFilter *self, const FrameJob *job) = nullptr;
  GstFlowReturn (*transform_cuda) (GstCudaVisionFilter *self, const FrameJob *job) = nullptr;
  gboolean (*writes_frame) (GstCudaVisionFilter *self, const FrameResults *results) = nullptr;
  std::shared_ptr<FrameResults> (*begin_results) (GstCudaVisionFilter *self, GstBuffer *inbuf) = nullptr;
  void (*frame_finished) (GstCudaVisionFilter *self, GstBuffer *outbuf, FrameResults *results) = nullptr;
  bool temporal = false;
  /* the element reads results on the host after each frame (the analysers): its stream is always
   * waited for before the push */
  bool host_results = false;
};

/* One element's route from start to stop. The base class sets it up at start (context, backend,
 * stream), replaces the caps state in set_caps and clears it at stop. */
struct Route {
  Operation op;
  GstCudaContext *context = nullptr; /* owned: the element's context, from start to stop */
  bool use_cuda = false;
#if CUV_HAVE_CUDA
  StreamLease stream;
  /* a second stream, for uploads that overlap the last frame's work (queues_ahead; leased at the
   * first such frame, returned at stop) */
  StreamLease upload;
  /* streaming thread: the stream the last frame ran on (cuvcudaroute.cpp), and on 1.24+ a reference
   * to it, which keeps a neighbour's stream alive until we have waited for it */
  cudaStream_t last_stream = nullptr;
  GstCudaStream *last_gst_stream = nullptr;
  /* decided in decide_allocation: what reads our CUDA output is an element of ours that orders
   * itself after our stream on the GPU (1.22, cuvsync.h: consumer_follows_writers) */
  std::atomic<bool> consumer_follows{false};
  /* decided with it: what reads our output completes an analyser's results that follow the
   * frame (all versions, cuvresultsmeta.h) */
  std::atomic<bool> consumer_completes{false};
  /* streaming thread: the last frames' own results not yet published, oldest first: published
   * once their push has returned, unless an element of ours on this thread holds the frame in
   * flight (at most two) */
  std::deque<std::shared_ptr<PendingResults>> deferred;
#endif
  /* what a temporal element keeps of the previous frame, and where it is forgotten */
  Temporal temporal;
  /* streaming thread: whether CUDA memory of another context was warned about (once a start) */
  bool warned_other_context = false;
#if CUV_HAVE_CUDA
  /* streaming thread: the frames whose work was queued on the GPU and not yet waited for, oldest
   * first (two at most, and only while queues_ahead () queues the next before the last is waited
   * for); their buffers' references, and an analyser's results value of the frame, are the
   * route's until finish_in_flight () or drop_in_flight () */
  struct InFlight {
    std::shared_ptr<CapsState> state;
    GstBuffer *inbuf = nullptr; /* NULL when in place */
    GstBuffer *outbuf = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr; /* recorded on @stream after the frame's work */
    bool in_dev = false;
    bool out_dev = false;
    bool hold = false; /* a temporal element keeps inbuf as its previous frame */
    Results results;   /* upstream analysers', put on outbuf after the wait */
    std::shared_ptr<FrameResults> own; /* the element's own results value, published after the wait */
  };
  std::deque<InFlight> in_flight;
  /* which of the stream's two done events the next frame in flight records */
  unsigned next_done = 0;
#endif

  Route () = default;
  Route (const Route &) = delete;
  Route &operator= (const Route &) = delete;
#if CUV_HAVE_CUDA
  ~Route () { forget_streams (); }

  /* At stop: the streams of neighbours and the last frame's (before the lease goes back), and the
   * upload stream. */
  void forget_streams ()
  {
    set_downstream_stream (nullptr);
    replace_stream (&last_gst_stream, nullptr);
    last_stream = nullptr;
    upload.release ();
  }

  /* The stream that the pools we make or propose carry (1.24+; NULL on 1.22): downstream's, when
   * the pool we write into came with one (set_downstream_stream, from decide_allocation), else
   * our own. A new reference. */
  GstCudaStream *pool_stream () const
  {
    std::lock_guard<std::mutex> lk (lock_);
    GstCudaStream *s = nullptr;
    replace_stream (&s, downstream_stream_ ? downstream_stream_ : stream.gst_stream ());
    return s;
  }
  void set_downstream_stream (GstCudaStream *s)
  {
    std::lock_guard<std::mutex> lk (lock_);
    replace_stream (&downstream_stream_, s);
  }
#endif

  /* A frame's job (cuvframejob.h) of @in into @out, for the backend's transform: the context, the
   * CPU backend's @threads bands and, for a temporal_luma element, this frame's luma plane and the
   * previous one, on the device where @device, else on the host. The previous frame is the
   * backend's to add. False (logged) where device memory for the planes could not be had. */
  bool begin_job (GstObject *self, const CapsState &st, bool device, int threads, const Frame &in, const Frame &out,
      FrameJob *job);

  /* At stop, before the element frees what it keeps: the last frame's work, which may still run
   * (1.24+, cuvsync.h) on what the caps state holds, ends. */
  void finish_last_frame ();
  /* At stop, after that: the caps state, the streams and the context go. */
  void close ();

  /* The caps state: replaced by set_caps, read by each frame. */
  std::shared_ptr<CapsState> state () const
  {
    std::lock_guard<std::mutex> lk (lock_);
    return state_;
  }
  /* Sets the caps state (NULL at stop); returns whether there was one. */
  bool set_state (std::shared_ptr<CapsState> s)
  {
    std::lock_guard<std::mutex> lk (lock_);
    const bool had = state_ != nullptr;
    state_ = std::move (s);
    return had;
  }

 private:
  mutable std::mutex lock_;
  std::shared_ptr<CapsState> state_;
#if CUV_HAVE_CUDA
  GstCudaStream *downstream_stream_ = nullptr;
#endif
};

}  // namespace cuv
