/* The last CUDA device as good as the first: each element with cuda-device-id set to the last
 * device, fed by cudaupload on that device, gives the bytes and the meta it gives on device 0,
 * and every CUDA buffer it pushes is memory of a context on that device. Exits 77 with fewer than
 * two devices. Where cudaupload is on device 0 and the element on the last, the frames are still
 * right and one warning says that they go through system memory. With the default cuda-device-id
 * after cudaupload on the last device, the element follows the memory there, without a warning.
 * Speed on each device is
 * bench_pipelines --device N's job.
 *   test_multi_gpu            every element, RGBA and NV12
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/gst.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/common/cuvtest.h"

namespace {

const char *kMetas[] = {"CudaHistogramMeta", "CudaHeatmapMeta", "CudaNoisemapMeta", "CudaMotionMeta"};

struct Run {
  std::vector<GstBuffer *> frames;
  std::atomic<int> foreign{0}; /* CUDA buffers pushed by the element on another device */
  std::atomic<int> cuda{0};    /* CUDA buffers pushed by the element */
  int device = 0;
  std::string error;
  std::vector<std::string> warnings; /* the element's */
  ~Run ()
  {
    for (GstBuffer *b : frames)
      gst_buffer_unref (b);
  }
};

GstPadProbeReturn on_element_output (GstPad *, GstPadProbeInfo *info, gpointer data)
{
  auto *run = static_cast<Run *> (data);
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  for (guint i = 0; i < gst_buffer_n_memory (buf); i++) {
    GstMemory *mem = gst_buffer_peek_memory (buf, i);
    if (!gst_is_cuda_memory (mem))
      continue;
    run->cuda++;
    gint id = -1;
    g_object_get (GST_CUDA_MEMORY_CAST (mem)->context, "cuda-device-id", &id, nullptr);
    if (id != run->device)
      run->foreign++;
  }
  return GST_PAD_PROBE_OK;
}

GstFlowReturn on_sample (GstElement *sink, gpointer data)
{
  GstSample *sample = nullptr;
  g_signal_emit_by_name (sink, "pull-sample", &sample);
  if (sample) {
    static_cast<Run *> (data)->frames.push_back (gst_buffer_ref (gst_sample_get_buffer (sample)));
    gst_sample_unref (sample);
  }
  return GST_FLOW_OK;
}

/* The element on @device, CUDA memory on both its pads, fed by cudaupload on @upload_device (-1:
 * @device); no context is set on the pipeline, so every element finds or makes one for its
 * cuda-device-id. With @default_device the element's cuda-device-id is left at -1: it should
 * follow cudaupload's memory to @device. */
void run_on (const char *element, const char *props, const char *format, int device, Run *run, int upload_device = -1,
    bool default_device = false)
{
  const std::string d = default_device ? std::string () : " cuda-device-id=" + std::to_string (device);
  const std::string u = std::to_string (upload_device < 0 ? device : upload_device);
  const std::string launch = std::string ("videotestsrc num-buffers=8 pattern=ball ! video/x-raw,format=") + format +
      ",width=320,height=240 ! cudaupload cuda-device-id=" + u + " ! " + element + " name=f backend=cuda" +
      d + " " + props + " ! video/x-raw(memory:CUDAMemory) ! cudadownload ! video/x-raw ! appsink name=sink sync=false "
      "emit-signals=true";
  run->device = device;
  GError *err = nullptr;
  GstElement *pipe = gst_parse_launch (launch.c_str (), &err);
  if (!pipe || err) {
    run->error = std::string ("does not parse: ") + (err ? err->message : launch.c_str ());
    g_clear_error (&err);
    if (pipe)
      gst_object_unref (pipe);
    return;
  }
  GstElement *f = gst_bin_get_by_name (GST_BIN (pipe), "f");
  GstPad *src = gst_element_get_static_pad (f, "src");
  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER, on_element_output, run, nullptr);
  gst_object_unref (src);
  gst_object_unref (f);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  g_signal_connect (sink, "new-sample", G_CALLBACK (on_sample), run);
  gst_object_unref (sink);
  GstBus *bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  /* the element's warnings on the way (a pop drops the messages that its filter does not take) */
  GstMessage *msg;
  while ((msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
              static_cast<GstMessageType> (GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING))) &&
      GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING) {
    if (g_str_equal (GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), "f")) {
      gst_message_parse_warning (msg, &err, nullptr);
      run->warnings.push_back (err->message);
      g_clear_error (&err);
    }
    gst_message_unref (msg);
  }
  if (!msg) {
    run->error = "neither EOS nor an error within 60 s";
  } else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gst_message_parse_error (msg, &err, nullptr);
    run->error = err->message;
    g_error_free (err);
  }
  if (msg)
    gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

bool same_bytes (GstBuffer *a, GstBuffer *b)
{
  GstMapInfo ma, mb;
  if (!gst_buffer_map (a, &ma, GST_MAP_READ))
    return false;
  if (!gst_buffer_map (b, &mb, GST_MAP_READ)) {
    gst_buffer_unmap (a, &ma);
    return false;
  }
  const bool same = ma.size == mb.size && memcmp (ma.data, mb.data, ma.size) == 0;
  gst_buffer_unmap (b, &mb);
  gst_buffer_unmap (a, &ma);
  return same;
}

