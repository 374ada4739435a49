#!/usr/bin/env bash
# Runs tests/examples/test_analyse.py with a Python that has PyGObject (with GStreamer's overrides),
# numpy and matplotlib (tests/lib/gst-python.sh); 77 (skipped) where there is none.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/gst-python.sh"
run_with_gst_python "numpy, matplotlib" "$here/test_analyse.py"
