/* Which memory our elements negotiate where the pipeline leaves the choice to them
 * (docs/design.md, "Data flow"): CUDA memory from an element that offers both (cudaupload, whose caps list system
 * memory first), CUDA memory between two of our elements whatever the ends of the chain are
 * (into an analyser that is last before a system-memory element too: it takes CUDA memory and
 * writes system memory itself, out of place; where downstream takes either, it keeps its input's
 * memory and works in place),
 * system memory where a neighbour takes only that (`videoconvert ! video/x-raw`: videoconvert
 * alone would pass CUDA memory through), and system memory into the CPU backend.
 * The pipelines run to EOS; the caps are read from the pads then. And where a side is system
 * memory on the CUDA backend, the memory is page-locked (docs/design.md, "Data flow"): upstream writes into the pool
 * we propose, and we write into a pool of ours; on the CPU backend it is not. Memory that upstream
 * recycles is page-locked in place; memory that comes once goes up through our staging. Exits 77
 * without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/app/gstappsrc.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>

#include "tests/check/cuvcheck.h"
#include "tests/common/cuvplugin.h"

using namespace cuvcheck;

namespace {

/* What a pad of the element named @name in @launch negotiated: its memory type. */
struct Expect {
  const char *name;
  const char *pad;
  bool cuda;
};

struct Case {
  const char *what;
  std::string launch; /* after the source */
  std::vector<Expect> expect;
};

/* @launch behind a short source of @format, to EOS; then every pad of @c.expect holds the memory
 * it names. The pipeline is stopped before a check fails (a pipeline left playing would hang the
 * test's exit). */
void check_case (const Case &c, const char *format)
{
  const std::string launch = std::string ("videotestsrc num-buffers=3 ! video/x-raw,format=") + format +
      ",width=64,height=48 ! " + c.launch;
  g_printerr ("%s (%s)\n", c.what, format);
  GstElement *pipe = new_pipeline (launch);
  fail_unless (pipe != nullptr, "cannot parse %s", launch.c_str ());
  std::string wrong;
  if (gst_element_set_state (pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    wrong = "it did not start";
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg = wrong.empty () ? gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
      static_cast<GstMessageType> (GST_MESSAGE_EOS | GST_MESSAGE_ERROR)) : nullptr;
  if (wrong.empty () && !(msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS))
    wrong = "it did not reach EOS";
  if (msg)
    gst_message_unref (msg);
  for (const Expect &e : c.expect) {
    if (!wrong.empty ())
      break;
    GstElement *el = gst_bin_get_by_name (GST_BIN (pipe), e.name);
    GstPad *pad = el ? gst_element_get_static_pad (el, e.pad) : nullptr;
    GstCaps *caps = pad ? gst_pad_get_current_caps (pad) : nullptr;
    if (!caps) {
      wrong = std::string (e.name) + "." + e.pad + " has no caps";
    } else {
      GstCapsFeatures *f = gst_caps_get_features (caps, 0);
      if (e.cuda != (f && gst_caps_features_contains (f, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY))) {
        gchar *str = gst_caps_to_string (caps);
        wrong = std::string (e.name) + "." + e.pad + " negotiated " + str + ", not " + (e.cuda ? "CUDA" : "system") +
            " memory";
        g_free (str);
      }
      gst_caps_unref (caps);
    }
    if (pad)
      gst_object_unref (pad);
    if (el)
      gst_object_unref (el);
  }
  gst_object_unref (bus);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  fail_unless (wrong.empty (), "%s (%s): %s: %s", c.what, format, launch.c_str (), wrong.c_str ());
}

const Case kCases[] = {
  {"cudaupload into a filter", "cudaupload ! cudasobel name=a ! fakesink", {{"a", "sink", true}, {"a", "src", true}}},
  {"cudaupload into an analyser", "cudaupload ! cudahistogram name=a ! cudadownload ! fakesink", {{"a", "sink", true}}},
  {"cudaupload into a temporal element", "cudaupload ! cudaheatmap name=a ! fakesink", {{"a", "sink", true}}},
  {"cudaupload into a filter that writes system memory",
      "cudaupload ! cudaenhance name=a ! videoconvert ! video/x-raw ! fakesink", {{"a", "sink", true}, {"a", "src", false}}},
  {"a chain between system-memory ends",
      "videoconvert ! cudasobel name=a ! cudaenhance name=b ! cudaheatmap name=c ! videoconvert ! video/x-raw ! fakesink",
      {{"a", "sink", false}, {"b", "sink", true}, {"c", "sink", true}, {"c", "src", false}}},
  {"an analyser between two of ours",
      "videoconvert ! cudasobel name=a ! cudahistogram name=b ! cudaenhance name=c ! videoconvert ! video/x-raw ! fakesink",
      {{"a", "src", true}, {"b", "src", true}, {"c", "src", false}}},
  {"an analyser last before a system-memory element",
      "cudaupload ! cudasobel name=a ! cudahistogram name=b ! videoconvert ! video/x-raw ! fakesink",
      {{"a", "src", true}, {"b", "sink", true}, {"b", "src", false}}},
  {"an analyser into an element that takes any memory keeps its input's", "cudahistogram name=a ! fakesink",
      {{"a", "sink", false}, {"a", "src", false}}},
  {"a filter into cudadownload", "cudaupload ! cudaenhance name=a ! cudadownload ! video/x-raw ! fakesink",
      {{"a", "src", true}}},
  {"a filter into an element that takes any memory", "cudasobel name=a ! fakesink", {{"a", "src", true}}},
  {"cudaupload into the CPU backend", "cudaupload ! cudasobel backend=cpu name=a ! fakesink", {{"a", "sink", false}}},
};

}  // namespace

