/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-cudaenhance
 * @title: cudaenhance
 *
 * The GPU counterpart of videobalance: contrast, brightness, saturation and hue with
 * videobalance's meaning and arithmetic (its lookup tables and 8-bit BT.601 matrices), so that it
 * gives videobalance's bytes. RGB formats go through YUV and back as videobalance does; NV12,
 * I420 and a webcam's YUY2 and UYVY get the luma table on Y and the chroma table on U/V. A 10-bit
 * decoder's P010_10LE, which videobalance does not take, is enhanced at 10 bits with the same
 * expressions (docs/elements/cudaenhance.md). Passthrough when every value is at its default;
 * works in place when both pads carry the same caps. Every property is controllable and may
 * change while PLAYING.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12 ! cudaupload ! cudaenhance contrast=1.4 saturation=1.5 ! cudadownload ! videoconvert ! autovideosink
 * ]| A punchier test pattern, processed in CUDA memory.
 * |[
 * gst-launch-1.0 v4l2src ! video/x-raw,format=YUY2 ! cudaenhance brightness=0.1 hue=0.2 ! videoconvert ! autovideosink
 * ]| A brighter, hue-shifted webcam in its own YUY2, uploaded and downloaded by cudaenhance itself.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gst/gstcudaenhance.h"

#include <algorithm>
#include <memory>

#include "common/base/cuvcpupool.h"
#include "common/element/cuvsettings.h"
#include "kernels/base/copy.h"
#include "kernels/enhance/enhance.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_enhance_debug);
#define GST_CAT_DEFAULT gst_cuda_enhance_debug

#define ENHANCE_FORMATS "{ RGBA, BGRA, RGBx, BGRx, NV12, I420, YUY2, UYVY, P010_10LE }"

static const cuv::EnhanceParams kDefaults = {1.0, 0.0, 1.0, 0.0};

struct GstCudaEnhanceImpl {
  cuv::EnhanceParams params = kDefaults; /* the properties, under the object lock (common/element/cuvsettings.h) */

  /* streaming thread only: the tables of `built` on the host and, for CUDA, on the device */
  cuv::EnhanceParams built = kDefaults;
  std::unique_ptr<cuv::EnhanceTables> tables;
#if CUV_HAVE_CUDA
  cuv::EnhanceParams uploaded = kDefaults;
  cuv::CudaBuffer device_tables;
  cuv::CudaBuffer pinned_tables;
#endif
};

struct _GstCudaEnhance {
  GstCudaVisionFilter parent;
  GstCudaEnhanceImpl *impl;
};

#define gst_cuda_enhance_parent_class parent_class
G_DEFINE_TYPE (GstCudaEnhance, gst_cuda_enhance, GST_TYPE_CUDA_VISION_FILTER);
GST_ELEMENT_REGISTER_DEFINE (cudaenhance, "cudaenhance", GST_RANK_NONE, GST_TYPE_CUDA_ENHANCE);

/* ---- per frame ---- */

static cuv::EnhanceParams
gst_cuda_enhance_params (GstCudaEnhance *self)
{
  return cuv::snapshot (self, self->impl->params);
}

/* The host tables for @p, rebuilt only when the values changed. */
static const cuv::EnhanceTables &
gst_cuda_enhance_tables (GstCudaEnhance *self, const cuv::EnhanceParams &p)
{
  GstCudaEnhanceImpl *impl = self->impl;
  if (!impl->tables || !(impl->built == p)) {
    if (!impl->tables)
      impl->tables = std::make_unique<cuv::EnhanceTables> ();
    cuv::enhance_build_tables (p, impl->tables.get ());
    impl->built = p;
  }
  return *impl->tables;
}

