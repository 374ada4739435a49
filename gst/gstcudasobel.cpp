/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-cudasobel
 * @title: cudasobel
 *
 * 3x3 Sobel edge magnitude on the GPU: per colour channel (`mode=color`, alpha kept) or on the
 * BT.601 luma (`mode=luma`, grey edges). Magnitude = min(255, round(scale * sqrt(gx^2 + gy^2))),
 * border pixels replicated; with `threshold` > 0 the output is binary (0 or 255). NV12, I420,
 * and a webcam's YUY2 and UYVY are filtered on their luma and their chroma is set neutral (grey
 * edges); a 10-bit decoder's P010_10LE likewise, on each Y sample's top 8 bits, the magnitude
 * written as m << 8; GRAY8 is filtered as is (in system memory: GStreamer 1.22's CUDA memory has
 * no GRAY8).
 * Takes CUDA or system memory on either pad, so it links directly to cudaupload, nvh264dec,
 * other cudavision elements, or to plain system-memory elements.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=RGBA ! cudaupload ! cudasobel mode=luma scale=2 ! cudadownload ! videoconvert ! autovideosink
 * ]| Grey edges of the test pattern, the frames staying on the GPU between upload and download.
 * |[
 * gst-launch-1.0 v4l2src ! video/x-raw,format=YUY2 ! cudasobel threshold=80 ! videoconvert ! autovideosink
 * ]| Binary edges of a webcam, in its own YUY2.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gst/gstcudasobel.h"

#include <algorithm>

#include "common/base/cuvcpupool.h"
#include "common/base/cuvenum.h"
#include "common/element/cuvsettings.h"
#include "kernels/sobel/sobel.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_sobel_debug);
#define GST_CAT_DEFAULT gst_cuda_sobel_debug

/* GStreamer 1.22's CUDA allocator has no GRAY8: GRAY8 is taken in system memory only. */
#define SOBEL_CUDA_FORMATS "{ RGBA, BGRA, RGBx, BGRx, NV12, I420, YUY2, UYVY, P010_10LE }"
#define SOBEL_SYSTEM_FORMATS "{ RGBA, BGRA, RGBx, BGRx, GRAY8, NV12, I420, YUY2, UYVY, P010_10LE }"

typedef enum {
  GST_CUDA_SOBEL_MODE_COLOR,
  GST_CUDA_SOBEL_MODE_LUMA,
} GstCudaSobelMode;

#define GST_TYPE_CUDA_SOBEL_MODE (gst_cuda_sobel_mode_get_type ())
static GType
gst_cuda_sobel_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_SOBEL_MODE_COLOR, "Edges of R, G and B separately (alpha kept)", "color"},
    {GST_CUDA_SOBEL_MODE_LUMA, "Grey edges of the BT.601 luma", "luma"},
    {0, nullptr, nullptr},
  };
  return cuv::enum_type (&type, "GstCudaSobelMode", values);
}

#define DEFAULT_MODE GST_CUDA_SOBEL_MODE_COLOR
#define DEFAULT_SCALE 1.0
#define DEFAULT_THRESHOLD 0

/* the properties' values, under the object lock (common/element/cuvsettings.h) */
struct SobelSettings {
  GstCudaSobelMode mode = DEFAULT_MODE;
  gdouble scale = DEFAULT_SCALE;
  guint threshold = DEFAULT_THRESHOLD;
};
static_assert (sizeof (GstCudaSobelMode) == sizeof (gint), "enum properties are int fields");

struct GstCudaSobelImpl {
  SobelSettings settings;
  /* streaming thread only: the CPU backend's output table, for output_scale and output_threshold */
  cuv::SobelOutput output;
  float output_scale = -1.0f;
  int output_threshold = -1;
#if CUV_HAVE_CUDA
  /* streaming thread only: when frames take the approximate root (kernels/sobel/sobel.h) */
  cuv::SobelFastRoot fast_root;
#endif
};

struct _GstCudaSobel {
  GstCudaVisionFilter parent;
  GstCudaSobelImpl *impl;
};

#define gst_cuda_sobel_parent_class parent_class
G_DEFINE_TYPE (GstCudaSobel, gst_cuda_sobel, GST_TYPE_CUDA_VISION_FILTER);
GST_ELEMENT_REGISTER_DEFINE (cudasobel, "cudasobel", GST_RANK_NONE, GST_TYPE_CUDA_SOBEL);

/* ---- per frame ---- */

static cuv::SobelParams
gst_cuda_sobel_params (GstCudaSobel *self)
{
  const SobelSettings now = cuv::snapshot (self, self->impl->settings);
  return cuv::SobelParams{now.mode == GST_CUDA_SOBEL_MODE_LUMA ? cuv::SobelMode::Luma : cuv::SobelMode::Color,
      static_cast<float> (now.scale), static_cast<int> (now.threshold)};
}

static GstFlowReturn
gst_cuda_sobel_transform_cpu (GstCudaVisionFilter *filter, const cuv::FrameJob *job)
{
  const cuv::Frame *in = job->in, *out = job->out;
  GstCudaSobelImpl *impl = GST_CUDA_SOBEL (filter)->impl;
  const cuv::SobelParams params = gst_cuda_sobel_params (GST_CUDA_SOBEL (filter));
  /* the table is built again only when the scale or the threshold changed */
  if (params.scale != impl->output_scale || params.threshold != impl->output_threshold) {
    impl->output = cuv::sobel_output (params.scale, params.threshold);
    impl->output_scale = params.scale;
    impl->output_threshold = params.threshold;
  }
  const cuv::SobelOutput &output = impl->output;
  /* adjacent samples (gray, 4:2:0 luma) are light work; RGB reads and writes four channels */
  const int threads = job->threads;
  cuv::parallel_row_pairs (in->height,
      cuv::layout_is_rgb (in->layout) ? threads : cuv::light_bands (threads, *in),
      [&] (int y0, int y1) { cuv::sobel_rows_cpu (*in, *out, params, output, y0, y1); });
  return GST_FLOW_OK;
}

