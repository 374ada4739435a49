/* gst-cudavision: reading cudamotionest's motion vectors from a buffer, in C. Header only;
 * installed as <gst/cudavision/gstcudamotionmeta.h>.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * cudamotionest puts a GstCustomMeta named "CudaMotionMeta" on every buffer. Its GstStructure
 * (also readable from Python: Gst.Buffer.get_custom_meta ("CudaMotionMeta").get_structure ())
 * holds:
 *   block-size     gchararray "4x4", "8x8", "16x16" or "variable"
 *   search-range   guint      R: vectors lie in [-R, R-1]
 *   columns, rows  guint      the grid, in units (0 x 0 for a frame smaller than one block)
 *   unit           guint      pixels per side of a unit: 4 for variable blocks, else the block size
 *   vectors        GBytes     columns * rows records of 8 bytes, row by row (GstCudaMotionVector)
 *   first-frame    gboolean   no previous frame: every vector is (0, 0) at cost 0
 * The grid covers whole blocks from the top-left corner; pixels right of columns * unit and below
 * rows * unit have no vector. A vector (dx, dy) says that the unit's content was at
 * (x + dx, y + dy) in the previous frame: the content moved by (-dx, -dy). */
#pragma once

#include <gst/gst.h>

/* beside this header in the tree and once installed */
#include "gstcudavisionmeta.h"

G_BEGIN_DECLS

#define GST_CUDA_MOTION_META_NAME "CudaMotionMeta"

/* One unit of the grid; little-endian, 8 bytes, no padding. */
typedef struct {
  gint8 dx;
  gint8 dy;
  guint8 width;   /* the partition block that holds the unit: 4, 8 or 16 pixels */
  guint8 height;
  guint32 cost;   /* that block's SAD at (dx, dy) */
} GstCudaMotionVector;

G_STATIC_ASSERT (sizeof (GstCudaMotionVector) == 8);

/* The meta's structure, owned by @buffer; NULL when the buffer carries none. */
static inline const GstStructure *
gst_cuda_motion_meta_get_structure (GstBuffer *buffer)
{
  return gst_cuda_vision_meta_get_structure (buffer, GST_CUDA_MOTION_META_NAME);
}

/* The vectors, row by row, valid while @buffer and its meta live; @columns, @rows and @unit are
 * set. NULL without a meta or for an empty grid. */
static inline const GstCudaMotionVector *
gst_cuda_motion_meta_get_vectors (GstBuffer *buffer, guint *columns, guint *rows, guint *unit)
{
  const GstStructure *s = gst_cuda_motion_meta_get_structure (buffer);
  GBytes *bytes = NULL;
  *columns = *rows = *unit = 0;
  if (!s || !gst_structure_get (s, "columns", G_TYPE_UINT, columns, "rows", G_TYPE_UINT, rows, "unit", G_TYPE_UINT,
          unit, NULL))
    return NULL;
  const GValue *v = gst_structure_get_value (s, "vectors");
  if (!v || !G_VALUE_HOLDS (v, G_TYPE_BYTES) || !(bytes = (GBytes *) g_value_get_boxed (v)))
    return NULL;
  gsize size = 0;
  const void *data = g_bytes_get_data (bytes, &size);
  if (size < (gsize) *columns * *rows * sizeof (GstCudaMotionVector) || *columns * *rows == 0)
    return NULL;
  return (const GstCudaMotionVector *) data;
}

G_END_DECLS