GST_START_TEST (test_memory_each_route_negotiates)
{
  for (const char *format : {"RGBA", "NV12"})
    for (const Case &c : kCases)
      check_case (c, format);
}
GST_END_TEST;

namespace {

/* The allocator's memory type of the first memory of every buffer through @pad. */
GstPadProbeReturn
record_memory_type (GstPad *, GstPadProbeInfo *info, gpointer data)
{
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstMemory *mem = buf && gst_buffer_n_memory (buf) ? gst_buffer_peek_memory (buf, 0) : nullptr;
  static_cast<std::vector<std::string> *> (data)->push_back (mem && mem->allocator ? mem->allocator->mem_type : "none");
  return GST_PAD_PROBE_OK;
}

/* videotestsrc ! the element (named e) ! system memory ! appsink: the memory types seen on its
 * sink and src pads. */
void memory_types (const std::string &element, std::vector<std::string> *in, std::vector<std::string> *out)
{
  GstElement *pipe = new_pipeline ("videotestsrc num-buffers=4 ! video/x-raw,format=RGBA,width=64,height=48 ! " +
      element + " name=e ! video/x-raw ! appsink name=sink sync=false");
  fail_unless (pipe != nullptr);
  GstElement *e = gst_bin_get_by_name (GST_BIN (pipe), "e");
  GstPad *sink = gst_element_get_static_pad (e, "sink"), *src = gst_element_get_static_pad (e, "src");
  gst_pad_add_probe (sink, GST_PAD_PROBE_TYPE_BUFFER, record_memory_type, in, nullptr);
  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER, record_memory_type, out, nullptr);
  GstElement *appsink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  std::vector<GstBuffer *> got = pull_all (appsink);
  gst_element_set_state (pipe, GST_STATE_NULL);
  fail_unless_equals_int (got.size (), 4);
  for (GstBuffer *b : got)
    gst_buffer_unref (b);
  gst_object_unref (sink);
  gst_object_unref (src);
  gst_object_unref (e);
  gst_object_unref (appsink);
  gst_object_unref (pipe);
}

}  // namespace

GST_START_TEST (test_system_memory_is_pinned_on_the_cuda_backend)
{
  for (const char *element : {"cudasobel", "cudaenhance contrast=1.4", "cudaheatmap"}) {
    for (const char *backend : {"cuda", "cpu"}) {
      std::vector<std::string> in, out;
      memory_types (std::string (element) + " backend=" + backend, &in, &out);
      const bool cuda = g_str_equal (backend, "cuda");
      fail_unless_equals_int (in.size (), 4);
      fail_unless_equals_int (out.size (), 4);
      for (size_t i = 0; i < 4; i++) {
        g_printerr ("%s backend=%s: in %s, out %s\n", element, backend, in[i].c_str (), out[i].c_str ());
        fail_unless (cuda == (in[i] == "CudaVisionPinned"), "%s backend=%s took %s", element, backend, in[i].c_str ());
        fail_unless (cuda == (out[i] == "CudaVisionPinned"), "%s backend=%s wrote %s", element, backend, out[i].c_str ());
      }
    }
  }
}
GST_END_TEST;

