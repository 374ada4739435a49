/* A camera for the fleet tests: an RTSP server on 127.0.0.1:PORT serving rtsp://127.0.0.1:PORT/cam,
 * a moving test pattern in H.264, made anew for each client, or with CUV_CAMERA_SHARED=1 one
 * stream that every client shares (many cameras from one encoder, for the GPU sizing of
 * docs/fleet.md). CUV_CAMERA_ENCODER names the encoder (default x264enc; openh264enc where the
 * GStreamer at hand has no x264enc; x265enc for H.265 cameras), CUV_CAMERA_FORMAT the raw format
 * it encodes (default I420; I420_10LE with x265enc for 10-bit Main10 cameras). With CUV_CAMERA_USER and CUV_CAMERA_PASSWORD the server asks
 * for them (HTTP Basic, as cameras do) and serves nobody else.
 *   rtsp-camera PORT [WIDTH HEIGHT FPS]
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/gst.h>
#include <gst/rtsp-server/rtsp-server.h>
#include <stdio.h>
#include <stdlib.h>

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  if (argc != 2 && argc != 5) {
    g_printerr ("usage: %s PORT [WIDTH HEIGHT FPS]\n", argv[0]);
    return 2;
  }
  const int width = argc == 5 ? atoi (argv[2]) : 160, height = argc == 5 ? atoi (argv[3]) : 120;
  const int fps = argc == 5 ? atoi (argv[4]) : 15;
  GstRTSPServer *server = gst_rtsp_server_new ();
  g_object_set (server, "address", "127.0.0.1", "service", argv[1], NULL);
  GstRTSPMediaFactory *factory = gst_rtsp_media_factory_new ();
  const char *encoder = g_getenv ("CUV_CAMERA_ENCODER");
  const char *format = g_getenv ("CUV_CAMERA_FORMAT") ? g_getenv ("CUV_CAMERA_FORMAT") : "I420";
  const gboolean x264 = !encoder || g_str_equal (encoder, "x264enc");
  const gboolean x265 = encoder && g_str_equal (encoder, "x265enc");
  gchar *encode = x264 || x265
      ? g_strdup_printf ("%s tune=zerolatency speed-preset=ultrafast key-int-max=%d", x265 ? "x265enc" : "x264enc", fps)
      : g_strdup_printf ("%s gop-size=%d", encoder, fps);
  const char *codec = x265 ? "h265" : "h264";
  gchar *launch = g_strdup_printf ("( videotestsrc is-live=true pattern=ball motion=sweep ! "
      "video/x-raw,format=%s,width=%d,height=%d,framerate=%d/1 ! %s ! %sparse ! rtp%spay name=pay0 pt=96 "
      "config-interval=1 )",
      format, width, height, fps, encode, codec, codec);
  g_free (encode);
  gst_rtsp_media_factory_set_shared (factory, g_strcmp0 (g_getenv ("CUV_CAMERA_SHARED"), "1") == 0);
  gst_rtsp_media_factory_set_launch (factory, launch);
  g_free (launch);
  const char *user = g_getenv ("CUV_CAMERA_USER"), *password = g_getenv ("CUV_CAMERA_PASSWORD");
  if (user && password) {
    GstRTSPAuth *auth = gst_rtsp_auth_new ();
    GstRTSPToken *token = gst_rtsp_token_new (GST_RTSP_TOKEN_MEDIA_FACTORY_ROLE, G_TYPE_STRING, "viewer", NULL);
    gchar *basic = gst_rtsp_auth_make_basic (user, password);
    gst_rtsp_auth_add_basic (auth, basic, token);
    g_free (basic);
    gst_rtsp_token_unref (token);
    gst_rtsp_server_set_auth (server, auth);
    g_object_unref (auth);
    GstRTSPPermissions *permissions = gst_rtsp_permissions_new ();
    gst_rtsp_permissions_add_role (permissions, "viewer", GST_RTSP_PERM_MEDIA_FACTORY_ACCESS, G_TYPE_BOOLEAN, TRUE,
        GST_RTSP_PERM_MEDIA_FACTORY_CONSTRUCT, G_TYPE_BOOLEAN, TRUE, NULL);
    gst_rtsp_media_factory_set_permissions (factory, permissions);
    gst_rtsp_permissions_unref (permissions);
  }
  GstRTSPMountPoints *mounts = gst_rtsp_server_get_mount_points (server);
  gst_rtsp_mount_points_add_factory (mounts, "/cam", factory);
  g_object_unref (mounts);
  if (gst_rtsp_server_attach (server, NULL) == 0) {
    g_printerr ("rtsp-camera: cannot listen on port %s\n", argv[1]);
    return 1;
  }
  g_print ("rtsp-camera: rtsp://127.0.0.1:%s/cam\n", argv[1]);
  g_main_loop_run (g_main_loop_new (NULL, FALSE));
  return 0;
}
