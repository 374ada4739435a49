/* cudavision-run: runs a camera list's pipelines of gst-cudavision elements in one process,
 * restarts each camera on its own, publishes the results to an MQTT broker and serves Prometheus
 * metrics (docs/fleet.md).
 *   cudavision-run [--shard I/N] [--metrics-port N] [--check] [--allow-empty] CONFIG
 * Exit status: 0 after SIGINT or SIGTERM with every result of the run delivered, 3 when any result
 * of the run was lost (dropped for a full queue, refused, still queued at the stop), 2 for a bad
 * config or arguments, 1 for anything else.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib-unix.h>
#include <gst/gst.h>

#include <unistd.h>

#include <chrono>
#include <clocale>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runner/camera.h"
#include "runner/contexts.h"
#include "runner/pipeline.h"
#include "runner/siteconfig.h"
#include "runner/openfiles.h"
#include "runner/metrics.h"
#include "runner/publisher.h"

namespace {

/* "I/N" with 0 <= I < N <= 1,000,000, decimal digits only */
bool parse_shard (const char *text, int *index, int *count)
{
  gchar **parts = g_strsplit (text, "/", -1);
  guint64 i = 0, n = 0;
  const bool ok = g_strv_length (parts) == 2 && g_ascii_isdigit (parts[0][0]) && g_ascii_isdigit (parts[1][0]) &&
      g_ascii_string_to_unsigned (parts[0], 10, 0, 999999, &i, nullptr) &&
      g_ascii_string_to_unsigned (parts[1], 10, 1, 1000000, &n, nullptr) && i < n;
  g_strfreev (parts);
  if (!ok)
    return false;
  *index = static_cast<int> (i);
  *count = static_cast<int> (n);
  return true;
}

const char *cameras_word (size_t n)
{
  return n == 1 ? "camera" : "cameras";
}

/* --check: a start that does not return (a CUDA driver that does not answer) ends the check with
 * an error after kStartLimit instead of holding it without a word */
constexpr auto kStartLimit = std::chrono::seconds (30);

class StartWatch {
 public:
  StartWatch (const char *path, const cuvrun::CameraConfig &cam)
      : thread_ ([this, path, &cam] {
          std::unique_lock<std::mutex> lk (lock_);
          if (!done_cv_.wait_for (lk, kStartLimit, [this] { return done_; })) {
            g_printerr ("cudavision-run: %s:%d: [camera %s] pipeline: did not start within %lld s (a CUDA driver that "
                        "does not answer?)\n", path, cam.pipeline_line, cam.name.c_str (),
                static_cast<long long> (kStartLimit.count ()));
            _exit (2);
          }
        })
  {
  }
  ~StartWatch ()
  {
    {
      std::lock_guard<std::mutex> lk (lock_);
      done_ = true;
    }
    done_cv_.notify_one ();
    thread_.join ();
  }

