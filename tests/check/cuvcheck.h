/* gst-cudavision element tests: buffers, harness runs and frame comparisons.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <unistd.h>

#include <cstdio>

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "tests/common/cuvplugin.h"
#include "tests/common/cuvtest.h"
#include "common/element/gstcudavisionfilter.h"

namespace cuvcheck {

inline GstVideoInfo info_for (GstVideoFormat format, int w, int h)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, format, w, h);
  GST_VIDEO_INFO_FPS_N (&info) = 30;
  GST_VIDEO_INFO_FPS_D (&info) = 1;
  return info;
}

/* @w, or for YUY2/UYVY, whose odd widths the elements refuse, @w rounded up to even. */
inline int width_for (GstVideoFormat format, int w)
{
  return format == GST_VIDEO_FORMAT_YUY2 || format == GST_VIDEO_FORMAT_UYVY ? w + w % 2 : w;
}

inline std::string caps_for (const GstVideoInfo &info)
{
  GstCaps *caps = gst_video_info_to_caps (&info);
  gchar *s = gst_caps_to_string (caps);
  std::string r (s);
  g_free (s);
  gst_caps_unref (caps);
  return r;
}

/* The planes of @info with every row @pad bytes longer than the caps' default stride: the offsets
 * and strides a video meta gives them, and the bytes they take. */
inline gsize padded_layout (const GstVideoInfo &info, int pad, gsize offsets[GST_VIDEO_MAX_PLANES],
    gint strides[GST_VIDEO_MAX_PLANES])
{
  gsize size = 0;
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (&info); p++) {
    strides[p] = GST_VIDEO_INFO_PLANE_STRIDE (&info, p) + pad;
    offsets[p] = size;
    int comp[GST_VIDEO_MAX_COMPONENTS];
    gst_video_format_info_component (info.finfo, p, comp);
    size += static_cast<gsize> (strides[p]) * GST_VIDEO_INFO_COMP_HEIGHT (&info, comp[0]);
  }
  return size;
}

inline void add_video_meta (GstBuffer *buf, const GstVideoInfo &info, const gsize *offsets, gint *strides)
{
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT (&info),
      GST_VIDEO_INFO_WIDTH (&info), GST_VIDEO_INFO_HEIGHT (&info), GST_VIDEO_INFO_N_PLANES (&info),
      const_cast<gsize *> (offsets), strides);
}

/* A system-memory buffer holding a patterned frame; with @pad > 0 every row is @pad bytes longer
 * than the caps' default stride and a GstVideoMeta says so. */
inline GstBuffer *make_buffer (const GstVideoInfo &info, int pad, uint32_t seed)
{
  gsize offsets[GST_VIDEO_MAX_PLANES] = {0};
  gint strides[GST_VIDEO_MAX_PLANES] = {0};
  gsize size = padded_layout (info, pad, offsets, strides);
  if (pad == 0)
    size = GST_VIDEO_INFO_SIZE (&info); /* the caps' own layout (it rounds chroma-bearing heights up) */
  std::vector<uint8_t> bytes (size);
  cuvtest::fill_pattern (bytes, seed);
  GstBuffer *buf = gst_buffer_new_memdup (bytes.data (), size);
  if (pad > 0)
    add_video_meta (buf, info, offsets, strides);
  GST_BUFFER_PTS (buf) = 0;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  return buf;
}

/* Largest per-byte difference between the @info frames of two buffers (-1 when one cannot be
 * mapped); a buffer whose video meta is larger holds it in its top-left corner. */
