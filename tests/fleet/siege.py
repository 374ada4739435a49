"""The runner's metrics port under siege (docs/fleet.md, "Security"): slow and idle clients, a
process short of file descriptors, requests it must refuse. Every check is a client's view: a
status within a deadline, a socket the server closed.
  siege.py RUNNER_PID PORT IDLE_TIMEOUT_S LIMIT [small]
With `small` (a runner at the least metrics-connections): idle connections queued behind the few
slots and a flood of connects must not delay a later client past 1 s."""
import os
import socket
import subprocess
import sys
import time

pid, port, idle_timeout, limit = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def get(path="/healthz", deadline=1.0, request=None):
    """The status line's code, or the error, of one request on a new connection within DEADLINE."""
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=deadline) as s:
            s.settimeout(max(0.01, deadline - (time.monotonic() - start)))
            s.sendall(request or f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            head = b""
            while b"\r\n" not in head:
                chunk = s.recv(4096)
                if not chunk:
                    break
                head += chunk
            fields = head.split(b" ", 2)
            return (int(fields[1]) if len(fields) > 1 else f"closed: {head!r}"), time.monotonic() - start
    except OSError as e:
        return f"{type(e).__name__}: {e}", time.monotonic() - start


def rss_kb():
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))


def open_files():
    return len(os.listdir(f"/proc/{pid}/fd"))


