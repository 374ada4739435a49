/* gst-cudavision: what the analysers' meta headers share, in C. Header only; installed as
 * <gst/cudavision/gstcudavisionmeta.h>, beside the headers that include it.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each analyser puts a GstCustomMeta, named in its own header, on every buffer it passes. */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* The structure of the GstCustomMeta named @name, owned by @buffer; NULL when the buffer carries
 * none. Where two analysers of one type ran on the frame, the first of them (upstream's). */
static inline const GstStructure *
gst_cuda_vision_meta_get_structure (GstBuffer *buffer, const gchar *name)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta (buffer, name);
  return meta ? gst_custom_meta_get_structure (meta) : NULL;
}

/* The structure of the GstCustomMeta named @name that the element named @element (its `element`
 * field) put on @buffer; NULL when there is none. */
static inline const GstStructure *
gst_cuda_vision_meta_get_structure_of (GstBuffer *buffer, const gchar *name, const gchar *element)
{
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta (buffer, &state)) != NULL) {
    const GstStructure *s;
    if (!gst_meta_info_is_custom (meta->info) || !gst_custom_meta_has_name ((GstCustomMeta *) meta, name))
      continue;
    s = gst_custom_meta_get_structure ((GstCustomMeta *) meta);
    if (s != NULL && g_strcmp0 (gst_structure_get_string (s, "element"), element) == 0)
      return s;
  }
  return NULL;
}

G_END_DECLS
