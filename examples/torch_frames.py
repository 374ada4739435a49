#!/usr/bin/env python3
"""cudaenhance's frames into PyTorch without a copy: the luma plane as a tensor on the GPU.

    examples/torch_frames.py [--source test|webcam|FILE] [--frames N] [--size WxH]

cudavision.frames() runs the pipeline and gives cudaenhance's NV12 frames, in CUDA memory, one at a
time; torch.from_dlpack() makes a frame's Y plane a CUDA tensor over the same memory, with PyTorch's
stream ordered after the frame (docs/python.md). The script computes, on the GPU, each frame's mean
luma and its share of bright pixels, and prints them every 30 frames. Without CUDA (no GPU, or a
CPU-only build) the frames come in system memory and the tensors are numpy views on the CPU; it
says so. A pipeline's error ends it with the element's message.

Needs PyTorch (a CPU build is enough without CUDA), python3-gi with python3-gst-1.0, numpy, the
plugin (GST_PLUGIN_PATH, else the source tree's build/ or CUDAVISION_BUILD=DIR) and the
cudavision module (installed, else python/ and the build's python/).
"""
import argparse
import itertools
import os
import sys
import warnings

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

import cuvlib  # noqa: E402  the module and the plugin: installed, else the build's (examples/cuvlib.py)

cudavision = cuvlib.import_cudavision()
import torch  # noqa: E402


def source(name, frames, width, height):
    if name == "test":
        src = f"videotestsrc num-buffers={frames} pattern=ball motion=sweep"
    elif name == "webcam":
        src = "v4l2src"
    else:
        src = f"uridecodebin uri={Gst.filename_to_uri(os.path.abspath(name))}"
    return f"{src} ! videoconvert ! videoscale ! video/x-raw,format=NV12,width={width},height={height}"


def luma(f):
    """The frame's Y plane (H x W uint8) as a tensor over the frame's memory: no copy."""
    if f.device is not None:
        return torch.from_dlpack(f.planes[0])  # on cuda:N
    with warnings.catch_warnings():  # a read-only numpy view: this script only reads it
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(f.planes[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default="test", help="test (default), webcam (v4l2src) or a video file")
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--size", default="1280x720")
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    cuvlib.init_gst("cudaenhance")  # and the build's plugin where it is not installed nor on GST_PLUGIN_PATH
    # cudaupload puts the frames in CUDA memory, where cudaenhance keeps them (no cudadownload)
    upload = "cudaupload ! " if Gst.ElementFactory.find("cudaupload") else ""

    bright = []
    pipeline = f"{source(args.source, args.frames, width, height)} ! {upload}cudaenhance contrast=1.3"
    with cudavision.frames(pipeline) as video:  # stopped when the block ends, also at an error
        for n, f in enumerate(itertools.islice(video, args.frames)):
            y = luma(f)
            if n == 0:
                print(f"{f.format} {f.width}x{f.height}: " + (
                    f"CUDA memory, the tensor on {y.device} over the frame's memory (no copy)" if f.device is not None
                    else "no CUDA here: frames in system memory, the tensor a numpy view on the CPU (no copy)"))
            bright.append((y > 200).float().mean())  # queued on the GPU: no wait a frame
            if n % 30 == 0:
                print(f"frame {n}: mean luma {y.float().mean().item():.1f}, bright {bright[-1].item() * 100:.1f}%")

    if not bright:
        sys.exit("no frame")
    print(f"{len(bright)} frames: bright pixels {torch.stack(bright).mean().item() * 100:.1f}% on average")


if __name__ == "__main__":
    try:
        main()
    except cudavision.PipelineError as e:  # the pipeline's error, naming its element
        sys.exit(f"error: {e} ({e.debug})")
