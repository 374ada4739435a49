/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/siteconfig.h"

#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "runner/boundedread.h"
#include "runner/configlines.h"
#include "runner/pipeline.h"
#include "runner/sitechecks.h"
#include "runner/sitekeys.h"
#include "runner/tlsfiles.h"

namespace cuvrun {

namespace {

using R = RunnerConfig;
using B = BrokerConfig;
using C = CameraConfig;

/* [runner], every key optional, in docs/fleet.md's order ("Keys"), which is the order they are read
 * and an error is told in; [runner] is read first, so that the broker's password-file and
 * tls-key-file are known before a camera's password-file is read */
constexpr Key<R> kRunnerKeys[] = {
    text_key ("broker-host", &at<&R::broker, &B::host>, "127.0.0.1"),
    number_key ("broker-port", &at<&R::broker, &B::port>, 1883, 1, 65535),
    text_key ("username", &at<&R::broker, &B::username>, "", is_user_name),
    password_file_key ("password-file", &at<&R::broker, &B::password>, kBrokerPasswordEnv),
    flag_key ("tls", &at<&R::broker, &B::tls>, false),
    tls_file_key ("tls-ca-file", &at<&R::broker, &B::tls_ca_file>, false),
    tls_file_key ("tls-cert-file", &at<&R::broker, &B::tls_cert_file>, false),
    tls_file_key ("tls-key-file", &at<&R::broker, &B::tls_key_file>, true),
    flag_key ("tls-insecure", &at<&R::broker, &B::tls_insecure>, false),
    choice_key ("mqtt-version", &at<&R::broker, &B::mqtt5>, "5", "3.1.1", true),
    number_key ("max-message-bytes", &at<&R::broker, &B::max_message_bytes>, 0, 0, 268435455),
    text_key ("topic-prefix", &at<&R::topic_prefix>, "cudavision", is_topic_prefix),
    text_key ("client-id", &at<&R::broker, &B::client_id>, "cudavision-run", is_client_id),
    text_key ("metrics-address", &at<&R::metrics_address>, "", is_ip_address), /* "": every address */
    number_key ("metrics-port", &at<&R::metrics_port>, 9464, 0, 65535),
    number_key ("metrics-connections", &at<&R::metrics_connections>, 64, 2, 10000),
    number_key ("metrics-idle-timeout-s", &at<&R::metrics_idle_timeout_s>, 10, 1, 3600),
    number_key ("queue-limit", &at<&R::queue_limit>, 10000, 1, 10000000),
    number_key ("restart-min-ms", &at<&R::restart_min_ms>, 500, 10, 3600000),
    number_key ("restart-max-ms", &at<&R::restart_max_ms>, 30000, 10, 3600000),
    number_key ("failing-after", &at<&R::failing_after>, 5, 1, 1000),
    number_key ("stall-ms", &at<&R::stall_ms>, 5000, 100, 3600000),
};

/* [camera NAME]; the pipeline is checked once the group is read (its topics hold the camera's name
 * and [runner]'s topic-prefix) */
constexpr Key<C> kCameraKeys[] = {
    required_key ("uri", &at<&C::uri>, is_camera_uri),
    number_key ("cuda-device-id", &at<&C::cuda_device_id>, -1, -1, 1024), /* -1: the elements' default */
    text_key ("username", &at<&C::username>, "", is_user_name),
    camera_password_file_key ("password-file", &at<&C::password>),
    flag_key ("loop", &at<&C::loop>, false),
    required_key ("pipeline", &at<&C::pipeline>),
};

/* a CA bundle is a few hundred KiB (Debian's whole store: 220 KiB) */
constexpr size_t kMaxTlsFile = 16 * 1024 * 1024;
/* more folders a camera's password-file may lie in, ':'-separated (the config's own always may) */
constexpr const char *kCameraSecretsEnv = "CUDAVISION_CAMERA_SECRETS";

/* Every field of @keys set to its key's default. */
template <typename G, size_t N> void set_defaults (const Key<G> (&keys)[N], G &group)
{
  for (const Key<G> &k : keys) {
    if (k.type == KeyType::kNumber)
      k.number (group) = k.number_default;
    else if (k.type == KeyType::kFlag || k.type == KeyType::kChoice)
      k.flag (group) = k.flag_default;
    else
      k.text (group) = k.text_default;
  }
}

/* The config file's groups read through their key tables, errors said at their key's line. */
class Reader {
 public:
  Reader (GKeyFile *kf, const char *path, const ConfigLines &lines, std::string *error)
      : kf_ (kf), path_ (path), lines_ (lines), error_ (error)
  {
  }

