#!/usr/bin/env bash
# Runs tests/examples/test_analyse.py with a Python that has PyGObject (with GStreamer's overrides),
# numpy and matplotlib (tools/deps.sh installs them from Debian); 77 (skipped) where there is none.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import gi, numpy, matplotlib; gi.require_version("Gst", "1.0"); from gi.repository import Gst; Gst.ValueArray' 2>/dev/null; then
    # PyGObject loads the system's GStreamer: with another one on PATH (a bundle), skip
    pyver=$("$py" -c 'import gi; gi.require_version("Gst", "1.0"); from gi.repository import Gst; Gst.init(None); print(Gst.version_string())' 2>/dev/null)
    if ! gst-inspect-1.0 --version | grep -qF "$pyver"; then
      echo "PyGObject's GStreamer ($pyver) is not gst-inspect-1.0's: skipped"
      exit 77
    fi
    export GST_PLUGIN_PATH=${GST_PLUGIN_PATH_1_0:-}
    exec "$py" "$here/test_analyse.py"
  fi
done
echo "no python3 with gi (python3-gst-1.0), numpy and matplotlib"
[ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1  # tests/run-tests.sh installed them
exit 77
