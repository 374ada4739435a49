/* cudavision-run: what a value of the config must be (docs/fleet.md, "Keys"), for the key tables of
 * runner/siteconfig.cpp. Each returns true, or false with @why: what an error says after
 * "FILE:LINE: [GROUP] KEY: ".
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <string>

namespace cuvrun {

/* An address to listen on: an IP address, v4 or v6 (127.0.0.1, ::1, 0.0.0.0). */
bool is_ip_address (const std::string &address, std::string *why);

/* The topics' first level(s): no empty level, no wildcard, not the broker's own ($...). */
bool is_topic_prefix (const std::string &prefix, std::string *why);

/* The MQTT client id, which is also a level of the runner's state topic. */
bool is_client_id (const std::string &id, std::string *why);

/* A user name MQTT carries (the broker's) and a camera's source takes: no control character, at
 * most MQTT's 65,535 bytes. */
bool is_user_name (const std::string &name, std::string *why);

/* A camera's URI: a URI of a camera's scheme that a GStreamer source reads, with no secret in it;
 * v4l2:// a video device; file:// a regular file that holds video. */
bool is_camera_uri (const std::string &uri, std::string *why);

/* A camera's name (its group's, after "camera "): one topic level under @prefix. */
bool is_camera_name (const std::string &name, const std::string &prefix, std::string *why);

/* A camera's pipeline: it parses (every value in range, only elements a pipeline may hold), takes
 * video in and gives it out, links every element into the chain, and each element's topic under
 * PREFIX/CAMERA/ is valid and its own. */
bool is_camera_pipeline (const std::string &pipeline, const std::string &prefix, const std::string &camera,
    std::string *why);

}  // namespace cuvrun
