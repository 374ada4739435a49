/* gst-cudavision: the analysers' results as GStreamer's own metas, which elements and applications
 * read without knowing ours (docs/results.md, "GStreamer's metas"): regions of interest, object
 * detections in the analytics relation meta (GStreamer 1.24+), tensors (1.26+).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <initializer_list>

#include <gst/gst.h>

#include "config.h"

#if HAVE_GST_TENSOR_META
#include <gst/analytics/analytics.h>
#endif

namespace cuv {

/* A region an analyser found, in pixels, and how sure it is of it (0..1). */
struct RegionBox {
  guint x, y, width, height;
  double confidence;
};

/* Attaches @box to @buf (writable) as a GstVideoRegionOfInterestMeta of @type with a "detection"
 * parameter holding `confidence` and, where the plugin was built with GStreamer's analytics
 * library, as an object detection of @type in the buffer's GstAnalyticsRelationMeta, the ROI's id
 * being the detection's. */
void attach_region (GstBuffer *buf, GQuark type, const RegionBox &box);

#if HAVE_GST_TENSOR_META
/* The element types of attach_tensor (), as GstTensorDataType names them. */
enum class TensorType { Int8, UInt64 };

/* Adds a tensor @id of @type, row-major with @dims, over @data (a reference is taken), to @buf's
 * GstTensorMeta (the tensors already there stay). Where the plugin is built with GStreamer 1.26+
 * only (elements install their tensor-meta property there only). */
void attach_tensor (GstBuffer *buf, GQuark id, TensorType type, std::initializer_list<gsize> dims, GBytes *data);
/* Adds copies of @from's tensors to @buf's (writable) tensor meta, after those there. */
void merge_tensors (GstBuffer *buf, const GstTensorMeta *from);
#endif

}  // namespace cuv
