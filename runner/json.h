/* cudavision-run: a JSON object built with json-glib, GstStructure fields included.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>
#include <json-glib/json-glib.h>

#include <string>

namespace cuvrun {

class Json {
 public:
  Json ();
  ~Json ();
  Json (const Json &) = delete;
  Json &operator= (const Json &) = delete;

  void add (const char *key, const std::string &v);
  void add (const char *key, const char *v) { add (key, std::string (v)); }
  void add (const char *key, gint64 v);
  /* @s's fields as an object under @key: numbers, booleans and strings as they are, arrays and
   * lists as arrays, anything else in GStreamer's own serialization */
  void add_structure (const char *key, const GstStructure *s);
  std::string text ();

 private:
  JsonBuilder *b_;
};

}  // namespace cuvrun
