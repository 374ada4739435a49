/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-cudahistogram
 * @title: cudahistogram
 *
 * Measures each frame on the GPU in one read of its pixels: a luma histogram of `bins` bins
 * (BT.601 luma, (77 R + 150 G + 29 B) >> 8, for RGB formats; the Y plane for NV12, I420 and
 * GRAY8; the Y bytes for YUY2 and UYVY, as webcams give them; each Y sample's top 8 bits for
 * P010_10LE, as 10-bit decoders give it), the mean of R, G and B (RGB formats only), and the
 * mean and variance of luma, over the whole frame or the region `roi-x`, `roi-y`, `roi-width`,
 * `roi-height`.
 *
 * The frame passes through unchanged, in place and without a copy, unless `overlay` is on: then
 * the histogram and the means are drawn into a corner of the frame, semi-transparent.
 *
 * The results go two ways. Every buffer carries a GstCustomMeta "CudaHistogramMeta" (see
 * gstcudahistogrammeta.h for its fields and C accessors; with `tensor-meta`, on GStreamer 1.26+
 * builds, the counts also as a GstTensorMeta tensor "cudahistogram-counts"). If the
 * #GstCudaHistogram:post-messages property is %TRUE, an element message named
 * `cudahistogram` is posted after each interval of stream time given by the
 * #GstCudaHistogram:interval property (0: every frame). Its structure contains these fields:
 *
 * * #GstClockTime `timestamp`: the timestamp of the first buffer of the interval.
 * * #GstClockTime `stream-time`: the stream time of that buffer.
 * * #GstClockTime `running-time`: the running time of that buffer.
 * * #GstClockTime `duration`: the stream time the interval covers.
 * * #guint `frames`: the frames of the interval.
 * * #guint64 `pixels`: the pixels counted, summed over the interval.
 * * #guint `bins`: the number of bins.
 * * #GstValueArray of #guint64 `histogram`: the count of each bin, summed over the interval.
 * * #gdouble `luma-mean`, `luma-variance`: luma's mean (0..255) and population variance.
 * * #gdouble `r-mean`, `g-mean`, `b-mean`: the means of R, G and B (RGB formats only).
 * * #guint `roi-x`, `roi-y`, `roi-width`, `roi-height`: the measured region after clipping.
 *
 * A region that reaches past the frame is clipped, with one warning; a region that lies outside
 * it gives an empty histogram (pixels = 0) and a warning that says so.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 -m videotestsrc num-buffers=3 ! cudaupload ! cudahistogram bins=16 ! cudadownload ! fakesink
 * ]| Prints a `cudahistogram` message with 16 bins for each of three frames.
 * |[
 * gst-launch-1.0 v4l2src ! video/x-raw,format=YUY2 ! cudahistogram overlay=true overlay-position=bottom-right ! videoconvert ! autovideosink
 * ]| A live histogram drawn over a webcam, in the webcam's own YUY2.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gst/gstcudahistogram.h"

#include "gst/gstcudahistogrammeta.h"
#include "gst/gstcudahistogramsettings.h"

#include <cstring>

#include "common/results/cuvanalytics.h"
#include "common/element/cuvsettings.h"
#include "common/base/cuvcpupool.h"
#include "common/base/cuvenum.h"
#include "common/results/cuvreport.h"
#include "common/results/cuvresults.h"
#include "kernels/base/copy.h"
#include "kernels/histogram/histogram.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_histogram_debug);
#define GST_CAT_DEFAULT gst_cuda_histogram_debug


/* One frame's results, a value (common/results/cuvframeresults.h): what the transform measured
 * and what publishing reads, which may be after the next frames were processed. */
struct HistogramFrame : cuv::FrameResults {
  HistogramSettings settings; /* the frame's copy of the settings */
  cuv::Roi roi{};             /* clipped */
  bool rgb = false;
  const cuv::HistogramResult *result = nullptr; /* on the host once processed: cpu_result, or a slot of results */
  cuv::HistogramResult cpu_result{};
};

struct GstCudaHistogramImpl {
  HistogramSettings settings;

