/* One CUDA context a device for the process (common/cuda/cuvcontext.h, docs/design.md "One CUDA
 * context a device"): pipelines that an application makes the default way (each its own
 * GstPipeline, no context set by hand) share one GstCudaContext, decoders and upstream's
 * elements in them included; a context the application sets is the one used.
 *   test_pipelines_share_one_context      8 decoder pipelines and 4 upload pipelines: one context
 *   test_application_context_is_used      a pipeline given a context by the application keeps it
 *   test_elements_follow_upstream_context  CUDA memory of another context on the device: our elements
 *                                          move to it (no copy through system memory, no warning)
 * Exits 77 without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cuda_runtime_api.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>

#include <atomic>
#include <utility>

#include <set>

#include "tests/check/cuvcheck.h"

using namespace cuvcheck;

namespace {

/* The CUDA context @element answers a context query with on its src pad (a new reference), or
 * NULL. */
GstCudaContext *context_of (GstElement *element)
{
  GstPad *pad = gst_element_get_static_pad (element, "src");
  if (!pad)
    return nullptr;
  GstQuery *query = gst_query_new_context (GST_CUDA_CONTEXT_TYPE);
  GstCudaContext *found = nullptr;
  if (gst_pad_query (pad, query)) {
    GstContext *context = nullptr;
    gst_query_parse_context (query, &context);
    if (context)
      gst_structure_get (gst_context_get_structure (context), GST_CUDA_CONTEXT_TYPE, GST_TYPE_CUDA_CONTEXT, &found,
          nullptr);
  }
  gst_query_unref (query);
  gst_object_unref (pad);
  return found;
}

/* @launch as its own GstPipeline, as an application makes it: no context set by hand (stopped by
 * the checked teardown if a check fails). */
GstElement *plain_pipeline (const std::string &launch)
{
  GstElement *pipe = new_pipeline (launch, false);
  fail_unless (pipe != nullptr, "cannot parse %s", launch.c_str ());
  return pipe;
}

