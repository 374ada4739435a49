/* cudasobel and cudaenhance on the CUDA backend, against the CPU backend, through every pairing
 * of memory types on the pads (cudaupload/cudadownload around), padded strides, the context
 * shared with cudaupload, and a 30-frame pipeline as a user runs it. Exits 77 without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <algorithm>

#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>

#include "tests/check/cuvcheck.h"
#include "common/results/cuvresults.h"
#include "kernels/histogram/histogram.h"

using namespace cuvcheck;

struct Route {
  const char *name;
  const char *before;
  const char *after;
  bool in_cuda, out_cuda;
};

static const Route kRoutes[] = {
  {"system->system", "", " ! capsfilter caps=video/x-raw", false, false},
  {"system->cuda", "", " ! capsfilter caps=video/x-raw(memory:CUDAMemory) ! cudadownload", false, true},
  {"cuda->cuda", "cudaupload ! capsfilter caps=video/x-raw(memory:CUDAMemory) ! ",
      " ! capsfilter caps=video/x-raw(memory:CUDAMemory) ! cudadownload", true, true},
  {"cuda->system", "cudaupload ! capsfilter caps=video/x-raw(memory:CUDAMemory) ! ", " ! capsfilter caps=video/x-raw", true, false},
};

static bool
pad_is_cuda (GstElement *e, const char *pad_name)
{
  GstPad *pad = gst_element_get_static_pad (e, pad_name);
  GstCaps *caps = gst_pad_get_current_caps (pad);
  bool cuda = caps && gst_caps_features_contains (gst_caps_get_features (caps, 0), GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
  if (caps)
    gst_caps_unref (caps);
  gst_object_unref (pad);
  return cuda;
}

/* Pushes @in through "<before> <element> name=f <after>", checks the memory types on f's pads and
 * returns the output. */
static GstBuffer *
run_route (const Route &r, const std::string &element, const GstVideoInfo &info, GstBuffer *in)
{
  std::string launch = std::string (r.before) + element + " name=f" + r.after;
  GstHarness *h = new_harness (launch);
  gst_harness_set_src_caps_str (h, caps_for (info).c_str ());
  gst_harness_set_sink_caps_str (h, "video/x-raw");
  GstBuffer *out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  GstElement *f = gst_bin_get_by_name (GST_BIN (h->element), "f");
  fail_unless (pad_is_cuda (f, "sink") == r.in_cuda, "%s: sink pad memory is not as the route says", launch.c_str ());
  fail_unless (pad_is_cuda (f, "src") == r.out_cuda, "%s: src pad memory is not as the route says", launch.c_str ());
  gst_object_unref (f);
  gst_harness_teardown (h);
  return out;
}

/* Every mismatch is printed; the test fails at the end if there was any. With @meta, the custom
 * meta of that name must be equal too; @keeps_memory: the element keeps the memory type, so only
 * the routes with the same memory on both pads apply. */