  /* streaming thread only */
  int width = 0;
  int height = 0;
  bool rgb = false;
  guint warned_roi[6] = {G_MAXUINT, 0, 0, 0, 0, 0}; /* the ROI and frame size last warned about */
#if CUV_HAVE_CUDA
  /* a slot for each of the last three frames: their results may be published after the next two
   * frames were launched (docs/design.md, "Results that follow the frame") */
  cuv::ResultBuffers<cuv::HistogramPartials, cuv::HistogramResult> results;
#endif
  /* the message interval's sums, and the bins, format and region of its last frame */
  cuv::HistogramResult sum{};
  guint64 sum_pixels = 0;
  guint sum_bins = 0;
  bool sum_rgb = false;
  cuv::Roi sum_roi{};
};

struct _GstCudaHistogram {
  GstCudaVisionAnalyser parent;
  GstCudaHistogramImpl *impl;
};

/* GStreamer 1.22's CUDA allocator has no GRAY8: GRAY8 is taken in system memory only. */
#define HISTOGRAM_CUDA_FORMATS "{ RGBA, BGRA, RGBx, BGRx, NV12, I420, YUY2, UYVY, P010_10LE }"
#define HISTOGRAM_SYSTEM_FORMATS "{ RGBA, BGRA, RGBx, BGRx, GRAY8, NV12, I420, YUY2, UYVY, P010_10LE }"

#define gst_cuda_histogram_parent_class parent_class
G_DEFINE_TYPE (GstCudaHistogram, gst_cuda_histogram, GST_TYPE_CUDA_VISION_ANALYSER);
GST_ELEMENT_REGISTER_DEFINE (cudahistogram, "cudahistogram", GST_RANK_NONE, GST_TYPE_CUDA_HISTOGRAM);

/* ---- per frame ---- */

static HistogramFrame *
frame_of (cuv::FrameResults *results)
{
  return static_cast<HistogramFrame *> (results);
}

static cuv::FrameResults *
gst_cuda_histogram_new_results (GstCudaVisionAnalyser *)
{
  return new HistogramFrame ();
}

/* Copies the settings for this frame and clips the ROI, warning once per ROI and frame size. */
static void
gst_cuda_histogram_begin_frame (GstCudaVisionAnalyser *analyser, GstBuffer *, cuv::FrameResults *results)
{
  GstCudaHistogram *self = GST_CUDA_HISTOGRAM (analyser);
  GstCudaHistogramImpl *impl = self->impl;
  HistogramFrame *frame = frame_of (results);
  frame->result = nullptr;
  frame->rgb = impl->rgb;
  frame->settings = cuv::snapshot (analyser, impl->settings);
  const guint *r = frame->settings.roi;
  const cuv::Roi &roi = frame->roi;
  const bool inside = cuv::histogram_clip_roi (impl->width, impl->height, static_cast<int> (r[0]), static_cast<int> (r[1]),
      static_cast<int> (r[2]), static_cast<int> (r[3]), &frame->roi);
  const guint key[6] = {r[0], r[1], r[2], r[3], static_cast<guint> (impl->width), static_cast<guint> (impl->height)};
  if (inside || memcmp (key, impl->warned_roi, sizeof (key)) == 0)
    return;
  memcpy (impl->warned_roi, key, sizeof (key));
  if (roi.width == 0 || roi.height == 0)
    GST_ELEMENT_WARNING (self, STREAM, FORMAT,
        ("The region of interest (%u,%u %ux%u) lies outside the %dx%d frame: the histogram is empty", r[0], r[1], r[2],
            r[3], impl->width, impl->height),
        ("messages and meta carry pixels=0 until the region or the frame size changes"));
  else
    GST_ELEMENT_WARNING (self, STREAM, FORMAT,
        ("The region of interest (%u,%u %ux%u) reaches past the %dx%d frame; it is clipped to %d,%d %dx%d", r[0], r[1],
            r[2], r[3], impl->width, impl->height, roi.x, roi.y, roi.width, roi.height),
        (nullptr));
}

static gboolean
gst_cuda_histogram_writes_frame (GstCudaVisionFilter *, const cuv::FrameResults *results)
{
  return results && static_cast<const HistogramFrame *> (results)->settings.overlay;
}


static cuv::OverlayRect
gst_cuda_histogram_overlay_rect (GstCudaHistogramImpl *impl, const HistogramFrame *frame)
{
  return cuv::histogram_overlay_rect (impl->width, impl->height, frame->settings.position,
      static_cast<int> (frame->settings.overlay_size));
}