  bool fail (const std::string &group, const std::string &key, const std::string &what)
  {
    *error_ = std::string (path_) + ":" + std::to_string (lines_.line (group, key)) + ": [" + group + "]" +
        (key.empty () ? "" : " " + key) + ": " + what;
    return false;
  }

  bool has (const char *group, const char *key) { return g_key_file_has_key (kf_, group, key, nullptr); }

  int line (const char *group, const char *key = "") const { return lines_.line (group, key); }

  /* the folders a camera's password-file may lie in: the config's own and CUDAVISION_CAMERA_SECRETS' */
  void camera_secret_folders ();

  /* Every key written in [@group] is one of @keys; a password is never written in the config. */
  template <typename G, size_t N> bool known_keys (const char *group, const Key<G> (&keys)[N]);

  /* Each of @keys that [@group] holds, read into its field of @out. */
  template <typename G, size_t N> bool read_keys (const char *group, const Key<G> (&keys)[N], G &out)
  {
    for (const Key<G> &k : keys)
      if (!read_key (group, k, out))
        return false;
    return true;
  }

  /* a password goes with a user name: @env where the password came from without a password-file */
  bool credentials_complete (const char *group, const std::string &username, const std::string &password, const char *env)
  {
    if (password.empty () || !username.empty ())
      return true;
    return fail (group, "username", std::string ("missing: a password is given (") +
        (has (group, "password-file") || !env ? "password-file" : env) + ") but no username");
  }

 private:
  template <typename G> bool read_key (const char *group, const Key<G> &k, G &out);
  bool text (const char *group, const char *key, std::string *out);
  bool file_path (const char *group, const char *key, std::string *path);
  bool number (const char *group, const char *key, int lo, int hi, int *out);
  bool flag (const char *group, const char *key, bool *out);
  bool tls_file (const char *group, const char *key, bool secret, std::string *path);
  bool password_file (const char *group, const char *key, KeyType type, const char *env, std::string *password);
  bool camera_secret_allowed (const std::string &file) const;
  void note_runner_secret (const std::string &file, const std::string &what);
  std::string runner_secret_of (const std::string &file) const;

