/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-cudanoisemap
 * @title: cudanoisemap
 *
 * Marks the pixels that changed by more than `threshold` since the previous frame: in any of R,
 * G and B for RGBA, BGRA, RGBx and BGRx, in any of Y, U and V for NV12 and I420 (each pixel
 * with the U and V of its 2x2 group) and for a webcam's YUY2 and UYVY (with its pair's U and V);
 * a 10-bit decoder's P010_10LE as NV12 on each sample's top 8 bits, so `threshold` means the same.
 * `mode=map` outputs a black image with those pixels in `color`; `mode=overlay` paints them over
 * the current frame. The colour's alpha is its opacity. The output keeps the input's format. In
 * NV12/I420 a chroma sample is painted when any pixel of its 2x2 group is noisy, in YUY2/UYVY a
 * pair's U and V when either of its pixels is.
 *
 * The first frame after start, a flush, a caps change or a DISCONT buffer has no previous frame
 * (a change of memory only keeps it): nothing counts as changed (a black map; in overlay mode the frame unchanged).
 *
 * Every buffer carries a GstCustomMeta "CudaNoisemapMeta" with pixels, changed-pixels,
 * changed-ratio (0..1), changed-bytes-estimate and first-frame; with `regions`, each region that
 * changes also as a GstVideoRegionOfInterestMeta "change" and (GStreamer 1.24+ builds) an object
 * detection in the GstAnalyticsRelationMeta. If the #GstCudaNoisemap:post-messages property
 * is %TRUE, an element message named `cudanoisemap` is posted after each interval of stream time
 * given by the #GstCudaNoisemap:interval property (0: every frame). Its structure contains
 * these fields:
 *
 * * #GstClockTime `timestamp`: the timestamp of the first buffer of the interval.
 * * #GstClockTime `stream-time`: the stream time of that buffer.
 * * #GstClockTime `running-time`: the running time of that buffer.
 * * #GstClockTime `duration`: the stream time the interval covers.
 * * #guint `frames`: the frames of the interval.
 * * #guint64 `pixels`: the pixels compared, summed over the interval.
 * * #guint64 `changed-pixels`: the changed pixels, summed over the interval.
 * * #gdouble `changed-ratio`: changed-pixels / pixels (0..1).
 * * #guint64 `changed-bytes-estimate`: the changed pixels times the bytes of a pixel (4 for RGB
 *   formats, 1.5 for NV12 and I420, 2 for YUY2 and UYVY, 3 for P010_10LE), rounded up: what
 *   sending only the changed pixels would cost.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 -m videotestsrc pattern=ball num-buffers=30 ! cudaupload ! cudanoisemap ! cudadownload ! fakesink
 * ]| Prints how many pixels of each frame changed.
 * |[
 * gst-launch-1.0 v4l2src ! video/x-raw,format=YUY2 ! cudanoisemap mode=overlay threshold=30 color=0x80ffff00 ! videoconvert ! autovideosink
 * ]| A webcam with its changing pixels painted half-transparent yellow.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gst/gstcudanoisemap.h"

#include "gst/gstcudanoisemapmeta.h"

#include <algorithm>
#include <vector>

#include "common/element/cuvanalyserregions.h"
#include "common/element/cuvframedifference.h"
#include "common/element/cuvsettings.h"
#include "common/base/cuvcolor.h"
#include "common/base/cuvcpupool.h"
#include "common/base/cuvcuda.h"
#include "common/base/cuvenum.h"
#include "kernels/noisemap/noisemap.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_noisemap_debug);
#define GST_CAT_DEFAULT gst_cuda_noisemap_debug

typedef enum {
  GST_CUDA_NOISEMAP_MODE_MAP,
  GST_CUDA_NOISEMAP_MODE_OVERLAY,
} GstCudaNoisemapMode;

#define GST_TYPE_CUDA_NOISEMAP_MODE (gst_cuda_noisemap_mode_get_type ())
static GType gst_cuda_noisemap_mode_get_type (void);

/* the properties' values, under the object lock (common/element/cuvsettings.h); `regions` and
 * `min-region-area` as every analyser that attaches regions has them
 * (common/element/cuvanalyserregions.h) */
struct NoisemapSettings : cuv::RegionSettings {
  guint threshold = 20;
  GstCudaNoisemapMode mode = GST_CUDA_NOISEMAP_MODE_MAP;
  guint color = 0xffff0000; /* ARGB */
};

/* One frame's results, a value (common/results/cuvframeresults.h), published before the next runs:
 * its difference to the previous frame (the changed pixels), and what its regions are made of */