static void
check_element (const char *element, const char *props, const GstVideoFormat *formats, size_t n_formats,
    const char *meta = nullptr, bool keeps_memory = false)
{
  int mismatches = 0, runs = 0;
  const auto sizes = cuvtest::sizes (false);
  uint32_t seed = 1;
  for (size_t i = 0; i < n_formats; i++) {
    for (cuvtest::Size s : sizes) {
      s.w = width_for (formats[i], s.w);
      cuvtest::Timer timer (std::string (element) + " " + props + " " + gst_video_format_to_string (formats[i]) + " " +
          std::to_string (s.w) + "x" + std::to_string (s.h));
      for (int pad : {0, 48}) {
        GstVideoInfo info = info_for (formats[i], s.w, s.h);
        GstBuffer *in = make_buffer (info, pad, seed++);
        GstBuffer *ref = run_once (std::string (element) + " backend=cpu " + props, info, in);
        fail_unless (ref != nullptr);
        for (const Route &r : kRoutes) {
          if ((r.in_cuda || r.out_cuda) && formats[i] == GST_VIDEO_FORMAT_GRAY8)
            continue; /* GStreamer 1.22's CUDA memory has no GRAY8 */
          if (keeps_memory && r.in_cuda != r.out_cuda)
            continue;
          for (const char *backend : {"cuda", "cpu"}) {
            if (g_str_equal (backend, "cpu") && !r.in_cuda)
              continue; /* the CPU backend on system memory is the reference itself */
            std::string e = std::string (element) + " backend=" + backend + " " + props;
            GstBuffer *out = run_route (r, e, info, in);
            std::string what = e + " " + r.name + " " + gst_video_format_to_string (formats[i]) + " " +
                std::to_string (s.w) + "x" + std::to_string (s.h) + " pad " + std::to_string (pad);
            fail_unless (out != nullptr, "%s: no output", what.c_str ());
            int d = buffer_diff (out, ref, info, what);
            if (meta && !same_meta (out, ref, meta)) {
              g_printerr ("META MISMATCH: %s\n", what.c_str ());
              d = std::max (d, 1);
            }
            runs++;
            if (d != 0) {
              mismatches++;
              g_printerr ("MISMATCH (%d): %s\n", d, what.c_str ());
            }
            gst_buffer_unref (out);
          }
        }
        gst_buffer_unref (ref);
        gst_buffer_unref (in);
      }
    }
  }
  g_printerr ("%s %s: %d of %d runs differ from the CPU reference\n", element, props, mismatches, runs);
  fail_unless_equals_int (mismatches, 0);
}

GST_START_TEST (test_sobel_cuda_equals_cpu_on_every_route)
{
  const GstVideoFormat f[] = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx, GST_VIDEO_FORMAT_BGRx,
      GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY,
      GST_VIDEO_FORMAT_P010_10LE};
  check_element ("cudasobel", "mode=color scale=1.7", f, G_N_ELEMENTS (f));
  check_element ("cudasobel", "mode=luma threshold=50", f, 4);
}
GST_END_TEST;

GST_START_TEST (test_enhance_cuda_equals_cpu_on_every_route)
{
  const GstVideoFormat f[] = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx, GST_VIDEO_FORMAT_BGRx,
      GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY,
      GST_VIDEO_FORMAT_P010_10LE};
  check_element ("cudaenhance", "contrast=1.3 brightness=-0.1 saturation=1.4 hue=0.2", f, G_N_ELEMENTS (f));
}
GST_END_TEST;

static const GstVideoFormat kHistogramFormats[] = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx,
    GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY,
    GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_P010_10LE};

GST_START_TEST (test_histogram_cuda_equals_cpu_on_every_route)
{
  /* every route: an analyser writes the other memory out of place where downstream takes only that */
  check_element ("cudahistogram", "bins=64 roi-x=1 roi-y=1", kHistogramFormats, G_N_ELEMENTS (kHistogramFormats),
      "CudaHistogramMeta");
  check_element ("cudahistogram", "overlay=true overlay-position=bottom-left", kHistogramFormats,
      G_N_ELEMENTS (kHistogramFormats), "CudaHistogramMeta");
}
GST_END_TEST;

static GstCudaContext *
element_context (GstElement *e)
{
  GstQuery *q = gst_query_new_context (GST_CUDA_CONTEXT_TYPE);
  GstCudaContext *ctx = nullptr;
  if (gst_element_query (e, q)) {
    GstContext *c = nullptr;
    gst_query_parse_context (q, &c);
    if (c)
      gst_structure_get (gst_context_get_structure (c), GST_CUDA_CONTEXT_TYPE, GST_TYPE_CUDA_CONTEXT, &ctx, nullptr);
  }
  gst_query_unref (q);
  return ctx;
}

