/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/config.h"

#include <cstring>

namespace cuvrun {

namespace {

/* The line (1-based) of @key in [@group] in @text, of [@group] when @key is empty, or 0. */
int line_of (const std::string &text, const std::string &group, const std::string &key)
{
  int line = 0, group_line = 0;
  bool in_group = false;
  size_t pos = 0;
  while (pos <= text.size ()) {
    size_t end = text.find ('\n', pos);
    if (end == std::string::npos)
      end = text.size ();
    std::string l = text.substr (pos, end - pos);
    line++;
    const size_t first = l.find_first_not_of (" \t");
    if (first != std::string::npos && l[first] == '[') {
      const size_t close = l.find (']', first);
      in_group = close != std::string::npos && l.substr (first + 1, close - first - 1) == group;
      if (in_group)
        group_line = line;
    } else if (in_group && !key.empty () && first != std::string::npos) {
      const size_t eq = l.find ('=', first);
      if (eq != std::string::npos) {
        std::string k = l.substr (first, eq - first);
        k.erase (k.find_last_not_of (" \t") + 1);
        if (k == key)
          return line;
      }
    }
    pos = end + 1;
  }
  /* a key not written in the group (a missing one): the group's line */
  return group_line;
}

struct Reader {
  GKeyFile *kf;
  const char *path;
  const std::string &text;
  std::string *error;

  bool fail (const std::string &group, const std::string &key, const std::string &what)
  {
    *error = std::string (path) + ":" + std::to_string (line_of (text, group, key)) + ": [" + group + "]" +
        (key.empty () ? "" : " " + key) + ": " + what;
    return false;
  }

  bool string (const char *group, const char *key, std::string *out, bool required)
  {
    if (!g_key_file_has_key (kf, group, key, nullptr))
      return required ? fail (group, key, "missing") : true;
    gchar *v = g_key_file_get_string (kf, group, key, nullptr);
    *out = v ? v : "";
    g_free (v);
    if (out->empty ())
      return fail (group, key, "empty");
    return true;
  }

  bool integer (const char *group, const char *key, int lo, int hi, int *out)
  {
    if (!g_key_file_has_key (kf, group, key, nullptr))
      return true;
    gchar *v = g_key_file_get_value (kf, group, key, nullptr);
    gchar *end = nullptr;
    const gint64 n = g_ascii_strtoll (v, &end, 10);
    const bool ok = v && *v && end && *end == '\0' && n >= lo && n <= hi;
    std::string text_value = v ? v : "";
    g_free (v);
    if (!ok)
      return fail (group, key, "'" + text_value + "' is not a whole number from " + std::to_string (lo) + " to " +
          std::to_string (hi));
    *out = static_cast<int> (n);
    return true;
  }
};

const char *const kRunnerKeys[] = {"broker-host", "broker-port", "topic-prefix", "client-id", "metrics-port",
    "queue-limit", "restart-min-ms", "restart-max-ms", "failing-after", "stall-ms", nullptr};
const char *const kCameraKeys[] = {"uri", "pipeline", "cuda-device-id", nullptr};

bool known (const char *const *keys, const char *key)
{
  for (; *keys; keys++)
    if (std::strcmp (*keys, key) == 0)
      return true;
  return false;
}

}  // namespace

bool load_config (const char *path, RunnerConfig *config, std::string *error)
{
  gchar *contents = nullptr;
  gsize length = 0;
  GError *err = nullptr;
  if (!g_file_get_contents (path, &contents, &length, &err)) {
    *error = std::string (path) + ": " + err->message;
    g_error_free (err);
    return false;
  }
  const std::string text (contents, length);
  g_free (contents);
  GKeyFile *kf = g_key_file_new ();
  if (!g_key_file_load_from_data (kf, text.data (), text.size (), G_KEY_FILE_NONE, &err)) {
    /* GKeyFile's message names the line ("Key file contains line “x” which is not ...") */
    *error = std::string (path) + ": " + err->message;
    g_error_free (err);
    g_key_file_free (kf);
    return false;
  }
  Reader r{kf, path, text, error};
  bool ok = true;
  gsize n_groups = 0;
  gchar **groups = g_key_file_get_groups (kf, &n_groups);
  for (gsize i = 0; ok && i < n_groups; i++) {
    const char *g = groups[i];
    const bool runner = std::strcmp (g, "runner") == 0;
    const bool camera = g_str_has_prefix (g, "camera ");
    if (!runner && !camera) {
      ok = r.fail (g, "", "unknown group: [runner] and [camera NAME] are known");
      break;
    }
    gchar **keys = g_key_file_get_keys (kf, g, nullptr, nullptr);
    for (gchar **k = keys; ok && k && *k; k++)
      if (!known (runner ? kRunnerKeys : kCameraKeys, *k))
        ok = r.fail (g, *k, "unknown key");
    g_strfreev (keys);
    if (!ok)
      break;
    if (runner) {
      RunnerConfig &c = *config;
      ok = r.string (g, "broker-host", &c.broker_host, false) && r.integer (g, "broker-port", 1, 65535, &c.broker_port) &&
          r.string (g, "topic-prefix", &c.topic_prefix, false) && r.string (g, "client-id", &c.client_id, false) &&
          r.integer (g, "metrics-port", 0, 65535, &c.metrics_port) &&
          r.integer (g, "queue-limit", 1, 10000000, &c.queue_limit) &&
          r.integer (g, "restart-min-ms", 10, 3600000, &c.restart_min_ms) &&
          r.integer (g, "restart-max-ms", 10, 3600000, &c.restart_max_ms) &&
          r.integer (g, "failing-after", 1, 1000, &c.failing_after) && r.integer (g, "stall-ms", 100, 3600000, &c.stall_ms);
      continue;
    }
    CameraConfig cam;
    cam.name = g + std::strlen ("camera ");
    if (cam.name.empty () || cam.name.find_first_of ("/#+ ") != std::string::npos) {
      ok = r.fail (g, "", "a camera's name is one word without '/', '#' or '+' (it is a topic level)");
      break;
    }
    for (const CameraConfig &other : config->cameras)
      if (other.name == cam.name)
        ok = r.fail (g, "", "a second camera of that name");
    ok = ok && r.string (g, "uri", &cam.uri, true) && r.string (g, "pipeline", &cam.pipeline, true) &&
        r.integer (g, "cuda-device-id", -1, 1024, &cam.cuda_device_id);
    if (ok && !g_uri_is_valid (cam.uri.c_str (), G_URI_FLAGS_NONE, nullptr))
      ok = r.fail (g, "uri", "'" + cam.uri + "' is not a URI (scheme://...)");
    if (ok)
      config->cameras.push_back (cam);
  }
  g_strfreev (groups);
  g_key_file_free (kf);
  if (ok && config->restart_max_ms < config->restart_min_ms)
    ok = r.fail ("runner", "restart-max-ms", "smaller than restart-min-ms");
  return ok;
}

}  // namespace cuvrun
