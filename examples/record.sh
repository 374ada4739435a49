#!/usr/bin/env bash
# Records a camera (or the test scene) to WebM files of 10 s each while analysing it: a tee feeds
# an encoder and splitmuxsink on one side, cudanoisemap and cudamotionest on the other, which
# post one message a second; this prints the share of changed pixels and of moving blocks. (No
# leaky queue on the analysis side: a queue marks the buffer after a drop DISCONT, and the
# temporal elements start over on a DISCONT buffer.)
#   examples/record.sh [SOURCE] [SECONDS] [DIR]
#   SOURCE: test (default), /dev/videoN or a file; SECONDS: 10 (0 = until Ctrl-C); DIR: recording/
set -eu
. "$(dirname "$0")/lib.sh"
src=${1:-test}
seconds=${2:-10}
dir=${3:-recording}
mkdir -p "$dir"
[ "$src" = test ] || [ -e "$src" ] || { echo "no such source: $src" >&2; exit 1; }
echo "recording $src to $dir/record-NN.webm (10 s per file)"
gst-launch-1.0 -m -e $(cuv_source "$src" $((seconds * 30)) 640 360) ! tee name=t \
  t. ! queue ! videoconvert ! vp8enc deadline=1 ! \
    splitmuxsink muxer=webmmux max-size-time=10000000000 location="$dir/record-%02d.webm" \
  t. ! queue ! cudanoisemap interval=1000000000 ! cudamotionest search-range=8 interval=1000000000 ! fakesink 2>&1 |
  sed -nE \
    -e 's/.*cudanoisemap, timestamp=\(guint64\)([0-9]+).*changed-ratio=\(double\)([0-9.e-]+).*/\1 \2/p' \
    -e 's/.*cudamotionest, timestamp=.*mean-magnitude=\(double\)([0-9.e-]+), moving-ratio=\(double\)([0-9.e-]+).*/m \1 \2/p' |
  awk '$1 != "m" { printf "%5.1f s  changed pixels %5.1f %%", $1 / 1e9, 100 * $2 }
       $1 == "m" { printf ", moving blocks %5.1f %%, mean motion %.2f px a frame\n", 100 * $3, $2 }'
ls "$dir"/record-*.webm