struct NoisemapFrame : cuv::DifferenceResults {
  NoisemapSettings settings; /* the frame's copy of the settings */
  const uint16_t *tiles = nullptr; /* with `regions`: each tile's noisy pixels (noisemap.h), in impl's */
};

struct GstCudaNoisemapImpl {
  NoisemapSettings settings;

  /* streaming thread only */
  cuv::NoisemapParams params{}; /* this frame's, from its settings */
  cuv::PixelLayout layout = cuv::PixelLayout::RGBA;
  cuv::ColorMatrix matrix{};
  guint64 pixels = 0;
  int width = 0, height = 0;
  guint bits_per_pixel = 32;
  std::vector<uint16_t> cpu_tiles;
  cuv::RegionScratch regions;      /* the regions' mask (a byte a tile) and boxes */
  cuv::FrameDifference difference; /* the statistics' memory; each frame's are in its value */
#if CUV_HAVE_CUDA
  cuv::CudaBuffer device_tiles;
  cuv::CudaBuffer pinned_tiles;
#endif
  /* the message interval's sums */
  guint64 sum_changed = 0;
  guint64 sum_pixels = 0;
};

struct _GstCudaNoisemap {
  GstCudaVisionAnalyser parent;
  GstCudaNoisemapImpl *impl;
};

#define NOISEMAP_FORMATS "{ RGBA, BGRA, RGBx, BGRx, NV12, I420, YUY2, UYVY, P010_10LE }"

static const NoisemapSettings kDefaults;

#define gst_cuda_noisemap_parent_class parent_class
G_DEFINE_TYPE (GstCudaNoisemap, gst_cuda_noisemap, GST_TYPE_CUDA_VISION_ANALYSER);
GST_ELEMENT_REGISTER_DEFINE (cudanoisemap, "cudanoisemap", GST_RANK_NONE, GST_TYPE_CUDA_NOISEMAP);

/* ---- per frame ---- */

static NoisemapFrame *
frame_of (cuv::FrameResults *results)
{
  return static_cast<NoisemapFrame *> (results);
}

static const NoisemapFrame *
frame_of (const cuv::FrameResults *results)
{
  return static_cast<const NoisemapFrame *> (results);
}

static cuv::FrameResults *
gst_cuda_noisemap_new_results (GstCudaVisionAnalyser *)
{
  return new NoisemapFrame ();
}

/* Copies the settings for this frame and turns the ARGB colour into the kernel's parameters. */
static void
gst_cuda_noisemap_begin_frame (GstCudaVisionAnalyser *analyser, GstBuffer *, cuv::FrameResults *results)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (analyser)->impl;
  NoisemapFrame *frame = frame_of (results);
  cuv::FrameDifference::begin_frame (frame);
  frame->tiles = nullptr;
  frame->settings = cuv::snapshot (analyser, impl->settings);
  const guint c = frame->settings.color;
  const int a = c >> 24, r = c >> 16 & 0xff, g = c >> 8 & 0xff, b = c & 0xff;
  cuv::NoisemapParams &p = impl->params;
  p.threshold = static_cast<int> (frame->settings.threshold);
  p.overlay = frame->settings.mode == GST_CUDA_NOISEMAP_MODE_OVERLAY;
  p.alpha = cuv::alpha256 (a);
  p.color = cuv::pack_px (impl->layout, r, g, b, 255);
  int y, u, v;
  cuv::rgb_to_yuv (impl->matrix.kr, impl->matrix.kb, impl->matrix.full_range, r, g, b, &y, &u, &v);
  p.yuv[0] = static_cast<uint8_t> (y);
  p.yuv[1] = static_cast<uint8_t> (u);
  p.yuv[2] = static_cast<uint8_t> (v);
  p.y_black = impl->matrix.full_range ? 0 : 16;
}

static GType
gst_cuda_noisemap_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_NOISEMAP_MODE_MAP, "A black image with the changed pixels in the colour", "map"},
    {GST_CUDA_NOISEMAP_MODE_OVERLAY, "The frame with the changed pixels painted in the colour", "overlay"},
    {0, nullptr, nullptr},
  };
  return cuv::enum_type (&type, "GstCudaNoisemapMode", values);
}

