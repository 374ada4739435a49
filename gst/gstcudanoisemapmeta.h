/* gst-cudavision: reading cudanoisemap's results from a buffer, in C. Header only; installed as
 * <gst/cudavision/gstcudanoisemapmeta.h>.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * cudanoisemap puts a GstCustomMeta named "CudaNoisemapMeta" on every buffer. Its GstStructure
 * (also readable from Python: Gst.Buffer.get_custom_meta ("CudaNoisemapMeta").get_structure ())
 * holds:
 *   pixels                  guint64   width x height
 *   changed-pixels          guint64   pixels of which R, G or B (Y, U or V) changed by more than the threshold
 *   changed-ratio           gdouble   changed-pixels / pixels, 0..1
 *   changed-bytes-estimate  guint64   changed-pixels x bits per pixel of the format (32 RGB, 12 YUV) / 8
 *   first-frame             gboolean  no previous frame: nothing counts as changed */
#pragma once

#include <gst/gst.h>

/* beside this header in the tree and once installed */
#include "gstcudavisionmeta.h"

G_BEGIN_DECLS

#define GST_CUDA_NOISEMAP_META_NAME "CudaNoisemapMeta"

/* The meta's structure, owned by @buffer; NULL when the buffer carries none. */
static inline const GstStructure *
gst_cuda_noisemap_meta_get_structure (GstBuffer *buffer)
{
  return gst_cuda_vision_meta_get_structure (buffer, GST_CUDA_NOISEMAP_META_NAME);
}

/* The changed pixels and their share of the frame; FALSE without a meta. */
static inline gboolean
gst_cuda_noisemap_meta_get_changed (GstBuffer *buffer, guint64 *changed, gdouble *ratio)
{
  const GstStructure *s = gst_cuda_noisemap_meta_get_structure (buffer);
  return s && gst_structure_get_uint64 (s, "changed-pixels", changed) &&
      gst_structure_get_double (s, "changed-ratio", ratio);
}

G_END_DECLS