GST_START_TEST (test_context_shared_with_cudaupload)
{
  GstHarness *h = gst_harness_new_parse ("cudaupload name=u ! cudasobel name=f ! cudaenhance name=e contrast=1.2");
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 64, 48);
  gst_harness_set_src_caps_str (h, caps_for (info).c_str ());
  GstBuffer *out = gst_harness_push_and_pull (h, make_buffer (info, 0, 1));
  fail_unless (out != nullptr);
  gst_buffer_unref (out);
  GstElement *u = gst_bin_get_by_name (GST_BIN (h->element), "u");
  GstElement *f = gst_bin_get_by_name (GST_BIN (h->element), "f");
  GstElement *e = gst_bin_get_by_name (GST_BIN (h->element), "e");
  GstCudaContext *cu = element_context (u), *cf = element_context (f), *ce = element_context (e);
  fail_unless (cu != nullptr && cf != nullptr && ce != nullptr, "an element answered no CUDA context");
  fail_unless (cu == cf && cf == ce, "cudaupload, cudasobel and cudaenhance use different contexts");
  gst_object_unref (cu);
  gst_object_unref (cf);
  gst_object_unref (ce);
  gst_object_unref (u);
  gst_object_unref (f);
  gst_object_unref (e);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_device_id_out_of_range)
{
  for (const char *backend : {"cuda", "auto"}) {
    std::string launch = std::string ("videotestsrc ! cudaenhance contrast=1.2 cuda-device-id=4096 backend=") + backend + " ! fakesink";
    GstMessage *msg = start_error (launch.c_str ());
    fail_unless (error_is (msg, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND, "cuda-device-id 4096 is out of range"),
        "%s: no out-of-range error", launch.c_str ());
    gst_message_unref (msg);
  }
}
GST_END_TEST;

/* A pipeline as a user runs it: the two backends give the same bytes, frame by frame. */
GST_START_TEST (test_pipeline_cuda_equals_cpu)
{
  for (const char *format : {"RGBA", "NV12", "I420", "BGRx"}) {
    auto launch = [format] (const char *backend) {
      return std::string ("videotestsrc num-buffers=30 pattern=ball ! video/x-raw,format=") + format +
          ",width=640,height=360 ! cudaupload ! cudasobel backend=" + backend + " ! cudaenhance contrast=1.4 backend=" +
          backend + " ! cudadownload ! video/x-raw ! appsink name=sink sync=false";
    };
    auto gpu = collect (launch ("cuda"));
    auto cpu = collect (launch ("cpu"));
    fail_unless_equals_int (gpu.size (), 30);
    fail_unless_equals_int (cpu.size (), 30);
    GstVideoInfo info = info_for (gst_video_format_from_string (format), 640, 360);
    for (size_t i = 0; i < gpu.size (); i++) {
      fail_unless_equals_int (buffer_diff (gpu[i], cpu[i], info, std::string (format) + " frame " + std::to_string (i)), 0);
      gst_buffer_unref (gpu[i]);
      gst_buffer_unref (cpu[i]);
    }
  }
}
GST_END_TEST;


/* Holds back the stream it is queued on until opened (or for 5 s, so that a wrong order shows as
 * a failure, never as a hang). */
struct Gate {
  GMutex lock;
  GCond cond;
  bool open = false;
  Gate () { g_mutex_init (&lock); g_cond_init (&cond); }
  ~Gate () { g_cond_clear (&cond); g_mutex_clear (&lock); }
  static void CUDART_CB wait (void *data)
  {
    auto *g = static_cast<Gate *> (data);
    const gint64 end = g_get_monotonic_time () + 5 * G_TIME_SPAN_SECOND;
    g_mutex_lock (&g->lock);
    while (!g->open && g_cond_wait_until (&g->cond, &g->lock, end))
      ;
    g_mutex_unlock (&g->lock);
  }
  void release ()
  {
    g_mutex_lock (&lock);
    open = true;
    g_cond_signal (&cond);
    g_mutex_unlock (&lock);
  }
};

/* The accumulator and the ticket that cudahistogram, cudaheatmap and cudanoisemap's kernels add
 * into are zero, in the order of the element's (non-blocking) stream, before the first kernel
 * reads them: here the legacy default stream is held back, and the memory last held other bytes.
 * (A zeroing with cudaMemset raced the first frame's kernel and gave wrong counts once the memory
 * had been used before.) */
