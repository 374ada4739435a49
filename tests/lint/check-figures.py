#!/usr/bin/env python3
"""Every performance figure an element page quotes names the command that gives it.

Scans docs/elements/*.md for figures (a number with ms, us, µs, ns, s, seconds, GB/s, MB/s, fps,
"frames a second", or a ratio such as "1.3x" or "21.8 x copy" / "x the floor") in paragraphs, list
items and tables, outside code blocks and code spans. A block that quotes one must name the
command that produced it, in one of these ways:

- a code span in the block holding a command: `gst-launch-1.0 ...`, `tools/gpu-run.sh ...`,
  `build*/tests/bench/...`, `tests/bench/...`, `bench_pipelines ...` or `bench_kernels ...`;
- a citation docs/performance.md, "Section" (or docs/performance-log.md), whose section is a
  heading of that file, word for word;
- a paragraph that ends with ':' and is followed directly by a fenced code block holding such a
  command (the paragraph introduces it);
- a table right under such a code block, or whose introducing paragraph (the block right before
  it) names the command or cites the section.

In a table, a column whose header names a unit ("ms a frame", "GPU us", "x copy", "fps") makes
each of its numeric cells a figure.

Prints file:line for each block that fails and exits 1; prints "N figures checked" at the end.

  python3 tests/lint/check-figures.py [--root DIR]

Stdlib only. SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import glob
import os
import re
import sys

# a figure: a number, then a unit of time, rate or a ratio
NUMBER = r"(?<![\w.])\d[\d,]*(?:\.\d+)?"
FIGURE = re.compile(
    NUMBER + r"(?:"
    r"x(?!\w)"                                     # 1.3x, "2x faster"; not 16x16, 1920x1080
    r"|\s*(?:ms|us|µs|μs|ns|s|seconds?|milliseconds?|microseconds?)\b"
    r"|\s*(?:GB|MB|GiB|MiB)/s\b"
    r"|\s*fps\b"
    r"|\s*frames? (?:a|per) second\b"
    r"|\s*x (?:the |a )?(?:floor|copy|kernels?|anchor|baseline|videobalance|opencv|real[- ]time)\b"
    r")",
    re.IGNORECASE)
COMMAND = re.compile(
    r"(?:^|[\s`(])(?:gst-launch-1\.0\s|tools/gpu-run\.sh\b|build[\w.-]*/tests/bench/|tests/bench/\w"
    r"|bench_pipelines\b|bench_kernels\b)")
CITATION = re.compile(r"(?:docs/)?(performance(?:-log)?\.md)(?:\]\([^)]*\))?,\s*\"([^\"]+)\"")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# a table column of figures: its header names the unit ("ms a frame", "GPU us", "x copy", "fps")
UNIT_HEADER = re.compile(r"(?:^|[\s(])(?:ms|us|µs|μs|ns|GB/s|MB/s|fps|x (?:copy|kernels?|the floor|anchor))(?:$|[\s),])",
                         re.IGNORECASE)
CELL_NUMBER = re.compile(r"\d")


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


def figures(kind, body):
    """(line offset, figure text) of each figure of a block."""
    found = []
    for offset, line in enumerate(body):
        found += [(offset, m.group(0)) for m in FIGURE.finditer(CODE_SPAN.sub("", line))]
    if kind == "table" and len(body) > 2:
        header = cells(body[0])
        columns = [i for i, h in enumerate(header) if UNIT_HEADER.search(CODE_SPAN.sub("", h))]
        for offset, row in enumerate(body[2:], 2):
            row_cells = cells(row)
            found += [(offset, f"{row_cells[i]} ({header[i]})") for i in columns
                      if i < len(row_cells) and CELL_NUMBER.search(row_cells[i])]
    return found
ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s")


def headings(path):
    if not os.path.exists(path):
        return set()
    found, fence = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fence = not fence
            elif not fence and line.startswith("#"):
                found.add(line.lstrip("#").strip())
    return found


def blocks(lines):
    """(kind, first line number, lines) for each block: 'code' (fenced or indented), 'table',
    'heading' or 'text' (a paragraph or one list item)."""
    out, i, n = [], 0, len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.lstrip().startswith("```"):
            j = i + 1
            while j < n and not lines[j].lstrip().startswith("```"):
                j += 1
            out.append(("code", i + 1, lines[i:j + 1]))
            i = j + 1
            continue
        if line.startswith("#"):
            out.append(("heading", i + 1, [line]))
            i += 1
            continue
        if (line.startswith("    ") or line.startswith("\t")) and (not out or out[-1][0] != "text"
                                                                      or not ITEM.match(out[-1][2][0])):
            j = i
            while j < n and (lines[j].startswith("    ") or lines[j].startswith("\t") or not lines[j].strip()):
                j += 1
            out.append(("code", i + 1, lines[i:j]))
            i = j
            continue
        kind = "table" if line.lstrip().startswith("|") else "text"
        j = i + 1
        while (j < n and lines[j].strip() and not lines[j].lstrip().startswith("```")
               and not lines[j].startswith("#")
               and (lines[j].lstrip().startswith("|") == (kind == "table"))
               and not (kind == "text" and ITEM.match(lines[j]))):
            j += 1
        out.append((kind, i + 1, lines[i:j]))
        i = j
    return out


def names_command(text, sections):
    """Whether @text (a block's lines joined) names a command or cites an existing section."""
    for m in CODE_SPAN.finditer(text):
        if COMMAND.search(" " + m.group(2)):
            return True
    for m in CITATION.finditer(text):
        if m.group(2) in sections[m.group(1)]:
            return True
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    args = ap.parse_args()
    root = os.path.normpath(args.root)
    sections = {name: headings(os.path.join(root, "docs", name)) for name in ("performance.md", "performance-log.md")}
    pages = sorted(glob.glob(os.path.join(root, "docs", "elements", "*.md")))
    if not pages:
        print(f"no pages in {root}/docs/elements", file=sys.stderr)
        return 1
    checked, failures = 0, []
    for page in pages:
        with open(page, encoding="utf-8") as f:
            lines = f.read().split("\n")
        bl = blocks(lines)
        rel = os.path.relpath(page, root)
        for k, (kind, first, body) in enumerate(bl):
            if kind not in ("text", "table"):
                continue
            found = figures(kind, body)
            if not found:
                continue
            checked += len(found)
            text = "\n".join(body)
            ok = names_command(text, sections)
            nxt = bl[k + 1] if k + 1 < len(bl) else None
            prev = bl[k - 1] if k > 0 else None
            if not ok and kind == "text" and text.rstrip().endswith(":") and nxt and nxt[0] == "code":
                ok = bool(COMMAND.search("\n".join(nxt[2])))
            if not ok and kind == "table" and prev and prev[0] == "text":
                ok = names_command("\n".join(prev[2]), sections)
            if not ok and kind == "table" and prev and prev[0] == "code":
                ok = bool(COMMAND.search("\n".join(prev[2])))
            if not ok:
                for offset, fig in found:
                    failures.append(f"{rel}:{first + offset}: '{fig}' quoted without the command that gives it "
                                    "(a `command` code span, a code block the paragraph introduces with ':', "
                                    "or docs/performance.md, \"Section\")")
    for f in failures:
        print(f)
    print(f"{checked} figures checked")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