static GstFlowReturn
gst_cuda_enhance_transform_cpu (GstCudaVisionFilter *filter, const cuv::FrameJob *job)
{
  const cuv::Frame *in = job->in, *out = job->out;
  GstCudaEnhance *self = GST_CUDA_ENHANCE (filter);
  cuv::EnhanceParams p = gst_cuda_enhance_params (self);
  const cuv::EnhanceTables *tables = p.is_identity () ? nullptr : &gst_cuda_enhance_tables (self, p);
  /* each pixel alone: bands of row pairs (whole chroma rows of 4:2:0). Byte table lookups in SIMD
   * are the lightest (4:2:0 without a hue turn), then RGB in SIMD, 4:2:0 through the pair
   * table and YUY2/UYVY; RGB through the definition's scalar loop (to YUV and back a pixel) is heavy. */
  const int threads = job->threads;
  const bool rgb = cuv::layout_is_rgb (in->layout);
  int bands = threads;
  if (tables && cuv::enhance_cpu_is_light (*tables, in->layout))
    bands = cuv::light_bands (threads, *in, rgb ? cuv::kLightBandPixels : cuv::kLookupBandPixels);
  else if (!rgb)
    bands = cuv::light_bands (threads, *in);
  cuv::parallel_row_pairs (in->height, bands,
      [&] (int y0, int y1) {
        const cuv::Frame src = cuv::frame_rows (*in, y0, y1), dst = cuv::frame_rows (*out, y0, y1);
        if (tables)
          cuv::enhance_cpu (src, dst, *tables);
        else
          cuv::copy_frame_cpu (src, dst);
      });
  return GST_FLOW_OK;
}

#if CUV_HAVE_CUDA
static GstFlowReturn
gst_cuda_enhance_transform_cuda (GstCudaVisionFilter *filter, const cuv::FrameJob *job)
{
  const cuv::Frame *in = job->in, *out = job->out;
  cudaStream_t stream = job->stream;
  GstCudaEnhance *self = GST_CUDA_ENHANCE (filter);
  GstCudaEnhanceImpl *impl = self->impl;
  cuv::EnhanceParams p = gst_cuda_enhance_params (self);
  if (p.is_identity ())
    return CUV_CUDA_OK (self, cuv::copy_frame_cuda (*in, *out, stream)) ? GST_FLOW_OK : GST_FLOW_ERROR;

  GstCudaContext *ctx = job->context;
  const size_t bytes = sizeof (cuv::EnhanceTables);
  if (!impl->device_tables) {
    if (!CUV_CUDA_OK (self, impl->device_tables.allocate (ctx, cuv::CudaBuffer::Kind::Device, bytes)) ||
        !CUV_CUDA_OK (self, impl->pinned_tables.allocate (ctx, cuv::CudaBuffer::Kind::Pinned, bytes)))
      return GST_FLOW_ERROR;
    impl->uploaded = kDefaults;
  }
  /* The last upload may still be in flight: on GStreamer 1.24+ the base class need not wait for
   * the stream before the push (common/cuda/cuvsync.h), so the pinned copy is rewritten only after the
   * stream's earlier work (a change of the values is rare). The base class has already waited
   * for the stream of the last frame if this frame runs on another. */
  if (!(impl->uploaded == p)) {
    const cuv::EnhanceTables &t = gst_cuda_enhance_tables (self, p);
    if (!CUV_CUDA_OK (self, cudaStreamSynchronize (stream)))
      return GST_FLOW_ERROR;
    memcpy (impl->pinned_tables.data (), &t, bytes);
    if (!CUV_CUDA_OK (self, cudaMemcpyAsync (impl->device_tables.data (), impl->pinned_tables.data (), bytes,
            cudaMemcpyHostToDevice, stream)))
      return GST_FLOW_ERROR;
    impl->uploaded = p;
  }
  auto tables = reinterpret_cast<const cuv::EnhanceTables *> (impl->device_tables.data ());
  if (!CUV_CUDA_OK (self, cuv::enhance_cuda (*in, *out, tables, stream)))
    return GST_FLOW_ERROR;
  return GST_FLOW_OK;
}
#endif

/* ---- caps and state ---- */

static gboolean
gst_cuda_enhance_set_info (GstCudaVisionFilter *filter, const GstVideoInfo *, const GstVideoInfo *)
{
  gst_cuda_vision_filter_update_passthrough (filter, gst_cuda_enhance_params (GST_CUDA_ENHANCE (filter)).is_identity ());
  return TRUE;
}

/* After the base class has finished the frames in flight (its stop). */
static void
gst_cuda_enhance_release (GstCudaVisionFilter *filter)
{
  GstCudaEnhanceImpl *impl = GST_CUDA_ENHANCE (filter)->impl;
#if CUV_HAVE_CUDA
  impl->device_tables.reset ();
  impl->pinned_tables.reset ();
#endif
  impl->tables.reset ();
}

