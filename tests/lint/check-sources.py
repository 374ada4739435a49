#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The rules of the source tree that docs/design.md states and no compiler checks:

- every include of a project header names its folder from the repository root ("kernels/image.h");
- no comment cites a document outside the repository or an issue number: the rules are in docs/;
- no file of gst/ includes an element's header but the element's own file (and plugin.cpp, which
  registers them);
- no function of common/ is longer than 80 lines, and the filter base stays under 600 lines;
- every element gst/plugin.cpp registers is in the tests' element list (tests/common/cuvtest.h's
  kElements) and in tests/meson.build's faults tests, so that a new element cannot miss them.

Run by meson (`meson test sources`) with the source root as its argument; prints each breach and
exits 1 when there is one."""
import os
import re
import subprocess
import sys

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

for f in sources:
    text = open(f, encoding="utf-8").read()
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if m:
            inc = m.group(1)
            if "/" not in inc and inc != "config.h":
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
    if not f.startswith("common/"):
        continue
    lines = open(f, encoding="utf-8").read().split("\n")
    for head, start, length in functions(lines):
        if length > 80:
            breaches.append(f"{f}:{start}: {length} lines, over 80: {head}")
    if f == "common/gstcudavisionfilter.cpp" and len(lines) >= 600:
        breaches.append(f"{f}: {len(lines)} lines, the filter base stays under 600")

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

for b in breaches:
    print(b)
print(f"source rules: {len(sources)} files, {len(breaches)} breaches")
sys.exit(1 if breaches else 0)