inline int buffer_diff (GstBuffer *a, GstBuffer *b, const GstVideoInfo &info, const std::string &what)
{
  cuv::PixelLayout layout;
  if (!gst_cuda_vision_layout_from_format (GST_VIDEO_INFO_FORMAT (&info), &layout))
    return -1;
  GstVideoFrame fa, fb;
  if (!cuv::map_caps_frame (&fa, &info, a, GST_MAP_READ))
    return -1;
  if (!cuv::map_caps_frame (&fb, &info, b, GST_MAP_READ)) {
    gst_video_frame_unmap (&fa);
    return -1;
  }
  int d = cuvtest::max_diff (gst_cuda_vision_frame_from_video_frame (&fa, layout),
      gst_cuda_vision_frame_from_video_frame (&fb, layout), what);
  gst_video_frame_unmap (&fb);
  gst_video_frame_unmap (&fa);
  return d;
}

/* One CUDA context for every pipeline and harness of a test program. Without it each one makes a
 * CUcontext of its own (gst_cuda_ensure_element_context creates one when no neighbour answers),
 * and creating and destroying a context costs more than the frames a comparison pushes; parallel
 * test programs also queue on the driver for it. test_context_shared_with_cudaupload and the
 * start-error tests still let the elements find or create their context themselves.
 * CUV_TEST_CONTEXT_PER_PIPELINE=1 turns the sharing off (to time what it saves). */
inline GstContext *&shared_cuda_context_slot ()
{
  static GstContext *context = [] () -> GstContext * {
    if (g_getenv ("CUV_TEST_CONTEXT_PER_PIPELINE") || !cuvtest::have_gpu () || !gst_cuda_load_library ())
      return nullptr;
    GstCudaContext *cuda = gst_cuda_context_new (0);
    if (!cuda)
      return nullptr;
    GstContext *c = gst_context_new_cuda_context (cuda);
    gst_object_unref (cuda);
    return c;
  }();
  return context;
}

inline GstContext *shared_cuda_context ()
{
  return shared_cuda_context_slot ();
}

/* Drops the shared context and waits for the plugin's own threads (cuvplugin.h), before
 * gst_deinit () (where the leaks tracer counts what is alive). */
inline void release_shared_cuda_context ()
{
  if (GstContext *&c = shared_cuda_context_slot ()) {
    gst_context_unref (c);
    c = nullptr;
  }
  cuvtest::finish_plugin_work ();
}

/* The pipelines new_pipeline () made that are still alive. */
inline std::vector<GstElement *> &live_pipelines ()
{
  static std::vector<GstElement *> pipelines;
  return pipelines;
}

inline std::mutex &live_pipelines_lock ()
{
  static std::mutex lock;
  return lock;
}

inline GstElement *new_pipeline (const std::string &launch, bool shared_context = true)
{
  GstElement *pipe = gst_parse_launch (launch.c_str (), nullptr);
  if (!pipe)
    return nullptr;
  if (shared_context && shared_cuda_context ())
    gst_element_set_context (pipe, shared_cuda_context ());
  std::lock_guard<std::mutex> lk (live_pipelines_lock ());
  live_pipelines ().push_back (pipe);
  g_object_weak_ref (G_OBJECT (pipe),
      [] (gpointer, GObject *gone) {
        std::lock_guard<std::mutex> lk (live_pipelines_lock ());
        auto &v = live_pipelines ();
        v.erase (std::remove (v.begin (), v.end (), reinterpret_cast<GstElement *> (gone)), v.end ());
      },
      nullptr);
  return pipe;
}

/* A checked teardown: a failed check leaves the test's pipelines playing (CK_FORK=no jumps out
 * of the test), and their streaming threads would then hang gst_deinit (); this stops them, so
 * that the failure is reported instead of a timeout. */
inline void stop_pipelines_left_playing ()
{
  std::vector<GstElement *> left;
  {
    std::lock_guard<std::mutex> lk (live_pipelines_lock ());
    for (GstElement *p : live_pipelines ())
      left.push_back (GST_ELEMENT (gst_object_ref (p)));
  }
  for (GstElement *p : left) {
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
  }
}

/* A suite's test case set up as every pipeline suite of ours is (tests/README.md): @timeout
 * seconds; after each test, passed or failed, the pipelines it left playing stopped (@stop, by
 * default stop_pipelines_left_playing); the shared CUDA context released before
 * gst_check_run_suite's gst_deinit (), where the leaks tracer looks for live objects. */
