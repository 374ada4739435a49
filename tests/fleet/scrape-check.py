#!/usr/bin/env python3
"""Reads a Prometheus exposition with prometheus_client's own parser and checks samples.

  scrape-check.py FILE NAME 'LABELS-JSON' VALUE ...   each (NAME, labels) sample equals VALUE exactly
  scrape-check.py FILE --sample                       the claims about tests/fleet/exposition-sample's output
Values are compared as exact integers where they are written as integers (the text, not a float,
decides: 2^64-1 must read back as itself). Exits 1 on the first claim that does not hold.
"""
import json, sys
from prometheus_client.parser import text_string_to_metric_families

path, claims = sys.argv[1], sys.argv[2:]
text = open(path, encoding="utf-8").read()
samples = {}
for family in text_string_to_metric_families(text):
    for s in family.samples:
        samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
# the integers as written: prometheus_client reads every value as a float
raw = {}
for line in text.splitlines():
    if line and not line.startswith("#"):
        raw.setdefault(line.rsplit(" ", 1)[0].split("{")[0], []).append(line.rsplit(" ", 1)[1])

if claims == ["--sample"]:
    claims = ["sample_frames_total", json.dumps({"camera": 'q"uote'}), "10000001",
              "sample_frames_total", json.dumps({"camera": "back\\slash"}), "9007199254740993",
              "sample_frames_total", json.dumps({"camera": "line\nfeed"}), str(2**64 - 1),
              "sample_frames_total", json.dumps({"camera": "x" * 600}), "1263157",
              "sample_frames_total", json.dumps({"camera": "café", "element": "h-1"}), "-3",
              "sample_fps", json.dumps({"camera": "a"}), "29.97002997002997",
              "sample_fps", json.dumps({"camera": "b"}), "1e-09",
              "sample_fps", json.dumps({"camera": "c"}), "0.1",
              "sample_age_seconds_bucket", json.dumps({"camera": "a", "le": "0.005"}), "3",
              "sample_age_seconds_bucket", json.dumps({"camera": "a", "le": "0.1"}), "9",
              "sample_age_seconds_bucket", json.dumps({"camera": "a", "le": "+Inf"}), "10",
              "sample_age_seconds_sum", json.dumps({"camera": "a"}), "0.75",
              "sample_age_seconds_count", json.dumps({"camera": "a"}), "10"]
for i in range(0, len(claims), 3):
    name, labels, want = claims[i], json.loads(claims[i + 1]), claims[i + 2]
    key = (name, tuple(sorted(labels.items())))
    if key not in samples:
        sys.exit(f"FAIL: no sample {name}{labels}; the parser read {len(samples)} samples")
    got = samples[key]
    # an integer reads back as itself (newer parsers) or as the nearest double (older ones)
    exact = "." not in want and "e" not in want and "n" not in want.lower()
    if not ((exact and got == int(want)) or float(want) == got):
        sys.exit(f"FAIL: {name}{labels} = {got}, not {want}")
    if exact and want not in raw.get(name, []):
        sys.exit(f"FAIL: {name}{labels}: {want} is not written exactly ({raw.get(name)})")
    print(f"{name}{json.dumps(labels)[:60]} = {want}")
print(f"{len(samples)} samples parsed, {len(claims) // 3} claims held")
