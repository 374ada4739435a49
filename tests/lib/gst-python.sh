# Sourced by the Python tests' runners: run_with_gst_python IMPORTS SCRIPT [ARGS...] runs SCRIPT
# with the first python3 (pyenv's, then Debian's) whose `import IMPORTS` works with PyGObject and
# GStreamer's overrides (tools/deps.sh installs python3-gst-1.0 and the rest from Debian), with the
# build's plugin; 77 (skipped) where there is none, or where that Python's GStreamer is not
# gst-inspect-1.0's (a bundle on PATH), and a failure where tests/run-tests.sh installed them.
run_with_gst_python () {
  local imports=$1 py pyver
  shift
  for py in python3 /usr/bin/python3; do
    "$py" -c "import gi, $imports; gi.require_version('Gst', '1.0'); gi.require_version('GstVideo', '1.0'); from gi.repository import Gst, GstVideo; Gst.ValueArray" 2>/dev/null || continue
    pyver=$("$py" -c 'import gi; gi.require_version("Gst", "1.0"); from gi.repository import Gst; Gst.init(None); print(Gst.version_string())' 2>/dev/null)
    if ! gst-inspect-1.0 --version | grep -qF "$pyver"; then
      echo "PyGObject's GStreamer ($pyver) is not gst-inspect-1.0's: skipped"
      exit 77
    fi
    export GST_PLUGIN_PATH=${GST_PLUGIN_PATH_1_0:-}
    exec "$py" "$@"
  done
  echo "no python3 with gi (python3-gst-1.0) and $imports"
  [ -n "${CUV_TOOLS_INSTALLED:-}" ] && exit 1
  exit 77
}
