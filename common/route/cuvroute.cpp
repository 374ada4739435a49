/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GstCudaVisionFilter's route from start to stop: its end at stop (cuvroute.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/route/cuvroute.h"

void
cuv::Route::finish_last_frame ()
{
#if CUV_HAVE_CUDA
  if (!last_stream)
    return;
  ContextGuard guard (context);
  if (guard.ok ())
    cudaStreamSynchronize (last_stream);
#endif
}

void
cuv::Route::close ()
{
  set_state (nullptr);
#if CUV_HAVE_CUDA
  forget_streams ();
  stream.release ();
  consumer_follows = false;
  consumer_completes = false;
  for (const std::shared_ptr<PendingResults> &d : deferred)
    d->cancel ();
  deferred.clear ();
#endif
  gst_clear_object (&context);
  use_cuda = false;
}

bool
cuv::Route::begin_job (GstObject *self, const CapsState &st, bool device, int threads, const Frame &in, const Frame &out,
    FrameJob *job)
{
  job->in = &in;
  job->out = &out;
  job->context = context;
  job->threads = threads;
  return !temporal.keeps_luma () ||
      temporal.luma_planes (self, context, device, GST_VIDEO_INFO_WIDTH (&st.in_info), GST_VIDEO_INFO_HEIGHT (&st.in_info),
          &job->luma, &job->previous_luma);
}
