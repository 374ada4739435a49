/* cudaheatmap and cudanoisemap on the CPU backend: NV12, YUY2 and UYVY in, RGBA out; the first frame; a static
 * scene; a full change; one changed pixel at the threshold's boundary; the statistics of frames in
 * bands against the references' of whole frames; the previous frame forgotten on a flush, a
 * DISCONT buffer and a caps change; interval messages; a threshold changed while flowing; a live
 * pipeline (no frame lost, memory flat); and when a pool can spare a held buffer.
 * Runs without a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cstring>
#include <fstream>
#include <random>

#include "tests/check/cuvcheck.h"
#include "common/route/cuvframe.h"
#include "common/route/cuvprevious.h"
#include "kernels/heatmap/heatmap.h"
#include "kernels/noisemap/noisemap.h"
#include "tests/check/cuvregions.h"

using namespace cuvcheck;

/* A frame of @info with every byte @value (for YUV: Y, U and V all @value). */
static GstBuffer *
solid_buffer (const GstVideoInfo &info, guint8 value, int index = 0)
{
  GstBuffer *buf = gst_buffer_new_allocate (nullptr, GST_VIDEO_INFO_SIZE (&info), nullptr);
  gst_buffer_memset (buf, 0, value, GST_VIDEO_INFO_SIZE (&info));
  GST_BUFFER_PTS (buf) = index * (GST_SECOND / 30);
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  return buf;
}

/* The same frame with one byte of pixel (@x, @y) (RGB: G; YUV: Y) moved by @delta. */
static GstBuffer *
with_pixel_changed (GstBuffer *in, const GstVideoInfo &info, int x, int y, int delta)
{
  GstBuffer *out = gst_buffer_copy_deep (in);
  GstVideoFrame f;
  GstVideoInfo i = info;
  fail_unless (gst_video_frame_map (&f, &i, out, GST_MAP_WRITE));
  guint8 *row = static_cast<guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (&f, 0)) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&f, 0);
  guint8 *b = GST_VIDEO_INFO_IS_RGB (&info) ? row + 4 * x + 1 : row + x;
  *b = static_cast<guint8> (*b + delta);
  gst_video_frame_unmap (&f);
  return out;
}

static const GstStructure *
meta_of (GstBuffer *buf, const char *name)
{
  GstCustomMeta *m = gst_buffer_get_custom_meta (buf, name);
  fail_unless (m != nullptr, "no %s on the output buffer", name);
  return gst_custom_meta_get_structure (m);
}

static guint64
changed_pixels (GstBuffer *buf)
{
  guint64 v = 0;
  fail_unless (gst_structure_get_uint64 (meta_of (buf, "CudaNoisemapMeta"), "changed-pixels", &v));
  return v;
}

static gboolean
first_frame (GstBuffer *buf, const char *meta)
{
  gboolean v = FALSE;
  fail_unless (gst_structure_get_boolean (meta_of (buf, meta), "first-frame", &v));
  return v;
}

/* Every pixel of an RGBA-like @buf equals @px (bytes in memory order). */
static bool
all_pixels (GstBuffer *buf, const GstVideoInfo &info, const guint8 px[4])
{
  GstVideoFrame f;
  GstVideoInfo i = info;
  fail_unless (gst_video_frame_map (&f, &i, buf, GST_MAP_READ));
  bool ok = true;
  for (int y = 0; y < GST_VIDEO_INFO_HEIGHT (&info) && ok; y++) {
    const guint8 *row = static_cast<const guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (&f, 0)) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&f, 0);
    for (int x = 0; x < GST_VIDEO_INFO_WIDTH (&info) && ok; x++)
      ok = memcmp (row + 4 * x, px, 4) == 0;
  }
  gst_video_frame_unmap (&f);
  return ok;
}

static const guint8 kBlue[4] = {0, 0, 255, 255};
static const guint8 kRed[4] = {255, 0, 0, 255};

