#!/usr/bin/env bash
# `meson install` as the README says, on a disposable machine only (CI sets
# CS_TEST_SYSTEM_INSTALL=1 and runs as root; elsewhere it skips, 77): the
# plugin must land in gstreamer-1.0's pluginsdir whatever the prefix, so that
# gst-inspect-1.0 with no GStreamer variable in the environment finds it; the
# header and gstcudastereo-1.0.pc under the prefix; `ninja uninstall` removes
# them again.
# Usage: meson-install.sh BUILD_DIR WORK_DIR
set -u
build=${1:?build dir} work=${2:?work dir}
source "$(dirname "${BASH_SOURCE[0]}")/installed.sh"
cs_may_install || { echo "SKIP: installs into the system; runs only as root with CS_TEST_SYSTEM_INSTALL=1 (CI)"; exit 77; }
prefix=$(meson introspect --buildoptions "$build" | python3 -c \
  'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
[ -e "$cs_installed_plugin" ] && { echo "FAIL: $cs_installed_plugin is already installed"; exit 1; }
rm -rf "$work"; mkdir -p "$work"
failed=0
fail() { echo "FAIL: $*"; failed=1; }
echo "== meson install -C $build (prefix $prefix)"
meson install -C "$build" --no-rebuild > "$work/install.log" 2>&1 || { fail "meson install: $(tail -n 5 "$work/install.log")"; }
cat "$work/install.log" | grep -i installing
cs_check_found "$work" "after meson install"
[ -f "$prefix/include/gstreamer-1.0/gst/cudastereo/gstcudastereometa.h" ] || fail "no header under $prefix/include"
pc=$(find "$prefix/lib" -name gstcudastereo-1.0.pc 2>/dev/null | head -n 1)
[ -n "$pc" ] || fail "no gstcudastereo-1.0.pc under $prefix/lib"
[ -x "$prefix/bin/cs-stereo" ] || fail "no cs-stereo in $prefix/bin"
ninja -C "$build" uninstall > "$work/uninstall.log" 2>&1 || fail "ninja uninstall: $(tail -n 5 "$work/uninstall.log")"
[ -e "$cs_installed_plugin" ] && fail "the plugin is still there after ninja uninstall"
[ $failed -eq 0 ] && { echo "ok: meson install, gst-inspect-1.0 with no environment variable, uninstall"; rm -rf "$work"; }
exit $failed
