/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gst/gstcudahistogramsettings.h"

#include <gst/gst.h>

#include "common/base/cuvenum.h"
#include "common/element/cuvsettings.h"

GType
gst_cuda_histogram_position_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {static_cast<gint> (cuv::OverlayCorner::TopLeft), "Top left corner", "top-left"},
    {static_cast<gint> (cuv::OverlayCorner::TopRight), "Top right corner", "top-right"},
    {static_cast<gint> (cuv::OverlayCorner::BottomLeft), "Bottom left corner", "bottom-left"},
    {static_cast<gint> (cuv::OverlayCorner::BottomRight), "Bottom right corner", "bottom-right"},
    {0, nullptr, nullptr},
  };
  return cuv::enum_type (&type, "GstCudaHistogramPosition", values);
}

/* The properties: one declaration each (common/element/cuvsettings.h). */
void
gst_cuda_histogram_install_properties (GObjectClass *gobject_class, HistogramSettings *(*settings) (GObject *object))
{
  static const HistogramSettings kDefaults;
  const GParamFlags flags = cuv::kMutablePlaying;
  cuv::Properties p (gobject_class, settings);

  /**
   * GstCudaHistogram:bins:
   *
   * Number of luma bins; bin = (luma * bins) >> 8. A change takes effect at the next frame and
   * starts a new message interval.
   */
  p.add (&HistogramSettings::bins,
      g_param_spec_uint ("bins", "Bins",
          "Number of luma histogram bins (bin = luma * bins / 256); takes effect at the next frame", 1,
          cuv::kHistogramMaxBins, kDefaults.bins, flags));
  /**
   * GstCudaHistogram:roi-x:
   *
   * Left edge of the measured region, in pixels.
   */
  p.add (&HistogramSettings::roi, 0,
      g_param_spec_uint ("roi-x", "ROI x", "Left edge of the measured region in pixels", 0, G_MAXINT, 0, flags));
  /**
   * GstCudaHistogram:roi-y:
   *
   * Top edge of the measured region, in pixels.
   */
  p.add (&HistogramSettings::roi, 1,
      g_param_spec_uint ("roi-y", "ROI y", "Top edge of the measured region in pixels", 0, G_MAXINT, 0, flags));
  /**
   * GstCudaHistogram:roi-width:
   *
   * Width of the measured region; 0 reaches to the right edge. Clipped to the frame.
   */
  p.add (&HistogramSettings::roi, 2,
      g_param_spec_uint ("roi-width", "ROI width",
          "Width of the measured region in pixels (0 = to the right edge; clipped to the frame)", 0, G_MAXINT, 0, flags));
  /**
   * GstCudaHistogram:roi-height:
   *
   * Height of the measured region; 0 reaches to the bottom edge. Clipped to the frame.
   */
  p.add (&HistogramSettings::roi, 3,
      g_param_spec_uint ("roi-height", "ROI height",
          "Height of the measured region in pixels (0 = to the bottom edge; clipped to the frame)", 0, G_MAXINT, 0,
          flags));
  /**
   * GstCudaHistogram:overlay:
   *
   * Draw the histogram and the means into the frame (on the GPU), semi-transparent. Off, the
   * frame is not touched.
   */
  p.add (&HistogramSettings::overlay,
      g_param_spec_boolean ("overlay", "Overlay",
          "Draw the histogram (white bars) and the R/G/B or luma means (coloured bars) into a corner of the frame",
          kDefaults.overlay, flags));
  /**
   * GstCudaHistogram:overlay-position:
   *
   * The corner the overlay is drawn in.
   */
  p.add (&HistogramSettings::position,
      g_param_spec_enum ("overlay-position", "Overlay position", "Corner of the frame the overlay is drawn in",
          GST_TYPE_CUDA_HISTOGRAM_POSITION, static_cast<gint> (kDefaults.position), flags));
  /**
   * GstCudaHistogram:overlay-size:
   *
   * Width of the overlay in percent of the frame's width; it is half as high as wide.
   */
  p.add (&HistogramSettings::overlay_size,
      g_param_spec_uint ("overlay-size", "Overlay size",
          "Width of the overlay in percent of the frame width (its height is half its width)", 1, 100,
          kDefaults.overlay_size, flags));
#if HAVE_GST_TENSOR_META
  /**
   * GstCudaHistogram:tensor-meta:
   *
   * Attach each frame's counts as a tensor "cudahistogram-counts" of UINT64, dimensions
   * [bins], in the buffer's GstTensorMeta, for tensor-aware elements and applications. Only where
   * the plugin was built with GStreamer 1.26 or later.
   */
  p.add (&HistogramSettings::tensor_meta,
      g_param_spec_boolean ("tensor-meta", "Tensor meta",
          "Attach the counts as a GstTensorMeta tensor \"cudahistogram-counts\" (UINT64, dimensions [bins])",
          kDefaults.tensor_meta, flags));
#endif
}