inline TCase *pipeline_tcase (Suite *s, const char *name, int timeout, void (*stop) () = nullptr)
{
  TCase *tc = tcase_create (name);
  tcase_set_timeout (tc, timeout);
  suite_add_tcase (s, tc);
  tcase_add_unchecked_fixture (tc, nullptr, [] { release_shared_cuda_context (); });
  tcase_add_checked_fixture (tc, nullptr, stop ? stop : [] { stop_pipelines_left_playing (); });
  return tc;
}

/* gst_harness_new_parse () on the shared CUDA context: the harness starts a filter as it wraps
 * it, so the context goes on the bin first. */
inline GstHarness *new_harness (const std::string &launch)
{
  GError *err = nullptr;
  GstElement *bin = gst_parse_bin_from_description (launch.c_str (), TRUE, &err);
  fail_unless (bin != nullptr, "cannot parse %s: %s", launch.c_str (), err ? err->message : "");
  g_clear_error (&err);
  if (shared_cuda_context ())
    gst_element_set_context (bin, shared_cuda_context ());
  GstHarness *h = gst_harness_new_with_element (bin, "sink", "src");
  gst_object_unref (bin);
  return h;
}

/* A harness on @launch fed with @info's caps, taking system memory out: on a GPU machine CUDA
 * memory would be preferred, and GStreamer 1.22's host mapping of CUDA I420 memory does not give
 * the planes where its video meta says. */
inline GstHarness *harness (const std::string &launch, const GstVideoInfo &info)
{
  GstHarness *h = new_harness (launch);
  gst_harness_set_src_caps_str (h, caps_for (info).c_str ());
  gst_harness_set_sink_caps_str (h, "video/x-raw");
  return h;
}

/* Pushes @buf (taken) and returns the buffer that comes out. */
inline GstBuffer *push_pull (GstHarness *h, GstBuffer *buf)
{
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  return gst_harness_pull (h);
}

/* A flushing seek's events as they reach the element: flush start, flush stop, a new segment. */
inline void push_flush (GstHarness *h)
{
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  GstSegment seg;
  gst_segment_init (&seg, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&seg)));
}

/* Pushes @in (a ref is taken) through @launch and returns what comes out (NULL if nothing). */
inline GstBuffer *run_once (const std::string &launch, const GstVideoInfo &info, GstBuffer *in)
{
  GstHarness *h = harness (launch, info);
  GstFlowReturn ret = gst_harness_push (h, gst_buffer_ref (in));
  GstBuffer *out = ret == GST_FLOW_OK ? gst_harness_pull (h) : nullptr;
  gst_harness_teardown (h);
  return out;
}

/* Buffers that others hold too (not writable), and writable buffers whose memory others hold,
 * through @launch, one element that works in place, in each of @formats at a few sizes and
 * strides. With @writes (the element changes the frame):
 * the output is a buffer of the element's own pool, not GStreamer's copy of the input (on the
 * first frame too, before the element has run once), with the bytes an in-place run on a writable
 * copy gives, and the input is left as it was. Without: the output shares the input's memory
 * (nothing was copied). */
