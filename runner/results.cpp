/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/results.h"

namespace cuvrun {

bool is_analyser (GstObject *element)
{
  const GType analyser = g_type_from_name (kAnalyserTypeName);
  return element && analyser && g_type_is_a (G_OBJECT_TYPE (element), analyser);
}

bool is_result (GstMessage *m)
{
  return GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT && gst_message_get_structure (m) && is_analyser (GST_MESSAGE_SRC (m));
}

}  // namespace cuvrun
