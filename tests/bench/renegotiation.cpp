/* Renegotiation as upstream survives it: a capsfilter after an element switches its caps between
 * CUDA memory and system memory every PERIOD while 300 frames flow, and each row says whether the
 * pipeline ran to EOS or stopped (and with what), and how many frames reached the sink. Rows of
 * upstream's elements in the same place (cudaupload, cudadownload, identity) come first, so that
 * ours are held to them in the same run (docs/performance.md, "Renegotiation"; test_dynamic holds
 * the same as a test).
 *   renegotiation [--size WxH] [--period-us N] [--mode immediate|delayed] [--frames N]
 *                 [--backend cuda|cpu] [--only TEXT] [--repeat N]
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/gst.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Row {
  std::string name;   /* as the table names it */
  std::string before; /* what gives the element its input: "cudaupload ! " for CUDA memory */
  std::string element;
  bool ours;
};

struct Result {
  std::string end; /* "EOS" or the error */
  int frames;
};

std::vector<Row> rows (const std::string &backend)
{
  const std::string b = " backend=" + backend;
  std::vector<Row> r = {
      {"cudaupload (upstream), from system memory", "", "cudaupload", false},
      {"cudadownload (upstream), from CUDA memory", "cudaupload ! ", "cudadownload", false},
      {"identity (upstream), from CUDA memory", "cudaupload ! ", "identity", false},
  };
  const char *ours[] = {"cudasobel", "cudaenhance", "cudahistogram", "cudaheatmap", "cudanoisemap", "cudamotionest",
      "cudamotionest block-size=variable draw=arrows", "cudahistogram overlay=true interval=0"};
  for (const char *e : ours) {
    r.push_back ({std::string (e) + ", from CUDA memory", "cudaupload ! ", std::string (e) + b, true});
    r.push_back ({std::string (e) + ", from system memory", "", std::string (e) + b, true});
  }
  return r;
}

Result run (const Row &row, const std::string &size, int frames, std::chrono::microseconds period, const std::string &mode)
{
  const size_t x = size.find ('x');
  const std::string desc = "videotestsrc num-buffers=" + std::to_string (frames) +
      " pattern=ball ! video/x-raw,format=NV12,width=" + size.substr (0, x) + ",height=" + size.substr (x + 1) + " ! " +
      row.before + row.element + " ! capsfilter name=cf" + (mode == "immediate" ? "" : " caps-change-mode=" + mode) +
      " ! cudadownload ! fakesink name=sink sync=false";
  GError *err = nullptr;
  GstElement *pipe = gst_parse_launch (desc.c_str (), &err);
  if (!pipe) {
    Result r{std::string ("does not build: ") + (err ? err->message : "?"), 0};
    g_clear_error (&err);
    return r;
  }
  GstElement *cf = gst_bin_get_by_name (GST_BIN (pipe), "cf");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  std::atomic<int> count{0};
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, [] (GstPad *, GstPadProbeInfo *, gpointer n) {
    (*static_cast<std::atomic<int> *> (n))++;
    return GST_PAD_PROBE_OK;
  }, &count, nullptr);
  GstCaps *caps[2] = {gst_caps_from_string ("video/x-raw(memory:CUDAMemory)"), gst_caps_from_string ("video/x-raw")};
  std::atomic<bool> stop{false};
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  std::thread switcher ([&] {
    for (int i = 0; !stop; i++) {
      g_object_set (cf, "caps", caps[i % 2], nullptr);
      std::this_thread::sleep_for (period);
    }
  });
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
      static_cast<GstMessageType> (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  stop = true;
  switcher.join ();
  Result r{"timeout", count};
  if (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS) {
    r.end = "EOS";
  } else if (m) {
    gchar *dbg = nullptr;
    gst_message_parse_error (m, &err, &dbg);
    r.end = std::string (GST_OBJECT_NAME (GST_MESSAGE_SRC (m))) + ": " + err->message + " (" + (dbg ? dbg : "") + ")";
    g_clear_error (&err);
    g_free (dbg);
  }
  r.frames = count;
  if (m)
    gst_message_unref (m);
  gst_object_unref (bus);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_caps_unref (caps[0]);
  gst_caps_unref (caps[1]);
  gst_object_unref (pad);
  gst_object_unref (sink);
  gst_object_unref (cf);
  gst_object_unref (pipe);
  return r;
}

}  // namespace

int main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  std::string size = "640x480", mode = "immediate", backend = "cuda", only;
  int period_us = 3000, frames = 300, repeat = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--size")
      size = v;
    else if (a == "--period-us")
      period_us = std::atoi (v.c_str ());
    else if (a == "--mode")
      mode = v;
    else if (a == "--frames")
      frames = std::atoi (v.c_str ());
    else if (a == "--backend")
      backend = v;
    else if (a == "--only")
      only = v;
    else if (a == "--repeat")
      repeat = std::atoi (v.c_str ());
    else {
      std::fprintf (stderr, "renegotiation: unknown option %s\n", a.c_str ());
      return 2;
    }
  }
  std::printf ("%s, caps switched every %d us, caps-change-mode=%s, %d frames, backend=%s\n", size.c_str (), period_us,
      mode.c_str (), frames, backend.c_str ());
  int failed = 0;
  for (const Row &row : rows (backend)) {
    if (!only.empty () && row.name.find (only) == std::string::npos)
      continue;
    int eos = 0, fewest = frames, most = 0;
    std::string first_error;
    for (int k = 0; k < repeat; k++) {
      const Result r = run (row, size, frames, std::chrono::microseconds (period_us), mode);
      eos += r.end == "EOS";
      fewest = std::min (fewest, r.frames);
      most = std::max (most, r.frames);
      if (r.end != "EOS" && first_error.empty ())
        first_error = r.end.substr (0, r.end.find ('('));
    }
    std::printf ("| %-56s | EOS %2d of %2d | frames %3d to %3d of %d | %s\n", row.name.c_str (), eos, repeat, fewest,
        most, frames, first_error.c_str ());
    std::fflush (stdout);
    failed += row.ours && eos < repeat;
  }
  return failed ? 1 : 0;
}
