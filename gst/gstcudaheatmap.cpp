/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-cudaheatmap
 * @title: cudaheatmap
 *
 * Shows where a video changes: each pixel's difference to the previous frame,
 * d = |dR| + |dG| + |dB| (0..765), coloured through a colour map at
 * n = min (1, gain * d / 765). With the default `sine` map, blue is no change, green half and
 * red full. `blend` below 1 mixes the heat map over the current frame.
 *
 * RGBA, BGRA, RGBx and BGRx keep their format. NV12, I420 and a webcam's YUY2 and UYVY are
 * compared sample by sample, d = |dY| + |dU| + |dV| (each pixel with the U and V of its 2x2
 * group, or of its pair; a 10-bit decoder's P010_10LE as NV12 on each sample's top 8 bits), and
 * give RGBA; the frame under a blend is converted with the stream's colorimetry. Alpha (or x) is
 * 255.
 *
 * The first frame after start, a flush, a caps change or a DISCONT buffer has no previous frame
 * (a change of memory only, downstream switching between CUDA and system memory, keeps it):
 * it is compared with itself, so the heat map shows no change (all blue with `sine`).
 *
 * Every buffer carries a GstCustomMeta "CudaHeatmapMeta" with pixels, mean-difference (0..765),
 * max-difference and first-frame. If the #GstCudaHeatmap:post-messages property is %TRUE,
 * an element message named `cudaheatmap` is posted after each interval of stream time given by the
 * #GstCudaHeatmap:interval property (0: every frame). Its structure contains these fields:
 *
 * * #GstClockTime `timestamp`: the timestamp of the first buffer of the interval.
 * * #GstClockTime `stream-time`: the stream time of that buffer.
 * * #GstClockTime `running-time`: the running time of that buffer.
 * * #GstClockTime `duration`: the stream time the interval covers.
 * * #guint `frames`: the frames of the interval.
 * * #guint64 `pixels`: the pixels compared, summed over the interval.
 * * #gdouble `mean-difference`: the mean d over all pixels of the interval (0..765).
 * * #guint `max-difference`: the largest d of the interval.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc pattern=ball ! cudaupload ! cudaheatmap gain=8 ! cudadownload ! videoconvert ! autovideosink
 * ]| The moving ball as a heat map, small changes amplified eight times.
 * |[
 * gst-launch-1.0 v4l2src ! video/x-raw,format=YUY2 ! cudaheatmap colormap=inferno blend=0.5 ! videoconvert ! autovideosink
 * ]| A webcam with its motion glowing over it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gst/gstcudaheatmap.h"

#include "gst/gstcudaheatmapmeta.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "common/base/cuvcolor.h"
#include "common/element/cuvframedifference.h"
#include "common/element/cuvsettings.h"
#include "common/base/cuvcuda.h"
#include "common/base/cuvenum.h"
#include "kernels/heatmap/heatmap.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_heatmap_debug);
#define GST_CAT_DEFAULT gst_cuda_heatmap_debug

#define GST_TYPE_CUDA_HEATMAP_COLORMAP (gst_cuda_heatmap_colormap_get_type ())
static GType gst_cuda_heatmap_colormap_get_type (void);

/* the properties' values, under the object lock (common/element/cuvsettings.h) */
struct HeatmapSettings {
  cuv::Colormap colormap = cuv::Colormap::Sine;
  double gain = 1.0;
  double blend = 1.0;
};

struct GstCudaHeatmapImpl {
  HeatmapSettings settings;

  /* streaming thread only */
  cuv::PixelLayout out_layout = cuv::PixelLayout::RGBA;
  cuv::YuvToRgb yuv{};
  guint64 pixels = 0;
  /* the colour table and what it was built for */
  uint32_t table[cuv::kHeatmapTableSize];
  bool table_valid = false;
  cuv::Colormap table_map = cuv::Colormap::Sine;
  double table_gain = 0;
  cuv::PixelLayout table_layout = cuv::PixelLayout::RGBA;
  bool device_table_stale = true;
  cuv::FrameDifference difference; /* the statistics' memory; each frame's are in its value */
#if CUV_HAVE_CUDA
  cuv::CudaBuffer device_table;
#endif
  /* the message interval's sums */
  guint64 sum_difference = 0;
  guint64 sum_pixels = 0;
  guint max_difference = 0;
};