GST_START_TEST (test_heatmap_yuv_gives_rgba_first_frame_blue)
{
  for (GstVideoFormat fmt :
      {GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY, GST_VIDEO_FORMAT_P010_10LE}) {
    GstVideoInfo info = info_for (fmt, 64, 48);
    GstHarness *h = harness ("cudaheatmap backend=cpu", info);
    GstBuffer *out = push_pull (h, solid_buffer (info, 90));
    GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
    GstVideoInfo out_info;
    fail_unless (gst_video_info_from_caps (&out_info, caps));
    gst_caps_unref (caps);
    fail_unless_equals_string (GST_VIDEO_INFO_NAME (&out_info), "RGBA");
    fail_unless (all_pixels (out, out_info, kBlue), "the first frame is not all blue (no change)");
    fail_unless (first_frame (out, "CudaHeatmapMeta"));
    gst_buffer_unref (out);
    /* Y, U and V all move by 255: d = 765 everywhere */
    out = push_pull (h, solid_buffer (info, 255, 1));
    GstBuffer *zero = solid_buffer (info, 0, 2);
    gst_buffer_unref (out);
    out = push_pull (h, zero);
    fail_unless (all_pixels (out, out_info, kRed), "a full change is not all red");
    const GstStructure *m = meta_of (out, "CudaHeatmapMeta");
    guint max = 0;
    gdouble mean = 0;
    fail_unless (gst_structure_get_uint (m, "max-difference", &max) && gst_structure_get_double (m, "mean-difference", &mean));
    fail_unless_equals_int (max, 765);
    fail_unless_equals_float (mean, 765.0);
    fail_if (first_frame (out, "CudaHeatmapMeta"));
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

GST_START_TEST (test_heatmap_rgb_full_change_and_static)
{
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRx}) {
    GstVideoInfo info = info_for (fmt, 33, 17);
    GstHarness *h = harness ("cudaheatmap backend=cpu", info);
    gst_buffer_unref (push_pull (h, solid_buffer (info, 0)));
    GstBuffer *out = push_pull (h, solid_buffer (info, 255, 1));
    const guint8 red_bgr[4] = {0, 0, 255, 255};
    fail_unless (all_pixels (out, info, fmt == GST_VIDEO_FORMAT_RGBA ? kRed : red_bgr), "full change is not red");
    gst_buffer_unref (out);
    out = push_pull (h, solid_buffer (info, 255, 2));
    const guint8 blue_bgr[4] = {255, 0, 0, 255};
    fail_unless (all_pixels (out, info, fmt == GST_VIDEO_FORMAT_RGBA ? kBlue : blue_bgr), "static scene is not blue");
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* overlay mode on a static scene: nothing changes, so the frame passes unchanged */
GST_START_TEST (test_noisemap_static_scene_overlay_is_the_frame)
{
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YUY2,
           GST_VIDEO_FORMAT_UYVY, GST_VIDEO_FORMAT_P010_10LE}) {
    GstVideoInfo info = info_for (fmt, width_for (fmt, 41), 23);
    GstHarness *h = harness ("cudanoisemap backend=cpu mode=overlay threshold=0", info);
    GstBuffer *in = make_buffer (info, 0, 7);
    for (int i = 0; i < 3; i++) {
      GstBuffer *out = push_pull (h, gst_buffer_copy_deep (in));
      fail_unless_equals_int (buffer_diff (out, in, info, "static overlay"), 0);
      fail_unless_equals_int (changed_pixels (out), 0);
      fail_unless_equals_int (first_frame (out, "CudaNoisemapMeta"), i == 0);
      gst_buffer_unref (out);
    }
    gst_buffer_unref (in);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

GST_START_TEST (test_noisemap_full_change_counts_every_pixel)
{
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_P010_10LE}) {
    GstVideoInfo info = info_for (fmt, 40, 30);
    GstHarness *h = harness ("cudanoisemap backend=cpu", info);
    GstBuffer *out = push_pull (h, solid_buffer (info, 10));
    fail_unless_equals_int (changed_pixels (out), 0);
    gst_buffer_unref (out);
    out = push_pull (h, solid_buffer (info, 200, 1));
    const GstStructure *m = meta_of (out, "CudaNoisemapMeta");
    guint64 bytes = 0;
    gdouble ratio = 0;
    fail_unless (gst_structure_get_uint64 (m, "changed-bytes-estimate", &bytes) &&
        gst_structure_get_double (m, "changed-ratio", &ratio));
    fail_unless_equals_int (changed_pixels (out), 1200);
    fail_unless_equals_float (ratio, 1.0);
    fail_unless_equals_int (bytes, fmt == GST_VIDEO_FORMAT_NV12 ? 1800
            : fmt == GST_VIDEO_FORMAT_YUY2                          ? 2400
            : fmt == GST_VIDEO_FORMAT_P010_10LE                     ? 3600
                                                                    : 4800);
    if (fmt == GST_VIDEO_FORMAT_BGRA) {
      const guint8 red[4] = {0, 0, 255, 255};
      fail_unless (all_pixels (out, info, red), "map mode: every changed pixel is red");
    }
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* A change of exactly the threshold is quiet, one more is noisy; at each corner. */
GST_START_TEST (test_noisemap_corner_pixels_at_the_threshold)
{
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_RGBx, GST_VIDEO_FORMAT_I420}) {
    GstVideoInfo info = info_for (fmt, 21, 15);
    const int corners[4][2] = {{0, 0}, {20, 0}, {0, 14}, {20, 14}};
    for (const auto &k : corners) {
      GstHarness *h = harness ("cudanoisemap backend=cpu threshold=20", info);
      GstBuffer *base = solid_buffer (info, 100);
      gst_buffer_unref (push_pull (h, gst_buffer_ref (base)));
      GstBuffer *out = push_pull (h, with_pixel_changed (base, info, k[0], k[1], 20));
      fail_unless_equals_int (changed_pixels (out), 0);
      gst_buffer_unref (out);
      gst_buffer_unref (push_pull (h, gst_buffer_ref (base)));
      out = push_pull (h, with_pixel_changed (base, info, k[0], k[1], -21));
      fail_unless_equals_int (changed_pixels (out), 1);
      gst_buffer_unref (out);
      gst_buffer_unref (base);
      gst_harness_teardown (h);
    }
  }
}
GST_END_TEST;

