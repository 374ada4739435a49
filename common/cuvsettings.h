/* gst-cudavision: properties whose values are fields of an element's settings struct (the struct
 * the transform copies once a frame under the element's lock: docs/design.md, "Properties"), set
 * and read by the field's type instead of a case per property. Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib-object.h>

#include <cstddef>
#include <cstdint>

namespace cuv {

/* A property's field: its offset in the settings struct. The field's C++ type follows the
 * pspec's value type: bool for G_TYPE_BOOLEAN, guint, gint, guint64, gdouble, and an int-sized
 * enum (static_assert it) for an enum type. */
struct SettingsField {
  size_t offset;
};

/* Sets @settings' field for @value; FALSE for a value type this does not know. */
inline bool
set_settings_field (void *settings, SettingsField f, const GValue *value)
{
  void *p = static_cast<uint8_t *> (settings) + f.offset;
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value))) {
    case G_TYPE_BOOLEAN: *static_cast<bool *> (p) = g_value_get_boolean (value); return true;
    case G_TYPE_UINT: *static_cast<guint *> (p) = g_value_get_uint (value); return true;
    case G_TYPE_INT: *static_cast<gint *> (p) = g_value_get_int (value); return true;
    case G_TYPE_UINT64: *static_cast<guint64 *> (p) = g_value_get_uint64 (value); return true;
    case G_TYPE_DOUBLE: *static_cast<gdouble *> (p) = g_value_get_double (value); return true;
    case G_TYPE_ENUM: *static_cast<gint *> (p) = g_value_get_enum (value); return true;
    default: return false;
  }
}

/* Reads @settings' field into @value (initialised to the property's type). */
inline bool
get_settings_field (const void *settings, SettingsField f, GValue *value)
{
  const void *p = static_cast<const uint8_t *> (settings) + f.offset;
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value))) {
    case G_TYPE_BOOLEAN: g_value_set_boolean (value, *static_cast<const bool *> (p)); return true;
    case G_TYPE_UINT: g_value_set_uint (value, *static_cast<const guint *> (p)); return true;
    case G_TYPE_INT: g_value_set_int (value, *static_cast<const gint *> (p)); return true;
    case G_TYPE_UINT64: g_value_set_uint64 (value, *static_cast<const guint64 *> (p)); return true;
    case G_TYPE_DOUBLE: g_value_set_double (value, *static_cast<const gdouble *> (p)); return true;
    case G_TYPE_ENUM: g_value_set_enum (value, *static_cast<const gint *> (p)); return true;
    default: return false;
  }
}

}  // namespace cuv
