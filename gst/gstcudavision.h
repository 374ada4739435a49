/* gst-cudavision: the results of every analyser, for applications. Installed as
 * <gst/cudavision/gstcudavision.h>; find it with `pkg-config --cflags gst-cudavision-1.0`.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each analyser puts a GstCustomMeta on every buffer it passes (see each header for its fields)
 * and, with post-messages on, posts an element message named after itself on the bus. The
 * headers hold only names, the motion vector record and inline accessors: no library to link. */
#pragma once

#include <gst/cudavision/gstcudaheatmapmeta.h>
#include <gst/cudavision/gstcudahistogrammeta.h>
#include <gst/cudavision/gstcudamotionmeta.h>
#include <gst/cudavision/gstcudanoisemapmeta.h>
