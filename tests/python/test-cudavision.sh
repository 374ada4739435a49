#!/usr/bin/env bash
# Runs tests/python/test_cudavision.py against the source's python/cudavision with a Python that
# has PyGObject (with GStreamer's overrides) and numpy (tools/deps.sh installs them from Debian);
# 77 (skipped) where there is none.
#   tests/python/test-cudavision.sh SOURCE_ROOT
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import gi, numpy; gi.require_version("Gst", "1.0"); gi.require_version("GstVideo", "1.0"); from gi.repository import Gst, GstVideo' 2>/dev/null; then
    # PyGObject loads the system's GStreamer: with another one on PATH (a bundle), skip
    pyver=$("$py" -c 'import gi; gi.require_version("Gst", "1.0"); from gi.repository import Gst; Gst.init(None); print(Gst.version_string())' 2>/dev/null)
    if ! gst-inspect-1.0 --version | grep -qF "$pyver"; then
      echo "PyGObject's GStreamer ($pyver) is not gst-inspect-1.0's: skipped"
      exit 77
    fi
    export GST_PLUGIN_PATH=${GST_PLUGIN_PATH_1_0:-} PYTHONPATH=$1/python${PYTHONPATH:+:$PYTHONPATH}
    exec "$py" "$here/test_cudavision.py"
  fi
done
echo "no python3 with gi (python3-gst-1.0) and numpy"
[ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1  # tests/run-tests.sh installed them
exit 77
