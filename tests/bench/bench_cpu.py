#!/usr/bin/env python3
"""The CPU backend against the anchors a user compares it with, in one run on one machine.

Each element runs with backend=cpu in `videotestsrc pattern=snow ! <element> ! fakesink`; its time
a frame is taken between two pad probes on the streaming thread (the buffer entering its sink pad
and leaving its source pad), so the source's own time is not in it; the median over the frames
after the first three. GStreamer's videobalance is timed the same way. The OpenCV anchors
(python3-opencv, all its threads) run on numpy frames of the same size: the median of as many
calls. Prints a Markdown table: milliseconds a frame, ours with n-threads=0 (every core) and 1,
the anchor, and ours (every core) / anchor. The YUY2, UYVY (a webcam's) and P010_10LE (a 10-bit
decoder's) rows run the element on those formats against the same anchor, with their time over
the element's NV12 row of the same run (`/ NV12`).

  tests/bench/bench_cpu.py [--build DIR] [--sizes 640x480,1280x720,1920x1080] [--frames N]
                           [--only TEXT] [--formats NV12,YUY2,...] [--no-single] [--cpu-time]

Installs python3-opencv when it is missing (apt-get, as tools/deps.sh does).
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import os
import statistics
import subprocess
import time


def ensure_opencv():
    try:
        import cv2  # noqa: F401
    except ImportError:
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "python3-opencv"],
                       check=True, env=env, stdout=subprocess.DEVNULL)


parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--build", default="build", help="the build directory whose plugin is timed")
parser.add_argument("--sizes", default="640x480,1280x720,1920x1080")
parser.add_argument("--frames", type=int, default=23, help="frames a pipeline runs (the first 3 are not counted)")
parser.add_argument("--only", default="", help="only the rows whose element or anchor contains this text")
parser.add_argument("--formats", default="", help="only these formats (comma-separated), e.g. NV12,YUY2,UYVY,P010_10LE")
parser.add_argument("--no-single", action="store_true", help="leave out the n-threads=1 column (faster)")
parser.add_argument("--cpu-time", action="store_true",
                    help="add a column of the process's CPU time a frame (every thread), for loaded machines")
args = parser.parse_args()

os.environ["GST_PLUGIN_PATH_1_0"] = os.path.abspath(os.path.join(args.build, "gst"))
os.environ.setdefault("GST_REGISTRY_1_0", os.path.abspath(os.path.join(args.build, "bench-cpu-registry.bin")))
ensure_opencv()

import cv2  # noqa: E402
import gi  # noqa: E402
import numpy as np  # noqa: E402

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

Gst.init(None)


def element_ms(element, fmt, w, h, frames, cpu=False):
    """Median milliseconds a frame inside @element (a gst-launch description named "e"); with @cpu
    the process's CPU time over the same span (every thread: the element's bands included), which
    other processes on a loaded machine do not inflate as they do the wall time."""
    pipe = Gst.parse_launch(
        f"videotestsrc pattern=snow num-buffers={frames} ! video/x-raw,format={fmt},width={w},height={h} ! "
        f"{element} name=e ! fakesink")
    e = pipe.get_by_name("e")
    entered, spans = {}, []

    clock = time.process_time if cpu else time.perf_counter

    def on_sink(pad, info):
        entered[info.get_buffer().pts] = clock()
        return Gst.PadProbeReturn.OK

    def on_src(pad, info):
        t = entered.pop(info.get_buffer().pts, None)
        if t is not None:
            spans.append(clock() - t)
        return Gst.PadProbeReturn.OK

    e.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, on_sink)
    e.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, on_src)
    pipe.set_state(Gst.State.PLAYING)
    msg = pipe.get_bus().timed_pop_filtered(600 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipe.set_state(Gst.State.NULL)
    if msg is None or msg.type == Gst.MessageType.ERROR:
        raise RuntimeError(f"{element} {fmt} {w}x{h}: " + (msg.parse_error()[0].message if msg else "no EOS"))
    return 1000 * statistics.median(spans[3:] if len(spans) > 6 else spans)


def cv_ms(fn, runs):
    """Median milliseconds a call of @fn."""
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1000 * statistics.median(times)


def opencv_anchors(w, h, runs):
    rng = np.random.default_rng(1)
    gray = rng.integers(0, 256, (h, w), dtype=np.uint8)
    gray2 = np.roll(gray, (2, 3), axis=(0, 1))
    rgba = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
    rgba2 = np.roll(rgba, (2, 3), axis=(0, 1))

    def sobel(img):
        gx = cv2.convertScaleAbs(cv2.Sobel(img, cv2.CV_16S, 1, 0))
        gy = cv2.convertScaleAbs(cv2.Sobel(img, cv2.CV_16S, 0, 1))
        return cv2.addWeighted(gx, 0.5, gy, 0.5, 0)

    dis = cv2.DISOpticalFlow_create(cv2.DISOPTICAL_FLOW_PRESET_ULTRAFAST)
    return {
        "sobel gray": cv_ms(lambda: sobel(gray), runs),
        "sobel rgba": cv_ms(lambda: sobel(rgba), runs),
        "calcHist": cv_ms(lambda: cv2.calcHist([gray], [0], None, [256], [0, 256]), runs),
        "absdiff+colormap": cv_ms(lambda: cv2.applyColorMap(cv2.absdiff(gray, gray2), cv2.COLORMAP_INFERNO), runs),
        "absdiff+threshold": cv_ms(lambda: cv2.threshold(cv2.absdiff(gray, gray2), 10, 255, cv2.THRESH_BINARY), runs),
        # the same operations on the RGBA frames themselves: the bytes an RGBA element moves
        "calcHist of cvtColor rgba": cv_ms(
            lambda: cv2.calcHist([cv2.cvtColor(rgba, cv2.COLOR_RGBA2GRAY)], [0], None, [256], [0, 256]), runs),
        "absdiff+threshold rgba": cv_ms(lambda: cv2.threshold(cv2.absdiff(rgba, rgba2), 10, 255, cv2.THRESH_BINARY), runs),
        "DIS ultrafast": cv_ms(lambda: dis.calc(gray, gray2, None), max(3, runs // 4)),
    }


# element, its properties, formats, the OpenCV anchor per format (or videobalance's properties; None:
# no anchor, as videobalance has no P010)
PACKED = ("YUY2", "UYVY", "P010_10LE")
ROWS = [
    ("cudasobel", "", {"NV12": "sobel gray", "YUY2": "sobel gray", "UYVY": "sobel gray", "P010_10LE": "sobel gray",
                       "RGBA": "sobel rgba"}),
    ("cudaenhance", "contrast=1.3 saturation=1.2", {"NV12": "videobalance", "YUY2": "videobalance",
                                                    "UYVY": "videobalance", "P010_10LE": None, "RGBA": "videobalance"}),
    ("cudahistogram", "", {"NV12": "calcHist", "YUY2": "calcHist", "UYVY": "calcHist", "P010_10LE": "calcHist",
                           "RGBA": "calcHist"}),
    ("cudahistogram", "", {"RGBA": "calcHist of cvtColor rgba"}),
    ("cudaheatmap", "", {"NV12": "absdiff+colormap", "YUY2": "absdiff+colormap", "UYVY": "absdiff+colormap",
                         "P010_10LE": "absdiff+colormap", "RGBA": "absdiff+colormap"}),
    ("cudanoisemap", "threshold=10", {"NV12": "absdiff+threshold", "YUY2": "absdiff+threshold",
                                      "UYVY": "absdiff+threshold", "P010_10LE": "absdiff+threshold",
                                      "RGBA": "absdiff+threshold"}),
    ("cudanoisemap", "threshold=10", {"RGBA": "absdiff+threshold rgba"}),
    ("cudamotionest", "block-size=8x8 search-range=16", {"NV12": "DIS ultrafast", "YUY2": "DIS ultrafast",
                                                         "P010_10LE": "DIS ultrafast"}),
    ("cudamotionest", "block-size=variable search-range=16", {"NV12": "DIS ultrafast", "YUY2": "DIS ultrafast",
                                                              "P010_10LE": "DIS ultrafast"}),
]
formats_wanted = set(f for f in args.formats.split(",") if f)

print(f"CPU backend, {os.cpu_count()} cores, OpenCV {cv2.__version__} ({cv2.getNumThreads()} threads), "
      f"GStreamer {Gst.version_string()}; ms a frame, median")
print()
cpu_head = " ours, CPU ms | / NV12 |" if args.cpu_time else ""
print("| element | format | size | ours | ours, n-threads=1 | anchor | anchor ms | ours / anchor | / NV12 |" + cpu_head)
print("|---|---|---|---:|---:|---|---:|---:|---:|" + ("---:|---:|" if args.cpu_time else ""))
for size in args.sizes.split(","):
    w, h = (int(v) for v in size.split("x"))
    anchors = opencv_anchors(w, h, args.frames)
    for name, props, formats in ROWS:
        nv12_ms = nv12_cpu = None
        for fmt, anchor in formats.items():
            if args.only and args.only not in name + " " + props + " " + (anchor or ""):
                continue
            if formats_wanted and fmt not in formats_wanted:
                continue
            element = f"{name} backend=cpu {props}".strip()
            ours = element_ms(element, fmt, w, h, args.frames)
            one = "-" if args.no_single else f"{element_ms(element + ' n-threads=1', fmt, w, h, args.frames):.2f}"
            cpu = element_ms(element, fmt, w, h, args.frames, cpu=True) if args.cpu_time else None
            if fmt == "NV12":
                nv12_ms, nv12_cpu = ours, cpu
            if anchor is None:
                ms = None
            elif anchor == "videobalance":
                ms = element_ms(f"videobalance {props}", fmt, w, h, args.frames)
            else:
                ms = anchors[anchor]
            ratio = f"{ours / nv12_ms:.2f}" if fmt in PACKED and nv12_ms else "-"
            anchor_cols = f"{anchor} | {ms:.2f} | {ours / ms:.2f}" if ms else "- | - | -"
            cpu_cols = ""
            if args.cpu_time:
                cpu_ratio = f"{cpu / nv12_cpu:.2f}" if fmt in PACKED and nv12_cpu else "-"
                cpu_cols = f" {cpu:.2f} | {cpu_ratio} |"
            print(f"| {name} {props} | {fmt} | {w}x{h} | {ours:.2f} | {one} | {anchor_cols} | {ratio} |{cpu_cols}",
                  flush=True)
