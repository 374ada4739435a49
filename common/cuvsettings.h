/* gst-cudavision: every class's properties in one table (cuv::Properties): each property one
 * declaration in class_init, its pspec with the field of the class's settings struct that holds
 * its value; set and read by the field's type under the object lock, as upstream's elements
 * guard their properties, and copied once a frame under it (cuv::snapshot): docs/design.md,
 * "Properties". Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

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

/* A class's properties (class_init): the class's set_property and get_property become the
 * table's, which find each property's field through its pspec. */
class Properties {
 public:
  /* @settings gives an instance's settings struct; @changed, where given, runs after a value was
   * set, outside the lock (cudaenhance's passthrough). */
  Properties (GObjectClass *klass, void *(*settings) (GObject *object), void (*changed) (GObject *object) = nullptr)
      : klass_ (klass), binding_ (new ClassBinding{settings, changed})
  {
    klass->set_property = set_property;
    klass->get_property = get_property;
  }
  /* Installs @pspec with the next id; its value is the settings field at @offset (CUV_FIELD). */
  void add (size_t offset, GParamSpec *pspec)
  {
    g_param_spec_set_qdata (pspec, quark (), new Binding{binding_, SettingsField{offset}});
    g_object_class_install_property (klass_, next_id_++, pspec);
  }

 private:
  struct ClassBinding {
    void *(*settings) (GObject *object);
    void (*changed) (GObject *object);
  };
  /* kept with the pspec for the class's life (a static type's: the process's) */
  struct Binding {
    const ClassBinding *cls;
    SettingsField field;
  };
  static GQuark quark ()
  {
    static const GQuark q = g_quark_from_static_string ("cuv-property-field");
    return q;
  }
  static void set_property (GObject *object, guint id, const GValue *value, GParamSpec *pspec)
  {
    const auto *b = static_cast<const Binding *> (g_param_spec_get_qdata (pspec, quark ()));
    GST_OBJECT_LOCK (object);
    const bool ok = b && set_settings_field (b->cls->settings (object), b->field, value);
    GST_OBJECT_UNLOCK (object);
    if (!ok)
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    else if (b->cls->changed)
      b->cls->changed (object);
  }
  static void get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
  {
    const auto *b = static_cast<const Binding *> (g_param_spec_get_qdata (pspec, quark ()));
    GST_OBJECT_LOCK (object);
    const bool ok = b && get_settings_field (b->cls->settings (object), b->field, value);
    GST_OBJECT_UNLOCK (object);
    if (!ok)
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
  }

  GObjectClass *klass_;
  const ClassBinding *binding_;
  guint next_id_ = 1;
};

/* @settings of @object copied under the object lock: what one frame runs with. */
template <typename Settings>
Settings
snapshot (gpointer object, const Settings &settings)
{
  GST_OBJECT_LOCK (object);
  Settings copy = settings;
  GST_OBJECT_UNLOCK (object);
  return copy;
}

/* The flags of a property that may change at any time (each frame takes the value it starts with). */
constexpr GParamFlags kMutablePlaying =
    static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

}  // namespace cuv

/* A field of a settings struct, for cuv::Properties::add. */
#define CUV_FIELD(Settings, field) offsetof (Settings, field)