namespace {

/* @frames through appsrc and `@element backend=@backend` into system memory, each as a new buffer
 * header sharing its memory (a source that recycles its buffers), or with @deep as a deep copy
 * (new memory every time, as a decoder makes its frames); what leaves. */
std::vector<GstBuffer *> run_frames (const std::string &element, const char *backend, const GstVideoInfo &info,
    const std::vector<GstBuffer *> &frames, bool deep)
{
  GstElement *pipe = new_pipeline ("appsrc name=src format=time caps=\"" + caps_for (info) + "\" ! " + element +
      " backend=" + backend + " ! video/x-raw ! appsink name=sink sync=false");
  fail_unless (pipe != nullptr);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  for (size_t i = 0; i < frames.size (); i++) {
    GstBuffer *buf = deep ? gst_buffer_copy_deep (frames[i]) : gst_buffer_copy (frames[i]);
    GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
    GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
    gst_app_src_push_buffer (GST_APP_SRC (src), buf);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  std::vector<GstBuffer *> out = pull_all (sink);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipe);
  return out;
}

/* Frames of @info: @seen_once first, then ring[i % 3] for i < 9, sharing the ring's memory (a
 * source that recycles a few buffers and ignores the pool we propose: v4l2src, a decoder), through
 * `cudasobel backend=@backend`; what leaves. */
std::vector<GstBuffer *> run_ring (const char *backend, const GstVideoInfo &info, GstBuffer *seen_once,
    GstBuffer *const ring[3])
{
  std::vector<GstBuffer *> frames{seen_once};
  for (int i = 1; i < 10; i++)
    frames.push_back (ring[(i - 1) % 3]);
  return run_frames ("cudasobel", backend, info, frames, false);
}

/* @buf, of @src's size, with @src's metadata and bytes; @src is taken. */
GstBuffer *filled_from (GstBuffer *buf, GstBuffer *src)
{
  fail_unless (gst_buffer_copy_into (buf, src, static_cast<GstBufferCopyFlags> (GST_BUFFER_COPY_METADATA | GST_BUFFER_COPY_META), 0, -1));
  GstMapInfo map;
  fail_unless (gst_buffer_map (src, &map, GST_MAP_READ));
  gst_buffer_fill (buf, 0, map.data, map.size);
  gst_buffer_unmap (src, &map);
  gst_buffer_unref (src);
  return buf;
}

/* @src's frame in a block of whole pages of its own (page-aligned, padded to a page): blocks on
 * the heap that share a page cannot both be page-locked, and the count below would vary. */
GstBuffer *whole_pages (GstBuffer *src)
{
  const gsize size = gst_buffer_get_size (src);
  GstAllocationParams params;
  gst_allocation_params_init (&params);
  params.align = 4095;
  params.padding = (4096 - size % 4096) % 4096;
  return filled_from (gst_buffer_new_allocate (nullptr, size, &params), src);
}

/* A count the plugin exports for tests (cuv_page_locked_blocks, cuv_staged_uploads). */
long plugin_count (const char *hook)
{
  auto fn = reinterpret_cast<long (*) ()> (cuvtest::plugin_symbol (hook));
  fail_unless (fn != nullptr, "the cudavision plugin's %s hook", hook);
  return fn ();
}

long page_locked_blocks ()
{
  return plugin_count ("cuv_page_locked_blocks");
}

}  // namespace

/* System memory that upstream recycles is page-locked from its second coming until it is freed,
 * memory that comes once is not, and the results are the CPU backend's, byte for byte, with
 * padded strides too. */
