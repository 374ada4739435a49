#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The rules of the source tree that docs/design.md states and no compiler checks:

- every include of a project header names its folder from the repository root ("kernels/base/image.h"),
  but for a header gst/meson.build installs, which names another it installs by its bare name;
- no comment cites a document outside the repository or an issue number: the rules are in docs/;
- no file of gst/ includes an element's header but the element's own file (and plugin.cpp, which
  registers them);
- the layers (docs/design.md, "Layers"): a file of kernels/ includes only kernels/; of common/, only
  common/ and kernels/, lies in one of common/'s folders (element, route, results, cuda, base) and
  includes of common/ only files of its own folder or of the folders after it, with no cycle among
  them; of gst/, only gst/, common/ and kernels/, and an element's file (gst/gstcudaX.{h,cpp}, and gst/gstcudaYmeta.h
  of the element whose name begins with Y) no other element's file;
- no function of common/ or runner/ is longer than 80 lines, and no file of common/ or gst/ is
  600 lines or longer;
- docs/performance.md, the current figures, stays under 400 lines (the history is the log's);
- every element gst/plugin.cpp registers is in the tests' element list (tests/common/cuvtest.h's
  kElements) and in tests/meson.build's faults tests, so that a new element cannot miss them.

Run by meson (`meson test sources`) with the source root as its argument; prints each breach and
exits 1 when there is one."""
import os
import re
import subprocess
import sys

# The files still over 600 lines, each with the size it may not reach (docs/design.md, "Layers"):
# it only shrinks, and goes once the file is under 600.
OVER_THE_SIZE = {}

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
os.chdir(root)
try:
    files = subprocess.check_output(["git", "ls-files", "--cached", "--others", "--exclude-standard"], stderr=subprocess.DEVNULL).decode().split()
except (OSError, subprocess.CalledProcessError):
    files = [os.path.relpath(os.path.join(d, f)) for d, _, fs in os.walk(".") for f in fs
             if not d.startswith(("./build", "./.git", "./.dev"))]
sources = [f for f in files if re.search(r"\.(c|cc|cpp|h|cu|cuh)$", f) and os.path.exists(f)]
breaches = []

# element headers: the ones that declare an element type
element_headers = {f for f in sources if f.startswith("gst/") and f.endswith(".h")
                   and "GST_ELEMENT_REGISTER_DECLARE" in open(f).read()}

# the headers gst/meson.build installs: they name each other by their bare names, which resolve
# beside the including header in the tree and once installed
installed = re.search(r"install_headers\(([^)]*)\)", open("gst/meson.build").read())
installed = {"gst/" + h for h in re.findall(r"'([\w.]+\.h)'", installed.group(1))} if installed else set()


def bare_include_ok(f, inc):
    return inc == "config.h" or (f in installed and "gst/" + inc in installed)


for f in sources:
    text = open(f, encoding="utf-8").read()
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if m:
            inc = m.group(1)
            if "/" not in inc and not bare_include_ok(f, inc):
                breaches.append(f"{f}:{n}: include \"{inc}\" without its folder (docs/design.md, includes)")
            if inc in element_headers and f != inc.replace(".h", ".cpp") and f != "gst/plugin.cpp":
                breaches.append(f"{f}:{n}: includes the element header {inc} (docs/design.md, gst/)")
        if re.search(r"DESIGN\.md|\b[Ii]ssues? #?\d+|\brule \d+\b", line):
            breaches.append(f"{f}:{n}: cites a document outside the repository or an issue: {line.strip()}")


def functions(lines):
    """(name, first line, length) of each function body: a brace that opens a line at column 0 or 2
    (a function, or an inline member of a struct) to the brace that closes it at the same column."""
    open_at = {}
    for n, line in enumerate(lines):
        for indent in ("", "  "):
            if line == indent + "{":
                open_at[indent] = n
            elif line.startswith(indent + "}") and not line.startswith(indent + " ") and indent in open_at:
                start = open_at.pop(indent)
                head = next((lines[k] for k in range(start - 1, max(start - 4, -1), -1) if "(" in lines[k]), "?")
                yield head.strip(), start, n - start + 1


for f in sources:
    if not f.startswith(("common/", "gst/", "runner/")):
        continue
    lines = open(f, encoding="utf-8").read().splitlines()
    if f.startswith(("common/", "runner/")):
        for head, start, length in functions(lines):
            if length > 80:
                breaches.append(f"{f}:{start + 1}: {length} lines, over 80: {head}")
    limit = OVER_THE_SIZE.get(f, 600)
    if f.startswith(("common/", "gst/")) and len(lines) >= limit:
        breaches.append(f"{f}: {len(lines)} lines, a file of common/ and gst/ stays under {limit}")

# the current figures only: what they replace goes to docs/performance-log.md
figures = len(open("docs/performance.md", encoding="utf-8").read().splitlines())
if figures >= 400:
    breaches.append(f"docs/performance.md: {figures} lines; it stays under 400 (move what a later figure replaced to "
                    "docs/performance-log.md)")

# ---- the layers (docs/design.md, "Layers") ----

# common/'s folders, top to bottom: a file includes files of its own folder and of the folders after
# it, never one before, and the includes between files of common/ make no cycle
COMMON_FOLDERS = ["element", "route", "results", "cuda", "base"]


def common_folder(f):
    parts = f.split("/")
    return COMMON_FOLDERS.index(parts[1]) if len(parts) == 3 and parts[1] in COMMON_FOLDERS else None


for f in sorted(f for f in sources if f.startswith("common/") and common_folder(f) is None):
    breaches.append(f"{f}: not in one of common/'s folders ({', '.join(COMMON_FOLDERS)}; docs/design.md, Layers)")
common_edges = {}

# an element's files: its own pair, and the meta header named after the start of its name
elements = sorted(set(re.findall(r"GST_ELEMENT_REGISTER \((\w+), plugin\)", open("gst/plugin.cpp").read())))


def element_of(f):
    m = re.match(r"gst/gst(cuda\w+?)(meta|frame|settings)?\.(h|cpp)$", f)
    if not m:
        return None
    if m.group(2) != "meta":
        return m.group(1) if m.group(1) in elements else None
    return next((e for e in elements if e.startswith(m.group(1))), None)


allowed = {"kernels/": ("kernels/",), "common/": ("common/", "kernels/"), "gst/": ("gst/", "common/", "kernels/")}
for f in sources:
    layer = next((l for l in allowed if f.startswith(l)), None)
    if not layer:
        continue
    for n, line in enumerate(open(f, encoding="utf-8").read().split("\n"), 1):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not m or m.group(1) == "config.h":
            continue
        inc = m.group(1) if "/" in m.group(1) else os.path.join(os.path.dirname(f), m.group(1))
        if not inc.startswith(allowed[layer]):
            breaches.append(f"{f}:{n}: includes {inc}; a file of {layer} includes only {', '.join(allowed[layer])} "
                            "(docs/design.md, Layers)")
        elif layer == "common/" and inc.startswith("common/"):
            if None not in (common_folder(f), common_folder(inc)) and common_folder(inc) < common_folder(f):
                breaches.append(f"{f}:{n}: includes {inc}, from a folder of common/ above its own "
                                f"({', '.join(COMMON_FOLDERS)}: docs/design.md, Layers)")
            common_edges.setdefault(os.path.splitext(f)[0], set()).add(os.path.splitext(inc)[0])
        elif layer == "gst/" and element_of(f) and element_of(inc) not in (None, element_of(f)):
            breaches.append(f"{f}:{n}: includes {inc}, a file of {element_of(inc)}, from a file of {element_of(f)} "
                            "(docs/design.md, Layers)")

# no cycle among common/'s files (a header and its source are one)
def cycle_from(node, path, done):
    if node in path:
        return path[path.index(node):] + [node]
    if node in done:
        return None
    done.add(node)
    for nxt in sorted(common_edges.get(node, ())):
        if nxt != node:
            found = cycle_from(nxt, path + [node], done)
            if found:
                return found
    return None


done = set()
for node in sorted(common_edges):
    found = cycle_from(node, [], done)
    if found:
        breaches.append("common/: the includes go round: " + " -> ".join(found) + " (docs/design.md, Layers)")
        break

# every element the plugin registers is in the tests' element list and the faults tests
registered = set(re.findall(r"GST_ELEMENT_REGISTER \((\w+), plugin\)", open("gst/plugin.cpp").read()))
listed = set(re.findall(r'^\s*\{"(\w+)", "', open("tests/common/cuvtest.h").read().split("kElements[]")[1].split("};")[0], re.M))
faults = re.search(r"foreach e : \[([^\]]*)\]\n\s*foreach memory", open("tests/meson.build").read())
faulted = set(re.findall(r"'(\w+)'", faults.group(1))) if faults else set()
for name in sorted(registered - listed):
    breaches.append(f"tests/common/cuvtest.h: {name} is registered but not in cuvtest::kElements")
for name in sorted(registered - faulted):
    breaches.append(f"tests/meson.build: {name} is registered but not in the faults tests' list")
for name in sorted((listed | faulted) - registered):
    breaches.append(f"{name} is in the tests' element lists but gst/plugin.cpp does not register it")

# a frame's path (docs/design.md, "A frame's path"): an element calls only those functions of the
# base class that read no per-frame state back; what a frame needs comes in its cuv::FrameJob
# (the filter's and the analyser's: what a frame needs comes in its job, or as begin_frame's argument)
BASE_CALLS = {"gst_cuda_vision_filter_class_add_templates", "gst_cuda_vision_filter_update_passthrough",
              "gst_cuda_vision_filter_stream_continues", "gst_cuda_vision_filter_drain_frames",
              "gst_cuda_vision_filter_get_type", "gst_cuda_vision_analyser_class_set_results",
              "gst_cuda_vision_analyser_reset_interval", "gst_cuda_vision_analyser_get_type"}
for f in sources:
    if f.startswith(("gst/", "examples/")):
        for n, line in enumerate(open(f), 1):
            for call in re.findall(r"\b(gst_cuda_vision_(?:filter|analyser)_\w+)\s*\(", line):
                if call not in BASE_CALLS:
                    breaches.append(f"{f}:{n}: calls {call}, which the base class does not offer its elements: a "
                                    "frame's needs come in its cuv::FrameJob or as begin_frame's arguments (docs/design.md, \"A frame's path\")")
# nothing of common/ finds an element's route through a global function pointer
for f in sources:
    if f.startswith("common/"):
        for n, line in enumerate(open(f), 1):
            if re.match(r"^(static\s+)?(cuv::)?Route\s*&\s*\(\s*\*", line.strip()):
                breaches.append(f"{f}:{n}: a global that finds an element's route; pass the route as an argument "
                                "(docs/design.md, \"A frame's path\")")

for b in breaches:
    print(b)
print(f"source rules: {len(sources)} files, {len(breaches)} breaches")
sys.exit(1 if breaches else 0)