/* ---- properties ---- */

static cuv::EnhanceParams *
gst_cuda_enhance_settings (GObject *object)
{
  return &GST_CUDA_ENHANCE (object)->impl->params;
}

/* values at which the frame passes unchanged make the element passthrough */
static void
gst_cuda_enhance_changed (GObject *object)
{
  GstCudaEnhance *self = GST_CUDA_ENHANCE (object);
  gst_cuda_vision_filter_update_passthrough (GST_CUDA_VISION_FILTER (self), gst_cuda_enhance_params (self).is_identity ());
}

static void
gst_cuda_enhance_finalize (GObject *object)
{
  delete GST_CUDA_ENHANCE (object)->impl;
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* The properties: one declaration each (common/element/cuvsettings.h). */
static void
gst_cuda_enhance_install_properties (GObjectClass *gobject_class)
{
  const auto flags = static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE);

  cuv::Properties p (gobject_class, gst_cuda_enhance_settings, gst_cuda_enhance_changed);

  /**
   * GstCudaEnhance:contrast:
   *
   * Luma contrast around 16: Y' = 16 + (Y - 16) * contrast + brightness * 255.
   */
  p.add (&cuv::EnhanceParams::contrast,
      g_param_spec_double ("contrast", "Contrast",
          "Luma contrast: 0 flat, 1 unchanged, 2 doubled (as videobalance)", 0.0, 2.0, kDefaults.contrast, flags));
  /**
   * GstCudaEnhance:brightness:
   *
   * Added to luma, in units of full scale.
   */
  p.add (&cuv::EnhanceParams::brightness,
      g_param_spec_double ("brightness", "Brightness",
          "Added to luma in units of full scale: -1 black, 0 unchanged, 1 white (as videobalance)", -1.0, 1.0,
          kDefaults.brightness, flags));
  /**
   * GstCudaEnhance:saturation:
   *
   * Chroma gain: 0 grey, 1 unchanged, 2 doubled.
   */
  p.add (&cuv::EnhanceParams::saturation,
      g_param_spec_double ("saturation", "Saturation",
          "Chroma gain: 0 grey, 1 unchanged, 2 doubled (as videobalance)", 0.0, 2.0, kDefaults.saturation, flags));
  /**
   * GstCudaEnhance:hue:
   *
   * Rotation of the chroma plane, in units of half a turn: -1 and 1 are 180 degrees.
   */
  p.add (&cuv::EnhanceParams::hue,
      g_param_spec_double ("hue", "Hue",
          "Chroma rotation in half turns: 0 unchanged, +-1 = 180 degrees (as videobalance)", -1.0, 1.0,
          kDefaults.hue, flags));
}

static void
gst_cuda_enhance_class_init (GstCudaEnhanceClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCudaVisionFilterClass *filter_class = GST_CUDA_VISION_FILTER_CLASS (klass);
  gobject_class->finalize = gst_cuda_enhance_finalize;
  gst_cuda_enhance_install_properties (gobject_class);

  gst_element_class_set_static_metadata (element_class, "CUDA video balance", "Filter/Effect/Video/Hardware",
      "Contrast, brightness, saturation and hue on the GPU, with videobalance's results",
      "gst-cudavision developers");
  gst_cuda_vision_filter_class_add_templates (element_class, ENHANCE_FORMATS, ENHANCE_FORMATS);

  filter_class->supports_in_place = TRUE;
  filter_class->set_info = GST_DEBUG_FUNCPTR (gst_cuda_enhance_set_info);
  filter_class->release = GST_DEBUG_FUNCPTR (gst_cuda_enhance_release);
  filter_class->transform_cpu = GST_DEBUG_FUNCPTR (gst_cuda_enhance_transform_cpu);
#if CUV_HAVE_CUDA
  filter_class->transform_cuda = GST_DEBUG_FUNCPTR (gst_cuda_enhance_transform_cuda);
#endif

  GST_DEBUG_CATEGORY_INIT (gst_cuda_enhance_debug, "cudaenhance", 0, "CUDA video balance");
}

static void
gst_cuda_enhance_init (GstCudaEnhance *self)
{
  self->impl = new GstCudaEnhanceImpl ();
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), TRUE);
}
