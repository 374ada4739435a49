#!/usr/bin/env python3
"""Runs the four cudavision analysers over a video and plots what they measured.

    examples/analyse.py [--source test|webcam|FILE] [--frames N] [--size WxH] [--out DIR]

The frames go through cudahistogram and cudamotionest (both pass the frame on), then a tee feeds
cudaheatmap and cudanoisemap. cudavision.frames() runs the pipeline, gives the frames of its three
branches with their metas (the motion vectors as a numpy structured array) and keeps every element
message of the bus; the script writes into DIR (default analysis/):

    histogram.png  the luma histogram summed over the run, and the R, G, B and luma means per frame
    change.png     cudanoisemap's changed-pixel ratio and cudaheatmap's mean difference per frame
    motion.png     one frame with its motion vectors drawn as arrows (matplotlib's quiver) and, on
                   GStreamer 1.24+, its moving regions as boxes
    results.json   the series behind the plots, and each frame's moving regions

cudamotionest runs with regions=true: on GStreamer 1.24+ the script reads the moving regions as
GStreamer's object detections (GstAnalytics), as any analytics-aware application would, without
this plugin's own metas.

Needs python3-gi, python3-numpy and python3-matplotlib (tools/deps.sh installs them), the plugin
(GST_PLUGIN_PATH, else the source tree's build/ or CUDAVISION_BUILD=DIR) and the cudavision module
(installed, else python/ and the build's python/). Results reference: docs/results.md; this
script: docs/python.md.
"""
import argparse
import json
import os
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

import cuvlib  # noqa: E402  the module and the plugin: installed, else the build's (examples/cuvlib.py)

cudavision = cuvlib.import_cudavision()

try:  # GStreamer's analytics metadata and its Python overrides (1.24+)
    gi.require_version("GstAnalytics", "1.0")
    from gi.repository import GLib, GstAnalytics  # noqa: E402
except (ValueError, ImportError):
    GstAnalytics = None

import matplotlib  # noqa: E402

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def test_scene(frames, width, height):
    """Colour bars sliding left with a ball sweeping over them: edges, colour and motion."""
    size = f"width={width},height={height},framerate=30/1"
    return (f"videotestsrc num-buffers={frames} pattern=smpte horizontal-speed=3 ! video/x-raw,{size} ! scene. "
            f"videotestsrc num-buffers={frames} pattern=ball motion=sweep background-color=0x00000000 ! "
            f"video/x-raw,format=BGRA,{size} ! scene. "
            f"compositor name=scene ! video/x-raw,{size}")


def pipeline_description(source, frames, width, height):
    if source == "test":
        src = test_scene(frames, width, height)
    elif source == "webcam":
        src = "v4l2src"
    else:
        src = f"uridecodebin uri={Gst.filename_to_uri(os.path.abspath(source))}"
    # system memory at the branch ends, so that Python maps plain frames; an appsink a branch, so that
    # the loop ends once all three have ended
    return (
        f"{src} ! videoconvert ! videoscale ! video/x-raw,format=RGBA,width={width},height={height} ! "
        "cudahistogram name=hist ! cudamotionest name=motion regions=true ! tee name=t "
        "t. ! queue ! video/x-raw ! appsink name=frames "
        "t. ! queue ! cudaheatmap ! video/x-raw ! appsink name=heat "
        "t. ! queue ! cudanoisemap ! video/x-raw ! appsink name=noise"
    )


def regions(buf):
    """The object detections on @buf (cudamotionest's moving regions, type "motion") as dicts, read
    through GstAnalytics' Python overrides; [] where GStreamer has no analytics library."""
    if GstAnalytics is None:
        return []
    rmeta = GstAnalytics.buffer_get_analytics_relation_meta(buf)
    found = []
    # by id, which every version has: 1.26's overrides also iterate a relation meta, 1.24's none
    for i in range(GstAnalytics.relation_get_length(rmeta) if rmeta else 0):
        ok, mtd = rmeta.get_od_mtd(i)
        if not ok:
            continue
        ok, x, y, w, h, confidence = mtd.get_location()
        if ok:
            found.append({"type": GLib.quark_to_string(mtd.get_obj_type()), "x": x, "y": y, "width": w, "height": h,
                          "confidence": confidence})
    return found


class Analysis:
    """Everything the analysers said about one run."""

    def __init__(self, snapshot_frame):
        self.messages = {"cudahistogram": [], "cudaheatmap": [], "cudanoisemap": [], "cudamotionest": []}
        self.snapshot_frame = snapshot_frame
        self.frames_seen = 0
        self.snapshot = None  # (RGBA image, vectors, unit, regions) of one frame
        self.regions = []  # per frame, the moving regions

    def on_frame(self, f):
        """A frame of the frames branch, with the histogram and motion metas."""
        self.frames_seen += 1
        self.regions.append(regions(f.buffer))
        if self.frames_seen - 1 == self.snapshot_frame:
            motion = f.results["motion"]  # the vectors: rows x columns of cudavision.MOTION_VECTOR
            self.snapshot = (f.array.copy(), motion["vectors"], motion["unit"], self.regions[-1])

    def on_message(self, message):
        if message.type == Gst.MessageType.WARNING:
            print(f"warning from {message.src.get_name()}: {message.parse_warning()[0].message}", file=sys.stderr)
            return
        s = message.get_structure()
        if s is not None and s.get_name() in self.messages:
            self.messages[s.get_name()].append({s.nth_field_name(i): plain(s.get_value(s.nth_field_name(i)))
                                                for i in range(s.n_fields())})


