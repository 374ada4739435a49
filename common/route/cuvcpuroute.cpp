/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GstCudaVisionFilter's per-frame route: the CPU backend's frame (cuvcpuroute.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/route/cuvcpuroute.h"
#include "common/route/cuvmaps.h"
#include "common/cuda/cuvsync.h"

#define GST_CAT_DEFAULT gst_cuda_vision_debug

/* The element's transform_cpu on host views, with its job (cuvframejob.h): a temporal element
 * sees the previous frame on the host, then keeps @fin as the next one's: by a reference on @hold
 * where it may (the input buffer, which upstream's pool can spare), else as a host copy. */
static GstFlowReturn
transform_cpu (GstCudaVisionFilter *self, cuv::Route &route, const cuv::FrameTask &task, CapsState &st,
    const cuv::Frame &fin, const cuv::Frame &fout, GstBuffer *hold = nullptr)
{
  cuv::FrameJob job;
  if (!route.begin_job (GST_OBJECT (self), st, false, task.threads, fin, fout, &job))
    return GST_FLOW_ERROR;
  job.results = task.results.get ();
  if (!route.op.temporal)
    return route.op.transform_cpu (self, &job);
  job.previous = st.previous.begin (&st.in_info, st.in_layout, false);
  GstFlowReturn ret = route.op.transform_cpu (self, &job);
  st.previous.end ();
  if (ret == GST_FLOW_OK && hold)
    st.previous.hold (hold);
  else if (ret == GST_FLOW_OK)
    st.previous.keep_host_copy (fin);
  return ret;
}

#if CUV_HAVE_CUDA
/* cuv::copy_planes_async () on the legacy default stream, waited for. */
static bool
copy_planes (GstCudaVisionFilter *self, const cuv::Frame &src, const cuv::Frame &dst, cudaMemcpyKind kind)
{
  return CUV_CUDA_OK (self, cuv::copy_planes_async (src, dst, kind, nullptr)) && CUV_CUDA_OK (self, cudaStreamSynchronize (nullptr));
}

/* The CPU backend on CUDA memory of our context: GStreamer 1.22's host mapping of GstCudaMemory
 * misplaces I420 chroma, so the planes are copied through host memory here instead. */
static GstFlowReturn
process_cpu_staged (GstCudaVisionFilter *self, cuv::Route &route, const cuv::FrameTask &task, CapsState &st,
    GstBuffer *inbuf, GstBuffer *outbuf, bool in_dev, bool out_dev)
{
  const bool in_place = inbuf == outbuf;
  const bool writes = cuv::output_written (route, self, task, in_place);
  cuv::ContextGuard guard (route.context);
  if (!guard.ok ()) {
    GST_ELEMENT_ERROR (self, LIBRARY, INIT, ("Could not make the CUDA context current"), (nullptr));
    return GST_FLOW_ERROR;
  }
  auto host_frame = [] (std::vector<uint8_t> &store, const GstVideoInfo *info, cuv::PixelLayout layout) {
    store.resize (cuv::frame_bytes (cuv::padded_frame (info, layout, 4, nullptr)));
    return cuv::padded_frame (info, layout, 4, store.data ());
  };

  cuv::MappedFrames mapped (self, st, inbuf, outbuf, writes, in_dev, out_dev);
  if (!mapped.ok ())
    return GST_FLOW_ERROR;
  cuv::Frame fin = in_dev ? host_frame (st.cpu_in_host, &st.in_info, st.in_layout) : mapped.in;
  cuv::Frame fout = in_place ? fin : out_dev ? host_frame (st.cpu_out_host, &st.out_info, st.out_layout) : mapped.out;

  GstFlowReturn ret = GST_FLOW_ERROR;
  /* the copies below run on the legacy default stream, which does not wait for other streams */
  if (in_dev)
    cuv::wait_for_writer (gst_buffer_peek_memory (inbuf, 0), nullptr, nullptr);
  if (!in_dev || copy_planes (self, mapped.in, fin, cudaMemcpyDeviceToHost)) {
    ret = transform_cpu (self, route, task, st, fin, fout);
    if (ret == GST_FLOW_OK && out_dev && writes && !copy_planes (self, fout, mapped.out, cudaMemcpyHostToDevice))
      ret = GST_FLOW_ERROR;
  }
  if (ret == GST_FLOW_ERROR)
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Copying a frame between CUDA and host memory failed"), (nullptr));
  return ret;
}
#endif

GstFlowReturn
cuv::process_cpu (GstCudaVisionFilter *self, Route &route, FrameTask &task, CapsState &st, GstBuffer *inbuf,
    GstBuffer *outbuf)
{
#if CUV_HAVE_CUDA
  {
    /* read on the host, whatever memory it is in */
    cuv::before_others_read (inbuf);
    /* an upstream analyser's results followed the frame: its kernel may still read the frame,
     * which this backend reads and writes outside its stream (cuvresultsmeta.h) */
    if (!task.upstream_results.empty ()) {
      cuv::put_results_on (outbuf, std::move (task.upstream_results), nullptr);
      task.upstream_results.clear ();
    }
    const bool in_dev = cuv::is_device_buffer (route, inbuf);
    const bool out_dev = inbuf == outbuf ? in_dev : cuv::is_device_buffer (route, outbuf);
    if (in_dev || out_dev)
      return process_cpu_staged (self, route, task, st, inbuf, outbuf, in_dev, out_dev);
  }
#endif
  cuv::MappedFrames mapped (self, st, inbuf, outbuf, cuv::output_written (route, self, task, inbuf == outbuf), false, false);
  if (!mapped.ok ())
    return GST_FLOW_ERROR;
  /* out of place, the input stays as it is: held instead of copied where upstream can spare it */
  GstBuffer *hold = route.op.temporal && inbuf != outbuf && st.previous.can_hold (GST_OBJECT (self), inbuf) ? inbuf : nullptr;
  return transform_cpu (self, route, task, st, mapped.in, mapped.out, hold);
}
