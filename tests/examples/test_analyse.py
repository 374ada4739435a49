"""examples/analyse.py on the CPU backend: its plots' data against what the elements said.

Runs the script on 20 frames of its test scene, then runs the same pipeline again here, reading
every buffer's metas and every bus message with nothing but Gst (the scene is deterministic), and
checks that results.json holds exactly the messages' series, that each message agrees with the
meta of its frame (interval 0: one message per frame), that the motion vectors (as
cudavision.results gives them to the script) decode the same as a plain struct unpack and give the
message's mean magnitude, that the moving regions it read through GstAnalytics' Python iterator
(GStreamer 1.24+) are the relation meta's object detections read one by one by id, and that the
plots were written."""
import json
import math
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import analyse  # noqa: E402
from gi.repository import Gst  # noqa: E402

FRAMES = 20
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def close(a, b):
    return a == b or (a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12))


def run_witness():
    """The same pipeline, read here: metas per buffer and messages per element (fakesinks for its
    appsinks: nothing pulls from them here)."""
    pipeline = Gst.parse_launch(analyse.pipeline_description("test", FRAMES, 320, 240).replace("appsink", "fakesink"))
    metas = {"frames": [], "heat": [], "noise": []}
    detections = []

    def probe(name):
        def on_buffer(pad, info):
            buf = info.get_buffer()
            names = {"frames": ["CudaHistogramMeta", "CudaMotionMeta"], "heat": ["CudaHeatmapMeta"],
                     "noise": ["CudaNoisemapMeta"]}[name]
            metas[name].append({n: buf.get_custom_meta(n).get_structure().copy() for n in names})
            if name == "frames":
                detections.append(detections_by_id(buf))
                metas[name][-1]["vectors"] = analyse.cudavision.results(buf)["motion"]["vectors"]
            return Gst.PadProbeReturn.OK
        pipeline.get_by_name(name).get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, on_buffer)

    for name in metas:
        probe(name)
    messages = {}
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    while True:
        msg = bus.timed_pop_filtered(30 * Gst.SECOND, Gst.MessageType.ELEMENT | Gst.MessageType.EOS |
                                     Gst.MessageType.ERROR)
        assert msg is not None and msg.type != Gst.MessageType.ERROR, "the witness run failed"
        if msg.type == Gst.MessageType.EOS:
            break
        s = msg.get_structure()
        messages.setdefault(s.get_name(), []).append(s.copy())
    pipeline.set_state(Gst.State.NULL)
    return metas, messages, detections


def detections_by_id(buf):
    """The object detections of @buf's relation meta, fetched by id (not through the iterator)."""
    if analyse.GstAnalytics is None:
        return []
    rmeta = analyse.GstAnalytics.buffer_get_analytics_relation_meta(buf)
    found = []
    # ids count from 0 in a relation meta; cudamotionest's holds object detections only
    while rmeta:
        ok, od = rmeta.get_od_mtd(len(found))
        if not ok:
            break
        _, x, y, w, h, confidence = od.get_location()
        found.append({"type": analyse.GLib.quark_to_string(od.get_obj_type()), "x": x, "y": y, "width": w,
                      "height": h, "confidence": confidence})
    return found


def main():
    out = tempfile.mkdtemp()
    check(analyse.main(["--frames", str(FRAMES), "--out", out]) == 0, "analyse.py exit status")
    with open(os.path.join(out, "results.json")) as f:
        results = json.load(f)
    series = results["series"]
    metas, messages, detections = run_witness()

    # the moving regions, where GStreamer has its analytics library
    check(len(results["regions"]) == FRAMES, "results.json: regions for every frame")
    if analyse.GstAnalytics is not None:
        check(results["regions"] == detections, "results.json regions = the relation metas' detections by id")
        boxes = [r for frame in results["regions"] for r in frame]
        check(len(boxes) > 0 and all(r["type"] == "motion" for r in boxes), "moving regions of type motion found")
        check(all(0 <= r["x"] and r["x"] + r["width"] <= 320 and 0 <= r["y"] and r["y"] + r["height"] <= 240 and
                  0 < r["confidence"] <= 1 for r in boxes), "every region inside the frame, confidence in (0, 1]")
        check(results["regions"][0] == [], "no region on the first frame")
    else:
        print("no GstAnalytics here (GStreamer before 1.24): regions not checked")

    for element in ("cudahistogram", "cudaheatmap", "cudanoisemap", "cudamotionest"):
        check(len(messages.get(element, [])) == FRAMES, f"{element}: {FRAMES} messages")
    hist = messages["cudahistogram"]
    for key in ("luma-mean", "r-mean", "g-mean", "b-mean"):
        check(all(close(a, m.get_value(key)) for a, m in zip(series[key], hist)) and len(series[key]) == FRAMES,
              f"results.json {key} = the messages'")
    total = [sum(m.get_value("histogram")[k] for m in hist) for k in range(hist[0].get_value("bins"))]
    check(series["histogram"] == total, "results.json histogram = the messages' summed")
    check(series["time"] == [m.get_value("timestamp") / Gst.SECOND for m in hist], "results.json time")
    for key, element in (("changed-ratio", "cudanoisemap"), ("mean-difference", "cudaheatmap"),
                         ("mean-magnitude", "cudamotionest")):
        check([round(v, 12) for v in series[key]] == [round(m.get_value(key), 12) for m in messages[element]],
              f"results.json {key} = the {element} messages'")

    # each message agrees with the meta of its frame
    for i in range(FRAMES):
        h = metas["frames"][i]["CudaHistogramMeta"]
        check(close(h.get_value("luma-mean"), hist[i].get_value("luma-mean")), f"frame {i}: histogram meta = message")
        n = metas["noise"][i]["CudaNoisemapMeta"]
        check(n.get_value("changed-pixels") == messages["cudanoisemap"][i].get_value("changed-pixels"),
              f"frame {i}: noisemap meta = message")
        d = metas["heat"][i]["CudaHeatmapMeta"]
        check(close(d.get_value("mean-difference"), messages["cudaheatmap"][i].get_value("mean-difference")),
              f"frame {i}: heatmap meta = message")
        m = metas["frames"][i]["CudaMotionMeta"]
        vectors = metas["frames"][i]["vectors"]
        raw = m.get_value("vectors").get_data()
        unpacked = list(struct.iter_unpack("<bbBBI", raw))
        fields = ("dx", "dy", "width", "height", "cost")
        decoded = list(zip(*(vectors[f].ravel().tolist() for f in fields)))
        check(vectors.shape == (m.get_value("rows"), m.get_value("columns")) and decoded == unpacked,
              f"frame {i}: motion vectors decode field by field as GstCudaMotionVector records")
        magnitude = sum(math.hypot(dx, dy) for dx, dy, _, _, _ in unpacked) / max(1, len(unpacked))
        check(math.isclose(magnitude, messages["cudamotionest"][i].get_value("mean-magnitude"), rel_tol=1e-9),
              f"frame {i}: mean magnitude of the decoded vectors = the message's")
    check(any(r > 0 for r in series["changed-ratio"][1:]), "the scene changes")
    check(series["mean-magnitude"][-1] > 0, "the scene moves")

    for png in ("histogram.png", "change.png", "motion.png"):
        path = os.path.join(out, png)
        with open(path, "rb") as f:
            head = f.read(8)
        check(head == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 2000, f"{png} written")
    print(f"test_analyse: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