/* @from with about a quarter of its bytes changed, some by up to 20, some to anything, stamped
 * as the @index'th frame. */
static GstBuffer *
perturbed (GstBuffer *from, uint32_t seed, int index)
{
  GstBuffer *out = gst_buffer_copy_deep (from);
  GstMapInfo map;
  fail_unless (gst_buffer_map (out, &map, GST_MAP_WRITE));
  std::mt19937 rng (seed);
  for (gsize i = 0; i < map.size; i++) {
    const uint32_t r = rng ();
    if (r % 4 == 0)
      map.data[i] = r % 8 == 0 ? static_cast<guint8> (r >> 16) : static_cast<guint8> (map.data[i] + (r >> 8) % 41 - 20);
  }
  gst_buffer_unmap (out, &map);
  GST_BUFFER_PTS (out) = index * (GST_SECOND / 30);
  return out;
}

/* The statistics of @cur against @prev as the CPU references give them for whole frames
 * (heatmap_reference, noisemap_reference with @threshold). */
static cuv::DiffStats
reference_stats (bool heatmap, const GstVideoInfo &info, GstBuffer *cur, GstBuffer *prev, int threshold)
{
  cuv::PixelLayout layout;
  fail_unless (gst_cuda_vision_layout_from_format (GST_VIDEO_INFO_FORMAT (&info), &layout));
  const cuv::PixelLayout out_layout = heatmap ? cuv::heatmap_out_layout (layout) : layout;
  GstVideoInfo out_info = out_layout == layout ? info
      : info_for (GST_VIDEO_FORMAT_RGBA, GST_VIDEO_INFO_WIDTH (&info), GST_VIDEO_INFO_HEIGHT (&info));
  GstBuffer *out = gst_buffer_new_allocate (nullptr, GST_VIDEO_INFO_SIZE (&out_info), nullptr);
  GstVideoInfo ci = info, pi = info;
  GstVideoFrame c, p, o;
  fail_unless (gst_video_frame_map (&c, &ci, cur, GST_MAP_READ) && gst_video_frame_map (&p, &pi, prev, GST_MAP_READ) &&
      gst_video_frame_map (&o, &out_info, out, GST_MAP_WRITE));
  const cuv::Frame cf = gst_cuda_vision_frame_from_video_frame (&c, layout);
  const cuv::Frame pf = gst_cuda_vision_frame_from_video_frame (&p, layout);
  const cuv::Frame of = gst_cuda_vision_frame_from_video_frame (&o, out_layout);
  cuv::DiffStats stats{};
  if (heatmap) {
    uint32_t table[cuv::kHeatmapTableSize];
    cuv::heatmap_build_table (cuv::Colormap::Sine, 1.0, out_layout, table);
    cuv::heatmap_reference (cf, pf, of, cuv::HeatmapParams{table, 256, cuv::yuv_to_rgb_coefficients (0.299, 0.114, false)},
        &stats);
  } else {
    cuv::NoisemapParams params{};
    params.threshold = threshold;
    params.alpha = 256;
    cuv::noisemap_reference (cf, pf, of, params, &stats);
  }
  gst_video_frame_unmap (&o);
  gst_video_frame_unmap (&p);
  gst_video_frame_unmap (&c);
  gst_buffer_unref (out);
  return stats;
}