GST_START_TEST (test_result_buffers_zeroed_in_stream_order)
{
  using Results = cuv::ResultBuffers<cuv::HistogramPartials, cuv::HistogramResult>;
  const size_t device_bytes = sizeof (cuv::HistogramPartials) + sizeof (cuv::HistogramResult) + sizeof (unsigned int);
  GstCudaContext *ctx = gst_cuda_context_new (0);
  fail_unless (ctx != nullptr);
  {
    cuv::ContextGuard guard (ctx);
    fail_unless (guard.ok ());
    cudaStream_t stream = nullptr;
    fail_unless_equals_int (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking), cudaSuccess);
    int reused = 0;
    for (int round = 0; round < 4; round++) {
      void *dirty_at = nullptr;
      {
        cuv::CudaBuffer dirty;
        fail_unless_equals_int (dirty.allocate (ctx, cuv::CudaBuffer::Kind::Device, device_bytes), cudaSuccess);
        fail_unless_equals_int (cudaMemset (dirty.data (), 0xA5, dirty.size ()), cudaSuccess);
        fail_unless_equals_int (cudaDeviceSynchronize (), cudaSuccess);
        dirty_at = dirty.data ();
      }
      /* page-locked: a copy into pageable memory could wait on more than this stream */
      struct Seen {
        cuv::HistogramPartials accum;
        unsigned int ticket;
      };
      cuv::CudaBuffer seen_buffer;
      fail_unless_equals_int (seen_buffer.allocate (ctx, cuv::CudaBuffer::Kind::Pinned, sizeof (Seen)), cudaSuccess);
      Seen &seen = *reinterpret_cast<Seen *> (seen_buffer.data ());
      seen.ticket = 1;
      Gate gate;
      fail_unless_equals_int (cudaLaunchHostFunc (cudaStreamLegacy, Gate::wait, &gate), cudaSuccess);
      Results results;
      fail_unless_equals_int (results.ensure (ctx, stream), cudaSuccess);
      const cuv::HistogramResults to = results.to ();
      reused += static_cast<void *> (to.accum) == dirty_at;
      /* what the first kernel on the stream finds */
      fail_unless_equals_int (
          cudaMemcpyAsync (&seen.accum, to.accum, sizeof seen.accum, cudaMemcpyDeviceToHost, stream), cudaSuccess);
      fail_unless_equals_int (
          cudaMemcpyAsync (&seen.ticket, to.ticket, sizeof seen.ticket, cudaMemcpyDeviceToHost, stream), cudaSuccess);
      fail_unless_equals_int (cudaStreamSynchronize (stream), cudaSuccess);
      gate.release ();
      fail_unless_equals_int (cudaStreamSynchronize (cudaStreamLegacy), cudaSuccess);
      int nonzero = seen.ticket != 0;
      const uint8_t *bytes = reinterpret_cast<const uint8_t *> (&seen.accum);
      for (size_t i = 0; i < sizeof seen.accum; i++)
        nonzero += bytes[i] != 0;
      fail_unless_equals_int (nonzero, 0);
    }
    g_printerr ("result buffers: %d of 4 allocations reused the dirtied memory\n", reused);
    cudaStreamDestroy (stream);
  }
  gst_object_unref (ctx);
}
GST_END_TEST;

static Suite *
cudavision_gpu_suite (void)
{
  Suite *s = suite_create ("cudavision-gpu");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_sobel_cuda_equals_cpu_on_every_route);
  tcase_add_test (tc, test_enhance_cuda_equals_cpu_on_every_route);
  tcase_add_test (tc, test_histogram_cuda_equals_cpu_on_every_route);
  tcase_add_test (tc, test_context_shared_with_cudaupload);
  tcase_add_test (tc, test_device_id_out_of_range);
  tcase_add_test (tc, test_pipeline_cuda_equals_cpu);
  tcase_add_test (tc, test_result_buffers_zeroed_in_stream_order);
  return s;
}

int
main (int argc, char **argv)
{
  return run_gpu_suite (argc, argv, cudavision_gpu_suite, "cudavision_gpu", __FILE__);
}
