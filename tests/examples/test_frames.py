"""examples/torch_frames.py and examples/cupy_frames.py run as docs/python.md pastes them: each
exits 0 with its frames counted and says where the frames were. With a GPU and the consumer
(CUV_REQUIRE_GPU=1 says there is one) they must be in CUDA memory, the tensor on the GPU; without
one, numpy views on the CPU. torch_frames.py needs PyTorch: without it only cupy_frames.py runs
(which falls back to numpy without CuPy).
  test_frames.py SOURCE_ROOT"""
import importlib.util
import os
import subprocess
import sys

root = sys.argv[1]
gpu = os.environ.get("CUV_REQUIRE_GPU") == "1"
failures, ran = [], 0


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


for script, module, on_gpu in (("torch_frames.py", "torch", "the tensor on cuda:"),
                                ("cupy_frames.py", None, "a CuPy array on cuda:")):
    if module and importlib.util.find_spec(module) is None:
        print(f"{script}: no {module} here, not run")
        continue
    ran += 1
    p = subprocess.run([sys.executable, os.path.join(root, "examples", script), "--frames", "61", "--size", "320x240"],
                       capture_output=True, text=True, timeout=120)
    out = p.stdout
    print(out + p.stderr)
    where = on_gpu if gpu else "(no copy)"
    check(p.returncode == 0 and "61 frames" in out and where in out.splitlines()[0] and "frame 60:" in out,
          f"{script}: exit {p.returncode}, 61 frames, {'in CUDA memory' if gpu else 'frames where it says'}")
if not ran:
    sys.exit(77)
sys.exit(1 if failures else 0)
