"""docs/results.md's field tables are the schema of the four analysers' metas and messages: the
elements on the CPU backend, with the options that add fields (an RGB format's channel means, a
histogram ROI, regions, a first frame and the frames after it), write every field the tables list
for them and no other, each of the type the tables say; and cudavision.results () gives each
meta's every field as the Python value of that type.
  test_results_fields.py RESULTS_MD   (PYTHONPATH: the source's python/; GST_PLUGIN_PATH: the build's plugin)"""
import re
import sys

import gi

gi.require_version("Gst", "1.0")
import numpy as np  # noqa: E402
from gi.repository import Gst  # noqa: E402

import cudavision  # noqa: E402

Gst.init(None)
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


ANALYSERS = ("cudahistogram", "cudaheatmap", "cudanoisemap", "cudamotionest")


def field_tables(path):
    """{section: [(label, rows)]}: each table of docs/results.md whose header starts with `field |
    type`, under its `## ` heading, with the line of text before it ("Meta:", "Message:" or
    another); a row is (its backticked field names, its type cell, its meaning cell)."""
    sections, section, label, rows = {}, None, "", None
    for line in open(path, encoding="utf-8").read().split("\n") + [""]:
        if rows is not None and not line.startswith("|"):
            sections.setdefault(section, []).append((label, rows))
            rows = None
        if line.startswith("## "):
            section, label = line[3:].strip(), ""
        elif line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if rows is not None and not set(cells[0]) <= set("-: "):
                rows.append((re.findall(r"`([^`]+)`", cells[0]), cells[1], cells[3] if len(cells) > 3 else ""))
            elif rows is None and cells[:2] == ["field", "type"]:
                rows = []
        elif line.strip():
            label = line.strip()
    return sections


def type_of(cell, kind):
    """The GType name a type cell gives a meta (@kind "meta") or a message: its first word, or
    that after "meta:" / "message:" where the two differ."""
    parts = dict(p.strip().split(":", 1) for p in cell.split(";")) if "meta:" in cell else {kind: cell}
    return parts[kind].split()[0]


def schema(path):
    """{(analyser, "meta" or "message"): {field: GType name}} as docs/results.md's tables say."""
    sections = field_tables(path)
    every = {"meta": sections.get("Fields of every meta", []), "message": sections.get("Timing fields of every message", [])}
    out = {}
    for analyser in ANALYSERS:
        tables = sections.get(analyser, [])
        labelled = [(label, rows) for label, rows in tables if label in ("Meta:", "Message:")]
        for kind in ("meta", "message"):
            # a section with "Meta:" and "Message:" tables lists each apart (and its other tables,
            # a record's, are no structure's); else its one table is both, "meta only" rows the meta's
            chosen = [rows for label, rows in labelled if label == kind.title() + ":"] if labelled else \
                [[row for row in rows if kind == "meta" or not row[2].startswith("meta only")] for _, rows in tables[:1]]
            fields = {}
            for rows in [rows for _, rows in every[kind]] + chosen:
                for names, cell, _ in rows:
                    for name in names:
                        fields[name] = type_of(cell, kind)
            out[(analyser, kind)] = fields
    return out


def fields_of(s):
    return {s.nth_field_name(i): s.get_field_type(s.nth_field_name(i)).name for i in range(s.n_fields())}


documented = schema(sys.argv[1])
for analyser in ANALYSERS:
    check(len(documented[(analyser, "meta")]) > 1 and len(documented[(analyser, "message")]) > 5,
          f"docs/results.md has {analyser}'s meta and message tables: {documented[(analyser, 'meta')]}")

