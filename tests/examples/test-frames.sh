#!/usr/bin/env bash
# Runs tests/examples/test_frames.py (examples/torch_frames.py and examples/cupy_frames.py as pasted
# from docs/python.md) with a Python that has PyGObject with GStreamer's overrides and numpy
# (tests/lib/gst-python.sh); 77 (skipped) where there is none.
#   tests/examples/test-frames.sh SOURCE_ROOT
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/gst-python.sh"
export PYTHONPATH=$1/python${CUV_PYTHON_BUILD:+:$CUV_PYTHON_BUILD}${PYTHONPATH:+:$PYTHONPATH}
run_with_gst_python "numpy" "$here/test_frames.py" "$1"