static guint64
roi_pixels (const cuv::Roi &roi)
{
  return static_cast<guint64> (roi.width) * static_cast<guint64> (roi.height);
}

static GstFlowReturn
gst_cuda_histogram_transform_cpu (GstCudaVisionFilter *filter, const cuv::FrameJob *job)
{
  const cuv::Frame *in = job->in, *out = job->out;
  GstCudaHistogramImpl *impl = GST_CUDA_HISTOGRAM (filter)->impl;
  HistogramFrame *frame = frame_of (job->results);
  const int threads = cuv::light_bands (job->threads, *in);
  if (in->planes[0].data != out->planes[0].data)
    cuv::parallel_row_pairs (in->height, threads,
        [&] (int y0, int y1) { cuv::copy_frame_cpu (cuv::frame_rows (*in, y0, y1), cuv::frame_rows (*out, y0, y1)); });
  /* bands of the region's rows, their counts and sums added */
  const cuv::Roi roi = frame->roi;
  frame->cpu_result = cuv::sum_over_bands<cuv::HistogramResult> (roi.height, threads,
      [&] (int begin, int end) {
        cuv::HistogramResult band;
        cuv::histogram_cpu (*in, cuv::Roi{roi.x, roi.y + begin, roi.width, end - begin},
            static_cast<int> (frame->settings.bins), &band);
        return band;
      },
      cuv::add_histogram);
  if (frame->settings.overlay)
    cuv::histogram_overlay_cpu (*out, gst_cuda_histogram_overlay_rect (impl, frame), static_cast<int> (frame->settings.bins),
        frame->cpu_result, roi_pixels (roi));
  frame->result = &frame->cpu_result;
  return GST_FLOW_OK;
}

#if CUV_HAVE_CUDA
static GstFlowReturn
gst_cuda_histogram_transform_cuda (GstCudaVisionFilter *filter, const cuv::FrameJob *job)
{
  const cuv::Frame *in = job->in, *out = job->out;
  cudaStream_t stream = job->stream;
  GstCudaHistogram *self = GST_CUDA_HISTOGRAM (filter);
  GstCudaHistogramImpl *impl = self->impl;
  HistogramFrame *frame = frame_of (job->results);
  if (!CUV_CUDA_OK (self, impl->results.ensure (job->context, stream)))
    return GST_FLOW_ERROR;
  /* each of the last three frames' results in a slot of its own, which the frame's value points at */
  impl->results.next_slot ();
  const cuv::HistogramResults to = impl->results.to ();
  const int bins = static_cast<int> (frame->settings.bins);
  if (in->planes[0].data != out->planes[0].data && !CUV_CUDA_OK (self, cuv::copy_frame_cuda (*in, *out, stream)))
    return GST_FLOW_ERROR;
  /* the kernel writes the results into host memory; the base class waits for the stream once,
   * after this, and then they are there */
  if (!CUV_CUDA_OK (self, cuv::histogram_cuda (*in, frame->roi, bins, to, stream)) ||
      (frame->settings.overlay && !CUV_CUDA_OK (self, cuv::histogram_overlay_cuda (*out, gst_cuda_histogram_overlay_rect (impl, frame),
                                                bins, to.device_out, roi_pixels (frame->roi), stream)))) {
    impl->results.launch_failed ();
    return GST_FLOW_ERROR;
  }
  frame->result = &impl->results.host ();
  return GST_FLOW_OK;
}
#endif

/* ---- results ---- */

/* The meta's counts are one GBytes (@counts_as_bytes): a transform downstream that copies the
 * meta then takes a reference, where an array of 256 GValues cost it as much as our frame's
 * whole GPU work at 1920x1080 (docs/performance-log.md). The message's counts stay a GstValueArray, readable as
 * it is printed (gst-launch-1.0 -m) and as a Python list. */
