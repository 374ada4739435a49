#!/usr/bin/env python3
"""Reads mosquitto_sub -v output (TOPIC JSON per line) and checks the fleet test's claims.

  check-results.py FILE all CAM...            every camera has results
  check-results.py FILE since T CAM...        every camera has results timestamped after T (us)
  check-results.py FILE gaps MS T0 T1 CAM...  no camera has a gap over MS ms between T0 and T1 (us)
  check-results.py FILE seq [CAM...]          each (listed) camera's run has seq 1..max without a hole
  check-results.py FILE state CAM STATE       CAM published STATE
  check-results.py FILE count CAM N           CAM's run has exactly N results, seq 1..N
  check-results.py FILE none CAM              no result from CAM arrived
  check-results.py FILE topic TOPIC STATE     a message on TOPIC says "state": STATE (the runner's own)
  check-results.py FILE prefix PREFIX         no message at all on a topic under PREFIX/
  check-results.py FILE elements CAM E...     CAM has results from each element E
Prints what it found; exits 1 when a claim does not hold.
"""
import json, sys

path, what, args = sys.argv[1], sys.argv[2], sys.argv[3:]
results, states, by_topic = [], [], []
for line in open(path, encoding="utf-8", errors="replace"):
    topic, _, payload = line.strip().partition(" ")
    try:
        msg = json.loads(payload)
    except ValueError:
        continue
    by_topic.append((topic, msg))
    if "camera" in msg:
        (states if topic.endswith("/state") else results).append(msg)

def fail(text):
    print("FAIL:", text)
    sys.exit(1)

if what in ("all", "since"):
    since = int(args.pop(0)) if what == "since" else 0
    for cam in args:
        n = sum(1 for m in results if m["camera"] == cam and m["time-us"] > since)
        if n == 0:
            fail(f"no results from {cam}" + (f" after {since}" if since else ""))
    print(f"results from all {len(args)} cameras" + (" since then" if since else ""))
elif what == "gaps":
    limit, t0, t1 = int(args[0]) * 1000, int(args[1]), int(args[2])
    for cam in args[3:]:
        times = sorted(m["time-us"] for m in results if m["camera"] == cam and t0 <= m["time-us"] <= t1)
        if not times:
            fail(f"{cam}: no results between the two times")
        worst = max([b - a for a, b in zip(times, times[1:])] + [times[0] - t0, t1 - times[-1]])
        if worst > limit:
            fail(f"{cam}: a gap of {worst / 1000:.0f} ms")
    print(f"no gap over {limit // 1000} ms in {len(args) - 3} cameras")
elif what == "seq":
    runs = {}
    for m in results:
        if not args or m["camera"] in args:
            runs.setdefault((m["camera"], m["run"]), set()).add(m["seq"])
    if args and len({cam for cam, _ in runs}) < len(args):
        fail(f"results from {len({cam for cam, _ in runs})} of the {len(args)} cameras")
    for (cam, run), seqs in sorted(runs.items()):
        missing = set(range(1, max(seqs) + 1)) - seqs
        if missing:
            first = min(missing)
            around = sorted(m["time-us"] for m in results if m["camera"] == cam and m["run"] == run and
                            abs(m["seq"] - first) <= 1)
            fail(f"{cam} run {run}: {len(missing)} of {max(seqs)} results missing (first {first}, "
                 f"published about {around[0] if around else '?'} us)")
    print(f"{len(runs)} camera runs, every result from 1 to the last there")
elif what == "state":
    cam, state = args
    if not any(m["camera"] == cam and m["state"] == state for m in states):
        fail(f"{cam} never published state {state}")
    print(f"{cam} published {state}")
elif what == "count":
    cam, n = args[0], int(args[1])
    seqs = sorted(m["seq"] for m in results if m["camera"] == cam)
    if seqs != list(range(1, n + 1)):
        fail(f"{cam}: {len(seqs)} results, seq {seqs[:3]}...{seqs[-3:]}, not 1..{n}")
    print(f"{cam}: exactly {n} results, seq 1..{n}")
elif what == "none":
    n = sum(1 for m in results if m["camera"] == args[0])
    if n:
        fail(f"{n} results from {args[0]} arrived")
    print(f"no result from {args[0]}")
elif what == "topic":
    topic, state = args
    if not any(t == topic and m.get("state") == state for t, m in by_topic):
        fail(f"no '{state}' on {topic}")
    print(f"{topic}: {state}")
elif what == "prefix":
    n = sum(1 for t, _ in by_topic if t.startswith(args[0] + "/"))
    if n:
        fail(f"{n} messages under {args[0]}/")
    print(f"nothing under {args[0]}/")
elif what == "elements":
    cam, names = args[0], args[1:]
    seen = {m.get("element") for m in results if m["camera"] == cam}
    missing = [e for e in names if e not in seen]
    if missing:
        fail(f"{cam}: no results from {', '.join(missing)}")
    print(f"{cam}: results from each of {', '.join(names)}")
else:
    fail(f"unknown claim {what}")