struct _GstCudaHeatmap {
  GstCudaVisionAnalyser parent;
  GstCudaHeatmapImpl *impl;
};

#define HEATMAP_FORMATS "{ RGBA, BGRA, RGBx, BGRx, NV12, I420, YUY2, UYVY, P010_10LE }"

static const HeatmapSettings kDefaults;

#define gst_cuda_heatmap_parent_class parent_class
G_DEFINE_TYPE (GstCudaHeatmap, gst_cuda_heatmap, GST_TYPE_CUDA_VISION_ANALYSER);
GST_ELEMENT_REGISTER_DEFINE (cudaheatmap, "cudaheatmap", GST_RANK_NONE, GST_TYPE_CUDA_HEATMAP);

/* ---- per frame ---- */

/* A frame's value: its difference to the previous frame (the sum and the largest of d), and the
 * blend its transform paints with; its colour map and gain are in the colour table. */
struct HeatmapFrame : cuv::DifferenceResults {
  double blend = 1.0;
};

static const HeatmapFrame *
frame_of (const cuv::FrameResults *results)
{
  return static_cast<const HeatmapFrame *> (results);
}

static cuv::FrameResults *
gst_cuda_heatmap_new_results (GstCudaVisionAnalyser *)
{
  return new HeatmapFrame ();
}

/* Copies the settings for this frame into its value and rebuilds the colour table when they
 * changed it. */
static void
gst_cuda_heatmap_begin_frame (GstCudaVisionAnalyser *analyser, GstBuffer *, cuv::FrameResults *results)
{
  GstCudaHeatmapImpl *impl = GST_CUDA_HEATMAP (analyser)->impl;
  cuv::FrameDifference::begin_frame (results);
  const HeatmapSettings f = cuv::snapshot (analyser, impl->settings);
  static_cast<HeatmapFrame *> (results)->blend = f.blend;
  if (impl->table_valid && impl->table_map == f.colormap && impl->table_gain == f.gain &&
      impl->table_layout == impl->out_layout)
    return;
  cuv::heatmap_build_table (f.colormap, f.gain, impl->out_layout, impl->table);
  impl->table_valid = true;
  impl->table_map = f.colormap;
  impl->table_gain = f.gain;
  impl->table_layout = impl->out_layout;
  impl->device_table_stale = true;
}

static GType
gst_cuda_heatmap_colormap_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {static_cast<gint> (cuv::Colormap::Sine), "Blue (no change), green (half), red (full)", "sine"},
    {static_cast<gint> (cuv::Colormap::Jet), "Dark blue, cyan, yellow, dark red (MATLAB's jet)", "jet"},
    {static_cast<gint> (cuv::Colormap::Inferno), "Black, purple, orange, pale yellow (matplotlib's inferno)", "inferno"},
    {static_cast<gint> (cuv::Colormap::Gray), "Black (no change) to white (full)", "gray"},
    {0, nullptr, nullptr},
  };
  return cuv::enum_type (&type, "GstCudaHeatmapColormap", values);
}

static cuv::HeatmapParams
heatmap_params (GstCudaHeatmapImpl *impl, const cuv::FrameJob &job, const uint32_t *table)
{
  return cuv::HeatmapParams{table, static_cast<int> (std::lrint (frame_of (job.results)->blend * 256.0)), impl->yuv};
}

static GstFlowReturn
gst_cuda_heatmap_transform_cpu (GstCudaVisionFilter *filter, const cuv::FrameJob *job)
{
  GstCudaHeatmapImpl *impl = GST_CUDA_HEATMAP (filter)->impl;
  cuv::FrameDifference::run_cpu (*job, cuv::heatmap_cpu, heatmap_params (impl, *job, impl->table));
  return GST_FLOW_OK;
}