/* The statistics of cudaheatmap's (@heatmap) or cudanoisemap's meta or message @s are @want's
 * over @pixels. */
static void
check_stats (const GstStructure *s, bool heatmap, const cuv::DiffStats &want, guint64 pixels, const std::string &what)
{
  guint64 n = 0;
  fail_unless (gst_structure_get_uint64 (s, "pixels", &n) && n == pixels, "%s: pixels %" G_GUINT64_FORMAT, what.c_str (), n);
  if (heatmap) {
    guint max = 0;
    gdouble mean = -1;
    fail_unless (gst_structure_get_uint (s, "max-difference", &max) && gst_structure_get_double (s, "mean-difference", &mean));
    fail_unless (max == want.max_difference && mean == static_cast<double> (want.sum_difference) / static_cast<double> (pixels),
        "%s: max-difference %u, mean-difference %f; the reference's %u, %f", what.c_str (), max, mean, want.max_difference,
        static_cast<double> (want.sum_difference) / static_cast<double> (pixels));
  } else {
    guint64 changed = 0;
    fail_unless (gst_structure_get_uint64 (s, "changed-pixels", &changed) && changed == want.changed,
        "%s: changed-pixels %" G_GUINT64_FORMAT ", the reference's %llu", what.c_str (), changed, want.changed);
  }
}

/* The CPU backend runs a frame in bands (n-threads) and adds their statistics: each frame's meta
 * and each interval's message hold the references' statistics of the whole frames, for both
 * elements (the difference analysis they share, common/element/cuvframedifference.h), on a frame of odd
 * height whose bands end at rows of every parity of chroma row. */