static void
set_results (GstStructure *s, const cuv::HistogramResult &r, guint bins, guint64 pixels, bool rgb, const cuv::Roi &roi,
    bool counts_as_bytes)
{
  const double n = pixels ? static_cast<double> (pixels) : 1.0;
  /* variance from integer sums: n * sum(y^2) - sum(y)^2 is exact in 128 bits */
  unsigned __int128 spread = static_cast<unsigned __int128> (pixels) * r.sum_y2 -
      static_cast<unsigned __int128> (r.sum_y) * r.sum_y;
  gst_structure_set (s, "pixels", G_TYPE_UINT64, pixels, "bins", G_TYPE_UINT, bins, nullptr);
  if (counts_as_bytes) {
    GBytes *counts = g_bytes_new (r.counts, bins * sizeof (guint64));
    gst_structure_set (s, "histogram", G_TYPE_BYTES, counts, nullptr);
    g_bytes_unref (counts);
  } else {
    cuv::set_uint64_array (s, "histogram", r.counts, bins);
  }
  gst_structure_set (s, "luma-mean", G_TYPE_DOUBLE, static_cast<double> (r.sum_y) / n, "luma-variance", G_TYPE_DOUBLE,
      static_cast<double> (spread) / (n * n), nullptr);
  if (rgb)
    gst_structure_set (s, "r-mean", G_TYPE_DOUBLE, static_cast<double> (r.sum_r) / n, "g-mean", G_TYPE_DOUBLE,
        static_cast<double> (r.sum_g) / n, "b-mean", G_TYPE_DOUBLE, static_cast<double> (r.sum_b) / n, nullptr);
  gst_structure_set (s, "roi-x", G_TYPE_UINT, static_cast<guint> (roi.x), "roi-y", G_TYPE_UINT, static_cast<guint> (roi.y),
      "roi-width", G_TYPE_UINT, static_cast<guint> (roi.width), "roi-height", G_TYPE_UINT, static_cast<guint> (roi.height),
      nullptr);
}

static gboolean
gst_cuda_histogram_end_frame (GstCudaVisionAnalyser *, cuv::FrameResults *results)
{
  return frame_of (results)->result != nullptr;
}

static void
gst_cuda_histogram_frame_results (GstCudaVisionAnalyser *, cuv::FrameResults *results, GstStructure *meta)
{
  const HistogramFrame *f = frame_of (results);
  set_results (meta, *f->result, f->settings.bins, roi_pixels (f->roi), f->rgb, f->roi, true);
}

#if HAVE_GST_TENSOR_META
/* With `tensor-meta`: the counts as a tensor "cudahistogram-counts", UINT64 [bins] (docs/results.md). */
static void
gst_cuda_histogram_attach_metas (GstCudaVisionAnalyser *, cuv::FrameResults *results, GstBuffer *buf)
{
  const HistogramFrame *f = frame_of (results);
  if (!f->settings.tensor_meta)
    return;
  static const GQuark id = g_quark_from_static_string ("cudahistogram-counts");
  GBytes *counts = g_bytes_new (f->result->counts, f->settings.bins * sizeof (guint64));
  cuv::attach_tensor (buf, id, cuv::TensorType::UInt64, {f->settings.bins}, counts);
  g_bytes_unref (counts);
}
#endif

static void
gst_cuda_histogram_add_to_interval (GstCudaVisionAnalyser *analyser, const cuv::FrameResults *results)
{
  GstCudaHistogramImpl *impl = GST_CUDA_HISTOGRAM (analyser)->impl;
  const auto *f = static_cast<const HistogramFrame *> (results);
  /* a new bin count starts a new interval: counts of different bins do not add up */
  if (impl->sum_bins != f->settings.bins)
    gst_cuda_vision_analyser_reset_interval (analyser);
  impl->sum_bins = f->settings.bins;
  impl->sum_rgb = f->rgb;
  impl->sum_roi = f->roi;
  cuv::add_histogram (&impl->sum, *f->result);
  impl->sum_pixels += roi_pixels (f->roi);
}

/* with the bins, format and region of the interval's last frame */
static void
gst_cuda_histogram_interval_results (GstCudaVisionAnalyser *analyser, GstStructure *s)
{
  GstCudaHistogramImpl *impl = GST_CUDA_HISTOGRAM (analyser)->impl;
  set_results (s, impl->sum, impl->sum_bins, impl->sum_pixels, impl->sum_rgb, impl->sum_roi, false);
}

static void
gst_cuda_histogram_reset_interval (GstCudaVisionAnalyser *analyser)
{
  GstCudaHistogramImpl *impl = GST_CUDA_HISTOGRAM (analyser)->impl;
  impl->sum = cuv::HistogramResult{};
  impl->sum_pixels = 0;
}

/* ---- caps and state ---- */

