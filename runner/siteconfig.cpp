/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/siteconfig.h"

#include <gio/gio.h>
#include <gst/base/gsttypefindhelper.h>
#include <gst/gst.h>

#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include "runner/boundedread.h"
#include "runner/configlines.h"
#include "runner/pipeline.h"
#include "runner/tlsfiles.h"

namespace cuvrun {

namespace {



/* RFC 3986's characters: anything else (a quote, a space, a backslash) is percent-encoded in a URI */
bool uri_character (unsigned char c)
{
  return g_ascii_isalnum (c) || std::strchr ("-._~:/?#[]@!$&'()*+,;=%", c) != nullptr;
}

/* A camera's name is a topic level, a metrics label and a log word: long enough for any site's. */
constexpr size_t kMaxCameraName = 1024;
/* a CA bundle is a few hundred KiB (Debian's whole store: 220 KiB) */
constexpr size_t kMaxTlsFile = 16 * 1024 * 1024;
/* MQTT's strings (a username among them) are at most 65,535 bytes; libmosquitto refuses longer. */
constexpr size_t kMaxUsername = 65535;

/* more folders a camera's password-file may lie in, ':'-separated (the config's own always may) */
constexpr const char *kCameraSecretsEnv = "CUDAVISION_CAMERA_SECRETS";

struct Reader {
  GKeyFile *kf;
  const char *path;
  const ConfigLines &lines;
  std::string *error;
  /* the runner's own secret files (the broker's password, the TLS key): device and inode, and the key */
  std::vector<std::pair<std::pair<dev_t, ino_t>, std::string>> runner_secrets{};
  /* the folders a camera's password-file may lie in, resolved: the config's own, and those of
   * CUDAVISION_CAMERA_SECRETS */
  std::vector<std::string> camera_secret_dirs{};

  /* whether @file, resolved, lies in one of camera_secret_dirs */
  bool camera_secret_allowed (const std::string &file) const
  {
    char *real = realpath (file.c_str (), nullptr);
    const std::string resolved = real ? real : "";
    free (real);
    for (const std::string &d : camera_secret_dirs)
      if (!resolved.empty () && resolved.compare (0, d.size () + 1, d + "/") == 0)
        return true;
    return false;
  }

  /* notes @file as one of the runner's secrets (key @key) */
  void runner_secret (const std::string &file, const std::string &key)
  {
    struct stat st {};
    if (!file.empty () && g_stat (file.c_str (), &st) == 0)
      runner_secrets.push_back ({{st.st_dev, st.st_ino}, key});
  }

  /* the runner's secret that @file is (by its inode, whatever the path or link), or "" */
  std::string runner_secret_of (const std::string &file) const
  {
    struct stat st {};
    if (file.empty () || g_stat (file.c_str (), &st) != 0)
      return "";
    for (const auto &[id, key] : runner_secrets)
      if (id.first == st.st_dev && id.second == st.st_ino)
        return key;
    return "";
  }

  bool fail (const std::string &group, const std::string &key, const std::string &what)
  {
    *error = std::string (path) + ":" + std::to_string (lines.line (group, key)) + ": [" + group + "]" +
        (key.empty () ? "" : " " + key) + ": " + what;
    return false;
  }

  bool has (const char *group, const char *key) { return g_key_file_has_key (kf, group, key, nullptr); }

