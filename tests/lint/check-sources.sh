#!/usr/bin/env bash
# meson's `sources` test: check-sources.py with the python3 found at run time (the GPU machine's
# copy of a build has no configure-time interpreter path).
exec python3 "$(dirname "$0")/check-sources.py" "$@"
