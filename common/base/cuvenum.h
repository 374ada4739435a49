/* gst-cudavision: the GType of an enum property, registered by its first caller. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib-object.h>

namespace cuv {

/* The GType of the enum @name with @values (static storage, ending in a zeroed entry); @type is
 * the caller's static slot, 0 until the first call registers it. */
inline GType
enum_type (GType *type, const gchar *name, const GEnumValue *values)
{
  if (g_once_init_enter (type)) {
    GType t = g_enum_register_static (name, values);
    g_once_init_leave (type, t);
  }
  return *type;
}

}  // namespace cuv