static GstFlowReturn
gst_cuda_noisemap_transform_cpu (GstCudaVisionFilter *filter, const cuv::FrameJob *job)
{
  const cuv::Frame *in = job->in, *prev = job->previous;
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (filter)->impl;
  NoisemapFrame *frame = frame_of (job->results);
  cuv::FrameDifference::run_cpu (*job, cuv::noisemap_cpu, impl->params);
  frame->tiles = nullptr;
  if (frame->settings.regions && prev) {
    /* bands of tile rows, each writing its own rows of counts */
    const int cols = cuv::noise_tile_cols (in->width), rows = cuv::noise_tile_rows (in->height);
    impl->cpu_tiles.resize (static_cast<size_t> (cols) * rows);
    cuv::parallel_bands (rows, cuv::light_bands (job->threads, *in), [&] (int r0, int r1) {
      const int y0 = r0 * cuv::kNoiseTile, y1 = std::min (in->height, r1 * cuv::kNoiseTile);
      cuv::noisemap_tiles_reference (cuv::frame_rows (*in, y0, y1), cuv::frame_rows (*prev, y0, y1), impl->params.threshold,
          impl->cpu_tiles.data () + static_cast<size_t> (r0) * cols);
    });
    frame->tiles = impl->cpu_tiles.data ();
  }
  return GST_FLOW_OK;
}

#if CUV_HAVE_CUDA
static GstFlowReturn
gst_cuda_noisemap_transform_cuda (GstCudaVisionFilter *filter, const cuv::FrameJob *job)
{
  const cuv::Frame *in = job->in, *prev = job->previous;
  cudaStream_t stream = job->stream;
  GstCudaNoisemap *self = GST_CUDA_NOISEMAP (filter);
  GstCudaNoisemapImpl *impl = self->impl;
  NoisemapFrame *frame = frame_of (job->results);
  if (!impl->difference.ensure (filter, *job) || !impl->difference.launch (filter, *job, cuv::noisemap_cuda, impl->params))
    return GST_FLOW_ERROR;
  frame->tiles = nullptr;
  if (frame->settings.regions && prev) {
    const size_t bytes = static_cast<size_t> (cuv::noise_tile_cols (in->width)) *
        cuv::noise_tile_rows (in->height) * sizeof (uint16_t);
    GstCudaContext *ctx = job->context;
    if (impl->device_tiles.size () != bytes) {
      impl->device_tiles.reset ();
      impl->pinned_tiles.reset ();
      if (!CUV_CUDA_OK (self, impl->device_tiles.allocate (ctx, cuv::CudaBuffer::Kind::Device, bytes)) ||
          !CUV_CUDA_OK (self, impl->pinned_tiles.allocate (ctx, cuv::CudaBuffer::Kind::Pinned, bytes))) {
        impl->device_tiles.reset ();
        return GST_FLOW_ERROR;
      }
    }
    auto counts = reinterpret_cast<uint16_t *> (impl->device_tiles.data ());
    /* the base class waits for the stream once, after this; then the counts are on the host */
    if (!CUV_CUDA_OK (self, cuv::noisemap_tiles_cuda (*in, *prev, impl->params.threshold, counts, stream)) ||
        !CUV_CUDA_OK (self, cudaMemcpyAsync (impl->pinned_tiles.data (), counts, bytes, cudaMemcpyDeviceToHost, stream)))
      return GST_FLOW_ERROR;
    frame->tiles = reinterpret_cast<const uint16_t *> (impl->pinned_tiles.data ());
  }
  return GST_FLOW_OK;
}
#endif

/* ---- results ---- */

static void
set_results (GstStructure *s, guint64 pixels, guint64 changed, guint bits_per_pixel)
{
  gst_structure_set (s, "pixels", G_TYPE_UINT64, pixels, "changed-pixels", G_TYPE_UINT64, changed, "changed-ratio",
      G_TYPE_DOUBLE, pixels ? static_cast<double> (changed) / static_cast<double> (pixels) : 0.0,
      "changed-bytes-estimate", G_TYPE_UINT64, (changed * bits_per_pixel + 7) / 8, nullptr);
}

static gboolean
gst_cuda_noisemap_end_frame (GstCudaVisionAnalyser *, cuv::FrameResults *results)
{
  return frame_of (results)->measured ();
}

static void
gst_cuda_noisemap_frame_results (GstCudaVisionAnalyser *analyser, cuv::FrameResults *results, GstStructure *meta)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (analyser)->impl;
  const NoisemapFrame *f = frame_of (results);
  set_results (meta, impl->pixels, f->stats ().changed, impl->bits_per_pixel);
  gst_structure_set (meta, "first-frame", G_TYPE_BOOLEAN, f->first_frame (), nullptr);
}