GST_START_TEST (test_cpu_bands_give_the_reference_statistics)
{
  const int threshold = 12;
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420,
           GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY, GST_VIDEO_FORMAT_P010_10LE}) {
    const GstVideoInfo info = info_for (fmt, width_for (fmt, 97), 61);
    const guint64 pixels = static_cast<guint64> (GST_VIDEO_INFO_WIDTH (&info)) * GST_VIDEO_INFO_HEIGHT (&info);
    GstBuffer *frames[4];
    frames[0] = make_buffer (info, 0, 31);
    for (int i = 1; i < 4; i++)
      frames[i] = perturbed (frames[i - 1], 40 + i, i);
    for (bool heatmap : {true, false}) {
      for (int threads : {1, 3, 7}) {
        /* an interval of two frames: messages of frames 0 and 1, then 2 and 3 */
        const std::string launch = std::string (heatmap ? "cudaheatmap" : "cudanoisemap threshold=" + std::to_string (threshold)) +
            " backend=cpu interval=66666666 n-threads=" + std::to_string (threads);
        const std::string what = launch + " " + gst_video_format_to_string (fmt);
        BusHarness bh (launch);
        gst_harness_set_src_caps_str (bh.h, caps_for (info).c_str ());
        gst_harness_set_sink_caps_str (bh.h, "video/x-raw");
        cuv::DiffStats intervals[2] = {};
        for (int i = 0; i < 4; i++) {
          GstBuffer *out = push_pull (bh.h, gst_buffer_ref (frames[i]));
          const cuv::DiffStats want = i == 0 ? cuv::DiffStats{} : reference_stats (heatmap, info, frames[i], frames[i - 1], threshold);
          fail_unless (i == 0 || want.sum_difference + want.changed > 0, "%s: frame %d changes nothing", what.c_str (), i);
          cuv::add_band_stats (&intervals[i / 2], want);
          const char *meta = heatmap ? "CudaHeatmapMeta" : "CudaNoisemapMeta";
          check_stats (meta_of (out, meta), heatmap, want, pixels, what + " frame " + std::to_string (i));
          fail_unless_equals_int (first_frame (out, meta), i == 0);
          gst_buffer_unref (out);
        }
        std::vector<GstMessage *> msgs = element_messages_at_eos (bh.h, bh.bus);
        fail_unless_equals_int (msgs.size (), 2);
        for (int k = 0; k < 2; k++) {
          check_stats (gst_message_get_structure (msgs[k]), heatmap, intervals[k], 2 * pixels,
              what + " interval " + std::to_string (k));
          gst_message_unref (msgs[k]);
        }
      }
    }
    for (GstBuffer *f : frames)
      gst_buffer_unref (f);
  }
}
GST_END_TEST;

/* After each reset the next output is the first-frame output, though the frame differs. */
/* regions=true: a window whose content changes gives one "change" region (ROI meta and, with
 * GStreamer's analytics library, object detection) within one 16-pixel tile of the window, with the
 * share of its box that changed as confidence (checked against the meta's count); none on the
 * first frame, on a still frame, below min-region-area or with regions=false. Both backends where
 * there is a GPU, RGBA, NV12, I420 and YUY2, whole tiles and cut ones. */
