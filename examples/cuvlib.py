"""What the Python examples share, as lib.sh does for the shell ones: the cudavision module and the
plugin from where they are installed, else from the source tree and its build (tools/build.sh's
build/, or CUDAVISION_BUILD=DIR), so that `python3 examples/X.py` runs as README pastes it, from any
directory, with nothing exported.

An example imports it before cudavision (its directory is on sys.path: Python puts a script's own
there, and tests/examples/test_analyse.py puts it there to import analyse.py):

    import cuvlib
    cudavision = cuvlib.import_cudavision()
    ...
    cuvlib.init_gst("cudahistogram")   # Gst.init, then the build's plugin where GStreamer lacks it
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# the build the plugin and the module's C++ part come from where they are not installed
BUILD = os.environ.get("CUDAVISION_BUILD", os.path.join(HERE, "..", "build"))


def import_cudavision():
    """The cudavision module: installed (or on PYTHONPATH), else the source tree's python/ and the
    build's python/, which holds its C++ part (without it, frames in CUDA memory are refused:
    docs/python.md, "The cudavision module")."""
    try:
        import cudavision
    except ImportError:
        sys.path[:0] = [os.path.join(HERE, "..", "python"), os.path.join(BUILD, "python")]
        import cudavision
    return cudavision


def init_gst(element):
    """Gst.init, then, where GStreamer does not know @element (one of ours the example runs: the
    plugin is not installed nor on GST_PLUGIN_PATH), the build's plugin, scanned into the
    registry."""
    from gi.repository import Gst

    Gst.init(None)
    if Gst.ElementFactory.find(element) is None:
        Gst.Registry.get().scan_path(os.path.join(BUILD, "gst"))