def plain(value):
    """A message field as JSON: numbers and strings as they are, arrays as lists."""
    if isinstance(value, (int, float, str, bool)):
        return value
    if isinstance(value, Gst.ValueArray) or hasattr(value, "__iter__"):
        return [plain(v) for v in value]
    return str(value)


def run(source="test", frames=60, width=320, height=240):
    cuvlib.init_gst("cudahistogram")  # and the build's plugin where it is not installed nor on GST_PLUGIN_PATH
    analysis = Analysis(min(frames // 2, 30))
    seen = {"frames": 0, "heat": 0, "noise": 0}
    # the element messages and warnings are kept in video.messages, in the bus's order
    with cudavision.frames(pipeline_description(source, frames, width, height),
                           messages=Gst.MessageType.ELEMENT | Gst.MessageType.WARNING) as video:
        for f in video:
            if f.source == "frames" and seen["frames"] < frames:
                analysis.on_frame(f)
            seen[f.source] += 1
            if source != "test" and min(seen.values()) >= frames:
                break  # the test scene ends by itself; a camera or a file after FRAMES on every branch
    for message in video.messages:
        analysis.on_message(message)
    return analysis


def series(analysis):
    """The data behind the plots, from the messages (one per frame: interval 0)."""
    hist = analysis.messages["cudahistogram"]
    seconds = [m["timestamp"] / Gst.SECOND for m in hist]
    return {
        "time": seconds,
        "histogram": np.sum([m["histogram"] for m in hist], axis=0).tolist() if hist else [],
        "luma-mean": [m["luma-mean"] for m in hist],
        "r-mean": [m.get("r-mean") for m in hist],
        "g-mean": [m.get("g-mean") for m in hist],
        "b-mean": [m.get("b-mean") for m in hist],
        "changed-ratio": [m["changed-ratio"] for m in analysis.messages["cudanoisemap"]],
        "mean-difference": [m["mean-difference"] for m in analysis.messages["cudaheatmap"]],
        "mean-magnitude": [m["mean-magnitude"] for m in analysis.messages["cudamotionest"]],
    }


def plot(analysis, data, out):
    os.makedirs(out, exist_ok=True)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.5))
    a.bar(range(len(data["histogram"])), data["histogram"], width=1.0, color="0.3")
    a.set(title="luma histogram (all frames)", xlabel="luma", ylabel="pixels")
    for key, colour in (("r-mean", "red"), ("g-mean", "green"), ("b-mean", "blue"), ("luma-mean", "black")):
        if any(v is not None for v in data[key]):
            b.plot(data["time"], data[key], color=colour, label=key)
    b.set(title="means per frame", xlabel="stream time (s)", ylim=(0, 255))
    b.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "histogram.png"), dpi=80)

    fig, a = plt.subplots(figsize=(6, 3.5))
    n = min(len(data["time"]), len(data["changed-ratio"]), len(data["mean-difference"]))
    a.plot(data["time"][:n], data["changed-ratio"][:n], color="red", label="changed-ratio (cudanoisemap)")
    a.set(xlabel="stream time (s)", ylabel="changed-ratio", ylim=(0, 1))
    twin = a.twinx()
    twin.plot(data["time"][:n], data["mean-difference"][:n], color="blue", label="mean-difference (cudaheatmap)")
    twin.set_ylabel("mean-difference (0..765)")
    fig.legend(loc="center right", fontsize="small")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "change.png"), dpi=80)

    if analysis.snapshot is not None:
        image, vectors, unit, boxes = analysis.snapshot
        fig, a = plt.subplots(figsize=(6, 4.5))
        a.imshow(image[:, :, :3])
        rows, columns = vectors.shape
        step = max(1, columns // 40)  # at most 40 arrows a row
        y, x = np.mgrid[0:rows:step, 0:columns:step] * unit + unit / 2
        v = vectors[::step, ::step]
        # a vector points to where the content was in the previous frame: the motion is its opposite
        a.quiver(x, y, -v["dx"], -v["dy"], color="yellow", angles="xy", scale_units="xy", scale=0.5)
        for r in boxes:
            a.add_patch(plt.Rectangle((r["x"], r["y"]), r["width"], r["height"], fill=False, color="cyan"))
        a.set(title=f"motion vectors of frame {analysis.snapshot_frame} (arrows x2)", xticks=[], yticks=[])
        fig.tight_layout()
        fig.savefig(os.path.join(out, "motion.png"), dpi=80)
    plt.close("all")
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"series": data, "messages": analysis.messages, "regions": analysis.regions}, f, indent=1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", default="test", help="test (default), webcam, or a video file")
    parser.add_argument("--frames", type=int, default=60, help="frames to analyse (default 60)")
    parser.add_argument("--size", default="320x240", help="frame size the source is scaled to (default 320x240)")
    parser.add_argument("--out", default="analysis", help="directory for the plots (default analysis/)")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    analysis = run(args.source, args.frames, width, height)
    data = series(analysis)
    plot(analysis, data, args.out)
    counts = ", ".join(f"{len(v)} {k}" for k, v in analysis.messages.items())
    moving = sum(len(r) for r in analysis.regions)
    where = f"{moving} moving regions" if GstAnalytics else "no GstAnalytics (GStreamer before 1.24): no regions read"
    print(f"{analysis.frames_seen} frames; messages: {counts}; {where}; plots in {args.out}/")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except cudavision.PipelineError as e:  # the pipeline's error, naming its element
        sys.exit(f"error: {e} ({e.debug})")