GST_START_TEST (test_noisemap_regions)
{
  std::vector<std::string> backends = {"cpu"};
  if (cuvtest::have_gpu ())
    backends.push_back ("cuda");
  const struct {
    guint w, h;
    Box window;
  } shapes[] = {{128, 96, {40, 32, 48, 32, 0}}, {150, 70, {101, 40, 49, 30, 0}}};
  for (const std::string &backend : backends) {
    for (GstVideoFormat format : {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420,
             GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_P010_10LE}) {
      for (const auto &shape : shapes) {
        const Box &win = shape.window;
        GstVideoInfo info = info_for (format, shape.w, shape.h);
        const std::string launch = "cudanoisemap backend=" + backend + " regions=true";
        const std::string what = launch + " " + gst_video_format_to_string (format) + " " + std::to_string (shape.w) +
            "x" + std::to_string (shape.h);
        GstHarness *h = harness (launch, info);
        GstBuffer *out = push_pull (h, window_frame (info, win.x, win.y, win.w, win.h, 0, 0, 0));
        check_no_region (out, "change", what + ": the first frame");
        gst_buffer_unref (out);
        for (int k = 1; k <= 3; k++) {
          out = push_pull (h, window_frame (info, win.x, win.y, win.w, win.h, 7 * k, 3 * k, k));
          const std::string at = what + " frame " + std::to_string (k);
          check_one_region (out, "change", win, 16, 0.4, at);
          /* all changed pixels lie in the window, so the box holds them all */
          const Box b = rois (out, "change")[0];
          const double share = static_cast<double> (changed_pixels (out)) / (static_cast<double> (b.w) * b.h);
          fail_unless (std::abs (b.confidence - share) < 1e-9, "%s: confidence %f, the box's changed share %f", at.c_str (),
              b.confidence, share);
          gst_buffer_unref (out);
        }
        out = push_pull (h, window_frame (info, win.x, win.y, win.w, win.h, 21, 9, 4));
        gst_buffer_unref (out);
        out = push_pull (h, window_frame (info, win.x, win.y, win.w, win.h, 21, 9, 5));
        check_no_region (out, "change", what + ": a still frame");
        gst_buffer_unref (out);
        GstElement *e = gst_harness_find_element (h, "cudanoisemap");
        /* one above the changed pixels: in YUY2 a window that starts at an odd column changes the
         * U or V of the pixel left of it too, which makes that pixel changed */
        const bool pair_left = format == GST_VIDEO_FORMAT_YUY2 && win.x % 2;
        g_object_set (e, "min-region-area", win.w * win.h + (pair_left ? win.h : 0) + 1, nullptr);
        out = push_pull (h, window_frame (info, win.x, win.y, win.w, win.h, 30, 1, 6));
        check_no_region (out, "change", what + ": below min-region-area");
        gst_buffer_unref (out);
        g_object_set (e, "min-region-area", 0, "regions", FALSE, nullptr);
        out = push_pull (h, window_frame (info, win.x, win.y, win.w, win.h, 40, 2, 7));
        check_no_region (out, "change", what + ": regions=false");
        gst_buffer_unref (out);
        gst_object_unref (e);
        gst_harness_teardown (h);
      }
    }
  }
}
GST_END_TEST;

GST_START_TEST (test_flush_discont_and_caps_change_reset)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 32, 24);
  GstHarness *h = harness ("cudanoisemap backend=cpu", info);
  gst_buffer_unref (push_pull (h, solid_buffer (info, 0, 0)));
  GstBuffer *out = push_pull (h, solid_buffer (info, 255, 1));
  fail_unless_equals_int (changed_pixels (out), 32 * 24);
  gst_buffer_unref (out);

  /* flush */
  push_flush (h);
  out = push_pull (h, solid_buffer (info, 0, 2));
  fail_unless_equals_int (changed_pixels (out), 0);
  fail_unless (first_frame (out, "CudaNoisemapMeta"), "a flush did not reset");
  gst_buffer_unref (out);

  /* DISCONT */
  GstBuffer *d = solid_buffer (info, 255, 3);
  GST_BUFFER_FLAG_SET (d, GST_BUFFER_FLAG_DISCONT);
  out = push_pull (h, d);
  fail_unless_equals_int (changed_pixels (out), 0);
  fail_unless (first_frame (out, "CudaNoisemapMeta"), "a DISCONT buffer did not reset");
  gst_buffer_unref (out);
  out = push_pull (h, solid_buffer (info, 0, 4));
  fail_unless_equals_int (changed_pixels (out), 32 * 24);
  gst_buffer_unref (out);

  /* a resolution switch */
  GstVideoInfo small = info_for (GST_VIDEO_FORMAT_RGBA, 16, 8);
  gst_harness_set_src_caps_str (h, caps_for (small).c_str ());
  out = push_pull (h, solid_buffer (small, 255, 5));
  fail_unless_equals_int (changed_pixels (out), 0);
  fail_unless (first_frame (out, "CudaNoisemapMeta"), "a caps change did not reset");
  gst_buffer_unref (out);
  out = push_pull (h, solid_buffer (small, 0, 6));
  fail_unless_equals_int (changed_pixels (out), 16 * 8);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* interval = two frames: each message sums two frames; the threshold changes at the next frame */