#if CUV_HAVE_CUDA
static GstFlowReturn
gst_cuda_heatmap_transform_cuda (GstCudaVisionFilter *filter, const cuv::FrameJob *job)
{
  GstCudaHeatmap *self = GST_CUDA_HEATMAP (filter);
  GstCudaHeatmapImpl *impl = self->impl;
  if (!impl->device_table && !CUV_CUDA_OK (self, impl->device_table.allocate (job->context, cuv::CudaBuffer::Kind::Device,
          sizeof (impl->table))))
    return GST_FLOW_ERROR;
  if (!impl->difference.ensure (filter, *job))
    return GST_FLOW_ERROR;
  /* ordered on the stream before the kernel; the host table is not touched until the next frame */
  if (impl->device_table_stale) {
    if (!CUV_CUDA_OK (self, cudaMemcpyAsync (impl->device_table.data (), impl->table, sizeof (impl->table),
            cudaMemcpyHostToDevice, job->stream)))
      return GST_FLOW_ERROR;
    impl->device_table_stale = false;
  }
  const auto *table = reinterpret_cast<const uint32_t *> (impl->device_table.data ());
  if (!impl->difference.launch (filter, *job, cuv::heatmap_cuda, heatmap_params (impl, *job, table)))
    return GST_FLOW_ERROR;
  return GST_FLOW_OK;
}
#endif

/* ---- results ---- */

static void
set_results (GstStructure *s, guint64 pixels, guint64 sum, guint max)
{
  gst_structure_set (s, "pixels", G_TYPE_UINT64, pixels, "mean-difference", G_TYPE_DOUBLE,
      pixels ? static_cast<double> (sum) / static_cast<double> (pixels) : 0.0, "max-difference", G_TYPE_UINT, max,
      nullptr);
}

static gboolean
gst_cuda_heatmap_end_frame (GstCudaVisionAnalyser *, cuv::FrameResults *results)
{
  return frame_of (results)->measured ();
}

static void
gst_cuda_heatmap_frame_results (GstCudaVisionAnalyser *analyser, cuv::FrameResults *results, GstStructure *meta)
{
  GstCudaHeatmapImpl *impl = GST_CUDA_HEATMAP (analyser)->impl;
  const cuv::DifferenceResults *f = frame_of (results);
  set_results (meta, impl->pixels, f->stats ().sum_difference, f->stats ().max_difference);
  gst_structure_set (meta, "first-frame", G_TYPE_BOOLEAN, f->first_frame (), nullptr);
}

static void
gst_cuda_heatmap_add_to_interval (GstCudaVisionAnalyser *analyser, const cuv::FrameResults *results)
{
  GstCudaHeatmapImpl *impl = GST_CUDA_HEATMAP (analyser)->impl;
  const cuv::DiffStats &stats = frame_of (results)->stats ();
  impl->sum_difference += stats.sum_difference;
  impl->sum_pixels += impl->pixels;
  impl->max_difference = std::max (impl->max_difference, stats.max_difference);
}

static void
gst_cuda_heatmap_interval_results (GstCudaVisionAnalyser *analyser, GstStructure *s)
{
  GstCudaHeatmapImpl *impl = GST_CUDA_HEATMAP (analyser)->impl;
  set_results (s, impl->sum_pixels, impl->sum_difference, impl->max_difference);
}

static void
gst_cuda_heatmap_reset_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaHeatmapImpl *impl = GST_CUDA_HEATMAP (analyser)->impl;
  impl->sum_difference = 0;
  impl->sum_pixels = 0;
  impl->max_difference = 0;
}

/* ---- caps and state ---- */

/* Maps the format field of @s: towards the source the YUV formats become RGBA and RGB formats
 * stay; towards the sink RGBA can come from RGBA or any YUV format. FALSE when no format remains. */