inline void check_shared_input (const std::string &launch, const std::vector<GstVideoFormat> &formats, uint32_t seed,
    bool writes)
{
  for (GstVideoFormat f : formats) {
    for (cuvtest::Size s : {cuvtest::Size{1, 1}, cuvtest::Size{17, 13}, cuvtest::Size{320, 241}}) {
      for (int pad : {0, 48}) {
        GstVideoInfo info = info_for (f, width_for (f, s.w), s.h);
        const std::string what = launch + " " + gst_video_format_to_string (f) + " " +
            std::to_string (width_for (f, s.w)) + "x" + std::to_string (s.h) + " pad " + std::to_string (pad);
        GstBuffer *in = make_buffer (info, pad, seed++);
        GstBuffer *before = gst_buffer_copy_deep (in);

        /* shared from the first frame: the element has drawn nothing yet, and still knows that it
         * will draw on this one */
        GstHarness *h = harness (launch, info);
        GstBuffer *first_out = push_pull (h, gst_buffer_ref (in));
        gst_harness_teardown (h);
        fail_unless (first_out != in, "%s: the shared first input came back", what.c_str ());
        if (writes)
          fail_unless (first_out->pool != nullptr, "%s: the first output is a copy of the input, not a buffer of the "
              "element's pool", what.c_str ());

        /* writable: the harness gets the only reference, and the element works in place */
        h = harness (launch, info);
        GstBuffer *writable = gst_buffer_copy_deep (in);
        GstBuffer *in_place = push_pull (h, writable);
        fail_unless (in_place == writable, "%s: a writable buffer was not processed in place", what.c_str ());

        /* shared: this test keeps a reference */
        GstBuffer *out = push_pull (h, gst_buffer_ref (in));
        fail_unless (out != in, "%s: the shared input came back", what.c_str ());
        if (writes)
          fail_unless (out->pool != nullptr, "%s: the output is a copy of the input, not a buffer of the element's pool",
              what.c_str ());
        else
          fail_unless (gst_buffer_peek_memory (out, 0) == gst_buffer_peek_memory (in, 0),
              "%s: the frame was copied though the element only reads it", what.c_str ());
        /* a writable buffer whose memory is shared (imagefreeze's copies, an appsrc ring): the
         * same as a shared buffer, where mapping it for writing would copy the memory */
        GstBuffer *shallow = gst_buffer_copy (in);
        GstBuffer *shallow_out = push_pull (h, shallow);
        if (writes)
          fail_unless (shallow_out != shallow && shallow_out->pool != nullptr,
              "%s: the output of a buffer with shared memory is not a buffer of the element's pool", what.c_str ());
        else
          fail_unless (gst_buffer_peek_memory (shallow_out, 0) == gst_buffer_peek_memory (in, 0),
              "%s: the shared memory was copied though the element only reads it", what.c_str ());
        fail_unless_equals_int (buffer_diff (shallow_out, in_place, info, what + " shared memory vs in place"), 0);
        gst_buffer_unref (shallow_out);
        fail_unless_equals_int (buffer_diff (out, in_place, info, what + " shared vs in place"), 0);
        fail_unless_equals_int (buffer_diff (first_out, in_place, info, what + " shared first frame vs in place"), 0);
        fail_unless_equals_int (buffer_diff (in, before, info, what + " input after"), 0);
        fail_unless_equals_uint64 (GST_BUFFER_PTS (out), GST_BUFFER_PTS (in));
        gst_harness_teardown (h);
        gst_buffer_unref (out);
        gst_buffer_unref (first_out);
        gst_buffer_unref (in_place);
        gst_buffer_unref (before);
        gst_buffer_unref (in);
      }
    }
  }
}

/* A harness on @launch whose element posts to a bus of its own (the harness gives it none). */
struct BusHarness {
  GstHarness *h;
  GstBus *bus;
  explicit BusHarness (const std::string &launch) : h (new_harness (launch)), bus (gst_bus_new ())
  {
    gst_element_set_bus (h->element, bus);
  }
  ~BusHarness ()
  {
    gst_element_set_bus (h->element, nullptr);
    gst_object_unref (bus);
    gst_harness_teardown (h);
  }
};

/* The analysers post their element messages from another thread, each of them before EOS leaves
 * the element: sends EOS through @h, then takes every element message on @bus, in order (the
 * caller unrefs them). */
inline std::vector<GstMessage *> element_messages_at_eos (GstHarness *h, GstBus *bus)
{
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()), "EOS was not taken");
  std::vector<GstMessage *> out;
  while (GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT))
    out.push_back (m);
  return out;
}

/* The first error message on @bus within a second, or NULL. */
inline GstMessage *wait_error (GstBus *bus)
{
  return gst_bus_timed_pop_filtered (bus, GST_SECOND, GST_MESSAGE_ERROR);
}