GST_START_TEST (test_interval_messages_and_threshold_change)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 10, 10);
  BusHarness bh ("cudanoisemap backend=cpu interval=66666666");
  gst_harness_set_src_caps_str (bh.h, caps_for (info).c_str ());
  gst_harness_set_sink_caps_str (bh.h, "video/x-raw");
  const guint8 values[] = {0, 30, 30, 60};
  for (int i = 0; i < 4; i++)
    gst_buffer_unref (push_pull (bh.h, solid_buffer (info, values[i], i)));
  /* a threshold set while playing takes effect at the next frame (which starts a third interval) */
  {
    /* gst_harness_find_element gives a reference */
    GstElement *element = gst_harness_find_element (bh.h, "cudanoisemap");
    g_object_set (element, "threshold", 40u, nullptr);
    gst_object_unref (element);
  }
  GstBuffer *out = push_pull (bh.h, solid_buffer (info, 90, 4));
  fail_unless_equals_int (changed_pixels (out), 0); /* 60 -> 90 is not above 40 */
  gst_buffer_unref (out);

  /* two whole intervals, and the fifth frame's, posted at EOS as level posts its last */
  guint64 changed[3];
  std::vector<GstMessage *> msgs = element_messages_at_eos (bh.h, bh.bus);
  fail_unless_equals_int (msgs.size (), 3);
  for (int k = 0; k < 3; k++) {
    GstMessage *msg = msgs[k];
    fail_unless (msg != nullptr, "message %d missing", k);
    const GstStructure *s = gst_message_get_structure (msg);
    fail_unless (gst_structure_has_name (s, "cudanoisemap"));
    guint frames = 0;
    GstClockTime ts = 0, dur = 0;
    fail_unless (gst_structure_get_uint (s, "frames", &frames) && gst_structure_get_uint64 (s, "changed-pixels", &changed[k]) &&
        gst_structure_get_uint64 (s, "timestamp", &ts) && gst_structure_get_uint64 (s, "duration", &dur));
    const guint in_interval = k < 2 ? 2 : 1;
    fail_unless_equals_int (frames, in_interval);
    fail_unless_equals_uint64 (ts, k * 2 * (GST_SECOND / 30));
    fail_unless_equals_uint64 (dur, in_interval * (GST_SECOND / 30));
    gst_message_unref (msg);
  }
  fail_unless_equals_uint64 (changed[0], 100); /* 0 -> 30 */
  fail_unless_equals_uint64 (changed[1], 100); /* 30 -> 30 static, 30 -> 60 */
  fail_unless_equals_uint64 (changed[2], 0);   /* 60 -> 90, not above the new threshold */
}
GST_END_TEST;

static guint64
rss_kib ()
{
  std::ifstream f ("/proc/self/status");
  std::string line;
  while (std::getline (f, line))
    if (line.rfind ("VmRSS:", 0) == 0)
      return std::stoull (line.substr (6));
  return 0;
}

struct LiveCount {
  guint buffers = 0;
  guint64 rss_at_30 = 0;
};

static GstPadProbeReturn
count_buffer (GstPad *, GstPadProbeInfo *, gpointer data)
{
  auto *c = static_cast<LiveCount *> (data);
  if (++c->buffers == 30)
    c->rss_at_30 = rss_kib ();
  return GST_PAD_PROBE_OK;
}

