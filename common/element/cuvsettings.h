/* gst-cudavision: every class's properties in one table (cuv::Properties): each property one
 * declaration in class_init, its pspec with the field of the class's settings struct that holds
 * its value; set and read by the field's type under the object lock, as upstream's elements
 * guard their properties, and copied once a frame under it (cuv::snapshot): docs/design.md,
 * "Properties". Not installed.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include <cstddef>
#include <type_traits>

namespace cuv {

namespace detail {

/* How a settings field of C++ type T holds a property's value: the GType its pspec must have (its
 * fundamental type) and the GValue accessors. A field of a type not listed here does not compile. */
template <typename T, typename = void> struct FieldValue;

#define CUV_FIELD_VALUE(T, gtype, getter, setter)                                  \
  template <> struct FieldValue<T> {                                               \
    static constexpr GType type () { return gtype; }                               \
    static void set (T &field, const GValue *value) { field = getter (value); }    \
    static void get (const T &field, GValue *value) { setter (value, field); }     \
  }
CUV_FIELD_VALUE (bool, G_TYPE_BOOLEAN, g_value_get_boolean, g_value_set_boolean);
CUV_FIELD_VALUE (guint, G_TYPE_UINT, g_value_get_uint, g_value_set_uint);
CUV_FIELD_VALUE (gint, G_TYPE_INT, g_value_get_int, g_value_set_int);
CUV_FIELD_VALUE (guint64, G_TYPE_UINT64, g_value_get_uint64, g_value_set_uint64);
CUV_FIELD_VALUE (gdouble, G_TYPE_DOUBLE, g_value_get_double, g_value_set_double);
#undef CUV_FIELD_VALUE

/* an enum property's field is an enum of the size of a gint, as GValue holds it */
template <typename T> struct FieldValue<T, std::enable_if_t<std::is_enum_v<T>>> {
  static_assert (sizeof (T) == sizeof (gint), "an enum property's field is int-sized");
  static constexpr GType type () { return G_TYPE_ENUM; }
  static void set (T &field, const GValue *value) { field = static_cast<T> (g_value_get_enum (value)); }
  static void get (const T &field, GValue *value) { g_value_set_enum (value, static_cast<gint> (field)); }
};

}  // namespace detail

/* A class's properties (class_init), over the settings struct S that an instance's @settings
 * gives: the class's set_property and get_property become the table's, which find each
 * property's field through its pspec. A field is a member pointer of S, so a field of another
 * struct does not compile, nor one of a type no property holds (detail::FieldValue); a pspec
 * whose value type is not the field's stops the class's registration (g_error) at its first use. */
template <typename S> class Properties {
 public:
  /* @changed, where given, runs after a value was set, outside the lock (cudaenhance's passthrough). */
  Properties (GObjectClass *klass, S *(*settings) (GObject *object), void (*changed) (GObject *object) = nullptr)
      : klass_ (klass), class_ (new ClassBinding{settings, changed})
  {
    klass->set_property = set_property;
    klass->get_property = get_property;
  }
  /* Installs @pspec with the next id; its value is @field of S. */
  template <typename T> void add (T S::*field, GParamSpec *pspec) { install (new Field<T> (class_, field), pspec); }
  /* ... its value the element @index of the array @field of S */
  template <typename T, size_t N> void add (T (S::*field)[N], size_t index, GParamSpec *pspec)
  {
    g_assert (index < N);
    install (new Element<T, N> (class_, field, index), pspec);
  }

 private:
  struct ClassBinding {
    S *(*settings) (GObject *object);
    void (*changed) (GObject *object);
  };
  /* kept with the pspec for the class's life (a static type's: the process's) */
  struct Binding {
    const ClassBinding *cls;
    virtual ~Binding () = default;
    virtual void set (S &settings, const GValue *value) const = 0;
    virtual void get (const S &settings, GValue *value) const = 0;
    virtual GType type () const = 0;
  };
  template <typename T> struct Field : Binding {
    T S::*member;
    Field (const ClassBinding *c, T S::*m) : member (m) { this->cls = c; }
    void set (S &s, const GValue *v) const override { detail::FieldValue<T>::set (s.*member, v); }
    void get (const S &s, GValue *v) const override { detail::FieldValue<T>::get (s.*member, v); }
    GType type () const override { return detail::FieldValue<T>::type (); }
  };
  template <typename T, size_t N> struct Element : Binding {
    T (S::*member)[N];
    size_t index;
    Element (const ClassBinding *c, T (S::*m)[N], size_t i) : member (m), index (i) { this->cls = c; }
    void set (S &s, const GValue *v) const override { detail::FieldValue<T>::set ((s.*member)[index], v); }
    void get (const S &s, GValue *v) const override { detail::FieldValue<T>::get ((s.*member)[index], v); }
    GType type () const override { return detail::FieldValue<T>::type (); }
  };

  void install (const Binding *b, GParamSpec *pspec)
  {
    if (G_TYPE_FUNDAMENTAL (G_PARAM_SPEC_VALUE_TYPE (pspec)) != b->type ())
      g_error ("property '%s': its settings field holds a %s, not a %s", pspec->name, g_type_name (b->type ()),
          g_type_name (G_PARAM_SPEC_VALUE_TYPE (pspec)));
    g_param_spec_set_qdata (pspec, quark (), const_cast<Binding *> (b));
    g_object_class_install_property (klass_, next_id_++, pspec);
  }
  static GQuark quark ()
  {
    static const GQuark q = g_quark_from_static_string ("cuv-property-field");
    return q;
  }
  static const Binding *binding (GParamSpec *pspec)
  {
    return static_cast<const Binding *> (g_param_spec_get_qdata (pspec, quark ()));
  }
  static void set_property (GObject *object, guint id, const GValue *value, GParamSpec *pspec)
  {
    const Binding *b = binding (pspec);
    if (!b) {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
      return;
    }
    GST_OBJECT_LOCK (object);
    b->set (*b->cls->settings (object), value);
    GST_OBJECT_UNLOCK (object);
    if (b->cls->changed)
      b->cls->changed (object);
  }
  static void get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
  {
    const Binding *b = binding (pspec);
    if (!b) {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
      return;
    }
    GST_OBJECT_LOCK (object);
    b->get (*b->cls->settings (object), value);
    GST_OBJECT_UNLOCK (object);
  }

  GObjectClass *klass_;
  const ClassBinding *class_;
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