GST_START_TEST (test_recycled_host_memory_is_page_locked)
{
  for (GstVideoFormat format : {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12}) {
    for (int pad : {0, 24}) {
      const GstVideoInfo info = info_for (format, 323, 97);
      GstBuffer *seen_once = whole_pages (make_buffer (info, pad, 7));
      GstBuffer *ring[3];
      for (int i = 0; i < 3; i++)
        ring[i] = whole_pages (make_buffer (info, pad, 11 + i));
      const std::string what = std::string (gst_video_format_to_string (format)) + " pad " + std::to_string (pad);
      std::vector<GstBuffer *> ref = run_ring ("cpu", info, seen_once, ring);
      const long before = page_locked_blocks ();
      std::vector<GstBuffer *> got = run_ring ("cuda", info, seen_once, ring);
      const long during = page_locked_blocks () - before;
      fail_unless_equals_int (ref.size (), 10);
      fail_unless_equals_int (got.size (), 10);
      for (size_t i = 0; i < got.size (); i++) {
        fail_unless_equals_int (buffer_diff (got[i], ref[i], info, what + ", frame " + std::to_string (i)), 0);
        gst_buffer_unref (got[i]);
        gst_buffer_unref (ref[i]);
      }
      /* the ring's three blocks, not the one that came once */
      fail_unless_equals_int (during, 3);
      gst_buffer_unref (seen_once);
      for (GstBuffer *b : ring)
        gst_buffer_unref (b);
      /* freed memory is unregistered */
      fail_unless_equals_int (page_locked_blocks (), before);
    }
  }
}
GST_END_TEST;

namespace {

long staged_uploads ()
{
  return plugin_count ("cuv_staged_uploads");
}

long staged_downloads ()
{
  return plugin_count ("cuv_staged_downloads");
}

/* the host's waits for frames, before a push and in flight (cuvsync.h) */
long frame_waits ()
{
  return plugin_count ("cuv_host_waits") + plugin_count ("cuv_in_flight_waits");
}

}  // namespace

/* Pageable frames that come once (a new buffer every frame) and span a few bands are copied up by
 * our threads through page-locked staging (cuvhostcopy.h), each one, with frames in flight and
 * without, out of place and in place, where the result goes back into the same pageable memory
 * through the staging and our threads too: the results are the CPU backend's, byte for byte,
 * with rows that are and are not their staging's pitch. */
GST_START_TEST (test_fresh_host_memory_is_staged)
{
  struct Shape {
    GstVideoFormat format;
    int width, height, pad;
  };
  const Shape shapes[] = {
    {GST_VIDEO_FORMAT_RGBA, 1280, 1031, 0}, /* rows of 5120 bytes: the staging's pitch, one copy a band */
    {GST_VIDEO_FORMAT_RGBA, 1283, 1031, 24},
    {GST_VIDEO_FORMAT_NV12, 2050, 1541, 0},
    {GST_VIDEO_FORMAT_I420, 2051, 1541, 24},
  };
  for (const Shape &sh : shapes) {
    const GstVideoInfo info = info_for (sh.format, sh.width, sh.height);
    std::vector<GstBuffer *> frames;
    for (int i = 0; i < 4; i++)
      frames.push_back (make_buffer (info, sh.pad, 31 + i));
    for (const char *element : {"cudasobel", "cudaenhance contrast=1.4 saturation=1.3"}) {
      std::vector<GstBuffer *> ref = run_frames (element, "cpu", info, frames, true);
      fail_unless_equals_int (ref.size (), frames.size ());
      for (const char *in_flight : {"", " max-frames-in-flight=0"}) {
        const std::string what = std::string (gst_video_format_to_string (sh.format)) + " " +
            std::to_string (sh.width) + "x" + std::to_string (sh.height) + " pad " + std::to_string (sh.pad) + ", " +
            element + in_flight;
        g_printerr ("%s\n", what.c_str ());
        const long up = staged_uploads (), down = staged_downloads (), waits = frame_waits ();
        std::vector<GstBuffer *> got = run_frames (std::string (element) + in_flight, "cuda", info, frames, true);
        /* the copy takes half the cores: with fewer than 4 the driver's copy it is */
        const long staged = g_get_num_processors () >= 4 ? static_cast<long> (frames.size ()) : 0;
        fail_unless_equals_int (staged_uploads () - up, staged);
        /* in place (cudaenhance) the result goes back into the pageable frame; out of place into
         * our page-locked pool */
        fail_unless_equals_int (staged_downloads () - down, g_str_has_prefix (element, "cudaenhance") ? staged : 0);
        /* the staged download waits for its frame: nothing waits for it again */
        if (staged && g_str_has_prefix (element, "cudaenhance"))
          fail_unless_equals_int (frame_waits () - waits, frames.size ());
        fail_unless_equals_int (got.size (), frames.size ());
        for (size_t i = 0; i < got.size (); i++) {
          fail_unless_equals_int (buffer_diff (got[i], ref[i], info, what + ", frame " + std::to_string (i)), 0);
          gst_buffer_unref (got[i]);
        }
      }
      for (GstBuffer *b : ref)
        gst_buffer_unref (b);
    }
    for (GstBuffer *b : frames)
      gst_buffer_unref (b);
  }
}
GST_END_TEST;