 private:
  std::mutex lock_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

/* --check: the pipelines of this shard's cameras started on this host as the run starts them
 * (docs/fleet.md, "A camera list"): an element error is the config's error, a warning is printed.
 * Cameras with the same pipeline and cuda-device-id start alike, so each such pair is started
 * once (a start costs about 0.2 s on a GPU) and named by its first camera. */
bool pipelines_start_here (const char *path, const cuvrun::RunnerConfig &config, int shard, int shards)
{
  std::set<std::pair<std::string, int>> tried;
  bool ok = true;
  for (size_t k = 0; k < config.cameras.size (); k++) {
    const cuvrun::CameraConfig &cam = config.cameras[k];
    if (static_cast<int> (k % shards) != shard || !tried.insert ({cam.pipeline, cam.cuda_device_id}).second)
      continue;
    std::string error;
    std::vector<std::string> warnings;
    bool started;
    {
      StartWatch watch (path, cam);
      started = cuvrun::starts_here (cam, &error, &warnings);
    }
    for (const std::string &w : warnings)
      g_printerr ("cudavision-run: %s:%d: [camera %s] pipeline: warning: %s\n", path, cam.pipeline_line, cam.name.c_str (),
          w.c_str ());
    if (!started)
      g_printerr ("cudavision-run: %s:%d: [camera %s] pipeline: does not start on this host: %s\n", path,
          cam.pipeline_line, cam.name.c_str (), error.c_str ());
    ok = ok && started;
  }
  return ok;
}

/* What a site should know before the runner connects: settings that weaken it or cannot work. */
void warn_about (const cuvrun::BrokerConfig &b)
{
  if (b.tls_insecure)
    g_printerr ("cudavision-run: warning: tls-insecure: the broker's certificate and name are not verified (for tests only)\n");
  if (!b.username.empty () && b.password.empty ())
    g_printerr ("cudavision-run: warning: username '%s' without a password (password-file or %s)\n", b.username.c_str (),
        cuvrun::kBrokerPasswordEnv);
}

/* --metrics-port's value when it is not given (any number given is held to 0 to 65535) */
constexpr gint kPortNotGiven = G_MININT;

/* The command line's values. */
struct Options {
  gchar *shard_text = nullptr;
  gboolean check = FALSE;
  gboolean allow_empty = FALSE;
  gboolean version = FALSE;
  gint metrics_port = kPortNotGiven;
  int shard = 0;
  int shards = 1;
};

/* Parses the command line into @o (argv[1] is then the config); the exit code where the program
 * ends here (--version, an error), else -1. */
int parse_command_line (int *argc, char ***argv, Options *o)
{
  GOptionEntry entries[] = {
      {"shard", 0, 0, G_OPTION_ARG_STRING, &o->shard_text,
          "Run camera k of the list where k % N == I (0-based, in the file's order), so that N copies cover it",
          "I/N"},
      {"metrics-port", 0, 0, G_OPTION_ARG_INT, &o->metrics_port,
          "Serve /metrics, /healthz and /readyz on this port instead of the config's metrics-port (0: none)", "N"},
      {"check", 0, 0, G_OPTION_ARG_NONE, &o->check,
          "Check the config, its files (passwords, TLS) and every camera's pipeline and topics, then exit", nullptr},
      {"allow-empty", 0, 0, G_OPTION_ARG_NONE, &o->allow_empty,
          "Run (or pass --check) a config without cameras, with a warning, instead of refusing it", nullptr},
      {"version", 0, 0, G_OPTION_ARG_NONE, &o->version, "Print the version and exit", nullptr},
      {nullptr, 0, 0, G_OPTION_ARG_NONE, nullptr, nullptr, nullptr},
  };
  GOptionContext *ctx = g_option_context_new ("CONFIG - run cameras through gst-cudavision's elements");
  g_option_context_add_main_entries (ctx, entries, nullptr);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  GError *err = nullptr;
  const bool parsed = g_option_context_parse (ctx, argc, argv, &err);
  if (parsed && o->version) {
    g_print ("cudavision-run %s (%s)\n", CUV_VERSION, gst_version_string ());
    return 0;
  }
  if (!parsed || *argc != 2 || (o->metrics_port != kPortNotGiven && (o->metrics_port > 65535 || o->metrics_port < 0))) {
    g_printerr ("cudavision-run: %s\n%s",
        err ? err->message : *argc != 2 ? "one CONFIG file, please" : "--metrics-port: 0 to 65535",
        g_option_context_get_help (ctx, TRUE, nullptr));
    return 2;
  }
  g_option_context_free (ctx);
  if (o->shard_text && !parse_shard (o->shard_text, &o->shard, &o->shards)) {
    g_printerr ("cudavision-run: --shard %s: expected I/N with 0 <= I < N <= 1000000\n", o->shard_text);
    return 2;
  }
  return -1;
}

/* The results of the run that never reached the broker, by reason ("12 dropped for a full queue,
 * 1 refused"), or "" when there were none. */
std::string run_losses (const cuvrun::PublisherStats &stats)
{
  static const std::pair<const char *, const char *> kWords[] = {
    {cuvrun::kDroppedQueueFull, "dropped for a full queue"},
    {cuvrun::kDroppedRefused, "refused by the MQTT client or the broker"},
    {cuvrun::kDroppedShutdown, "still queued at the stop"},
  };
  std::string out;
  uint64_t total = 0;
  for (const auto &[reason, n] : stats.dropped)
    total += n;
  for (const auto &[reason, words] : kWords) {
    auto it = stats.dropped.find (reason);
    if (it != stats.dropped.end () && it->second)
      out += (out.empty () ? "" : ", ") + std::to_string (it->second) + " " + words;
  }
  if (total && out.empty ())
    out = std::to_string (total) + " dropped";
  return total ? std::to_string (total) + " (" + out + ")" : "";
}

/* Runs the cameras of shard @shard of @shards until a signal stops the runner; the exit code. */
int run (const cuvrun::RunnerConfig &config, int shard, int shards)
{
  const rlim_t files = cuvrun::raise_open_files_limit ();
  std::string error;
  const std::string runner_id = config.broker.client_id + "-" + std::to_string (shard) + "of" + std::to_string (shards);
  cuvrun::BrokerConfig broker = config.broker;
  broker.client_id = runner_id;
  cuvrun::Publisher publisher (broker, config.topic_prefix + "/runner/" + runner_id + "/state", runner_id,
      config.run_id, config.queue_limit);
  std::vector<std::unique_ptr<cuvrun::Camera>> cameras;
  for (size_t k = 0; k < config.cameras.size (); k++)
    if (static_cast<int> (k % shards) == shard)
      cameras.push_back (std::make_unique<cuvrun::Camera> (config.cameras[k], config, publisher));
  cuvrun::Metrics metrics (cameras, publisher, std::to_string (shard) + "/" + std::to_string (shards),
      cuvrun::HttpLimits {config.metrics_connections, config.metrics_idle_timeout_s});
  if (config.metrics_port > 0 && !metrics.start (config.metrics_address, config.metrics_port, &error)) {
    g_printerr ("cudavision-run: %s\n", error.c_str ());
    return 1;
  }
  const std::string serving = config.metrics_port == 0 ? std::string ("no metrics server")
      : "metrics on " + (config.metrics_address.empty () ? std::string ("every address") : config.metrics_address) +
          " port " + std::to_string (config.metrics_port);
  g_print ("cudavision-run %s: shard %d/%d, %zu of %zu %s, broker %s:%d%s%s, %s, open files limit %llu\n", CUV_VERSION,
      shard, shards, cameras.size (), config.cameras.size (), cameras_word (config.cameras.size ()), broker.host.c_str (),
      broker.port, broker.tls ? " over TLS" : "", broker.username.empty () ? "" : (" as " + broker.username).c_str (),
      serving.c_str (), static_cast<unsigned long long> (files));
  warn_about (broker);
  if (cameras.empty ())
    g_printerr ("cudavision-run: warning: shard %d/%d holds none of the %zu cameras: this runner has nothing to do\n",
        shard, shards, config.cameras.size ());
  if (!publisher.start (&error)) {
    g_printerr ("cudavision-run: %s\n", error.c_str ());
    return 1;
  }

  GMainLoop *loop = g_main_loop_new (nullptr, FALSE);
  /* kept installed: a second signal during the stop's drain would otherwise meet the default
   * action and end the runner without its last line and status */
  auto quit = [] (gpointer l) -> gboolean {
    g_main_loop_quit (static_cast<GMainLoop *> (l));
    return G_SOURCE_CONTINUE;
  };
  g_unix_signal_add (SIGINT, quit, loop);
  g_unix_signal_add (SIGTERM, quit, loop);
  g_unix_signal_add (SIGHUP, quit, loop);
  /* a stray SIGUSR1 or SIGUSR2 (a tool that sends them to reopen logs) never kills the runner */
  auto ignored = [] (gpointer name) -> gboolean {
    g_printerr ("cudavision-run: %s: ignored (SIGINT, SIGTERM or SIGHUP stop the runner)\n", static_cast<const char *> (name));
    return G_SOURCE_CONTINUE;
  };
  g_unix_signal_add (SIGUSR1, ignored, const_cast<char *> ("SIGUSR1"));
  g_unix_signal_add (SIGUSR2, ignored, const_cast<char *> ("SIGUSR2"));
  for (auto &c : cameras)
    c->start ();
  g_main_loop_run (loop);
  for (auto &c : cameras)
    c->stop ();
  cuvrun::drop_cuda_contexts ();
  /* what is queued gets a moment to reach the broker */
  const uint64_t queued = publisher.stop (2000);
  if (queued)
    g_printerr ("cudavision-run: %llu results were still queued for the broker and are lost\n",
        static_cast<unsigned long long> (queued));
  /* every loss of the run, not only the queue's at the stop: a queue that overflowed while the
   * broker was away and drained later, refusals (docs/fleet.md, "Operations") */
  const std::string losses = run_losses (publisher.stats ());
  if (losses.empty ())
    g_print ("cudavision-run: stopped, every result delivered\n");
  else
    g_printerr ("cudavision-run: stopped; results of this run not delivered: %s\n", losses.c_str ());
  g_main_loop_unref (loop);
  /* a supervisor sees results lost */
  const int status = losses.empty () ? 0 : 3;
  if (publisher.abandoned ()) {
    std::fflush (stdout);
    std::fflush (stderr);
    _exit (status);
  }
  return status;
}

}  // namespace