static gboolean
map_formats (GstStructure *s, GstPadDirection direction)
{
  const GValue *formats = gst_structure_get_value (s, "format");
  if (!formats)
    return TRUE;
  GValue list = G_VALUE_INIT, v = G_VALUE_INIT;
  gst_value_list_init (&list, 4);
  g_value_init (&v, G_TYPE_STRING);
  gboolean yuv_involved = FALSE;
  auto add = [&] (const gchar *name) {
    for (guint i = 0; i < gst_value_list_get_size (&list); i++)
      if (g_strcmp0 (g_value_get_string (gst_value_list_get_value (&list, i)), name) == 0)
        return;
    g_value_set_string (&v, name);
    gst_value_list_append_value (&list, &v);
  };
  auto map_one = [&] (const gchar *f) {
    static const char *const kYuv[] = {"NV12", "I420", "YUY2", "UYVY", "P010_10LE"};
    const bool yuv = std::any_of (std::begin (kYuv), std::end (kYuv), [f] (const char *y) { return g_strcmp0 (f, y) == 0; });
    if (direction == GST_PAD_SINK) {
      yuv_involved |= yuv;
      add (yuv ? "RGBA" : f);
    } else if (!yuv) {
      add (f);
      if (g_strcmp0 (f, "RGBA") == 0) {
        for (const char *y : kYuv)
          add (y);
        yuv_involved = TRUE;
      }
    }
  };
  if (G_VALUE_HOLDS_STRING (formats)) {
    map_one (g_value_get_string (formats));
  } else if (GST_VALUE_HOLDS_LIST (formats)) {
    for (guint i = 0; i < gst_value_list_get_size (formats); i++)
      map_one (g_value_get_string (gst_value_list_get_value (formats, i)));
  }
  g_value_unset (&v);
  const guint n = gst_value_list_get_size (&list);
  if (n == 1)
    gst_structure_set_value (s, "format", gst_value_list_get_value (&list, 0));
  else if (n > 1)
    gst_structure_set_value (s, "format", &list);
  g_value_unset (&list);
  /* YUV colorimetry and chroma siting mean nothing on the RGB side */
  if (yuv_involved)
    gst_structure_remove_fields (s, "colorimetry", "chroma-site", nullptr);
  return n > 0;
}

static GstCaps *
gst_cuda_heatmap_transform_caps (GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps, GstCaps *filter)
{
  GstCaps *mapped = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (caps); i++) {
    GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
    if (map_formats (s, direction))
      gst_caps_append_structure_full (mapped, s, gst_caps_features_copy (gst_caps_get_features (caps, i)));
    else
      gst_structure_free (s);
  }
  GstCaps *ret = GST_BASE_TRANSFORM_CLASS (parent_class)->transform_caps (trans, direction, mapped, filter);
  gst_caps_unref (mapped);
  return ret;
}

static gboolean
gst_cuda_heatmap_set_info (GstCudaVisionFilter *filter, const GstVideoInfo *in_info, const GstVideoInfo *out_info)
{
  GstCudaHeatmapImpl *impl = GST_CUDA_HEATMAP (filter)->impl;
  cuv::PixelLayout in_layout;
  if (!gst_cuda_vision_layout_from_format (GST_VIDEO_INFO_FORMAT (in_info), &in_layout) ||
      !gst_cuda_vision_layout_from_format (GST_VIDEO_INFO_FORMAT (out_info), &impl->out_layout) ||
      cuv::heatmap_out_layout (in_layout) != impl->out_layout) {
    GST_ERROR_OBJECT (filter, "cannot make %s from %s", GST_VIDEO_INFO_NAME (out_info), GST_VIDEO_INFO_NAME (in_info));
    return FALSE;
  }
  const cuv::ColorMatrix m = cuv::color_matrix (in_info);
  impl->yuv = cuv::yuv_to_rgb_coefficients (m.kr, m.kb, m.full_range);
  impl->pixels = static_cast<guint64> (GST_VIDEO_INFO_WIDTH (in_info)) * GST_VIDEO_INFO_HEIGHT (in_info);
  return TRUE;
}

/* After the base class has finished the frames in flight (its stop). */
static void
gst_cuda_heatmap_release (GstCudaVisionFilter *filter)
{
  GstCudaHeatmapImpl *impl = GST_CUDA_HEATMAP (filter)->impl;
#if CUV_HAVE_CUDA
  impl->device_table.reset ();
#endif
  impl->difference.release ();
  impl->device_table_stale = true;
}

/* ---- properties ---- */

static_assert (sizeof (cuv::Colormap) == sizeof (gint), "enum properties are int fields");

static HeatmapSettings *
gst_cuda_heatmap_settings (GObject *object)
{
  return &GST_CUDA_HEATMAP (object)->impl->settings;
}

