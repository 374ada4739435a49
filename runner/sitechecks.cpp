/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/sitechecks.h"

#include <gio/gio.h>
#include <gst/base/gsttypefindhelper.h>
#include <gst/gst.h>

#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

#include "runner/pipeline.h"

namespace cuvrun {

namespace {

/* A camera's name is a topic level, a metrics label and a log word: long enough for any site's. */
constexpr size_t kMaxCameraName = 1024;
/* A camera's pipeline is a chain of a few elements, a few hundred bytes; GStreamer's parser takes
 * time that grows faster than its length (2,000 queues: 2.4 s, 4,000: 18 s), and about 1 s at this
 * bound, whatever the shape. */
constexpr size_t kMaxPipeline = 4096;
/* bins ( ) nested deeper than this: none has a reason to, and each level costs the parser more */
constexpr int kMaxBinDepth = 16;
/* MQTT's strings (a username among them) are at most 65,535 bytes; libmosquitto refuses longer. */
constexpr size_t kMaxUsername = 65535;

/* RFC 3986's characters: anything else (a quote, a space, a backslash) is percent-encoded in a URI */
bool uri_character (unsigned char c)
{
  return g_ascii_isalnum (c) || std::strchr ("-._~:/?#[]@!$&'()*+,;=%", c) != nullptr;
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

/* @uri's form: RFC 3986's characters, a scheme, no password before the host or secret in the query */
bool uri_form (const std::string &uri, std::string *why)
{
  for (unsigned char ch : uri)
    if (!uri_character (ch)) {
      *why = std::string ("a URI holds no ") + (ch == ' ' ? "space" : g_ascii_isprint (ch) ?
          std::string ("'") + static_cast<char> (ch) + "'" : "control or non-ASCII character") + " (percent-encode it)";
      return false;
    }
  gchar *userinfo = nullptr;
  if (!g_uri_split (uri.c_str (), G_URI_FLAGS_NONE, nullptr, &userinfo, nullptr, nullptr, nullptr, nullptr, nullptr,
          nullptr) || !g_uri_is_valid (uri.c_str (), G_URI_FLAGS_NONE, nullptr)) {
    g_free (userinfo);
    *why = "not a URI (scheme://...)";
    return false;
  }
  const bool password = userinfo && std::strchr (userinfo, ':');
  g_free (userinfo);
  if (password) {
    *why = "a password in the URI: give username and password-file instead (the URI is not a secret)";
    return false;
  }
  /* a secret in the query (srt's passphrase, a token) is as visible as one before the host */
  const std::string secret_key = query_secret (uri);
  if (!secret_key.empty ()) {
    *why = "'" + secret_key + "' in the URI's query looks like a secret: the URI is not a secret (give username and "
        "password-file)";
    return false;
  }
  return true;
}

/* A file:// camera's file: there (a file that is not is a typo that --check must see, not a camera
 * that restarts for ever), regular (a FIFO or a device would block the runner's main loop when the
 * camera starts), and video */
bool video_file_uri (const std::string &uri, std::string *why)
{
  /* GLib up to 2.74 refuses a '#' in a file URI and later ones drop what follows it as a fragment,
   * so the camera would read another file than the one named: refused on every GLib alike */
  if (uri.find ('#') != std::string::npos) {
    *why = "a '#' in a file URI starts a fragment, which names no file: percent-encode it as %23";
    return false;
  }
  GError *err = nullptr;
  gchar *host = nullptr;
  gchar *file = g_filename_from_uri (uri.c_str (), &host, &err);
  const std::string name = file ? file : "", host_name = host ? host : "";
  const bool exists = file && g_file_test (file, G_FILE_TEST_EXISTS);
  const bool odd = exists && !g_file_test (file, G_FILE_TEST_IS_REGULAR);
  g_free (file);
  g_free (host);
  std::string type;
  if (err) {
    /* a path that is not absolute */
    *why = std::string ("not a file URI of a path: ") + err->message;
    g_error_free (err);
  } else if (!host_name.empty () && host_name != "localhost")
    /* GStreamer's filesrc would read this host's file of that path, whatever the host */
    *why = "a file:// URI names a file of this host, not of '" + host_name + "' (file:///PATH)";
  else if (!exists)
    *why = "no file " + name;
  else if (odd)
    *why = "not a regular file (a FIFO or a device would block the runner)";
  else if (!video_file (name, &type))
    *why = "'" + name + "' is not a video file (" + type + ")";
  else
    return true;
  return false;
}

/* the topic each element of @bin publishes on is valid and its own, and every element is linked */
bool element_topics_ok (GstElement *bin, const std::string &camera_topic, std::string *why)
{
  std::set<std::string> levels;
  for (const auto &[element, level] : element_topics (bin)) {
    if (level.empty () || level == "state" || !levels.insert (level).second) {
      *why = "two elements, or an element and the camera's state, on one topic ('" + level +
          "'): give each element a name of its own, not 'state'";
      return false;
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
    if (unlinked) {
      *why = "element '" + level + "' is not linked into the chain (a '!' missing?)";
      return false;
    }
    std::string invalid;
    if (level.find ('/') != std::string::npos || !valid_topic (camera_topic + "/" + level, &invalid)) {
      *why = "element '" + level + "' cannot name an MQTT topic level (" +
          (level.find ('/') != std::string::npos ? std::string ("it holds a '/'") : invalid) + "): name it with name=...";
      return false;
    }
  }
  return true;
}

}  // namespace

bool is_ip_address (const std::string &address, std::string *why)
{
  GInetAddress *a = g_inet_address_new_from_string (address.c_str ());
  if (a)
    g_object_unref (a);
  else
    *why = "'" + address + "' is not an IP address (127.0.0.1, ::1, 0.0.0.0)";
  return a != nullptr;
}

bool is_topic_prefix (const std::string &prefix, std::string *why)
{
  if (prefix.empty () || prefix.front () == '/' || prefix.back () == '/' || prefix.find ("//") != std::string::npos) {
    *why = "'" + prefix + "' has an empty topic level (a leading, trailing or doubled '/')";
    return false;
  }
  std::string invalid;
  if (prefix[0] == '$' || !valid_topic (prefix + "/camera/state", &invalid)) {
    *why = "cannot begin an MQTT topic: " + (invalid.empty () ? "'$' begins the broker's own topics" : invalid);
    return false;
  }
  return true;
}

bool is_client_id (const std::string &id, std::string *why)
{
  std::string invalid;
  if (id.find ('/') == std::string::npos && valid_topic (id, &invalid))
    return true;
  *why = "cannot be an MQTT topic level (the runner's state topic): " + (invalid.empty () ? "it holds a '/'" : invalid);
  return false;
}

bool is_user_name (const std::string &name, std::string *why)
{
  if (name.size () > kMaxUsername) {
    *why = "longer than MQTT's 65,535 bytes (" + std::to_string (name.size ()) + ")";
    return false;
  }
  for (const unsigned char ch : name)
    if (ch < 0x20 || ch == 0x7f) {
      *why = "a control character in it";
      return false;
    }
  return true;
}

bool is_camera_uri (const std::string &uri, std::string *why)
{
  if (!uri_form (uri, why))
    return false;
  gchar *scheme = g_uri_parse_scheme (uri.c_str ());
  const bool source = scheme && gst_uri_protocol_is_supported (GST_URI_SRC, scheme);
  const std::string scheme_text = scheme ? scheme : "";
  g_free (scheme);
  gchar *lower = g_ascii_strdown (scheme_text.c_str (), -1);
  const bool upper_case = scheme_text != lower && camera_scheme (lower);
  g_free (lower);
  gchar *host = nullptr;
  g_uri_split (uri.c_str (), G_URI_FLAGS_NONE, nullptr, nullptr, &host, nullptr, nullptr, nullptr, nullptr, nullptr);
  const bool no_host = !host || !*host;
  g_free (host);
  /* a server's schemes; srt:// and udp:// without a host listen, file:// and v4l2:// are this host's */
  const bool server = g_str_has_prefix (scheme_text.c_str (), "rtsp") || g_str_has_prefix (scheme_text.c_str (), "http") ||
      g_str_has_prefix (scheme_text.c_str (), "rtmp");
  std::string device;
  if (upper_case)
    /* rtspsrc and others read only their scheme in lower case */
    *why = "'" + scheme_text + ":': write the URI's scheme in lower case";
  else if (!camera_scheme (scheme_text))
    *why = "a camera is not read from " + scheme_text + (uri.compare (scheme_text.size (), 3, "://") == 0 ? "://" : ":") +
        " (docs/fleet.md lists the schemes: file, rtsp, http, srt, udp, rtp, rtmp, v4l2 and their variants)";
  else if (server && no_host)
    *why = "no host in the URI (" + scheme_text + "://HOST/...)";
  else if (!source)
    *why = "no GStreamer source here reads " + scheme_text + ":// URIs";
  /* a capture device is a video device, nothing else the runner may open */
  else if (scheme_text == "v4l2" && !video_device (uri, &device))
    *why = "a v4l2:// camera is a video device (/dev/videoN, or a link to one), not " + device;
  else
    return scheme_text != "file" || video_file_uri (uri, why);
  return false;
}

bool is_camera_name (const std::string &name, const std::string &prefix, std::string *why)
{
  std::string invalid;
  if (name.size () > kMaxCameraName)
    *why = "a camera's name is at most " + std::to_string (kMaxCameraName) + " bytes (this one is " +
        std::to_string (name.size ()) + ")";
  else if (name.empty () || name.find_first_of ("/ ") != std::string::npos ||
      !valid_topic (prefix + "/" + name + "/state", &invalid))
    *why = "a camera's name is one MQTT topic level: no '/', '#', '+', space or control character";
  else
    return true;
  return false;
}

bool is_camera_pipeline (const std::string &pipeline, const std::string &prefix, const std::string &camera,
    std::string *why)
{
  if (pipeline.size () > kMaxPipeline) {
    *why = "longer than " + std::to_string (kMaxPipeline) + " bytes (" + std::to_string (pipeline.size ()) +
        "): a camera's pipeline is a few elements, and GStreamer's parser slows down faster than a description grows";
    return false;
  }
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < pipeline.size (); i++) {
    const char c = pipeline[i];
    if (quoted && c == '\\')
      i++;
    else if (c == '"')
      quoted = !quoted;
    else if (!quoted && c == '(' && ++depth > kMaxBinDepth) {
      *why = "bins ( ) nested deeper than " + std::to_string (kMaxBinDepth) + " (column " + std::to_string (i + 1) + ")";
      return false;
    } else if (!quoted && c == ')')
      depth--;
  }
  GstElement *bin = parse_analysis_bin (pipeline, why);
  /* caps stand between two elements: "video/x-raw,format=NV12 ! cudasobel" is read as an element
   * "video" */
  const size_t quote = why->find ('"', 0);
  if (!bin && why->compare (0, 12, "no element \"") == 0 && quote != std::string::npos &&
      pipeline.find (why->substr (quote + 1, why->find ('"', quote + 1) - quote - 1) + "/") != std::string::npos)
    *why += " (caps stand between two elements, a ! CAPS ! b: first or last, write capsfilter caps=CAPS)";
  if (!bin)
    return false;
  bool ok = true;
  /* the decoded frames go in at its first element and out of its last, to the runner's sink */
  for (const char *pad : {"sink", "src"}) {
    GstPad *p = gst_element_get_static_pad (bin, pad);
    if (!p && ok) {
      *why = std::string ("its ") + (pad[1] == 'i' ? "first" : "last") + " element must " +
          (pad[1] == 'i' ? "take the decoded video in" : "give video out, to the runner's sink") +
          " (no source or sink elements: the runner adds them)";
      ok = false;
    }
    if (p)
      gst_object_unref (p);
  }
  ok = ok && element_topics_ok (bin, prefix + "/" + camera, why);
  gst_object_unref (bin);
  return ok;
}

}  // namespace cuvrun
