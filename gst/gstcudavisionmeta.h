/* gst-cudavision: what the analysers' meta headers share, in C. Header only; installed as
 * <gst/cudavision/gstcudavisionmeta.h>, beside the headers that include it.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each analyser puts a GstCustomMeta, named in its own header, on every buffer it passes. */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* The structure of the GstCustomMeta named @name, owned by @buffer; NULL when the buffer carries
 * none. */
static inline const GstStructure *
gst_cuda_vision_meta_get_structure (GstBuffer *buffer, const gchar *name)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta (buffer, name);
  return meta ? gst_custom_meta_get_structure (meta) : NULL;
}

G_END_DECLS
