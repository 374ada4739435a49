/* gst-cudavision: reading cudaheatmap's results from a buffer, in C. Header only; installed as
 * <gst/cudavision/gstcudaheatmapmeta.h>.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * cudaheatmap puts a GstCustomMeta named "CudaHeatmapMeta" on every buffer. Its GstStructure
 * (also readable from Python: Gst.Buffer.get_custom_meta ("CudaHeatmapMeta").get_structure ())
 * holds:
 *   pixels           guint64   width x height
 *   mean-difference  gdouble   mean of d = |dR| + |dG| + |dB| (|dY| + |dU| + |dV| for NV12, I420), 0..765
 *   max-difference   guint     the largest d of the frame, 0..765
 *   first-frame      gboolean  no previous frame: every difference is 0 */
#pragma once

#include <gst/gst.h>

/* beside this header in the tree and once installed */
#include "gstcudavisionmeta.h"

G_BEGIN_DECLS

#define GST_CUDA_HEATMAP_META_NAME "CudaHeatmapMeta"

/* The meta's structure, owned by @buffer; NULL when the buffer carries none. */
static inline const GstStructure *
gst_cuda_heatmap_meta_get_structure (GstBuffer *buffer)
{
  return gst_cuda_vision_meta_get_structure (buffer, GST_CUDA_HEATMAP_META_NAME);
}

/* The frame's mean and largest difference (0..765); FALSE without a meta. */
static inline gboolean
gst_cuda_heatmap_meta_get_difference (GstBuffer *buffer, gdouble *mean, guint *max)
{
  const GstStructure *s = gst_cuda_heatmap_meta_get_structure (buffer);
  return s && gst_structure_get_double (s, "mean-difference", mean) && gst_structure_get_uint (s, "max-difference", max);
}

G_END_DECLS
