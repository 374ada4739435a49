/* A camera for the fleet test: an RTSP server on 127.0.0.1:PORT serving rtsp://127.0.0.1:PORT/cam,
 * a moving test pattern in H.264 (x264enc), made anew for each client.
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
  gchar *launch = g_strdup_printf ("( videotestsrc is-live=true pattern=ball motion=sweep ! "
      "video/x-raw,width=%d,height=%d,framerate=%d/1 ! x264enc tune=zerolatency speed-preset=ultrafast "
      "key-int-max=%d ! rtph264pay name=pay0 pt=96 config-interval=1 )", width, height, fps, fps);
  gst_rtsp_media_factory_set_launch (factory, launch);
  g_free (launch);
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