def metric(name):
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    for line in data.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def connect_many(n, first=b""):
    """N connections (those the kernel takes), each having sent FIRST."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        socks.append(s)
    time.sleep(0.2)
    for s in socks:
        try:
            s.send(first) if first else None
        except OSError:
            pass
    return socks


def closed_by_server(s):
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


status, took = get()
check(status == 200, f"/healthz answers at the start: {status} in {took:.3f} s")

if len(sys.argv) > 5 and sys.argv[5] == "small":
    for n in (10, 40, 150):
        idle = connect_many(n)
        time.sleep(0.3)
        status, took = get(deadline=1.0)
        check(status == 200, f"limit {limit}, {n} idle connections waiting: a later client answered {status} in {took:.3f} s")
        for s in idle:
            s.close()
        time.sleep(1.5)
    flood, opened, end = [], 0, time.monotonic() + 8
    while time.monotonic() < end:
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            continue
        flood.append(s)
        opened += 1
        if len(flood) > 50:
            flood.pop(0).close()
    for s in flood:
        s.close()
    after = [get(deadline=1.0) for _ in range(5)]
    check(all(s == 200 for s, _ in after), f"limit {limit}, after a flood of {opened} connects in 8 s: {[s for s, _ in after]}")
    sys.exit(1 if failures else 0)

# requests the server refuses without reading them
status, _ = get(request=b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd")
check(status == 405, f"a POST is answered 405: {status}")
status, _ = get(request=b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 20000 + b"\r\n\r\n")
check(status in (413, 414, 431), f"a request with 20 kB of headers is refused: {status}")
# every request head up to 8 KiB (8,192 bytes as sent) is answered, and every longer one gets 431:
# each size around the limit, around libmicrohttpd's connection memory (32 KiB) and beyond
def sized(n, path="/healthz"):
    head = b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nX-Pad: "
    return head + b"a" * (n - len(head) - 4) + b"\r\n\r\n"
wrong = []
sizes = list(range(7800, 8400)) + list(range(32 * 1024 - 400, 32 * 1024 + 200, 7)) + [12000, 20000, 40000, 65536]
for n in sizes:
    status, _ = get(request=sized(n))
    want = 200 if n <= 8192 else 431
    if status != want:
        wrong.append((n, status))
check(not wrong, f"{len(sizes)} request heads of 7,800 to 65,536 bytes: 200 up to 8,192, 431 above: "
      f"{len(wrong)} wrong {wrong[:8]}")
# many short parts within the limit: each is a record in libmicrohttpd's memory, all answered
for what, request in [
        ("2,000 query arguments", b"GET /healthz?" + b"a&" * 2000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("1,500 empty headers", b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"A:\r\n" * 1500 + b"\r\n"),
        ("900 cookies", b"GET /healthz HTTP/1.1\r\nHost: x\r\nCookie: " + b"; ".join(b"c%d=v" % i for i in range(900)) + b"\r\n\r\n"),
        ("a percent-encoded query of 8,150 bytes", b"GET /healthz?" + b"%41" * 2700 + b" HTTP/1.1\r\nHost: x\r\n\r\n")]:
    status, _ = get(request=request)
    check(status == 200 if len(request) <= 8192 else status == 431, f"{what} ({len(request)} bytes): {status}")
status, _ = get(request=b"GET /healthz?" + b"%41" * 2740 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
check(status == 431, f"a percent-encoded query over 8,192 bytes as sent (decoded under it) refused: {status}")
status, _ = get(request=sized(8192, "/healthz?a=b&c"))
check(status == 200, f"8,192 bytes with a query string answered: {status}")
status, _ = get(request=sized(8193, "/healthz?a=b&c"))
check(status == 431, f"8,193 bytes with a query string refused: {status}")
status, _ = get(request=b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
check(status == 413, f"a chunked body is answered 413: {status}")
status, _ = get(request=b"NONSENSE\r\n\r\n")
check(isinstance(status, int) and 400 <= status < 500 or isinstance(status, str), f"a line that is not HTTP: {status}")
status, _ = get("/nowhere")
check(status == 404, f"an unknown path is answered 404: {status}")

# slow clients in a process short of descriptors: 100 clients that send a byte every 3 s
# 64 where the runner holds less than 48 (the CPU backend: about 15); a CUDA runner holds more
# (the driver's own), and a limit below what it holds would leave no room for any client
files = max(64, open_files() + 48)
print(f"runner: {open_files()} files open; limiting it to {files}", flush=True)
subprocess.run(["prlimit", f"--pid={pid}", f"--nofile={files}:{files}"], check=True)
request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"s" * 200
trickling = connect_many(100, request[:1])
slow = []
end = time.monotonic() + 15
sent = 1
next_byte = time.monotonic() + 3
while time.monotonic() < end:
    status, took = get(deadline=1.0)
    slow.append((status, took))
    if time.monotonic() >= next_byte:
        for s in trickling:
            try:
                s.send(request[sent:sent + 1])
            except OSError:
                pass
        sent += 1
        next_byte += 3
    time.sleep(0.5)
bad = [r for r in slow if r[0] != 200]
check(not bad, f"with 100 trickling clients and {files} descriptors, {len(slow) - len(bad)} of {len(slow)} later clients "
      f"answered 200 within 1 s (slowest {max(t for _, t in slow):.3f} s){': ' + str(bad[:3]) if bad else ''}")
print(f"runner: {open_files()} files open; evicted so far {metric('cudavision_http_connections_evicted_total')}",
      flush=True)
for s in trickling:
    s.close()
time.sleep(0.5)
after = [get(deadline=1.0) for _ in range(5)]
check(all(s == 200 for s, _ in after), f"after the trickling clients leave: {[s for s, _ in after]}")
subprocess.run(["prlimit", f"--pid={pid}", "--nofile=65536:65536"], check=False)

# idle clients: closed after the idle timeout, and the memory they took given back
for _ in range(3):
    get("/metrics")
time.sleep(1)
before = rss_kb()
idle = connect_many(500)
time.sleep(1)
opened = metric("cudavision_http_connections")
check(opened is not None and opened <= limit + 1, f"500 idle clients: {opened} connections held (limit {limit})")
time.sleep(idle_timeout + 3)
open_left = [s for s in idle if not closed_by_server(s)]
check(not open_left, f"{500 - len(open_left)} of 500 idle connections closed by the server within {idle_timeout + 3} s")
for s in idle:
    s.close()
time.sleep(1)
after_kb = rss_kb()
check(after_kb - before <= 2048, f"resident memory {before} kB before the idle clients, {after_kb} kB after")
status, took = get()
check(status == 200, f"/healthz after it all: {status} in {took:.3f} s")
sys.exit(1 if failures else 0)
