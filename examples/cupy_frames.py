#!/usr/bin/env python3
"""cudaheatmap's map into CuPy without a copy: where the picture changes, computed on the GPU.

    examples/cupy_frames.py [--source test|webcam|FILE] [--frames N] [--size WxH]

cudavision.frames() runs the pipeline and gives cudaheatmap's RGBA maps, in CUDA memory, one at a
time; cupy.asarray() reads a map through the CUDA array interface, over the same memory
(docs/python.md). The script finds each frame's share of changed pixels (with the default `sine`
colour map, red or green over 128: a change of more than a sixth of the largest) and where the
change is centred, and prints them every 30 frames. Without CUDA or without CuPy the frames come
in system memory and numpy does the same sums on the CPU; it says so. A pipeline's error ends it
with the element's message.

Needs python3-gi with python3-gst-1.0, numpy, CuPy for the GPU, the plugin (GST_PLUGIN_PATH, else the
source tree's build/ or CUDAVISION_BUILD=DIR) and the cudavision module (installed, else
python/ and the build's python/).
"""
import argparse
import itertools
import os
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

import cuvlib  # noqa: E402  the module and the plugin: installed, else the build's (examples/cuvlib.py)

cudavision = cuvlib.import_cudavision()
import numpy  # noqa: E402

try:
    import cupy
    if cupy.cuda.runtime.getDeviceCount() == 0:
        cupy = None
except Exception:  # no CuPy, or no CUDA device for it  # noqa: BLE001
    cupy = None


def source(name, frames, width, height):
    if name == "test":
        src = f"videotestsrc num-buffers={frames} pattern=ball motion=sweep"
    elif name == "webcam":
        src = "v4l2src"
    else:
        src = f"uridecodebin uri={Gst.filename_to_uri(os.path.abspath(name))}"
    return f"{src} ! videoconvert ! videoscale ! video/x-raw,format=NV12,width={width},height={height}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default="test", help="test (default), webcam (v4l2src) or a video file")
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--size", default="1280x720")
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    cuvlib.init_gst("cudaheatmap")  # and the build's plugin where it is not installed nor on GST_PLUGIN_PATH
    # CUDA memory from cudaupload on, when CuPy can read it; else the frames stay in system memory
    upload = "cudaupload ! " if cupy is not None and Gst.ElementFactory.find("cudaupload") else ""

    changed = []  # each frame's share of changed pixels
    pipeline = f"{source(args.source, args.frames, width, height)} ! {upload}cudaheatmap"
    with cudavision.frames(pipeline) as video:  # stopped when the block ends, also at an error
        for n, f in enumerate(itertools.islice(video, args.frames)):
            xp = cupy if f.device is not None else numpy
            rgba = xp.asarray(f.array)  # H x W x 4 over the frame's memory
            if n == 0:
                print(f"{f.format} {f.width}x{f.height}: " + (
                    f"CUDA memory, a CuPy array on cuda:{f.device} over the frame's memory (no copy)" if xp is cupy
                    else "no CUDA or no CuPy here: frames in system memory, numpy views on the CPU (no copy)"))
            hot = xp.maximum(rgba[..., 0], rgba[..., 1]) > 128
            changed.append(float(hot.mean()))
            if n % 30 == 0:
                rows, cols = xp.nonzero(hot)
                where = f" around ({float(cols.mean()):.0f}, {float(rows.mean()):.0f})" if changed[-1] > 0 else ""
                print(f"frame {n}: {changed[-1] * 100:.2f}% changed{where}")

    if not changed:
        sys.exit("no frame")
    print(f"{len(changed)} frames")


if __name__ == "__main__":
    try:
        main()
    except cudavision.PipelineError as e:  # the pipeline's error, naming its element
        sys.exit(f"error: {e} ({e.debug})")
