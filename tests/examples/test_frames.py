"""examples/torch_frames.py and examples/cupy_frames.py run as docs/python.md pastes them: each
exits 0 with its frames counted and says where the frames were. With a GPU and the consumer
(CUV_REQUIRE_GPU=1 says there is one) they must be in CUDA memory, the tensor on the GPU; without
one, numpy views on the CPU. Each also stops after --frames of a longer file (the loop left early),
and a file that is not there ends it with exit 1 and the element's error. torch_frames.py needs
PyTorch: without it only cupy_frames.py runs (which falls back to numpy without CuPy).
  test_frames.py SOURCE_ROOT"""
import importlib.util
import os
import subprocess
import sys
import tempfile

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

root = sys.argv[1]
gpu = os.environ.get("CUV_REQUIRE_GPU") == "1"
failures, ran = [], 0


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)




def run(script, *args):
    p = subprocess.run([sys.executable, os.path.join(root, "examples", script), *args], capture_output=True,
                       text=True, timeout=120)
    print(p.stdout + p.stderr)
    return p


# 60 frames of raw video in Matroska: a file that GStreamer decodes without an encoder
Gst.init(None)
clip = None
if Gst.ElementFactory.find("matroskamux") and Gst.ElementFactory.find("matroskademux"):
    clip = os.path.join(tempfile.mkdtemp(), "clip.mkv")
    writer = Gst.parse_launch("videotestsrc num-buffers=60 pattern=ball ! video/x-raw,format=I420,width=64,height=48 ! "
                              f"matroskamux ! filesink location={clip}")
    writer.set_state(Gst.State.PLAYING)
    end = writer.get_bus().timed_pop_filtered(30 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    writer.set_state(Gst.State.NULL)
    check(end is not None and end.type == Gst.MessageType.EOS, "a 60-frame file written")
else:
    print("no matroskamux here: the examples not run on a file")

for script, module, on_gpu in (("torch_frames.py", "torch", "the tensor on cuda:"),
                                ("cupy_frames.py", None, "a CuPy array on cuda:")):
    if module and importlib.util.find_spec(module) is None:
        print(f"{script}: no {module} here, not run")
        continue
    ran += 1
    p = run(script, "--frames", "61", "--size", "320x240")
    out = p.stdout
    where = on_gpu if gpu else "(no copy)"
    check(p.returncode == 0 and "61 frames" in out and where in out.splitlines()[0] and "frame 60:" in out,
          f"{script}: exit {p.returncode}, 61 frames, {'in CUDA memory' if gpu else 'frames where it says'}")
    if clip is None:
        continue
    p = run(script, "--source", clip, "--frames", "10", "--size", "64x48")
    check(p.returncode == 0 and "\n10 frames" in "\n" + p.stdout and "frame 0:" in p.stdout,
          f"{script}: 10 frames of a 60-frame file, exit {p.returncode}")
    p = run(script, "--source", clip + ".missing")
    # GStreamer's own ERROR lines may come first (GST_DEBUG=*:1: nvcodec's registration on a GPU machine)
    said = any(line.startswith("error: source: ") for line in p.stderr.splitlines())
    check(p.returncode == 1 and said and "frames" not in p.stdout,
          f"{script}: a missing file: exit {p.returncode}, the element's error")
if not ran:
    sys.exit(77)
sys.exit(1 if failures else 0)