void preroll (GstElement *pipe)
{
  g_printerr ("preroll %s\n", GST_OBJECT_NAME (pipe));
  fail_unless (gst_element_set_state (pipe, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (pipe, nullptr, nullptr, 10 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
}

/* The contexts of the elements named in @names of @pipe, each of which must have one. */
void collect_contexts (GstElement *pipe, std::initializer_list<const char *> names, std::set<GstCudaContext *> &contexts)
{
  for (const char *name : names) {
    GstElement *e = gst_bin_get_by_name (GST_BIN (pipe), name);
    fail_unless (e != nullptr, "no element %s", name);
    GstCudaContext *c = context_of (e);
    fail_unless (c != nullptr, "%s has no CUDA context after preroll", name);
    contexts.insert (c);
    gst_object_unref (c);
    gst_object_unref (e);
  }
}

/* A context of the application's own; libgstcuda 1.22 makes it through its driver loader, which
 * the first of our elements would otherwise have loaded. */
GstCudaContext *application_context ()
{
  fail_unless (gst_cuda_load_library ());
  GstCudaContext *own = gst_cuda_context_new (0);
  fail_unless (own != nullptr);
  return own;
}

size_t device_memory_used ()
{
  size_t free_b = 0, total = 0;
  cudaMemGetInfo (&free_b, &total);
  return total - free_b;
}

}  // namespace

GST_START_TEST (test_pipelines_share_one_context)
{
  const size_t before = device_memory_used ();
  std::vector<GstElement *> pipes;
  std::set<GstCudaContext *> ours;
  /* a decoder upstream of our elements: they start first, and the decoder takes theirs */
  for (int i = 0; i < 8; i++) {
    pipes.push_back (plain_pipeline ("videotestsrc num-buffers=30 pattern=ball ! video/x-raw,format=I420,width=320,"
                                     "height=240 ! openh264enc ! h264parse ! nvh264dec name=dec ! cudasobel name=a "
                                     "mode=luma ! cudahistogram name=b ! cudadownload name=down ! fakesink"));
    preroll (pipes.back ());
    collect_contexts (pipes.back (), {"dec", "a", "b", "down"}, ours);
  }
  /* upstream's upload before ours, and ours alone in system memory */
  for (int i = 0; i < 4; i++) {
    pipes.push_back (plain_pipeline ("videotestsrc num-buffers=30 ! video/x-raw,format=NV12,width=320,height=240 ! "
                                     "cudaupload name=up ! cudaenhance name=a contrast=1.2 ! cudaheatmap name=b ! "
                                     "fakesink"));
    preroll (pipes.back ());
    collect_contexts (pipes.back (), {"up", "a", "b"}, ours);
  }
  const size_t shared = device_memory_used () - before;
  fail_unless_equals_int (ours.size (), 1);
  for (GstElement *p : pipes) {
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
  }
  /* for comparison, the same count with upstream's elements alone, each making its own */
  std::set<GstCudaContext *> upstream;
  const size_t before_upstream = device_memory_used ();
  for (int i = 0; i < 4; i++) {
    pipes[i] = plain_pipeline ("videotestsrc num-buffers=30 ! video/x-raw,format=NV12,width=320,height=240 ! "
                               "cudaupload name=up ! cudadownload name=down ! fakesink");
    preroll (pipes[i]);
    collect_contexts (pipes[i], {"up", "down"}, upstream);
  }
  g_print ("12 pipelines of ours: %zu CUDA context(s), %zu MiB of device memory; 4 of cudaupload ! cudadownload "
           "alone: %zu context(s), %zu MiB\n",
      ours.size (), shared >> 20, upstream.size (), (device_memory_used () - before_upstream) >> 20);
  for (int i = 0; i < 4; i++) {
    gst_element_set_state (pipes[i], GST_STATE_NULL);
    gst_object_unref (pipes[i]);
  }
}
GST_END_TEST;

GST_START_TEST (test_application_context_is_used)
{
  GstCudaContext *own = application_context ();
  GstContext *context = gst_context_new_cuda_context (own);
  /* a pipeline of the process's context first, so that there is one to prefer wrongly */
  GstElement *other = plain_pipeline ("videotestsrc num-buffers=5 ! cudaupload ! cudasobel name=a ! fakesink");
  preroll (other);
  GstElement *pipe = plain_pipeline (
      "videotestsrc num-buffers=5 ! video/x-raw,format=NV12 ! cudaupload name=up ! cudasobel name=a ! fakesink");
  gst_element_set_context (pipe, context);
  preroll (pipe);
  std::set<GstCudaContext *> got;
  collect_contexts (pipe, {"up", "a"}, got);
  fail_unless_equals_int (got.size (), 1);
  fail_unless (*got.begin () == own, "the element did not take the application's context");
  for (GstElement *p : {pipe, other}) {
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
  }
  gst_context_unref (context);
  gst_object_unref (own);
}
GST_END_TEST;

namespace {

GstPadProbeReturn count_foreign_memory (GstPad *, GstPadProbeInfo *info, gpointer data)
{
  auto *expected = static_cast<std::pair<GstCudaContext *, std::atomic<int>> *> (data);
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  for (guint i = 0; i < gst_buffer_n_memory (buf); i++) {
    GstMemory *mem = gst_buffer_peek_memory (buf, i);
    if (!gst_is_cuda_memory (mem) || GST_CUDA_MEMORY_CAST (mem)->context != expected->first)
      expected->second++;
  }
  return GST_PAD_PROBE_OK;
}

}  // namespace

/* cudaupload given a context of its own by the application, our elements none: they start first,
 * on the process's context, and move to cudaupload's when its memory comes, where they used to
 * copy every frame through system memory with a warning. */
GST_START_TEST (test_elements_follow_upstream_context)
{
  GstCudaContext *own = application_context ();
  GstContext *context = gst_context_new_cuda_context (own);
  GstElement *pipe = plain_pipeline ("videotestsrc num-buffers=20 pattern=ball ! video/x-raw,format=NV12,width=320,"
                                     "height=240 ! cudaupload name=up ! cudasobel name=a mode=luma ! cudahistogram "
                                     "name=b ! video/x-raw(memory:CUDAMemory) ! cudadownload ! fakesink");
  GstElement *up = gst_bin_get_by_name (GST_BIN (pipe), "up");
  gst_element_set_context (up, context);
  std::pair<GstCudaContext *, std::atomic<int>> expected{own, 0};
  GstElement *b = gst_bin_get_by_name (GST_BIN (pipe), "b");
  GstPad *src = gst_element_get_static_pad (b, "src");
  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER, count_foreign_memory, &expected, nullptr);
  gst_object_unref (src);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstBus *bus = gst_element_get_bus (pipe);
  int warnings = 0;
  for (bool eos = false; !eos;) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
        static_cast<GstMessageType> (GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING));
    fail_unless (m != nullptr, "no EOS within 10 s");
    fail_unless (GST_MESSAGE_TYPE (m) != GST_MESSAGE_ERROR, "an error from %s", GST_OBJECT_NAME (GST_MESSAGE_SRC (m)));
    warnings += GST_MESSAGE_TYPE (m) == GST_MESSAGE_WARNING;
    eos = GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS;
    gst_message_unref (m);
  }
  fail_unless_equals_int (warnings, 0);
  fail_unless_equals_int (expected.second.load (), 0);
  std::set<GstCudaContext *> got;
  collect_contexts (pipe, {"up", "a", "b"}, got);
  fail_unless (got.size () == 1 && *got.begin () == own, "our elements did not move to cudaupload's context");
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (b);
  gst_object_unref (up);
  gst_object_unref (pipe);
  gst_context_unref (context);
  gst_object_unref (own);
}
GST_END_TEST;

static Suite *
context_suite (void)
{
  Suite *s = suite_create ("context-gpu");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_checked_fixture (tc, nullptr, stop_pipelines_left_playing);
  tcase_add_test (tc, test_pipelines_share_one_context);
  tcase_add_test (tc, test_application_context_is_used);
  tcase_add_test (tc, test_elements_follow_upstream_context);
  return s;
}

int
main (int argc, char **argv)
{
  return run_gpu_suite (argc, argv, context_suite, "context_gpu", __FILE__);
}
