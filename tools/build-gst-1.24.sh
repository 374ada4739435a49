#!/usr/bin/env bash
# GStreamer 1.24 from source, inside the Debian 12 root that tests/run-gst-1.24.sh makes (run there,
# as root, by that script): core, base, good, bad and gst-python of the monorepo's tag 1.24.13,
# each configured on its own with every optional part off but those our elements, tests, examples
# and the fleet runner use, installed to PREFIX. Usage: tools/build-gst-1.24.sh SOURCE.tar.xz PREFIX MESON
# (MESON: a meson of 1.1 or later; Debian 12's 1.0.1 is too old for 1.24). PREFIX/.cuv-built says
# what is there (the tarball's hash, this script's and meson's version), written once every part
# is installed: when any of them changed, or a run stopped half-way, the prefix is thrown away and
# everything is built again (about 4 minutes), so that nothing of an earlier build (a plugin since
# turned off, a part built against another core) stays. A failed part's whole log is kept in
# /var/tmp/gst-1.24-PART.log.
set -eu -o pipefail
src_tar=${1:?usage: tools/build-gst-1.24.sh SOURCE.tar.xz PREFIX MESON}
prefix=${2:?usage: tools/build-gst-1.24.sh SOURCE.tar.xz PREFIX MESON}
meson=${3:?usage: tools/build-gst-1.24.sh SOURCE.tar.xz PREFIX MESON}
[ -f "$src_tar" ] || { echo "build-gst-1.24.sh: no $src_tar" >&2; exit 1; }
stamp="$(sha256sum < "$src_tar" | cut -d' ' -f1) $(sha256sum < "$0" | cut -d' ' -f1) meson $("$meson" --version)"
[ "$(cat "$prefix/.cuv-built" 2>/dev/null)" = "$stamp" ] && { echo "GStreamer 1.24 in $prefix is built"; exit 0; }
rm -rf "$prefix"
work=$(mktemp -d /var/tmp/gst-1.24.XXXXXX)
trap 'rm -rf "$work"' EXIT
arch=$(gcc -print-multiarch)
export PKG_CONFIG_PATH=$prefix/lib/$arch/pkgconfig
export PATH=$prefix/bin:$PATH LD_LIBRARY_PATH=$prefix/lib/$arch
# the introspection data of one part is read by the next (GstVideo's by GstCuda's)
export XDG_DATA_DIRS=$prefix/share:/usr/share GI_TYPELIB_PATH=$prefix/lib/$arch/girepository-1.0
common=(--prefix "$prefix" --libdir "lib/$arch" --buildtype release)
# the plugin sets' own switches: every optional part off but those named
plugins=(-Dauto_features=disabled -Dnls=disabled -Ddoc=disabled -Dexamples=disabled -Dtests=disabled)
part () {
  local name=$1 t0=$SECONDS
  shift
  echo "GStreamer 1.24: $name"
  tar -xJf "$src_tar" -C "$work" --strip-components=2 "gstreamer-1.24.13/subprojects/$name"
  "$meson" setup "$work/build-$name" "$work/$name" "${common[@]}" "$@" > "$work/$name.log" 2>&1 &&
    ninja -C "$work/build-$name" >> "$work/$name.log" 2>&1 &&
    ninja -C "$work/build-$name" install >> "$work/$name.log" 2>&1 || {
      cp "$work/$name.log" "/var/tmp/gst-1.24-$name.log"
      tail -n 40 "$work/$name.log"
      echo "GStreamer 1.24: $name failed (its log: /var/tmp/gst-1.24-$name.log in the root)" >&2
      return 1
    }
  echo "GStreamer 1.24: $name built in $((SECONDS - t0)) s"
}
# core: libgstcheck for our gst-check tests, the tools, the core tracers (latency, leaks)
part gstreamer "${plugins[@]}" -Dintrospection=enabled -Dcheck=enabled -Dtools=enabled -Dcoretracers=enabled -Dbenchmarks=disabled \
  -Dptp-helper=disabled -Dlibunwind=disabled -Dlibdw=disabled -Dbash-completion=disabled
# base: the sources, converters and containers of the tests and examples; textoverlay (pango)
part gst-plugins-base "${plugins[@]}" -Dintrospection=enabled -Dtools=enabled -Dorc=enabled -Dapp=enabled -Dvideotestsrc=enabled \
  -Dvideoconvertscale=enabled -Dvideorate=enabled -Dtypefind=enabled -Dplayback=enabled -Dpango=enabled \
  -Doverlaycomposition=enabled -Dcompositor=enabled -Drawparse=enabled -Daudiotestsrc=enabled \
  -Daudioconvert=enabled -Dgio=enabled -Dtcp=enabled -Dpbtypes=enabled
# good: imagefreeze, files and containers, vp8 (the demo's recording), png, RTSP (the fleet's cameras)
part gst-plugins-good "${plugins[@]}" -Dorc=enabled -Dimagefreeze=enabled -Dmultifile=enabled -Disomp4=enabled \
  -Dmatroska=enabled -Dvpx=enabled -Dpng=enabled -Drtsp=enabled -Drtp=enabled -Drtpmanager=enabled \
  -Dudp=enabled -Dautodetect=enabled -Ddebugutils=enabled -Dvideofilter=enabled -Dv4l2=enabled
# bad: libgstcuda and nvcodec (cudaupload, cudadownload, nvh264dec), analytics, parsers, openh264
part gst-plugins-bad "${plugins[@]}" -Dintrospection=enabled -Dorc=enabled -Dnvcodec=enabled -Danalyticsoverlay=enabled -Dvideoparsers=enabled \
  -Ddebugutils=enabled -Dvideofilters=enabled -Dvideosignal=enabled -Dopenh264=enabled
# gst-python: the Gst overrides (Gst.Fraction, Buffer.map as a context manager; 1.24 has none for
# GstAnalytics, whose typelib comes from bad)
part gst-python -Dtests=disabled -Dplugin=disabled -Dpython=python3 -Dpygi-overrides-dir="$prefix/lib/python3/dist-packages/gi/overrides"
echo "$stamp" > "$prefix/.cuv-built"