int main (int argc, char **argv)
{
  std::setlocale (LC_ALL, "");
  Options o;
  const int done = parse_command_line (&argc, &argv, &o);
  if (done >= 0)
    return done;
  cuvrun::RunnerConfig config;
  std::string error;
  if (!cuvrun::load_config (argv[1], &config, &error)) {
    g_printerr ("cudavision-run: %s\n", error.c_str ());
    return 2;
  }
  /* an empty or failed ConfigMap mount must not look like a healthy runner */
  if (config.cameras.empty () && !o.allow_empty) {
    g_printerr ("cudavision-run: %s: no camera ([camera NAME] groups): nothing would run (--allow-empty runs it all the "
                "same)\n", argv[1]);
    return 2;
  }
  if (o.metrics_port != kPortNotGiven)
    config.metrics_port = o.metrics_port;
  config.run_id = g_get_real_time ();
  size_t in_shard = 0;
  for (size_t k = 0; k < config.cameras.size (); k++)
    in_shard += static_cast<int> (k % o.shards) == o.shard;
  if (o.check) {
    if (!pipelines_start_here (argv[1], config, o.shard, o.shards))
      return 2;
    g_print ("%s: %zu %s, valid", argv[1], config.cameras.size (), cameras_word (config.cameras.size ()));
    if (o.shards > 1)
      g_print ("; shard %d/%d runs %zu of them", o.shard, o.shards, in_shard);
    g_print ("\n");
    return 0;
  }
  return run (config, o.shard, o.shards);
}