# every option that adds a field, each analyser once: RGBA (cudahistogram's channel means) with a
# ROI, then NV12 without; three frames, so a first frame and two after it
PIPELINES = [
    "videotestsrc num-buffers=3 pattern=ball ! video/x-raw,format=RGBA,width=64,height=48 ! "
    "cudahistogram backend=cpu bins=16 roi-x=8 roi-y=4 roi-width=32 roi-height=16 ! "
    "cudamotionest backend=cpu regions=true min-region-area=1 ! cudaheatmap backend=cpu ! "
    "cudanoisemap backend=cpu regions=true min-region-area=1 ! appsink name=sink sync=false",
    "videotestsrc num-buffers=3 pattern=ball ! video/x-raw,format=NV12,width=48,height=32 ! "
    "cudahistogram backend=cpu ! cudamotionest backend=cpu block-size=8x8 ! cudaheatmap backend=cpu ! "
    "cudanoisemap backend=cpu ! appsink name=sink sync=false",
]
META_OF = {v: k for k, v in cudavision._results.METAS.items()}
PYTHON = {"guint": int, "guint64": int, "gint": int, "gdouble": float, "gboolean": bool, "gchararray": str}
written = {key: {} for key in documented}  # (analyser, kind) -> {field: {GType names}}
for description in PIPELINES:
    pipe = Gst.parse_launch(description)
    sink = pipe.get_by_name("sink")
    pipe.set_state(Gst.State.PLAYING)
    frames = 0
    while (sample := sink.emit("pull-sample")) is not None:
        frames += 1
        buf = sample.get_buffer()
        py = {r["type"]: r for r in cudavision.results(buf).values()}
        for analyser in ANALYSERS:
            meta = buf.get_custom_meta(META_OF[analyser])
            if meta is None:
                check(False, f"{analyser}: no meta on frame {frames}")
                continue
            fields = fields_of(meta.get_structure())
            for name, gtype in fields.items():
                written[(analyser, "meta")].setdefault(name, set()).add(gtype)
            r = py.get(analyser, {})
            typed = {k: type(v) for k, v in r.items() if k != "type"}
            expect = {k: np.ndarray if t == "GBytes" else PYTHON.get(t) for k, t in fields.items()}
            check(typed == expect, f"{analyser}, frame {frames}: cudavision.results () gives every field of the meta "
                                   f"as its Python type ({sorted(set(typed.items()) ^ set(expect.items()), key=str)})")
    bus = pipe.get_bus()
    messages = 0
    while (msg := bus.pop_filtered(Gst.MessageType.ELEMENT)) is not None:
        s = msg.get_structure()
        if s.get_name() in ANALYSERS:
            messages += 1
            for name, gtype in fields_of(s).items():
                written[(s.get_name(), "message")].setdefault(name, set()).add(gtype)
    pipe.set_state(Gst.State.NULL)
    check(frames == 3 and messages == 12, f"{description.split(' ! ')[1]}: 3 frames, 12 messages ({frames}, {messages})")

for (analyser, kind), fields in sorted(documented.items()):
    seen = written[(analyser, kind)]
    check(set(seen) == set(fields), f"{analyser}'s {kind}: the fields it writes are docs/results.md's "
                                    f"(not documented: {sorted(set(seen) - set(fields))}, "
                                    f"not written: {sorted(set(fields) - set(seen))})")
    wrong = {name: (sorted(types), fields[name]) for name, types in seen.items() if name in fields and types != {fields[name]}}
    check(not wrong, f"{analyser}'s {kind}: each field of the type docs/results.md says (written, documented: {wrong})")

# the Python module's typing of bytes, which no structure says: the counts one uint64 a bin, the
# vectors rows x columns records
r = {v["type"]: v for v in cudavision.results(buf).values()}
check(r["cudahistogram"]["histogram"].dtype == np.uint64 and r["cudahistogram"]["histogram"].size == r["cudahistogram"]["bins"],
      "cudahistogram's counts: a uint64 a bin")
check(r["cudamotionest"]["vectors"].dtype == cudavision.MOTION_VECTOR and
      r["cudamotionest"]["vectors"].shape == (r["cudamotionest"]["rows"], r["cudamotionest"]["columns"]),
      "cudamotionest's vectors: rows x columns of MOTION_VECTOR")

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