bool same_metas (GstBuffer *a, GstBuffer *b)
{
  for (const char *name : kMetas) {
    GstCustomMeta *ma = gst_buffer_get_custom_meta (a, name);
    GstCustomMeta *mb = gst_buffer_get_custom_meta (b, name);
    if (!ma != !mb)
      return false;
    if (!ma)
      continue;
    /* the results, not the `element` field: the two pipelines' elements have other names */
    GstStructure *sa = gst_structure_copy (gst_custom_meta_get_structure (ma));
    GstStructure *sb = gst_structure_copy (gst_custom_meta_get_structure (mb));
    gst_structure_remove_field (sa, "element");
    gst_structure_remove_field (sb, "element");
    const bool same = gst_structure_is_equal (sa, sb);
    gst_structure_free (sa);
    gst_structure_free (sb);
    if (!same)
      return false;
  }
  return true;
}

}  // namespace

int main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  int devices = 0;
  if (!cuvtest::have_gpu ())
    return cuvtest::no_gpu ();
  if (cudaGetDeviceCount (&devices) != cudaSuccess || devices < 2) {
    std::printf ("fewer than two CUDA devices (%d): skipped\n", devices);
    return cuvtest::kSkip;
  }
  const int last = devices - 1;
  cuvtest::Checker c;
  for (const auto &e : cuvtest::kElements) {
    for (const char *format : {"RGBA", "NV12"}) {
      const std::string what = std::string (e.name) + " " + e.props + " " + format;
      cuvtest::Timer timer ("device 0 and device " + std::to_string (last) + ": " + what);
      Run first, other;
      run_on (e.name, e.props, format, 0, &first);
      run_on (e.name, e.props, format, last, &other);
      c.expect (first.error.empty (), what + " on device 0: " + first.error);
      c.expect (other.error.empty (), what + " on device " + std::to_string (last) + ": " + other.error);
      c.expect (first.frames.size () == 8 && other.frames.size () == 8, what + ": not 8 frames on each device");
      c.expect (other.cuda > 0 && other.foreign == 0,
          what + ": " + std::to_string (other.foreign) + " of " + std::to_string (other.cuda) +
              " CUDA buffers pushed on another device than " + std::to_string (last));
      c.expect (first.warnings.empty () && other.warnings.empty (), what + ": a warning where the devices agree");
      for (size_t i = 0; i < std::min (first.frames.size (), other.frames.size ()); i++) {
        c.expect (same_bytes (first.frames[i], other.frames[i]), what + " frame " + std::to_string (i) + ": bytes differ");
        c.expect (same_metas (first.frames[i], other.frames[i]), what + " frame " + std::to_string (i) + ": meta differs");
      }
    }
  }
  /* the default cuda-device-id after cudaupload on the last device: the element starts first, on
   * device 0's context, and follows the memory that comes to the last device, without a warning */
  for (const auto &e : cuvtest::kElements) {
    const std::string what = std::string (e.name) + " " + e.props + " with the default cuda-device-id after cudaupload "
        "on device " + std::to_string (last);
    Run first, followed;
    run_on (e.name, e.props, "NV12", 0, &first);
    run_on (e.name, e.props, "NV12", last, &followed, last, true);
    c.expect (first.error.empty () && followed.error.empty (), what + ": " + first.error + followed.error);
    c.expect (followed.frames.size () == 8, what + ": not 8 frames");
    c.expect (followed.cuda > 0 && followed.foreign == 0,
        what + ": " + std::to_string (followed.foreign) + " of " + std::to_string (followed.cuda) +
            " CUDA buffers pushed on another device");
    c.expect (followed.warnings.empty (), what + ": a warning (" +
        (followed.warnings.empty () ? std::string () : followed.warnings[0]) + ")");
    for (size_t i = 0; i < std::min (first.frames.size (), followed.frames.size ()); i++)
      c.expect (same_bytes (first.frames[i], followed.frames[i]), what + " frame " + std::to_string (i) + ": bytes differ");
  }
  /* neighbours that disagree: cudaupload on device 0, the element on the last device. The frames
   * go through system memory, still right, and one warning says so (never a silent slowdown). */
  for (const char *format : {"RGBA", "NV12"}) {
    const std::string what = std::string ("cudasobel on device ") + std::to_string (last) + " after cudaupload on 0, " +
        format;
    Run same, across;
    run_on ("cudasobel", "", format, 0, &same);
    run_on ("cudasobel", "", format, last, &across, 0);
    c.expect (same.error.empty () && across.error.empty (), what + ": " + same.error + across.error);
    c.expect (across.frames.size () == 8 && same.frames.size () == 8, what + ": not 8 frames");
    c.expect (across.foreign == 0, what + ": CUDA buffers pushed on another device than the element's");
    for (size_t i = 0; i < std::min (same.frames.size (), across.frames.size ()); i++)
      c.expect (same_bytes (same.frames[i], across.frames[i]), what + " frame " + std::to_string (i) + ": bytes differ");
    const std::string want = "CUDA memory of device 0 meets this element, which runs on device " + std::to_string (last);
    c.expect (across.warnings.size () == 1 && across.warnings[0].find (want) != std::string::npos,
        what + ": " + std::to_string (across.warnings.size ()) + " warnings, not one saying \"" + want + "\"" +
            (across.warnings.empty () ? "" : ": " + across.warnings[0]));
  }
  return c.finish ("test_multi_gpu");
}