/* Parses an error message and tells whether it is of @domain/@code and its text contains @needle. */
inline bool error_is (GstMessage *msg, GQuark domain, gint code, const char *needle)
{
  if (!msg)
    return false;
  GError *err = nullptr;
  gchar *dbg = nullptr;
  gst_message_parse_error (msg, &err, &dbg);
  bool ok = err->domain == domain && err->code == code && strstr (err->message, needle) != nullptr;
  if (!ok)
    GST_WARNING ("error was: %s (%s) [%s]", err->message, g_quark_to_string (err->domain), dbg);
  g_error_free (err);
  g_free (dbg);
  return ok;
}

/* Starts @launch as a pipeline and returns the error its start posts (NULL if none). */
inline GstMessage *start_error (const char *launch)
{
  GstElement *pipe = gst_parse_launch (launch, nullptr);
  fail_unless (pipe != nullptr);
  GstBus *bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PAUSED);
  GstMessage *msg = wait_error (bus);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  return msg;
}

/* Two metas' results are equal: their structures but the `element` field, which names the element
 * that put each there (two pipelines' elements have other names). */
inline bool same_results (const GstStructure *a, const GstStructure *b)
{
  GstStructure *ca = gst_structure_copy (a), *cb = gst_structure_copy (b);
  gst_structure_remove_field (ca, "element");
  gst_structure_remove_field (cb, "element");
  const bool same = gst_structure_is_equal (ca, cb);
  gst_structure_free (ca);
  gst_structure_free (cb);
  return same;
}

/* The structures of @meta on two buffers hold the same results (both absent counts as a difference). */
inline bool same_meta (GstBuffer *a, GstBuffer *b, const char *meta)
{
  GstCustomMeta *ma = gst_buffer_get_custom_meta (a, meta), *mb = gst_buffer_get_custom_meta (b, meta);
  return ma && mb && same_results (gst_custom_meta_get_structure (ma), gst_custom_meta_get_structure (mb));
}

/* The element messages named @name on @pipe's bus, popped. */
inline std::vector<GstMessage *> pop_element_messages (GstElement *pipe, const char *name)
{
  std::vector<GstMessage *> out;
  GstBus *bus = gst_element_get_bus (pipe);
  while (GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT)) {
    if (gst_message_has_name (m, name))
      out.push_back (m);
    else
      gst_message_unref (m);
  }
  gst_object_unref (bus);
  return out;
}

/* Every buffer @appsink receives until none comes for 10 s (or EOS). */
inline std::vector<GstBuffer *> pull_all (GstElement *appsink)
{
  std::vector<GstBuffer *> out;
  while (GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (appsink), 10 * GST_SECOND)) {
    out.push_back (gst_buffer_ref (gst_sample_get_buffer (sample)));
    gst_sample_unref (sample);
  }
  return out;
}

/* Runs @launch to its end and returns, for each of its appsinks named in @names, every buffer it
 * received (waiting at most 10 s for each, so a stalled pipeline returns fewer). The appsinks
 * queue without limit, so they are drained one after the other. */
inline std::vector<std::vector<GstBuffer *>> collect_sinks (const std::string &launch,
    const std::vector<const char *> &names)
{
  GstElement *pipe = new_pipeline (launch);
  fail_unless (pipe != nullptr, "cannot parse %s", launch.c_str ());
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  std::vector<std::vector<GstBuffer *>> frames (names.size ());
  for (size_t i = 0; i < names.size (); i++) {
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), names[i]);
    fail_unless (sink != nullptr, "no appsink %s in %s", names[i], launch.c_str ());
    frames[i] = pull_all (sink);
    gst_object_unref (sink);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  return frames;
}

/* Runs @launch to its end and returns every buffer its appsink named "sink" received. */
inline std::vector<GstBuffer *> collect (const std::string &launch)
{
  return collect_sinks (launch, {"sink"})[0];
}

