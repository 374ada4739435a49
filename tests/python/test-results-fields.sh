#!/usr/bin/env bash
# Runs tests/python/test_results_fields.py (docs/results.md's field tables against the metas and
# messages the analysers write) with a Python that has PyGObject and numpy (tests/lib/gst-python.sh);
# 77 (skipped) where there is none.
#   tests/python/test-results-fields.sh SOURCE_ROOT
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/gst-python.sh"
export PYTHONPATH=$1/python${CUV_PYTHON_BUILD:+:$CUV_PYTHON_BUILD}${PYTHONPATH:+:$PYTHONPATH}
run_with_gst_python "numpy" "$here/test_results_fields.py" "$1/docs/results.md"
