#!/usr/bin/env python3
"""Saves a PNG whenever something moves: cudanoisemap's changed-pixel ratio crosses a threshold.

    examples/snapshots.py [--source test|/dev/videoN|FILE] [--threshold 0.01] [--gap 2.0] [--out snapshots]

A camera (or a file, or the test scene: a ball sweeping over a still background) goes through
cudanoisemap (mode=overlay: the frame with its changed pixels painted red), which puts a
CudaNoisemapMeta on every buffer. cudavision.frames() gives each frame in RGBA with its results;
when the changed-ratio is above --threshold and the last snapshot is at least --gap seconds of
stream old, the frame is written to --out as a PNG. Runs until the source ends or Ctrl-C; a
pipeline's error ends it with the element's message. Needs python3-gst-1.0, numpy, the plugin
(GST_PLUGIN_PATH, else the source tree's build/ or CUDAVISION_BUILD=DIR) and the cudavision module
(installed, else python/ and the build's python/).
"""
import argparse
import os
import struct
import sys
import zlib

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

import cuvlib  # noqa: E402  the module and the plugin: installed, else the build's (examples/cuvlib.py)

cudavision = cuvlib.import_cudavision()
import numpy  # noqa: E402

TEST_SCENE = ("videotestsrc pattern=ball motion=sweep num-buffers={frames} "
              "background-color=0xff303030 ! video/x-raw,width=640,height=360,framerate=30/1")


def source_description(source, frames):
    if source == "test":
        return TEST_SCENE.format(frames=frames if frames > 0 else -1)
    if source.startswith("/dev/video"):
        return f"v4l2src device={source}"
    return f"uridecodebin uri={Gst.filename_to_uri(os.path.abspath(source))}"


def write_png(path, rgb):
    """@rgb, H x W x 3 uint8, as an 8-bit RGB PNG: each row behind filter byte 0, deflated."""
    height, width, _ = rgb.shape
    rows = numpy.zeros((height, 1 + width * 3), numpy.uint8)
    rows[:, 1:] = rgb.reshape(height, width * 3)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))


def run(args):
    """The snapshots' paths, written as the frames come."""
    saved, last = [], None  # last: stream time of the last snapshot
    pipeline = (f"{source_description(args.source, args.frames)} ! videoconvert ! "
                f"cudanoisemap name=noise mode=overlay threshold={args.pixel_threshold}")
    try:
        with cudavision.frames(pipeline, rgb=True) as video:  # stopped when the block ends
            for f in video:
                ratio = f.results["noise"]["changed-ratio"]
                seconds = f.pts / Gst.SECOND
                if ratio < args.threshold or (last is not None and seconds - last < args.gap):
                    continue
                last = seconds
                path = os.path.join(args.out, f"snapshot-{seconds:08.2f}s.png")
                write_png(path, f.array[:, :, :3])
                saved.append(path)
                print(f"{seconds:7.2f} s: {100 * ratio:.1f} % of the frame changed -> {path}", flush=True)
    except KeyboardInterrupt:
        pass
    return saved


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
    cuvlib.init_gst("cudanoisemap")  # and the build's plugin where it is not installed nor on GST_PLUGIN_PATH
    saved = run(args)
    print(f"{len(saved)} snapshots in {args.out}/")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except cudavision.PipelineError as e:  # the pipeline's error, naming its element
        sys.exit(f"error from {e}")