/* Memory types on the pads of the element under test; the shared routes give it buffers that a
 * tee also pushes into a second branch, so that they are not writable (@extra: that branch). */
struct MemoryRoute {
  const char *name;
  const char *before;
  const char *after;
  const char *extra;
};

inline const MemoryRoute kMemoryRoutes[] = {
  {"system->system", "", " ! video/x-raw", ""},
  {"system->cuda", "", " ! video/x-raw(memory:CUDAMemory) ! cudadownload ! video/x-raw", ""},
  {"cuda->cuda", "cudaupload ! video/x-raw(memory:CUDAMemory) ! ", " ! video/x-raw(memory:CUDAMemory) ! cudadownload ! video/x-raw", ""},
  {"cuda->system", "cudaupload ! video/x-raw(memory:CUDAMemory) ! ", " ! video/x-raw", ""},
  {"shared system->system", "tee name=shared ! queue ! ", " ! video/x-raw", " shared. ! queue ! fakesink"},
  {"shared cuda->cuda", "cudaupload ! video/x-raw(memory:CUDAMemory) ! tee name=shared ! queue ! ",
      " ! video/x-raw(memory:CUDAMemory) ! cudadownload ! video/x-raw", " shared. ! queue ! fakesink"},
};

/* What check_cuda_equals_cpu () runs: @element with @props after a videotestsrc of @source
 * properties, @frames frames of each format and size; @meta is compared too. */
struct CompareSpec {
  const char *element;
  const char *props;
  const char *meta;
  bool rgba_out_for_yuv;            /* a YUV format in gives RGBA out */
  bool same_memory;                 /* the element keeps the memory type (in-place analysers): no mixed routes */
  std::vector<const char *> formats; /* formats GStreamer 1.22's CUDA memory lacks (GRAY8) run on system memory only */
  std::vector<cuvtest::Size> sizes;
  const char *source;
  int frames;
};

/* Runs the spec on the CPU backend (system memory), then on the CUDA backend over every route,
 * and fails unless every frame and its meta are identical. */
inline void check_cuda_equals_cpu (const CompareSpec &spec)
{
  auto launch_for = [&spec] (const MemoryRoute &r, const char *format, cuvtest::Size s, const char *backend) {
    return std::string ("videotestsrc num-buffers=") + std::to_string (spec.frames) + " " + spec.source +
        " ! video/x-raw,format=" + format + ",width=" + std::to_string (s.w) + ",height=" + std::to_string (s.h) + " ! " +
        r.before + spec.element + " backend=" + backend + " " + spec.props + r.after + " ! appsink name=sink sync=false" +
        r.extra;
  };
  int runs = 0, mismatches = 0;
  for (const char *format : spec.formats) {
    const bool yuv = !g_str_equal (format, "GRAY8") && !GST_VIDEO_FORMAT_INFO_IS_RGB (
        gst_video_format_get_info (gst_video_format_from_string (format)));
    const bool cuda_memory = !g_str_equal (format, "GRAY8");
    const GstVideoFormat out_format =
        spec.rgba_out_for_yuv && yuv ? GST_VIDEO_FORMAT_RGBA : gst_video_format_from_string (format);
    for (cuvtest::Size s : cuvtest::quick_sizes (spec.sizes)) {
      s.w = width_for (gst_video_format_from_string (format), s.w);
      cuvtest::Timer timer (std::string (spec.element) + " " + spec.props + " " + format + " " + std::to_string (s.w) +
          "x" + std::to_string (s.h));
      auto ref = collect (launch_for (kMemoryRoutes[0], format, s, "cpu"));
      fail_unless_equals_int (ref.size (), spec.frames);
      GstVideoInfo info = info_for (out_format, s.w, s.h);
      for (const MemoryRoute &r : kMemoryRoutes) {
        const bool mixed = &r == &kMemoryRoutes[1] || &r == &kMemoryRoutes[3];
        if ((!cuda_memory && &r != &kMemoryRoutes[0]) || (spec.same_memory && mixed))
          continue;
        const std::string launch = launch_for (r, format, s, "cuda");
        auto got = collect (launch);
        fail_unless_equals_int (got.size (), spec.frames);
        int bad = 0;
        for (int i = 0; i < spec.frames; i++) {
          const std::string what = launch + " frame " + std::to_string (i);
          bad += buffer_diff (got[i], ref[i], info, what) != 0;
          if (!same_meta (got[i], ref[i], spec.meta)) {
            g_printerr ("META MISMATCH: %s\n", what.c_str ());
            bad++;
          }
          gst_buffer_unref (got[i]);
        }
        runs++;
        if (bad) {
          mismatches++;
          g_printerr ("MISMATCH: %s (%s)\n", launch.c_str (), r.name);
        }
      }
      for (GstBuffer *b : ref)
        gst_buffer_unref (b);
    }
  }
  g_printerr ("%s %s: %d of %d %d-frame runs differ from the CPU reference\n", spec.element, spec.props, mismatches,
      runs, spec.frames);
  fail_unless_equals_int (mismatches, 0);
}