static gboolean
gst_cuda_histogram_set_info (GstCudaVisionFilter *filter, const GstVideoInfo *in_info, const GstVideoInfo *)
{
  GstCudaHistogramImpl *impl = GST_CUDA_HISTOGRAM (filter)->impl;
  impl->width = GST_VIDEO_INFO_WIDTH (in_info);
  impl->height = GST_VIDEO_INFO_HEIGHT (in_info);
  impl->rgb = GST_VIDEO_INFO_IS_RGB (in_info);
  return TRUE;
}

/* After the base class has finished the frames in flight (its stop). */
static void
gst_cuda_histogram_release (GstCudaVisionFilter *filter)
{
#if CUV_HAVE_CUDA
  GST_CUDA_HISTOGRAM (filter)->impl->results.reset ();
#else
  (void) filter;
#endif
}

/* ---- properties ---- */

static HistogramSettings *
gst_cuda_histogram_settings (GObject *object)
{
  return &GST_CUDA_HISTOGRAM (object)->impl->settings;
}

static void
gst_cuda_histogram_finalize (GObject *object)
{
  delete GST_CUDA_HISTOGRAM (object)->impl;
  G_OBJECT_CLASS (parent_class)->finalize (object);
}


static void
gst_cuda_histogram_class_init (GstCudaHistogramClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCudaVisionFilterClass *filter_class = GST_CUDA_VISION_FILTER_CLASS (klass);
  GstCudaVisionAnalyserClass *analyser_class = GST_CUDA_VISION_ANALYSER_CLASS (klass);
  gobject_class->finalize = gst_cuda_histogram_finalize;
  gst_cuda_histogram_install_properties (gobject_class, gst_cuda_histogram_settings);
  gst_cuda_vision_analyser_class_set_results (analyser_class, "cudahistogram", GST_CUDA_HISTOGRAM_META_NAME);

  gst_element_class_set_static_metadata (element_class, "CUDA histogram", "Filter/Analyzer/Video/Hardware",
      "Luma histogram and R/G/B means of each frame in one GPU pass, as buffer meta and bus messages, "
      "optionally drawn over the frame",
      "gst-cudavision developers");
  gst_cuda_vision_filter_class_add_templates (element_class, HISTOGRAM_CUDA_FORMATS, HISTOGRAM_SYSTEM_FORMATS);

  filter_class->supports_in_place = TRUE;
  filter_class->keeps_caps = TRUE;
  filter_class->writes_frame = GST_DEBUG_FUNCPTR (gst_cuda_histogram_writes_frame);
  filter_class->set_info = GST_DEBUG_FUNCPTR (gst_cuda_histogram_set_info);
  filter_class->release = GST_DEBUG_FUNCPTR (gst_cuda_histogram_release);
  filter_class->transform_cpu = GST_DEBUG_FUNCPTR (gst_cuda_histogram_transform_cpu);
#if CUV_HAVE_CUDA
  filter_class->transform_cuda = GST_DEBUG_FUNCPTR (gst_cuda_histogram_transform_cuda);
#endif
  analyser_class->new_results = GST_DEBUG_FUNCPTR (gst_cuda_histogram_new_results);
  analyser_class->begin_frame = GST_DEBUG_FUNCPTR (gst_cuda_histogram_begin_frame);
  analyser_class->end_frame = GST_DEBUG_FUNCPTR (gst_cuda_histogram_end_frame);
  analyser_class->frame_results = GST_DEBUG_FUNCPTR (gst_cuda_histogram_frame_results);
  analyser_class->add_to_interval = GST_DEBUG_FUNCPTR (gst_cuda_histogram_add_to_interval);
  analyser_class->interval_results = GST_DEBUG_FUNCPTR (gst_cuda_histogram_interval_results);
  analyser_class->reset_interval = GST_DEBUG_FUNCPTR (gst_cuda_histogram_reset_interval);
#if HAVE_GST_TENSOR_META
  analyser_class->attach_metas = GST_DEBUG_FUNCPTR (gst_cuda_histogram_attach_metas);
#endif

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_HISTOGRAM_POSITION, static_cast<GstPluginAPIFlags> (0));
  GST_DEBUG_CATEGORY_INIT (gst_cuda_histogram_debug, "cudahistogram", 0, "CUDA histogram");
}

static void
gst_cuda_histogram_init (GstCudaHistogram *self)
{
  self->impl = new GstCudaHistogramImpl ();
}
