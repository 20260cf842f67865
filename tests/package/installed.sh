# Sourced by the tests that install into the system (package-deb.sh,
# meson-install.sh): when they may, and what "found as a user finds it" means.
# The sourcing script defines fail().
cs_pluginsdir=$(pkg-config --variable=pluginsdir gstreamer-1.0)
cs_installed_plugin=$cs_pluginsdir/libgstcudastereo.so

# Only on a disposable machine: CI sets CS_TEST_SYSTEM_INSTALL=1 and runs as root.
cs_may_install() { [ "${CS_TEST_SYSTEM_INSTALL:-0}" = 1 ] && [ "$(id -u)" = 0 ]; }

# cs_run_clean HOME_DIR CMD...: CMD with no GStreamer variable (nor any other
# but PATH and HOME) in its environment.
cs_run_clean() {
  local home=$1
  shift
  mkdir -p "$home"
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$home" "$@"
}

# cs_check_found WORK WHEN: gst-inspect-1.0 cudastereo, run clean, loads the
# plugin from pluginsdir (with a merged /usr it prints /lib/...); else fail,
# saying WHEN.
cs_check_found() {
  local work=$1 when=$2 log=$1/inspect-installed.txt
  if ! cs_run_clean "$work/home" gst-inspect-1.0 cudastereo > "$log" 2>&1; then
    fail "gst-inspect-1.0 cudastereo $when: $(head -n 5 "$log")"
    return
  fi
  grep -Eq "Filename *(/usr)?${cs_pluginsdir#/usr}/libgstcudastereo.so" "$log" ||
    fail "gst-inspect-1.0 $when did not load the plugin from $cs_pluginsdir: $(grep Filename "$log")"
}
