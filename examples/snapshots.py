#!/usr/bin/env python3
"""Saves a PNG whenever something moves: cudanoisemap's changed-pixel ratio crosses a threshold.

    examples/snapshots.py [--source test|/dev/videoN|FILE] [--threshold 0.01] [--gap 2.0] [--out snapshots]

A camera (or a file, or the test scene: a ball sweeping over a still background) goes through
cudanoisemap (mode=overlay: the frame with its changed pixels painted red), which puts a
CudaNoisemapMeta on every buffer. A pad probe reads its changed-ratio; when it is above
--threshold and the last snapshot is at least --gap seconds of stream old, the frame is encoded to
PNG and written to --out. Runs until the source ends or Ctrl-C. Needs python3-gst-1.0 and the
plugin on GST_PLUGIN_PATH.
"""
import argparse
import os
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

TEST_SCENE = ("videotestsrc pattern=ball motion=sweep num-buffers={frames} "
              "background-color=0xff303030 ! video/x-raw,width=640,height=360,framerate=30/1")


def source_description(source, frames):
    if source == "test":
        return TEST_SCENE.format(frames=frames if frames > 0 else -1)
    if source.startswith("/dev/video"):
        return f"v4l2src device={source}"
    return f"uridecodebin uri={Gst.filename_to_uri(os.path.abspath(source))}"


class Snapshots:
    def __init__(self, args):
        self.args = args
        self.last = None  # stream time of the last snapshot
        self.saved = []
        self.pipeline = Gst.parse_launch(
            f"{source_description(args.source, args.frames)} ! videoconvert ! "
            f"cudanoisemap name=noise mode=overlay threshold={args.pixel_threshold} post-messages=false ! "
            "videoconvert ! pngenc name=png ! fakesink name=sink signal-handoffs=true")
        self.ratio = {}  # PTS -> changed-ratio, from the meta, until pngenc's output of that frame arrives
        noise = self.pipeline.get_by_name("noise").get_static_pad("src")
        noise.add_probe(Gst.PadProbeType.BUFFER, self.on_analysed)
        self.pipeline.get_by_name("sink").connect("handoff", self.on_png)

    def on_analysed(self, pad, info):
        buf = info.get_buffer()
        meta = buf.get_custom_meta("CudaNoisemapMeta")
        if meta is not None:
            self.ratio[buf.pts] = meta.get_structure().get_value("changed-ratio")
        return Gst.PadProbeReturn.OK

    def on_png(self, sink, buf, pad):
        ratio = self.ratio.pop(buf.pts, 0.0)
        seconds = buf.pts / Gst.SECOND
        if ratio < self.args.threshold or (self.last is not None and seconds - self.last < self.args.gap):
            return
        self.last = seconds
        path = os.path.join(self.args.out, f"snapshot-{seconds:08.2f}s.png")
        ok, info = buf.map(Gst.MapFlags.READ)
        if ok:
            with open(path, "wb") as f:
                f.write(info.data)
            buf.unmap(info)
            self.saved.append(path)
            print(f"{seconds:7.2f} s: {100 * ratio:.1f} % of the frame changed -> {path}", flush=True)

    def run(self):
        loop = GLib.MainLoop()
        bus = self.pipeline.get_bus()
        bus.add_signal_watch()

        def on_message(bus, msg):
            if msg.type == Gst.MessageType.ERROR:
                err, debug = msg.parse_error()
                print(f"error from {msg.src.get_name()}: {err.message}", file=sys.stderr)
                loop.quit()
            elif msg.type == Gst.MessageType.EOS:
                loop.quit()

        bus.connect("message", on_message)
        self.pipeline.set_state(Gst.State.PLAYING)
        try:
            loop.run()
        except KeyboardInterrupt:
            pass
        self.pipeline.set_state(Gst.State.NULL)
        bus.remove_signal_watch()
        return self.saved


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", default="test", help="test (default), /dev/videoN or a video file")
    parser.add_argument("--frames", type=int, default=300, help="frames of the test scene (default 300)")
    parser.add_argument("--threshold", type=float, default=0.01,
                        help="changed-pixel ratio that triggers a snapshot (default 0.01)")
    parser.add_argument("--pixel-threshold", type=int, default=20,
                        help="cudanoisemap's threshold: a pixel changed by more than this counts (default 20)")
    parser.add_argument("--gap", type=float, default=2.0, help="seconds between snapshots at least (default 2)")
    parser.add_argument("--out", default="snapshots", help="directory for the PNGs (default snapshots/)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    Gst.init(None)
    saved = Snapshots(args).run()
    print(f"{len(saved)} snapshots in {args.out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