/* Three seconds of a live source through both elements: every frame arrives, memory stays flat. */
static void
run_live (const char *middle)
{
  std::string launch = std::string ("videotestsrc is-live=true pattern=ball num-buffers=90 ! "
      "video/x-raw,format=RGBA,width=640,height=480,framerate=30/1 ! ") + middle +
      " ! cudaheatmap ! cudanoisemap ! fakesink name=sink sync=true";
  GstElement *pipe = gst_parse_launch (launch.c_str (), nullptr);
  fail_unless (pipe != nullptr);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  LiveCount count;
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_buffer, &count, nullptr);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
      static_cast<GstMessageType> (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS, "%s: no EOS", launch.c_str ());
  gst_message_unref (msg);
  const guint64 rss_end = rss_kib ();
  gst_element_set_state (pipe, GST_STATE_NULL);
  g_printerr ("%s: %u buffers, RSS %" G_GUINT64_FORMAT " KiB at frame 30, %" G_GUINT64_FORMAT " KiB at the end\n",
      launch.c_str (), count.buffers, count.rss_at_30, rss_end);
  fail_unless_equals_int (count.buffers, 90);
  /* one leaked 640x480 RGBA frame per buffer would add 72 MiB over the last 60 frames */
  fail_unless (rss_end < count.rss_at_30 + 16 * 1024, "memory grew by %" G_GUINT64_FORMAT " KiB",
      rss_end - count.rss_at_30);
  gst_object_unref (bus);
  gst_object_unref (pad);
  gst_object_unref (sink);
  gst_object_unref (pipe);
}

GST_START_TEST (test_live_source_no_drops_flat_memory)
{
  run_live ("identity");
  /* with a GPU: CUDA memory between the elements, each holding its previous input buffer */
  if (cuvtest::have_gpu ())
    run_live ("cudaupload ! video/x-raw(memory:CUDAMemory)");
}
GST_END_TEST;

/* A held buffer must not starve a bounded pool: only unbounded pools (or no pool) lend one. */
GST_START_TEST (test_previous_frame_holds_only_what_upstream_can_spare)
{
  GstVideoInfo info = info_for (GST_VIDEO_FORMAT_RGBA, 8, 8);
  GstCaps *caps = gst_video_info_to_caps (&info);
  for (guint max : {0u, 3u}) {
    GstBufferPool *pool = gst_buffer_pool_new ();
    GstStructure *config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (&info), 2, max);
    fail_unless (gst_buffer_pool_set_config (pool, config));
    fail_unless (gst_buffer_pool_set_active (pool, TRUE));
    GstBuffer *buf = nullptr;
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf, nullptr), GST_FLOW_OK);
    GstObject *owner = GST_OBJECT (pool);
    {
      cuv::PreviousFrame prev;
      fail_unless_equals_int (prev.can_hold (owner, buf), max == 0);
    }
    gst_buffer_unref (buf);
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
  }
  GstBuffer *loose = gst_buffer_new_allocate (nullptr, 16, nullptr);
  cuv::PreviousFrame prev;
  fail_unless (prev.can_hold (nullptr, loose));
  gst_buffer_unref (loose);
  gst_caps_unref (caps);
}
GST_END_TEST;

static Suite *
cudadifference_suite (void)
{
  Suite *s = suite_create ("cudaheatmap-cudanoisemap");
  TCase *tc = tcase_create ("cpu");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_heatmap_yuv_gives_rgba_first_frame_blue);
  tcase_add_test (tc, test_heatmap_rgb_full_change_and_static);
  tcase_add_test (tc, test_noisemap_static_scene_overlay_is_the_frame);
  tcase_add_test (tc, test_noisemap_full_change_counts_every_pixel);
  tcase_add_test (tc, test_noisemap_corner_pixels_at_the_threshold);
  tcase_add_test (tc, test_cpu_bands_give_the_reference_statistics);
  tcase_add_test (tc, test_noisemap_regions);
  tcase_add_test (tc, test_flush_discont_and_caps_change_reset);
  tcase_add_test (tc, test_interval_messages_and_threshold_change);
  tcase_add_test (tc, test_live_source_no_drops_flat_memory);
  tcase_add_test (tc, test_previous_frame_holds_only_what_upstream_can_spare);
  return s;
}

CUV_CHECK_MAIN (cudadifference)