/* @n frames of @source encoded with openh264enc, decoded by nvh264dec straight into @element with
 * backend=cuda, against cudadownload and @element with backend=cpu on the same decoded frames:
 * every frame arrives, with the same bytes (of @out, the element's output format) and, unless
 * @meta is NULL, the same meta. */
inline void check_nvh264dec_into (const std::string &source, int n, const std::string &element, GstVideoInfo out,
    const char *meta)
{
  cuvtest::Timer timer ("nvh264dec ! " + element);
  const std::string decode = "videotestsrc num-buffers=" + std::to_string (n) + " " + source +
      " ! video/x-raw,format=I420,width=352,height=288 ! openh264enc ! h264parse ! nvh264dec ! ";
  auto gpu = collect (decode + element + " backend=cuda ! cudadownload ! video/x-raw ! appsink name=sink sync=false");
  auto cpu = collect (decode + "cudadownload ! video/x-raw ! " + element + " backend=cpu ! appsink name=sink sync=false");
  fail_unless_equals_int (gpu.size (), n);
  fail_unless_equals_int (cpu.size (), n);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    bad += buffer_diff (gpu[i], cpu[i], out, "nvh264dec frame " + std::to_string (i)) != 0;
    bad += meta && !same_meta (gpu[i], cpu[i], meta);
    gst_buffer_unref (gpu[i]);
    gst_buffer_unref (cpu[i]);
  }
  fail_unless_equals_int (bad, 0);
}

/* gst_check_run_suite (), except that a run with a failed check ends the process at once: under
 * CK_FORK=no (which CUDA needs) a failed check leaves its test's pipeline running, and
 * libgstcheck's exit handler (gst_deinit, gst_task_cleanup_all) then waits for that pipeline's
 * streaming thread until the test's timeout (docs/testing.md). */
inline int run_suite (Suite *suite, const char *name, const char *file)
{
  if (gst_check_run_suite (suite, name, file) == 0)
    return 0;
  std::fflush (stdout);
  std::fflush (stderr);
  _exit (1);
}

/* main () of a gst-check test that runs without a GPU: GST_CHECK_MAIN's, through run_suite (). */
#define CUV_CHECK_MAIN(name)                                         \
  int main (int argc, char **argv)                                   \
  {                                                                  \
    gst_check_init (&argc, &argv);                                   \
    return cuvcheck::run_suite (name##_suite (), #name, __FILE__);   \
  }

/* main () of a test that needs a GPU: exits 77 (skipped) without one, 1 with CUV_REQUIRE_GPU set. */
inline int run_gpu_suite (int argc, char **argv, Suite *(*make_suite) (), const char *name, const char *file)
{
  gst_check_init (&argc, &argv);
  if (!cuvtest::have_gpu ())
    return cuvtest::no_gpu ();
  return run_suite (make_suite (), name, file);
}

}  // namespace cuvcheck
