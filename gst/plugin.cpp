/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * plugin-cudavision:
 *
 * GPU video analysis filters that share GStreamer's CUDA context and pass CUDA memory between
 * each other.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "common/base/cuvcuda.h"
#include "gst/gstcudaenhance.h"
#include "gst/gstcudaheatmap.h"
#include "gst/gstcudahistogram.h"
#include "gst/gstcudamotionest.h"
#include "gst/gstcudanoisemap.h"
#include "gst/gstcudasobel.h"

static gboolean
plugin_init (GstPlugin *plugin)
{
  GST_DEBUG_CATEGORY_INIT (gst_cuda_vision_debug, "cudavision", 0, "cudavision base class and CUDA plumbing");
  gboolean ok = FALSE;
  ok |= GST_ELEMENT_REGISTER (cudasobel, plugin);
  ok |= GST_ELEMENT_REGISTER (cudaenhance, plugin);
  ok |= GST_ELEMENT_REGISTER (cudahistogram, plugin);
  ok |= GST_ELEMENT_REGISTER (cudaheatmap, plugin);
  ok |= GST_ELEMENT_REGISTER (cudanoisemap, plugin);
  ok |= GST_ELEMENT_REGISTER (cudamotionest, plugin);
  return ok;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudavision,
    "GPU video analysis filters on GStreamer's CUDA context", plugin_init, VERSION, GST_LICENSE,
    GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