#if CUV_HAVE_CUDA
static GstFlowReturn
gst_cuda_sobel_transform_cuda (GstCudaVisionFilter *filter, const cuv::FrameJob *job)
{
  const cuv::Frame *in = job->in, *out = job->out;
  cudaStream_t stream = job->stream;
  GstCudaSobel *self = GST_CUDA_SOBEL (filter);
  cuv::SobelParams params = gst_cuda_sobel_params (self);
  int device = -1;
  if (!CUV_CUDA_OK (self, cudaGetDevice (&device)))
    return GST_FLOW_ERROR;
  if (params.threshold == 0 &&
      !CUV_CUDA_OK (self, self->impl->fast_root.ask (params.scale, device, stream, &params.fast_root)))
    return GST_FLOW_ERROR;
  if (!CUV_CUDA_OK (self, cuv::sobel_cuda (*in, *out, params, stream)))
    return GST_FLOW_ERROR;
  return GST_FLOW_OK;
}
#endif

/* ---- caps and state ---- */

/* After the base class has finished the frames in flight (its stop), with the context current:
 * the fast root's check, and what it found, which the next start asks again (the device may
 * differ). */
static void
gst_cuda_sobel_release (GstCudaVisionFilter *filter)
{
#if CUV_HAVE_CUDA
  GST_CUDA_SOBEL (filter)->impl->fast_root.release ();
#else
  (void) filter;
#endif
}

/* ---- properties ---- */

static SobelSettings *
gst_cuda_sobel_settings (GObject *object)
{
  return &GST_CUDA_SOBEL (object)->impl->settings;
}

static void
gst_cuda_sobel_finalize (GObject *object)
{
  delete GST_CUDA_SOBEL (object)->impl;
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* The properties: one declaration each (common/element/cuvsettings.h). */
static void
gst_cuda_sobel_install_properties (GObjectClass *gobject_class)
{
  const GParamFlags flags = cuv::kMutablePlaying;
  cuv::Properties p (gobject_class, gst_cuda_sobel_settings);

  /**
   * GstCudaSobel:mode:
   *
   * `color` filters R, G and B independently and keeps alpha; `luma` filters the BT.601 luma and
   * writes grey edges. NV12, I420, YUY2, UYVY, P010_10LE and GRAY8 are always filtered on luma.
   */
  p.add (&SobelSettings::mode,
      g_param_spec_enum ("mode", "Mode",
          "color: edges of R, G and B separately, alpha kept; luma: grey edges of the BT.601 luma "
          "(NV12, I420, YUY2, UYVY, P010_10LE and GRAY8 always use luma)",
          GST_TYPE_CUDA_SOBEL_MODE, DEFAULT_MODE, flags));
  /**
   * GstCudaSobel:scale:
   *
   * Gain on the magnitude before it is rounded and clipped to 255: above 1 shows faint edges.
   */
  p.add (&SobelSettings::scale,
      g_param_spec_double ("scale", "Scale",
          "Gain on the edge magnitude before rounding and clipping to 255 (above 1 shows faint edges)",
          0.0, 64.0, DEFAULT_SCALE, static_cast<GParamFlags> (flags | GST_PARAM_CONTROLLABLE)));
  /**
   * GstCudaSobel:threshold:
   *
   * 0 outputs the magnitude; otherwise pixels whose (scaled) magnitude reaches the threshold
   * become 255 and the others 0.
   */
  p.add (&SobelSettings::threshold,
      g_param_spec_uint ("threshold", "Threshold",
          "0 = output the magnitude; otherwise a binary edge map: 255 where the scaled magnitude "
          ">= threshold, else 0",
          0, 255, DEFAULT_THRESHOLD, static_cast<GParamFlags> (flags | GST_PARAM_CONTROLLABLE)));
}

static void
gst_cuda_sobel_class_init (GstCudaSobelClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCudaVisionFilterClass *filter_class = GST_CUDA_VISION_FILTER_CLASS (klass);
  gobject_class->finalize = gst_cuda_sobel_finalize;
  gst_cuda_sobel_install_properties (gobject_class);

  gst_element_class_set_static_metadata (element_class, "CUDA Sobel edge detector", "Filter/Effect/Video/Hardware",
      "3x3 Sobel edge magnitude per colour channel or on luma, on the GPU",
      "gst-cudavision developers");
  gst_cuda_vision_filter_class_add_templates (element_class, SOBEL_CUDA_FORMATS, SOBEL_SYSTEM_FORMATS);

  filter_class->supports_in_place = FALSE;
  filter_class->release = GST_DEBUG_FUNCPTR (gst_cuda_sobel_release);
  filter_class->transform_cpu = GST_DEBUG_FUNCPTR (gst_cuda_sobel_transform_cpu);
#if CUV_HAVE_CUDA
  filter_class->transform_cuda = GST_DEBUG_FUNCPTR (gst_cuda_sobel_transform_cuda);
#endif

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_SOBEL_MODE, static_cast<GstPluginAPIFlags> (0));
  GST_DEBUG_CATEGORY_INIT (gst_cuda_sobel_debug, "cudasobel", 0, "CUDA Sobel edge detector");
}

static void
gst_cuda_sobel_init (GstCudaSobel *self)
{
  self->impl = new GstCudaSobelImpl ();
}