static void
gst_cuda_heatmap_finalize (GObject *object)
{
  delete GST_CUDA_HEATMAP (object)->impl;
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* The properties: one declaration each (common/element/cuvsettings.h). */
static void
gst_cuda_heatmap_install_properties (GObjectClass *gobject_class)
{
  const GParamFlags flags = cuv::kMutablePlaying;
  cuv::Properties p (gobject_class, gst_cuda_heatmap_settings);
  const auto controllable = static_cast<GParamFlags> (flags | GST_PARAM_CONTROLLABLE);

  /**
   * GstCudaHeatmap:colormap:
   *
   * The colours from no change to full change.
   */
  p.add (&HeatmapSettings::colormap,
      g_param_spec_enum ("colormap", "Colour map",
          "Colours from no change to full change: sine (blue, green, red), jet, inferno or gray",
          GST_TYPE_CUDA_HEATMAP_COLORMAP, static_cast<gint> (kDefaults.colormap), flags));
  /**
   * GstCudaHeatmap:gain:
   *
   * Amplifies the difference before the colour map: n = min (1, gain * d / 765). With gain 8, a
   * change of 96 (out of 765) already reaches the top of the map.
   */
  p.add (&HeatmapSettings::gain,
      g_param_spec_double ("gain", "Gain",
          "Amplification of the difference before the colour map: n = min(1, gain * d / 765), "
          "d = |dR| + |dG| + |dB|",
          0.0, 64.0, kDefaults.gain, controllable));
  /**
   * GstCudaHeatmap:blend:
   *
   * 1 outputs the heat map; less mixes it over the current frame (0 gives the frame itself).
   */
  p.add (&HeatmapSettings::blend,
      g_param_spec_double ("blend", "Blend",
          "Opacity of the heat map over the current frame (1 = heat map only, 0 = the frame)", 0.0, 1.0,
          kDefaults.blend, controllable));
}

static void
gst_cuda_heatmap_class_init (GstCudaHeatmapClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstCudaVisionFilterClass *filter_class = GST_CUDA_VISION_FILTER_CLASS (klass);
  GstCudaVisionAnalyserClass *analyser_class = GST_CUDA_VISION_ANALYSER_CLASS (klass);
  gobject_class->finalize = gst_cuda_heatmap_finalize;
  gst_cuda_heatmap_install_properties (gobject_class);
  gst_cuda_vision_analyser_class_set_results (analyser_class, "cudaheatmap", GST_CUDA_HEATMAP_META_NAME);

  gst_element_class_set_static_metadata (element_class, "CUDA heat map", "Filter/Analyzer/Video/Hardware",
      "The difference of each frame to the previous one as a colour-mapped heat map, computed on the GPU; "
      "mean and largest difference as buffer meta and bus messages",
      "gst-cudavision developers");
  gst_cuda_vision_filter_class_add_templates (element_class, HEATMAP_FORMATS, HEATMAP_FORMATS);

  trans_class->transform_caps = GST_DEBUG_FUNCPTR (gst_cuda_heatmap_transform_caps);
  filter_class->temporal = TRUE;
  filter_class->set_info = GST_DEBUG_FUNCPTR (gst_cuda_heatmap_set_info);
  filter_class->release = GST_DEBUG_FUNCPTR (gst_cuda_heatmap_release);
  filter_class->transform_cpu = GST_DEBUG_FUNCPTR (gst_cuda_heatmap_transform_cpu);
#if CUV_HAVE_CUDA
  filter_class->transform_cuda = GST_DEBUG_FUNCPTR (gst_cuda_heatmap_transform_cuda);
#endif
  analyser_class->new_results = GST_DEBUG_FUNCPTR (gst_cuda_heatmap_new_results);
  analyser_class->begin_frame = GST_DEBUG_FUNCPTR (gst_cuda_heatmap_begin_frame);
  analyser_class->end_frame = GST_DEBUG_FUNCPTR (gst_cuda_heatmap_end_frame);
  analyser_class->frame_results = GST_DEBUG_FUNCPTR (gst_cuda_heatmap_frame_results);
  analyser_class->add_to_interval = GST_DEBUG_FUNCPTR (gst_cuda_heatmap_add_to_interval);
  analyser_class->interval_results = GST_DEBUG_FUNCPTR (gst_cuda_heatmap_interval_results);
  analyser_class->reset_interval = GST_DEBUG_FUNCPTR (gst_cuda_heatmap_reset_interval);

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_HEATMAP_COLORMAP, static_cast<GstPluginAPIFlags> (0));
  GST_DEBUG_CATEGORY_INIT (gst_cuda_heatmap_debug, "cudaheatmap", 0, "CUDA heat map");
}

static void
gst_cuda_heatmap_init (GstCudaHeatmap *self)
{
  self->impl = new GstCudaHeatmapImpl ();
}
