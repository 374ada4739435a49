/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/json.h"

namespace cuvrun {

namespace {

void add_value (JsonBuilder *b, const GValue *v)
{
  const GType t = G_VALUE_TYPE (v);
  if (t == G_TYPE_INT)
    json_builder_add_int_value (b, g_value_get_int (v));
  else if (t == G_TYPE_UINT)
    json_builder_add_int_value (b, g_value_get_uint (v));
  else if (t == G_TYPE_INT64)
    json_builder_add_int_value (b, g_value_get_int64 (v));
  else if (t == G_TYPE_UINT64)
    json_builder_add_int_value (b, static_cast<gint64> (g_value_get_uint64 (v)));
  else if (t == G_TYPE_DOUBLE)
    json_builder_add_double_value (b, g_value_get_double (v));
  else if (t == G_TYPE_FLOAT)
    json_builder_add_double_value (b, g_value_get_float (v));
  else if (t == G_TYPE_BOOLEAN)
    json_builder_add_boolean_value (b, g_value_get_boolean (v));
  else if (t == G_TYPE_STRING)
    json_builder_add_string_value (b, g_value_get_string (v) ? g_value_get_string (v) : "");
  else if (GST_VALUE_HOLDS_ARRAY (v) || GST_VALUE_HOLDS_LIST (v)) {
    const bool array = GST_VALUE_HOLDS_ARRAY (v);
    const guint n = array ? gst_value_array_get_size (v) : gst_value_list_get_size (v);
    json_builder_begin_array (b);
    for (guint i = 0; i < n; i++)
      add_value (b, array ? gst_value_array_get_value (v, i) : gst_value_list_get_value (v, i));
    json_builder_end_array (b);
  } else if (t == GST_TYPE_STRUCTURE) {
    const GstStructure *s = gst_value_get_structure (v);
    json_builder_begin_object (b);
    const int n = gst_structure_n_fields (s);
    for (int i = 0; i < n; i++) {
      const char *name = gst_structure_nth_field_name (s, i);
      json_builder_set_member_name (b, name);
      add_value (b, gst_structure_get_value (s, name));
    }
    json_builder_end_object (b);
  } else {
    gchar *text = gst_value_serialize (v);
    json_builder_add_string_value (b, text ? text : "");
    g_free (text);
  }
}

}  // namespace

Json::Json () : b_ (json_builder_new ())
{
  json_builder_begin_object (b_);
}

Json::~Json ()
{
  g_object_unref (b_);
}

void Json::add (const char *key, const std::string &v)
{
  json_builder_set_member_name (b_, key);
  json_builder_add_string_value (b_, v.c_str ());
}

void Json::add (const char *key, gint64 v)
{
  json_builder_set_member_name (b_, key);
  json_builder_add_int_value (b_, v);
}

void Json::add_structure (const char *key, const GstStructure *s)
{
  json_builder_set_member_name (b_, key);
  GValue v = G_VALUE_INIT;
  g_value_init (&v, GST_TYPE_STRUCTURE);
  gst_value_set_structure (&v, s);
  add_value (b_, &v);
  g_value_unset (&v);
}

std::string Json::text ()
{
  json_builder_end_object (b_);
  JsonNode *root = json_builder_get_root (b_);
  gchar *t = json_to_string (root, FALSE);
  std::string out (t);
  g_free (t);
  json_node_unref (root);
  return out;
}

}  // namespace cuvrun
