/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/results/cuvanalytics.h"

#include <gst/video/video.h>

#include <vector>
#if HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

namespace cuv {

void
attach_region (GstBuffer *buf, GQuark type, const RegionBox &box)
{
  GstVideoRegionOfInterestMeta *roi =
      gst_buffer_add_video_region_of_interest_meta_id (buf, type, box.x, box.y, box.width, box.height);
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE, box.confidence, nullptr));
#if HAVE_GST_ANALYTICS
  GstAnalyticsRelationMeta *relations = gst_buffer_get_analytics_relation_meta (buf);
  if (!relations)
    relations = gst_buffer_add_analytics_relation_meta (buf);
  GstAnalyticsODMtd od;
  if (relations && gst_analytics_relation_meta_add_od_mtd (relations, type, box.x, box.y, box.width, box.height,
                       static_cast<gfloat> (box.confidence), &od))
    roi->id = od.id;
#endif
}

#if HAVE_GST_TENSOR_META
/* The meta holds one array of tensors: a new array with the tensors there before, then @added
 * (taken). */
static void
append_tensors (GstBuffer *buf, GstTensor *const *added, gsize count)
{
  GstTensorMeta *meta = gst_buffer_get_tensor_meta (buf);
  if (!meta)
    meta = gst_buffer_add_tensor_meta (buf);
  const gsize n = meta->num_tensors;
  GstTensor **tensors = g_new (GstTensor *, n + count);
  for (gsize i = 0; i < n; i++)
    tensors[i] = gst_tensor_copy (meta->tensors[i]);
  for (gsize i = 0; i < count; i++)
    tensors[n + i] = added[i];
  gst_tensor_meta_set (meta, static_cast<guint> (n + count), tensors);
}

void
attach_tensor (GstBuffer *buf, GQuark id, TensorType type, std::initializer_list<gsize> dims, GBytes *data)
{
  GstTensor *tensor = gst_tensor_new_simple (id, type == TensorType::Int8 ? GST_TENSOR_DATA_TYPE_INT8 :
      GST_TENSOR_DATA_TYPE_UINT64, gst_buffer_new_wrapped_bytes (data), GST_TENSOR_DIM_ORDER_ROW_MAJOR, dims.size (),
      const_cast<gsize *> (dims.begin ()));
  if (tensor)
    append_tensors (buf, &tensor, 1);
}

void
merge_tensors (GstBuffer *buf, const GstTensorMeta *from)
{
  std::vector<GstTensor *> copies;
  for (gsize i = 0; i < from->num_tensors; i++)
    copies.push_back (gst_tensor_copy (from->tensors[i]));
  append_tensors (buf, copies.data (), copies.size ());
}
#endif

}  // namespace cuv