namespace {

struct OwnerBlock {
  GstCudaContext *ctx;
  void *data;
};

/* @src's frame in page-locked memory that its owner allocated (cuMemAllocHost on the shared
 * context, as another CUDA library's buffers are), freed with the buffer; @src is taken. */
GstBuffer *owner_locked (GstBuffer *src)
{
  auto *b = new OwnerBlock{nullptr, nullptr};
  fail_unless (shared_cuda_context () != nullptr);
  fail_unless (gst_structure_get (gst_context_get_structure (shared_cuda_context ()), GST_CUDA_CONTEXT_TYPE,
      GST_TYPE_CUDA_CONTEXT, &b->ctx, nullptr));
  const gsize size = gst_buffer_get_size (src);
  fail_unless (gst_cuda_context_push (b->ctx));
  fail_unless_equals_int (CuMemAllocHost (&b->data, size), CUDA_SUCCESS);
  gst_cuda_context_pop (nullptr);
  GstBuffer *buf = gst_buffer_new_wrapped_full (static_cast<GstMemoryFlags> (0), b->data, size, 0, size, b,
      +[] (gpointer data) {
        auto *block = static_cast<OwnerBlock *> (data);
        if (gst_cuda_context_push (block->ctx)) {
          CuMemFreeHost (block->data);
          gst_cuda_context_pop (nullptr);
        }
        gst_object_unref (block->ctx);
        delete block;
      });
  return filled_from (buf, src);
}

}  // namespace

/* System memory that its owner page-locked (not our pool's: a buffer wrapping cudaHostAlloc'd
 * memory) goes up as it is, one DMA: neither through our staging nor registered again, and the
 * results are the CPU backend's. */
GST_START_TEST (test_memory_locked_by_its_owner_goes_as_it_is)
{
  const GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 1283, 1031);
  std::vector<GstBuffer *> frames;
  for (int i = 0; i < 3; i++)
    frames.push_back (owner_locked (make_buffer (info, 24, 41 + i)));
  /* each frame twice: the second coming is where memory of others is registered */
  frames.insert (frames.end (), frames.begin (), frames.end ());
  std::vector<GstBuffer *> ref = run_frames ("cudasobel", "cpu", info, frames, false);
  const long staged = staged_uploads (), locked = page_locked_blocks ();
  std::vector<GstBuffer *> got = run_frames ("cudasobel", "cuda", info, frames, false);
  fail_unless_equals_int (staged_uploads () - staged, 0);
  fail_unless_equals_int (page_locked_blocks () - locked, 0);
  fail_unless_equals_int (got.size (), frames.size ());
  fail_unless_equals_int (ref.size (), frames.size ());
  for (size_t i = 0; i < got.size (); i++) {
    fail_unless_equals_int (buffer_diff (got[i], ref[i], info, "frame " + std::to_string (i)), 0);
    gst_buffer_unref (got[i]);
    gst_buffer_unref (ref[i]);
  }
  for (size_t i = 0; i < 3; i++)
    gst_buffer_unref (frames[i]);
}
GST_END_TEST;