/* With `regions`: the 8-connected regions of changing tiles (at least a quarter of a tile's pixels
 * noisy) that hold at least min-region-area noisy pixels, each as a GstVideoRegionOfInterestMeta
 * "change" (and an object detection of that type, cuvanalytics.h) whose confidence is the region's
 * own changing tiles' changed pixels over its box's area (docs/results.md). */
static void
gst_cuda_noisemap_attach_metas (GstCudaVisionAnalyser *analyser, cuv::FrameResults *results, GstBuffer *buf)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (analyser)->impl;
  const NoisemapFrame *f = frame_of (results);
  if (!f->settings.regions || f->first_frame () || !f->tiles)
    return;
  static const GQuark change = g_quark_from_static_string ("change");
  cuv::attach_regions (buf, change, cuv::noisemap_regions (f->tiles, impl->width, impl->height,
      f->settings.min_region_area, &impl->regions));
}

static void
gst_cuda_noisemap_add_to_interval (GstCudaVisionAnalyser *analyser, const cuv::FrameResults *results)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (analyser)->impl;
  impl->sum_changed += frame_of (results)->stats ().changed;
  impl->sum_pixels += impl->pixels;
}

static void
gst_cuda_noisemap_interval_results (GstCudaVisionAnalyser *analyser, GstStructure *s)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (analyser)->impl;
  set_results (s, impl->sum_pixels, impl->sum_changed, impl->bits_per_pixel);
}

static void
gst_cuda_noisemap_reset_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (analyser)->impl;
  impl->sum_changed = 0;
  impl->sum_pixels = 0;
}

/* ---- caps and state ---- */

/* The output keeps the input's caps, memory type aside (the base class offers both). */
static gboolean
gst_cuda_noisemap_set_info (GstCudaVisionFilter *filter, const GstVideoInfo *in_info, const GstVideoInfo *)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (filter)->impl;
  if (!gst_cuda_vision_layout_from_format (GST_VIDEO_INFO_FORMAT (in_info), &impl->layout))
    return FALSE;
  impl->matrix = cuv::color_matrix (in_info);
  impl->width = GST_VIDEO_INFO_WIDTH (in_info);
  impl->height = GST_VIDEO_INFO_HEIGHT (in_info);
  impl->pixels = static_cast<guint64> (impl->width) * impl->height;
  impl->bits_per_pixel = cuv::layout_is_rgb (impl->layout) ? 32
      : cuv::layout_is_16bit (impl->layout)             ? 24
      : cuv::layout_is_packed422 (impl->layout)         ? 16
                                                        : 12;
  return TRUE;
}

/* After the base class has finished the frames in flight (its stop). */
static void
gst_cuda_noisemap_release (GstCudaVisionFilter *filter)
{
  GstCudaNoisemapImpl *impl = GST_CUDA_NOISEMAP (filter)->impl;
#if CUV_HAVE_CUDA
  impl->device_tiles.reset ();
  impl->pinned_tiles.reset ();
#endif
  impl->difference.release ();
}

/* ---- properties ---- */

static_assert (sizeof (GstCudaNoisemapMode) == sizeof (gint), "enum properties are int fields");

static NoisemapSettings *
gst_cuda_noisemap_settings (GObject *object)
{
  return &GST_CUDA_NOISEMAP (object)->impl->settings;
}

