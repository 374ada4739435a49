/* cudavision-run: a camera's pipeline, made from elements and properties (docs/fleet.md), and the
 * topic each of its elements publishes on.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gst/gst.h>

#include <map>
#include <string>
#include <vector>

#include "runner/siteconfig.h"

namespace cuvrun {

/* Parses @description (gst-launch syntax) as a bin with one sink and one source pad. A property
 * value GLib only warns about (out of its range, of another type) is an error here, with GLib's
 * words, and so is an element that is not on the list of what a pipeline may hold (pipeline.cpp,
 * kAllowed: it reads or writes nothing but the frames). NULL with @error set on a problem. Main thread, before any camera runs: the warnings are
 * caught through GLib's process-wide default log handler. */
GstElement *parse_analysis_bin (const std::string &description, std::string *error);

/* Each element of @bin's topic level: its own name where the user gave one, else its factory's
 * name (with -1, -2... where a factory is there more than once), the same in every run. */
std::map<GstObject *, std::string> element_topics (GstElement *bin);

/* Whether @topic is one an MQTT client publishes to: UTF-8 without control characters, no
 * wildcard, not empty, at most 65,535 bytes (libmosquitto's own checks); else @why says why. */
bool valid_topic (const std::string &topic, std::string *why);

/* Sets cuda-device-id on each element of @bin that has it. */
void set_cuda_device (GstElement *bin, int device);

/* `--check`: whether @camera's pipeline starts on this host as the run starts it (its cuda-device-id
 * set, READY to PAUSED, where our elements choose their backend and open their device), without
 * its source. False with @error the first element error (backend=cuda where no CUDA device
 * works, a device that does not exist); each element warning in @warnings (backend=auto falling
 * back to the CPU). Main thread, before any camera runs. */
bool starts_here (const CameraConfig &camera, std::string *error, std::vector<std::string> *warnings);

struct CameraPipeline {
  GstElement *pipeline = nullptr; /* owned */
  GstElement *queue = nullptr;    /* the decoded frames' queue, leaky only for live sources */
  GstElement *sink = nullptr;
};

/* uridecodebin (its video only) ! queue ! the camera's bin ! fakesink, each made as an element:
 * the URI is a property, never text of a pipeline description. @camera must outlive the
 * pipeline (its credentials are given to the source when uridecodebin makes it). */
bool build_camera_pipeline (const CameraConfig &camera, CameraPipeline *out, std::string *error);

}  // namespace cuvrun