  bool string (const char *group, const char *key, std::string *out, bool required)
  {
    if (!has (group, key))
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
    if (!has (group, key))
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

  bool boolean (const char *group, const char *key, bool *out)
  {
    if (!has (group, key))
      return true;
    GError *err = nullptr;
    const gboolean v = g_key_file_get_boolean (kf, group, key, &err);
    if (err) {
      g_error_free (err);
      return fail (group, key, "not true or false");
    }
    *out = v;
    return true;
  }

  /* a TLS file the runner must be able to read, at once: its path (libmosquitto reads it again at
   * each connection, so a file that blocks, such as /proc/kmsg, would hold the runner there) */
  bool file (const char *group, const char *key, std::string *out)
  {
    if (!string (group, key, out, false))
      return false;
    if (!out->empty () && !g_file_test (out->c_str (), G_FILE_TEST_EXISTS))
      return fail (group, key, "no file '" + *out + "'");
    if (!out->empty () && !g_file_test (out->c_str (), G_FILE_TEST_IS_REGULAR))
      return fail (group, key, "'" + *out + "' is not a file here");
    if (!out->empty () && g_access (out->c_str (), R_OK) != 0)
      return fail (group, key, "'" + *out + "' cannot be read by this user");
    std::string content, why;
    if (!out->empty () && !read_bounded (*out, kMaxTlsFile, &content, &why))
      return fail (group, key, why + " (a TLS file is a regular file of at most 16 MiB that reads at once)");
    return true;
  }

  /* username and password-file of @group; the password from the file, else from @env */
  bool credentials (const char *group, const char *env, std::string *username, std::string *password)
  {
    std::string file, why;
    if (!string (group, "username", username, false) || !string (group, "password-file", &file, false))
      return false;
    if (username->size () > kMaxUsername)
      return fail (group, "username", "longer than MQTT's 65,535 bytes (" + std::to_string (username->size ()) + ")");
    for (const unsigned char ch : *username)
      if (ch < 0x20 || ch == 0x7f)
        return fail (group, "username", "a control character in it");
    /* a camera's credentials go to whatever host its URI names: only from the folders the site
     * gave for them (the config's own, which its editor fills, and CUDAVISION_CAMERA_SECRETS, which
     * the config cannot change), never one of the runner's own */
    if (env == nullptr && !file.empty () && !camera_secret_allowed (file)) {
      std::string dirs;
      for (const std::string &d : camera_secret_dirs)
        dirs += (dirs.empty () ? "" : ", ") + d;
      return fail (group, "password-file", "'" + file + "' is not in a folder a camera's password file may be in (" + dirs +
          "; more in " + kCameraSecretsEnv + "): a camera's password goes to whatever its URI names");
    }
    if (env == nullptr && !runner_secret_of (file).empty ())
      return fail (group, "password-file", "'" + file + "' is the runner's " + runner_secret_of (file) +
          ": a camera's password goes to whatever its URI names, so it has a file of its own");
    if (!file.empty () && !read_secret (file, password, &why))
      return fail (group, "password-file", why);
    if (env != nullptr)
      runner_secret (file, "[runner] password-file");
    if (file.empty () && env && g_getenv (env) && *g_getenv (env))
      *password = g_getenv (env);
    if (!password->empty () && username->empty ())
      return fail (group, "username", "missing: a password is given (" + (file.empty () ? std::string (env) : "password-file") +
          ") but no username");
    return true;
  }
};

const char *const kRunnerKeys[] = {"broker-host", "broker-port", "topic-prefix", "client-id", "metrics-address",
    "metrics-port", "metrics-connections", "metrics-idle-timeout-s", "queue-limit", "restart-min-ms", "restart-max-ms", "failing-after", "stall-ms", "username",
    "password-file", "mqtt-version", "max-message-bytes", "tls", "tls-ca-file", "tls-cert-file", "tls-key-file", "tls-insecure", nullptr};
const char *const kCameraKeys[] = {"uri", "pipeline", "cuda-device-id", "username", "password-file", "loop", nullptr};

bool known (const char *const *keys, const char *key)
{
  for (; *keys; keys++)
    if (std::strcmp (*keys, key) == 0)
      return true;
  return false;
}

bool read_runner (Reader &r, RunnerConfig &c)
{
  const char *g = "runner";
  BrokerConfig &b = c.broker;
  if (!(r.string (g, "broker-host", &b.host, false) && r.integer (g, "broker-port", 1, 65535, &b.port) &&
          r.string (g, "topic-prefix", &c.topic_prefix, false) && r.string (g, "client-id", &b.client_id, false) &&
          r.string (g, "metrics-address", &c.metrics_address, false) &&
          r.integer (g, "metrics-port", 0, 65535, &c.metrics_port) &&
          r.integer (g, "metrics-connections", 2, 10000, &c.metrics_connections) &&
          r.integer (g, "metrics-idle-timeout-s", 1, 3600, &c.metrics_idle_timeout_s) &&
          r.integer (g, "queue-limit", 1, 10000000, &c.queue_limit) &&
          r.integer (g, "restart-min-ms", 10, 3600000, &c.restart_min_ms) &&
          r.integer (g, "restart-max-ms", 10, 3600000, &c.restart_max_ms) &&
          r.integer (g, "failing-after", 1, 1000, &c.failing_after) && r.integer (g, "stall-ms", 100, 3600000, &c.stall_ms) &&
          r.credentials (g, kBrokerPasswordEnv, &b.username, &b.password) && r.boolean (g, "tls", &b.tls) &&
          r.file (g, "tls-ca-file", &b.tls_ca_file) && r.file (g, "tls-cert-file", &b.tls_cert_file) &&
          r.file (g, "tls-key-file", &b.tls_key_file) && r.boolean (g, "tls-insecure", &b.tls_insecure)))
    return false;
  r.runner_secret (b.tls_key_file, "[runner] tls-key-file");
  std::string version;
  if (!r.string (g, "mqtt-version", &version, false))
    return false;
  if (!version.empty () && version != "5" && version != "3.1.1")
    return r.fail (g, "mqtt-version", "'" + version + "' is neither 5 nor 3.1.1");
  b.mqtt5 = version != "3.1.1";
  if (!r.integer (g, "max-message-bytes", 0, 268435455, &b.max_message_bytes))
    return false;
  if (!c.metrics_address.empty ()) {
    GInetAddress *a = g_inet_address_new_from_string (c.metrics_address.c_str ());
    if (!a)
      return r.fail (g, "metrics-address", "'" + c.metrics_address + "' is not an IP address (127.0.0.1, ::1, 0.0.0.0)");
    g_object_unref (a);
  }
  if (b.tls_cert_file.empty () != b.tls_key_file.empty ())
    return r.fail (g, b.tls_cert_file.empty () ? "tls-cert-file" : "tls-key-file",
        "missing: a client certificate needs both tls-cert-file and tls-key-file");
  const bool tls_keys = !b.tls_ca_file.empty () || !b.tls_cert_file.empty () || b.tls_insecure;
  if (tls_keys && r.has (g, "tls") && !b.tls)
    return r.fail (g, "tls", "false, but a tls-* key asks for TLS: remove one of them");
  b.tls = b.tls || tls_keys;
  std::string key, why_tls;
  if (!tls_files_load (b, &key, &why_tls))
    return r.fail (g, key, why_tls);
  if (c.restart_max_ms < c.restart_min_ms)
    return r.fail (g, "restart-max-ms", "smaller than restart-min-ms");
  std::string why;
  const std::string &prefix = c.topic_prefix;
  if (prefix.empty () || prefix.front () == '/' || prefix.back () == '/' || prefix.find ("//") != std::string::npos)
    return r.fail (g, "topic-prefix", "'" + prefix + "' has an empty topic level (a leading, trailing or doubled '/')");
  if (c.topic_prefix[0] == '$' || !valid_topic (c.topic_prefix + "/camera/state", &why))
    return r.fail (g, "topic-prefix", "cannot begin an MQTT topic: " + (why.empty () ? "'$' begins the broker's own topics" : why));
  if (b.client_id.find ('/') != std::string::npos || !valid_topic (b.client_id, &why))
    return r.fail (g, "client-id", "cannot be an MQTT topic level (the runner's state topic): " + (why.empty () ? "it holds a '/'" : why));
  /* the longest topic of the two together: PREFIX/runner/ID-IofN/state */
  if (!valid_topic (c.topic_prefix + "/runner/" + b.client_id + "-999999of1000000/state", &why))
    return r.fail (g, "topic-prefix", "with client-id '" + b.client_id.substr (0, 40) +
        "', too long for the runner's state topic: " + why);
  return true;
}

/* Where a camera's frames come from: a network stream, a file, a capture device; never the
 * runner's own descriptors (fd://) or anything else a URI handler may read. */
bool camera_scheme (const std::string &scheme)
{
  static const char *const kSchemes[] = {"file", "rtsp", "rtsps", "rtspt", "rtspu", "rtsph", "http", "https", "srt",
      "udp", "rtp", "rtmp", "rtmps", "v4l2"};
  for (const char *k : kSchemes)
    if (scheme == k)
      return true;
  return false;
}

/* The name of a query argument of @uri that looks like a secret (passphrase=, token=...), or "". */
std::string query_secret (const std::string &uri)
{
  gchar *query = nullptr;
  g_uri_split (uri.c_str (), G_URI_FLAGS_NONE, nullptr, nullptr, nullptr, nullptr, nullptr, &query, nullptr, nullptr);
  std::string secret;
  gchar **parts = query ? g_strsplit (query, "&", -1) : nullptr;
  for (gchar **it = parts; it && *it && secret.empty (); it++) {
    const std::string name = std::string (*it).substr (0, std::string (*it).find ('='));
    gchar *lower = g_ascii_strdown (name.c_str (), -1);
    for (const char *word : {"pass", "pwd", "secret", "token", "credential"})
      if (std::strstr (lower, word))
        secret = name;
    for (const char *word : {"key", "auth", "apikey", "api_key", "access_key", "sig", "signature"})
      if (std::strcmp (lower, word) == 0)
        secret = name;
    g_free (lower);
  }
  g_strfreev (parts);
  g_free (query);
  return secret;
}

/* Whether the v4l2:// @uri names a video device, links and ".." resolved (/dev/v4l/by-id/... are
 * links to one); @said: the path as written, and where it leads when that differs. */
bool video_device (const std::string &uri, std::string *said)
{
  gchar *path = nullptr;
  g_uri_split (uri.c_str (), G_URI_FLAGS_NONE, nullptr, nullptr, nullptr, nullptr, &path, nullptr, nullptr, nullptr);
  const std::string device = path ? path : "";
  g_free (path);
  char *real = realpath (device.c_str (), nullptr);
  gchar *lexical = g_canonicalize_filename (device.c_str (), "/");
  const std::string resolved = real ? real : lexical;
  free (real);
  g_free (lexical);
  struct stat st {};
  *said = "'" + device + (resolved != device ? "' ('" + resolved + "')" : "'");
  return g_str_has_prefix (resolved.c_str (), "/dev/video") && resolved.find ('/', std::strlen ("/dev/video")) == std::string::npos &&
      (g_stat (resolved.c_str (), &st) != 0 || S_ISCHR (st.st_mode));
}

/* Whether the file @path begins as a video container or stream does (GStreamer's typefinders on
 * its first 64 KiB); @type says what it is otherwise. */
bool video_file (const std::string &path, std::string *type)
{
  std::vector<guint8> head (64 * 1024);
  const int fd = g_open (path.c_str (), O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
  const ssize_t n = fd >= 0 ? read (fd, head.data (), head.size ()) : -1;
  if (fd >= 0)
    close (fd);
  if (n <= 0) {
    *type = n == 0 ? "it is empty" : std::string ("it cannot be read: ") + g_strerror (errno);
    return false;
  }
  GstTypeFindProbability probability = GST_TYPE_FIND_NONE;
  GstCaps *caps = gst_type_find_helper_for_data (nullptr, head.data (), static_cast<gsize> (n), &probability);
  const std::string media = caps && !gst_caps_is_empty (caps) ? gst_structure_get_name (gst_caps_get_structure (caps, 0)) : "";
  if (caps)
    gst_caps_unref (caps);
  *type = media.empty () ? "GStreamer finds no type in it" : "it is " + media;
  return g_str_has_prefix (media.c_str (), "video/") || g_str_has_prefix (media.c_str (), "image/") ||
      media == "application/ogg" || media == "application/mxf" || media == "application/x-3gp";
}

bool read_uri (Reader &r, const char *g, CameraConfig &cam)
{
  if (!r.string (g, "uri", &cam.uri, true))
    return false;
  for (unsigned char ch : cam.uri)
    if (!uri_character (ch))
      return r.fail (g, "uri", std::string ("a URI holds no ") + (ch == ' ' ? "space" : g_ascii_isprint (ch) ?
          std::string ("'") + static_cast<char> (ch) + "'" : "control or non-ASCII character") + " (percent-encode it)");
  gchar *userinfo = nullptr;
  if (!g_uri_split (cam.uri.c_str (), G_URI_FLAGS_NONE, nullptr, &userinfo, nullptr, nullptr, nullptr, nullptr,
          nullptr, nullptr) || !g_uri_is_valid (cam.uri.c_str (), G_URI_FLAGS_NONE, nullptr)) {
    g_free (userinfo);
    return r.fail (g, "uri", "not a URI (scheme://...)");
  }
  const bool password = userinfo && std::strchr (userinfo, ':');
  g_free (userinfo);
  if (password)
    return r.fail (g, "uri", "a password in the URI: give username and password-file instead (the URI is not a secret)");
  /* a secret in the query (srt's passphrase, a token) is as visible as one before the host */
  const std::string secret_key = query_secret (cam.uri);
  if (!secret_key.empty ())
    return r.fail (g, "uri", "'" + secret_key + "' in the URI's query looks like a secret: the URI is not a secret (give "
        "username and password-file)");
  gchar *scheme = g_uri_parse_scheme (cam.uri.c_str ());
  const bool source = scheme && gst_uri_protocol_is_supported (GST_URI_SRC, scheme);
  const std::string scheme_text = scheme ? scheme : "";
  g_free (scheme);
  if (!camera_scheme (scheme_text))
    return r.fail (g, "uri", "a camera is not read from " + scheme_text + ":// (docs/fleet.md lists the schemes: file, rtsp, "
        "http, srt, udp, rtp, rtmp, v4l2 and their variants)");
  if (!source)
    return r.fail (g, "uri", "no GStreamer source here reads " + scheme_text + ":// URIs");
  /* a capture device is a video device, nothing else the runner may open */
  std::string device;
  if (scheme_text == "v4l2" && !video_device (cam.uri, &device))
    return r.fail (g, "uri", "a v4l2:// camera is a video device (/dev/videoN, or a link to one), not " + device);
  /* a FIFO or a device would block the runner's main loop when the camera starts; a file that is
   * not there is a typo that --check must see, not a camera that restarts for ever */
  if (scheme_text == "file") {
    gchar *file = g_filename_from_uri (cam.uri.c_str (), nullptr, nullptr);
    const std::string name = file ? file : "";
    const bool exists = file && g_file_test (file, G_FILE_TEST_EXISTS);
    const bool odd = exists && !g_file_test (file, G_FILE_TEST_IS_REGULAR);
    g_free (file);
    if (!exists)
      return r.fail (g, "uri", "no file " + name);
    if (odd)
      return r.fail (g, "uri", "not a regular file (a FIFO or a device would block the runner)");
    std::string type;
    if (!video_file (name, &type))
      return r.fail (g, "uri", "'" + name + "' is not a video file (" + type + ")");
  }
  return true;
}

/* the camera's pipeline parses, every value in range, and every topic it publishes on is valid */
bool read_pipeline (Reader &r, const RunnerConfig &c, const char *g, CameraConfig &cam)
{
  if (!r.string (g, "pipeline", &cam.pipeline, true))
    return false;
  cam.pipeline_line = r.lines.line (g, "pipeline");
  std::string why;
  GstElement *bin = parse_analysis_bin (cam.pipeline, &why);
  if (!bin)
    return r.fail (g, "pipeline", why);
  bool ok = true;
  /* the decoded frames go in at its first element and out of its last, to the runner's sink */
  for (const char *pad : {"sink", "src"}) {
    GstPad *p = gst_element_get_static_pad (bin, pad);
    if (!p && ok)
      ok = r.fail (g, "pipeline", std::string ("its ") + (pad[0] == 's' && pad[1] == 'i' ? "first" : "last") +
          " element must " + (pad[1] == 'i' ? "take the decoded video in" : "give video out, to the runner's sink") +
          " (no source or sink elements: the runner adds them)");
    if (p)
      gst_object_unref (p);
  }
  std::set<std::string> levels;
  for (const auto &[element, level] : element_topics (bin)) {
    const std::string topic = c.topic_prefix + "/" + cam.name + "/" + level;
    if (ok && (level.empty () || level == "state" || !levels.insert (level).second)) {
      ok = r.fail (g, "pipeline", "two elements, or an element and the camera's state, on one topic ('" + level +
          "'): give each element a name of its own, not 'state'");
      break;
    }
    /* an element left out of the chain would never see a frame */
    GstIterator *pads = gst_element_iterate_pads (GST_ELEMENT (element));
    GValue item = G_VALUE_INIT;
    bool unlinked = false;
    while (gst_iterator_next (pads, &item) == GST_ITERATOR_OK) {
      GstPad *pad = GST_PAD (g_value_get_object (&item));
      unlinked = unlinked || (!gst_pad_is_linked (pad) && GST_PAD_PAD_TEMPLATE (pad) &&
          GST_PAD_TEMPLATE_PRESENCE (GST_PAD_PAD_TEMPLATE (pad)) == GST_PAD_ALWAYS);
      g_value_reset (&item);
    }
    g_value_unset (&item);
    gst_iterator_free (pads);
    if (ok && unlinked) {
      ok = r.fail (g, "pipeline", "element '" + level + "' is not linked into the chain (a '!' missing?)");
      break;
    }
    if (level.find ('/') != std::string::npos || !valid_topic (topic, &why)) {
      ok = r.fail (g, "pipeline", "element '" + level + "' cannot name an MQTT topic level (" +
          (level.find ('/') != std::string::npos ? std::string ("it holds a '/'") : why) + "): name it with name=...");
      break;
    }
  }
  gst_object_unref (bin);
  return ok;
}

bool read_camera (Reader &r, const RunnerConfig &c, const char *g, CameraConfig &cam)
{
  cam.name = g + std::strlen ("camera ");
  cam.line = r.lines.line (g);
  std::string why;
  if (cam.name.size () > kMaxCameraName)
    return r.fail (g, "", "a camera's name is at most " + std::to_string (kMaxCameraName) + " bytes (this one is " +
        std::to_string (cam.name.size ()) + ")");
  if (cam.name.empty () || cam.name.find_first_of ("/ ") != std::string::npos ||
      !valid_topic (c.topic_prefix + "/" + cam.name + "/state", &why))
    return r.fail (g, "", "a camera's name is one MQTT topic level: no '/', '#', '+', space or control character");
  return read_uri (r, g, cam) && r.integer (g, "cuda-device-id", -1, 1024, &cam.cuda_device_id) &&
      r.credentials (g, nullptr, &cam.username, &cam.password) && r.boolean (g, "loop", &cam.loop) &&
      read_pipeline (r, c, g, cam);
}

bool read_groups (Reader &r, RunnerConfig *config)
{
  gsize n_groups = 0;
  gchar **groups = g_key_file_get_groups (r.kf, &n_groups);
  bool ok = true;
  /* [runner] first: the topic prefix is part of every camera's topics */
  if (g_key_file_has_group (r.kf, "runner"))
    ok = read_runner (r, *config);
  for (gsize i = 0; ok && i < n_groups; i++) {
    const char *g = groups[i];
    const bool runner = std::strcmp (g, "runner") == 0;
    if (!runner && !g_str_has_prefix (g, "camera ")) {
      ok = r.fail (g, "", "unknown group: [runner] and [camera NAME] are known");
      break;
    }
    gchar **keys = g_key_file_get_keys (r.kf, g, nullptr, nullptr);
    for (gchar **k = keys; ok && k && *k; k++) {
      if (std::strcmp (*k, "password") == 0)
        ok = r.fail (g, *k, std::string ("a password is never written in the config: use password-file") +
            (runner ? std::string (" or the environment variable ") + kBrokerPasswordEnv : ""));
      else if (!known (runner ? kRunnerKeys : kCameraKeys, *k))
        ok = r.fail (g, *k, "unknown key");
    }
    g_strfreev (keys);
    if (!ok || runner)
      continue;
    CameraConfig cam;
    ok = read_camera (r, *config, g, cam);
    if (ok)
      config->cameras.push_back (cam);
  }
  g_strfreev (groups);
  return ok;
}

}  // namespace

bool load_config (const char *path, RunnerConfig *config, std::string *error)
{
  std::string text, why;
  GError *err = nullptr;
  if (!read_bounded (path, 16 * 1024 * 1024, &text, &why)) {
    *error = why;
    return false;
  }
  ConfigLines lines;
  if (!lines.scan (path, text, error))
    return false;
  GKeyFile *kf = g_key_file_new ();
  Reader r{kf, path, lines, error};
  gchar *config_dir = g_path_get_dirname (path);
  std::string dirs = config_dir;
  g_free (config_dir);
  if (const char *more = g_getenv (kCameraSecretsEnv))
    dirs += std::string (":") + more;
  gchar **each = g_strsplit (dirs.c_str (), ":", -1);
  for (gchar **d = each; *d; d++) {
    char *real = **d ? realpath (*d, nullptr) : nullptr;
    if (real && std::strcmp (real, "/") != 0)
      r.camera_secret_dirs.push_back (real);
    free (real);
  }
  g_strfreev (each);
  bool ok = g_key_file_load_from_data (kf, text.data (), text.size (), G_KEY_FILE_NONE, &err);
  if (!ok) {
    /* GKeyFile's message quotes the line ("Key file contains line “x” which is not ..."): the
     * first line of the file that it quotes is where */
    const std::string message = err->message;
    const size_t open = message.find ("\u201c"), close = message.rfind ("\u201d");
    const int where = open != std::string::npos && close != std::string::npos && close > open ?
        lines.line_of_text (message.substr (open + 3, close - open - 3)) : 0;
    *error = std::string (path) + ":" + (where ? std::to_string (where) + ":" : "") + " " + message;
    g_error_free (err);
  }
  ok = ok && read_groups (r, config);
  g_key_file_free (kf);
  return ok;
}

}  // namespace cuvrun