static void
gst_cuda_noisemap_finalize (GObject *object)
{
  delete GST_CUDA_NOISEMAP (object)->impl;
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* The properties: one declaration each (common/element/cuvsettings.h). */
static void
gst_cuda_noisemap_install_properties (GObjectClass *gobject_class)
{
  const GParamFlags flags = cuv::kMutablePlaying;
  cuv::Properties p (gobject_class, gst_cuda_noisemap_settings);

  /**
   * GstCudaNoisemap:threshold:
   *
   * A pixel is noisy when one of its channels changed by more than this (so 255 marks nothing).
   */
  p.add (&NoisemapSettings::threshold,
      g_param_spec_uint ("threshold", "Threshold",
          "A pixel counts as changed when R, G or B (Y, U or V) changed by more than this since the previous frame",
          0, 255, kDefaults.threshold, static_cast<GParamFlags> (flags | GST_PARAM_CONTROLLABLE)));
  /**
   * GstCudaNoisemap:mode:
   *
   * `map`: a black image with the changed pixels in `color`; `overlay`: the frame with them painted.
   */
  p.add (&NoisemapSettings::mode,
      g_param_spec_enum ("mode", "Mode",
          "map: black with the changed pixels in the colour; overlay: the frame with them painted",
          GST_TYPE_CUDA_NOISEMAP_MODE, kDefaults.mode, flags));
  /**
   * GstCudaNoisemap:color:
   *
   * The colour of changed pixels as 0xAARRGGBB; its alpha is its opacity.
   */
  p.add (&NoisemapSettings::color,
      g_param_spec_uint ("color", "Colour",
          "Colour of changed pixels as 0xAARRGGBB (alpha = opacity; default opaque red)", 0, G_MAXUINT32,
          kDefaults.color, flags));
  /**
   * GstCudaNoisemap:regions:
   *
   * Attach the regions that change to each buffer: a GstVideoRegionOfInterestMeta of type "change"
   * with a "detection" parameter holding its confidence (the changed pixels of the region's own
   * tiles over its box's area) and, where the plugin was built with GStreamer 1.24+, an object detection of type
   * "change" in the GstAnalyticsRelationMeta. A region is 8-connected 16x16 tiles of which at
   * least a quarter of the pixels changed.
   */
  /**
   * GstCudaNoisemap:min-region-area:
   *
   * With `regions`: the least changed pixels a region needs to be attached.
   */
  cuv::add_region_properties (p,
      "Attach each region of changing 16x16 tiles (a quarter of their pixels changed, 8-connected) as a "
      "GstVideoRegionOfInterestMeta \"change\" and, with GStreamer 1.24+, an object detection \"change\" in the "
      "analytics relation meta; confidence: the changed pixels of the region's own tiles over its box's area",
      "With regions=true: the least changed pixels that a region needs to be attached");
}

static void
gst_cuda_noisemap_class_init (GstCudaNoisemapClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCudaVisionFilterClass *filter_class = GST_CUDA_VISION_FILTER_CLASS (klass);
  GstCudaVisionAnalyserClass *analyser_class = GST_CUDA_VISION_ANALYSER_CLASS (klass);
  gobject_class->finalize = gst_cuda_noisemap_finalize;
  gst_cuda_noisemap_install_properties (gobject_class);
  gst_cuda_vision_analyser_class_set_results (analyser_class, "cudanoisemap", GST_CUDA_NOISEMAP_META_NAME);

  gst_element_class_set_static_metadata (element_class, "CUDA noise map", "Filter/Analyzer/Video/Hardware",
      "Marks the pixels that changed by more than a threshold since the previous frame, as a map or over the frame, "
      "on the GPU; their count and share as buffer meta and bus messages",
      "gst-cudavision developers");
  gst_cuda_vision_filter_class_add_templates (element_class, NOISEMAP_FORMATS, NOISEMAP_FORMATS);

  filter_class->temporal = TRUE;
  filter_class->set_info = GST_DEBUG_FUNCPTR (gst_cuda_noisemap_set_info);
  filter_class->release = GST_DEBUG_FUNCPTR (gst_cuda_noisemap_release);
  filter_class->transform_cpu = GST_DEBUG_FUNCPTR (gst_cuda_noisemap_transform_cpu);
#if CUV_HAVE_CUDA
  filter_class->transform_cuda = GST_DEBUG_FUNCPTR (gst_cuda_noisemap_transform_cuda);
#endif
  analyser_class->new_results = GST_DEBUG_FUNCPTR (gst_cuda_noisemap_new_results);
  analyser_class->begin_frame = GST_DEBUG_FUNCPTR (gst_cuda_noisemap_begin_frame);
  analyser_class->end_frame = GST_DEBUG_FUNCPTR (gst_cuda_noisemap_end_frame);
  analyser_class->frame_results = GST_DEBUG_FUNCPTR (gst_cuda_noisemap_frame_results);
  analyser_class->add_to_interval = GST_DEBUG_FUNCPTR (gst_cuda_noisemap_add_to_interval);
  analyser_class->interval_results = GST_DEBUG_FUNCPTR (gst_cuda_noisemap_interval_results);
  analyser_class->reset_interval = GST_DEBUG_FUNCPTR (gst_cuda_noisemap_reset_interval);
  analyser_class->attach_metas = GST_DEBUG_FUNCPTR (gst_cuda_noisemap_attach_metas);

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_NOISEMAP_MODE, static_cast<GstPluginAPIFlags> (0));
  GST_DEBUG_CATEGORY_INIT (gst_cuda_noisemap_debug, "cudanoisemap", 0, "CUDA noise map");
}

static void
gst_cuda_noisemap_init (GstCudaNoisemap *self)
{
  self->impl = new GstCudaNoisemapImpl ();
}
