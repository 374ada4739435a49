/* gst-cudavision: reading cudahistogram's results from a buffer, in C. Header only; installed as
 * <gst/cudavision/gstcudahistogrammeta.h>.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * cudahistogram puts a GstCustomMeta named "CudaHistogramMeta" on every buffer. Its GstStructure
 * (also readable from Python: Gst.Buffer.get_custom_meta ("CudaHistogramMeta").get_structure ())
 * holds:
 *   bins            guint     number of bins (1..256)
 *   histogram       GBytes: bins guint64 counts, one per bin, in the machine's byte order
 *                   (the element message's `histogram` is a GstValueArray of guint64 instead)
 *   pixels          guint64   pixels counted (the ROI's area; 0 when it is empty)
 *   luma-mean       gdouble   0..255
 *   luma-variance   gdouble   population variance of luma
 *   r-mean, g-mean, b-mean   gdouble, RGB formats only
 *   roi-x, roi-y, roi-width, roi-height   guint, the region after clipping to the frame */
#pragma once

#include <gst/gst.h>

/* beside this header in the tree and once installed */
#include "gstcudavisionmeta.h"

G_BEGIN_DECLS

#define GST_CUDA_HISTOGRAM_META_NAME "CudaHistogramMeta"

/* The meta's structure, owned by @buffer; NULL when the buffer carries none. */
static inline const GstStructure *
gst_cuda_histogram_meta_get_structure (GstBuffer *buffer)
{
  return gst_cuda_vision_meta_get_structure (buffer, GST_CUDA_HISTOGRAM_META_NAME);
}

/* Copies up to @n bin counts into @counts; returns the number of bins (0 without a meta). */
static inline guint
gst_cuda_histogram_meta_get_counts (GstBuffer *buffer, guint64 *counts, guint n)
{
  const GstStructure *s = gst_cuda_histogram_meta_get_structure (buffer);
  const GValue *v = s ? gst_structure_get_value (s, "histogram") : NULL;
  if (!v || !G_VALUE_HOLDS (v, G_TYPE_BYTES) || !g_value_get_boxed (v))
    return 0;
  gsize size = 0;
  const guint64 *data = (const guint64 *) g_bytes_get_data ((GBytes *) g_value_get_boxed (v), &size);
  guint bins = (guint) (size / sizeof (guint64));
  for (guint i = 0; i < bins && i < n; i++)
    counts[i] = data[i];
  return bins;
}

/* The luma mean and variance; FALSE without a meta. */
static inline gboolean
gst_cuda_histogram_meta_get_luma (GstBuffer *buffer, gdouble *mean, gdouble *variance)
{
  const GstStructure *s = gst_cuda_histogram_meta_get_structure (buffer);
  return s && gst_structure_get_double (s, "luma-mean", mean) &&
      gst_structure_get_double (s, "luma-variance", variance);
}

G_END_DECLS
