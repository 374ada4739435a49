#!/usr/bin/env bash
# Runs tests/python/test_cudavision.py against the source's python/cudavision with a Python that
# has PyGObject (with GStreamer's overrides) and numpy (tests/lib/gst-python.sh); 77 (skipped)
# where there is none.
#   tests/python/test-cudavision.sh SOURCE_ROOT
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/gst-python.sh"
export PYTHONPATH=$1/python${CUV_PYTHON_BUILD:+:$CUV_PYTHON_BUILD}${PYTHONPATH:+:$PYTHONPATH}
run_with_gst_python "numpy" "$here/test_cudavision.py"