  GKeyFile *kf_;
  const char *path_;
  const ConfigLines &lines_;
  std::string *error_;
  /* the runner's own secret files (the broker's password, the TLS key): device and inode, and which */
  std::vector<std::pair<std::pair<dev_t, ino_t>, std::string>> runner_secrets_;
  /* the folders a camera's password-file may lie in, resolved */
  std::vector<std::string> camera_secret_dirs_;
};

template <typename G, size_t N> bool Reader::known_keys (const char *group, const Key<G> (&keys)[N])
{
  const char *env = nullptr;
  for (const Key<G> &k : keys)
    env = k.type == KeyType::kPasswordFile ? k.env : env;
  gchar **written = g_key_file_get_keys (kf_, group, nullptr, nullptr);
  bool ok = true;
  for (gchar **w = written; ok && w && *w; w++) {
    bool known = false;
    for (const Key<G> &k : keys)
      known = known || std::strcmp (k.name, *w) == 0;
    if (std::strcmp (*w, "password") == 0)
      ok = fail (group, *w, std::string ("a password is never written in the config: use password-file") +
          (env ? std::string (" or the environment variable ") + env : ""));
    else if (!known)
      ok = fail (group, *w, "unknown key");
  }
  g_strfreev (written);
  return ok;
}

template <typename G> bool Reader::read_key (const char *group, const Key<G> &k, G &out)
{
  const bool written = has (group, k.name);
  std::string value, why;
  switch (k.type) {
    case KeyType::kPasswordFile:
    case KeyType::kCameraPasswordFile: /* read written or not: without the key, the environment's */
      return password_file (group, k.name, k.type, k.env, &k.text (out));
    case KeyType::kNumber:
      return !written || number (group, k.name, k.lo, k.hi, &k.number (out));
    case KeyType::kFlag:
      return !written || flag (group, k.name, &k.flag (out));
    case KeyType::kTlsFile:
      return !written || tls_file (group, k.name, k.secret, &k.text (out));
    case KeyType::kChoice:
      if (!written)
        return true;
      if (!text (group, k.name, &value))
        return false;
      if (value != k.yes && value != k.no)
        return fail (group, k.name, "'" + value + "' is neither " + k.yes + " nor " + k.no);
      k.flag (out) = value == k.yes;
      return true;
    case KeyType::kText:
      if (!written)
        return !k.required || fail (group, k.name, "missing");
      if (!text (group, k.name, &value))
        return false;
      if (k.check && !k.check (value, &why))
        return fail (group, k.name, why);
      k.text (out) = value;
      return true;
  }
  return false;
}

/* a file the config names: a relative path is the config's folder's (as a camera's password-file
 * is checked to lie there), not the runner's working folder's */
bool Reader::file_path (const char *group, const char *key, std::string *path)
{
  if (!text (group, key, path))
    return false;
  gchar *dir = g_path_get_dirname (path_);
  if (!g_path_is_absolute (path->c_str ()) && std::strcmp (dir, ".") != 0) {
    gchar *joined = g_build_filename (dir, path->c_str (), nullptr);
    *path = joined;
    g_free (joined);
  }
  g_free (dir);
  return true;
}

bool Reader::text (const char *group, const char *key, std::string *out)
{
  /* GKeyFile reads an escape it does not know (\q) as written and drops a backslash that ends the
   * value, and says so only in the error it also returns the value with */
  GError *err = nullptr;
  gchar *v = g_key_file_get_string (kf_, group, key, &err);
  *out = v ? v : "";
  g_free (v);
  if (err) {
    std::string why = err->message;
    g_error_free (err);
    gchar *raw = g_key_file_get_value (kf_, group, key, nullptr);
    for (const char *p = raw; p && *p; p++)
      if (*p == '\\' && !p[1]) {
        why = "a backslash ends the value (a backslash is written \\\\)";
        break;
      } else if (*p == '\\' && !std::strchr ("sntr\\", p[1])) {
        why = "'\\" + std::string (p + 1, static_cast<const char *> (g_utf8_next_char (p + 1))) +
            "' is not an escape the config takes: \\s, \\t, \\n, \\r, and \\\\ for a backslash";
        break;
      } else if (*p == '\\') {
        p++;
      }
    g_free (raw);
    return fail (group, key, why);
  }
  return !out->empty () || fail (group, key, "empty");
}

/* the value's text, whole: GKeyFile's own integers take trailing white space, which is an error
 * here (docs/fleet.md, "Keys") */
bool Reader::number (const char *group, const char *key, int lo, int hi, int *out)
{
  gchar *v = g_key_file_get_value (kf_, group, key, nullptr);
  gchar *end = nullptr;
  const gint64 n = g_ascii_strtoll (v, &end, 10);
  const bool ok = v && *v && end && *end == '\0' && n >= lo && n <= hi;
  const std::string text_value = v ? v : "";
  g_free (v);
  if (!ok)
    return fail (group, key, "'" + text_value + "' is not a whole number from " + std::to_string (lo) + " to " +
        std::to_string (hi));
  *out = static_cast<int> (n);
  return true;
}

bool Reader::flag (const char *group, const char *key, bool *out)
{
  GError *err = nullptr;
  const gboolean v = g_key_file_get_boolean (kf_, group, key, &err);
  if (err) {
    g_error_free (err);
    return fail (group, key, "not true or false");
  }
  *out = v;
  return true;
}

/* a TLS file the runner must be able to read, at once: libmosquitto reads it again at each
 * connection, so a file that blocks, such as /proc/kmsg, would hold the runner there */
bool Reader::tls_file (const char *group, const char *key, bool secret, std::string *path)
{
  if (!file_path (group, key, path))
    return false;
  std::string content, why;
  if (!g_file_test (path->c_str (), G_FILE_TEST_EXISTS))
    return fail (group, key, "no file '" + *path + "'");
  if (!g_file_test (path->c_str (), G_FILE_TEST_IS_REGULAR))
    return fail (group, key, "'" + *path + "' is not a file here");
  if (g_access (path->c_str (), R_OK) != 0)
    return fail (group, key, "'" + *path + "' cannot be read by this user");
  if (!read_bounded (*path, kMaxTlsFile, &content, &why))
    return fail (group, key, why + " (a TLS file is a regular file of at most 16 MiB that reads at once)");
  if (secret)
    note_runner_secret (*path, std::string ("[") + group + "] " + key);
  return true;
}

/* Credentials come from files or the environment, never from the config (docs/fleet.md,
 * "Security"). A camera's go to whatever host its URI names: only from the folders the site gave
 * for them (the config's own, which its editor fills, and CUDAVISION_CAMERA_SECRETS, which the
 * config cannot change), never one of the runner's own. */
bool Reader::password_file (const char *group, const char *key, KeyType type, const char *env, std::string *password)
{
  std::string file, why;
  if (has (group, key) && !file_path (group, key, &file))
    return false;
  const bool camera = type == KeyType::kCameraPasswordFile;
  if (camera && !file.empty () && !camera_secret_allowed (file)) {
    std::string dirs;
    for (const std::string &d : camera_secret_dirs_)
      dirs += (dirs.empty () ? "" : ", ") + d;
    return fail (group, key, "'" + file + "' is not in a folder a camera's password file may be in (" + dirs +
        "; more in " + kCameraSecretsEnv + "): a camera's password goes to whatever its URI names");
  }
  if (camera && !runner_secret_of (file).empty ())
    return fail (group, key, "'" + file + "' is the runner's " + runner_secret_of (file) +
        ": a camera's password goes to whatever its URI names, so it has a file of its own");
  if (!file.empty () && !read_secret (file, password, &why))
    return fail (group, key, why);
  if (camera)
    return true;
  note_runner_secret (file, std::string ("[") + group + "] " + key);
  if (file.empty () && env && g_getenv (env) && *g_getenv (env))
    *password = g_getenv (env);
  return true;
}

void Reader::camera_secret_folders ()
{
  gchar *config_dir = g_path_get_dirname (path_);
  std::string dirs = config_dir;
  g_free (config_dir);
  if (const char *more = g_getenv (kCameraSecretsEnv))
    dirs += std::string (":") + more;
  gchar **each = g_strsplit (dirs.c_str (), ":", -1);
  for (gchar **d = each; *d; d++) {
    char *real = **d ? realpath (*d, nullptr) : nullptr;
    if (real && std::strcmp (real, "/") != 0)
      camera_secret_dirs_.push_back (real);
    free (real);
  }
  g_strfreev (each);
}

/* whether @file, resolved, lies in one of camera_secret_dirs_ */
bool Reader::camera_secret_allowed (const std::string &file) const
{
  char *real = realpath (file.c_str (), nullptr);
  const std::string resolved = real ? real : "";
  free (real);
  for (const std::string &d : camera_secret_dirs_)
    if (!resolved.empty () && resolved.compare (0, d.size () + 1, d + "/") == 0)
      return true;
  return false;
}

void Reader::note_runner_secret (const std::string &file, const std::string &what)
{
  struct stat st {};
  if (!file.empty () && g_stat (file.c_str (), &st) == 0)
    runner_secrets_.push_back ({{st.st_dev, st.st_ino}, what});
}

/* the runner's secret that @file is (by its inode, whatever the path or link), or "" */
std::string Reader::runner_secret_of (const std::string &file) const
{
  struct stat st {};
  if (file.empty () || g_stat (file.c_str (), &st) != 0)
    return "";
  for (const auto &[id, what] : runner_secrets_)
    if (id.first == st.st_dev && id.second == st.st_ino)
      return what;
  return "";
}

/* [runner]'s keys that depend on each other */
bool finish_runner (Reader &r, RunnerConfig &c)
{
  const char *g = "runner";
  BrokerConfig &b = c.broker;
  if (!r.credentials_complete (g, b.username, b.password, kBrokerPasswordEnv))
    return false;
  if (b.tls_cert_file.empty () != b.tls_key_file.empty ())
    return r.fail (g, b.tls_cert_file.empty () ? "tls-cert-file" : "tls-key-file",
        "missing: a client certificate needs both tls-cert-file and tls-key-file");
  const bool tls_keys = !b.tls_ca_file.empty () || !b.tls_cert_file.empty () || b.tls_insecure;
  if (tls_keys && r.has (g, "tls") && !b.tls)
    return r.fail (g, "tls", "false, but a tls-* key asks for TLS: remove one of them");
  b.tls = b.tls || tls_keys;
  std::string key, why;
  if (!tls_files_load (b, &key, &why))
    return r.fail (g, key, why);
  if (c.restart_max_ms < c.restart_min_ms)
    return r.fail (g, "restart-max-ms", "smaller than restart-min-ms");
  /* the longest topic of the two together: PREFIX/runner/ID-IofN/state */
  if (!valid_topic (c.topic_prefix + "/runner/" + b.client_id + "-999999of1000000/state", &why))
    return r.fail (g, "topic-prefix", "with client-id '" + b.client_id.substr (0, 40) +
        "', too long for the runner's state topic: " + why);
  return true;
}

bool read_camera (Reader &r, const RunnerConfig &c, const char *g, CameraConfig &cam)
{
  set_defaults (kCameraKeys, cam);
  cam.name = g + std::strlen ("camera ");
  cam.line = r.line (g);
  cam.pipeline_line = r.line (g, "pipeline");
  std::string why;
  if (!r.known_keys (g, kCameraKeys))
    return false;
  if (!is_camera_name (cam.name, c.topic_prefix, &why))
    return r.fail (g, "", why);
  if (!r.read_keys (g, kCameraKeys, cam) || !r.credentials_complete (g, cam.username, cam.password, nullptr))
    return false;
  return is_camera_pipeline (cam.pipeline, c.topic_prefix, cam.name, &why) || r.fail (g, "pipeline", why);
}

bool read_groups (Reader &r, GKeyFile *kf, RunnerConfig *config)
{
  set_defaults (kRunnerKeys, *config);
  /* [runner] first: the topic prefix is part of every camera's topics */
  if (g_key_file_has_group (kf, "runner") && !(r.known_keys ("runner", kRunnerKeys) &&
          r.read_keys ("runner", kRunnerKeys, *config) && finish_runner (r, *config)))
    return false;
  gchar **groups = g_key_file_get_groups (kf, nullptr);
  bool ok = true;
  for (gchar **g = groups; ok && *g; g++) {
    if (std::strcmp (*g, "runner") == 0)
      continue;
    CameraConfig cam;
    if (!g_str_has_prefix (*g, "camera "))
      ok = r.fail (*g, "", "unknown group: [runner] and [camera NAME] are known");
    else if ((ok = read_camera (r, *config, *g, cam)))
      config->cameras.push_back (std::move (cam));
  }
  g_strfreev (groups);
  return ok;
}

/* load_config's work; its error as it is composed, quoting the config's text as it is */
bool load (const char *path, RunnerConfig *config, std::string *error)
{
  std::string text, why;
  if (!read_bounded (path, 16 * 1024 * 1024, &text, &why)) {
    *error = why;
    return false;
  }
  ConfigLines lines;
  if (!lines.scan (path, text, error))
    return false;
  GKeyFile *kf = g_key_file_new ();
  GError *err = nullptr;
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
  } else {
    Reader r (kf, path, lines, error);
    r.camera_secret_folders ();
    ok = read_groups (r, kf, config);
  }
  g_key_file_free (kf);
  return ok;
}

}  // namespace

bool load_config (const char *path, RunnerConfig *config, std::string *error)
{
  /* a message quotes what the config holds: a 1 MiB group name or pipeline, a value's \n */
  const bool ok = load (path, config, error);
  if (!ok)
    *error = printable (*error);
  return ok;
}

}  // namespace cuvrun