namespace {

/* Runs @launch to EOS with @contexts set on the elements of those names first; the last frame at
 * the sink named "sink" (a reference) and the warnings that the element named @warner posted. */
GstBuffer *
last_frame_and_warnings (const char *launch, const std::vector<std::pair<const char *, GstContext *>> &contexts,
    const char *warner, std::vector<std::string> *warnings)
{
  GError *err = nullptr;
  GstElement *pipe = gst_parse_launch (launch, &err);
  fail_unless (pipe != nullptr && err == nullptr, "%s: %s", launch, err ? err->message : "");
  for (const auto &c : contexts) {
    GstElement *e = gst_bin_get_by_name (GST_BIN (pipe), c.first);
    gst_element_set_context (e, c.second);
    gst_object_unref (e);
  }
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstBus *bus = gst_element_get_bus (pipe);
  for (;;) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
        static_cast<GstMessageType> (GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING));
    fail_unless (m != nullptr, "%s: no EOS in 30 s", launch);
    const GstMessageType type = GST_MESSAGE_TYPE (m);
    if (type == GST_MESSAGE_WARNING && g_str_equal (GST_OBJECT_NAME (GST_MESSAGE_SRC (m)), warner)) {
      GError *w = nullptr;
      gst_message_parse_warning (m, &w, nullptr);
      warnings->push_back (w->message);
      g_error_free (w);
    }
    if (type == GST_MESSAGE_ERROR) {
      GError *e = nullptr;
      gst_message_parse_error (m, &e, nullptr);
      fail ("%s: %s", launch, e->message);
    }
    gst_message_unref (m);
    if (type == GST_MESSAGE_EOS)
      break;
  }
  gst_object_unref (bus);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  GstSample *sample = nullptr;
  g_object_get (sink, "last-sample", &sample, nullptr);
  fail_unless (sample != nullptr);
  GstBuffer *frame = gst_buffer_ref (gst_sample_get_buffer (sample));
  gst_sample_unref (sample);
  gst_object_unref (sink);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  return frame;
}

}  // namespace

/* CUDA memory of another context (a neighbour on another device, or one that did not share its
 * context) goes through system memory: the frames are still right, and one warning says so and
 * what to set (never a silent slowdown). On one GPU, two contexts of device 0 stand
 * for two devices (test_multi_gpu has two devices); shared, no warning comes. */
GST_START_TEST (test_cuda_memory_of_another_context_warns)
{
  const char *launch = "videotestsrc num-buffers=6 pattern=ball ! video/x-raw,format=RGBA,width=320,height=240 ! "
                       "cudaupload name=up ! cudasobel name=sobel ! cudadownload ! video/x-raw,format=RGBA ! "
                       "fakesink name=sink";
  std::vector<std::string> shared_warnings, warnings;
  GstBuffer *want = last_frame_and_warnings (launch, {}, "sobel", &shared_warnings);
  fail_unless_equals_int (shared_warnings.size (), 0);

  GstCudaContext *a = gst_cuda_context_new (0), *b = gst_cuda_context_new (0);
  fail_unless (a != nullptr && b != nullptr);
  GstContext *ca = gst_context_new_cuda_context (a), *cb = gst_context_new_cuda_context (b);
  GstBuffer *got = last_frame_and_warnings (launch, {{"up", ca}, {"sobel", cb}}, "sobel", &warnings);
  fail_unless_equals_int (warnings.size (), 1);
  fail_unless (warnings[0].find ("another CUDA context on device 0") != std::string::npos, "warning: %s",
      warnings[0].c_str ());
  fail_unless (warnings[0].find ("copied through system memory") != std::string::npos, "warning: %s",
      warnings[0].c_str ());
  const GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 320, 240);
  fail_unless_equals_int (buffer_diff (got, want, info, "the last frame through another context"), 0);
  gst_buffer_unref (got);
  gst_buffer_unref (want);
  gst_context_unref (ca);
  gst_context_unref (cb);
  gst_object_unref (a);
  gst_object_unref (b);
}
GST_END_TEST;

static Suite *
negotiation_suite (void)
{
  Suite *s = suite_create ("negotiation-gpu");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_memory_each_route_negotiates);
  tcase_add_test (tc, test_system_memory_is_pinned_on_the_cuda_backend);
  tcase_add_test (tc, test_recycled_host_memory_is_page_locked);
  tcase_add_test (tc, test_fresh_host_memory_is_staged);
  tcase_add_test (tc, test_memory_locked_by_its_owner_goes_as_it_is);
  tcase_add_test (tc, test_cuda_memory_of_another_context_warns);
  return s;
}

int
main (int argc, char **argv)
{
  return run_gpu_suite (argc, argv, negotiation_suite, "negotiation_gpu", __FILE__);
}
