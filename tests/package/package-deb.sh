#!/usr/bin/env bash
# Builds the Debian packages with scripts/package-deb.sh into a scratch
# directory and checks them: the plugin in GStreamer's pluginsdir and loadable
# from the package, the tools, the meta header and .pc in -dev (a program
# compiles against them with the .pc's cflags), and Depends naming the
# GStreamer runtime packages and no CUDA package.
# To keep the test suite short it builds GPU code for one architecture
# (CS_DEB_GPU_ARCHS, 7.5 unless set); the real package has the full list.
# Usage: package-deb.sh SOURCE_ROOT WORK_DIR HAVE_CUDA(true|false)
set -u
src=${1:?source root} work=${2:?work dir} have_cuda=${3:?true or false}
for tool in dpkg-deb dpkg-shlibdeps dpkg-architecture; do
  command -v $tool > /dev/null || { echo "SKIP: $tool missing (not a Debian system; scripts/deps.sh installs dpkg-dev)"; exit 77; }
done
rm -rf "$work"; mkdir -p "$work"
cuda=disabled
[ "$have_cuda" = true ] && cuda=enabled
echo "== scripts/package-deb.sh, CUDA $cuda, GPU code for ${CS_DEB_GPU_ARCHS:-7.5}"
if ! CS_DEB_CUDA=$cuda CS_DEB_GPU_ARCHS=${CS_DEB_GPU_ARCHS:-7.5} CS_DEB_BUILD_DIR="$work/build" CS_DEB_DIST="$work/dist" \
    bash "$src/scripts/package-deb.sh"; then
  echo "FAIL: scripts/package-deb.sh"; exit 1
fi

failed=0
fail() { echo "FAIL: $*"; failed=1; }
shopt -s nullglob
main=("$work"/dist/gstreamer1.0-cudastereo_*.deb)
dev=("$work"/dist/gstreamer1.0-cudastereo-dev_*.deb)
[ ${#main[@]} -eq 1 ] && [ ${#dev[@]} -eq 1 ] || { fail "expected one package and one -dev package in $work/dist"; exit 1; }

source "$(dirname "${BASH_SOURCE[0]}")/installed.sh"
pluginsdir=$cs_pluginsdir
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
dpkg-deb -c "${main[0]}" | awk '{print $6}' > "$work/main.list"
dpkg-deb -c "${dev[0]}" | awk '{print $6}' > "$work/dev.list"
for f in "$pluginsdir/libgstcudastereo.so" /usr/bin/cs-stereo /usr/bin/cs-score /usr/bin/cs-makeseq \
    /usr/share/doc/gstreamer1.0-cudastereo/copyright; do
  grep -qx "\.$f" "$work/main.list" || fail "gstreamer1.0-cudastereo lacks $f"
done
for f in /usr/include/gstreamer-1.0/gst/cudastereo/gstcudastereometa.h /usr/lib/$multiarch/pkgconfig/gstcudastereo-1.0.pc; do
  grep -qx "\.$f" "$work/dev.list" || fail "gstreamer1.0-cudastereo-dev lacks $f"
done
# Nothing of the build or the tests is packaged.
grep -E 'test|bench|cs-embed|\.a$' "$work/main.list" "$work/dev.list" && fail "test, bench or static files packaged"

depends=$(dpkg-deb -f "${main[0]}" Depends)
echo "Depends: $depends"
wanted=(libgstreamer1.0-0 libgstreamer-plugins-base1.0-0 libc6 libstdc++6)
[ "$cuda" = enabled ] && wanted+=(libgstreamer-plugins-bad1.0-0)
for p in "${wanted[@]}"; do [[ ", $depends" == *", $p "* ]] || fail "Depends lacks $p"; done
[[ $depends == *cuda* || $depends == *nvidia* ]] && fail "Depends names a CUDA or NVIDIA package"
description=$(dpkg-deb -f "${main[0]}" Description)
if [ "$cuda" = enabled ]; then
  for word in 'linked statically' 'NVIDIA driver, version' 'CPU'; do
    [[ $description == *"$word"* ]] || fail "Description does not say '$word'"
  done
fi
dev_depends=$(dpkg-deb -f "${dev[0]}" Depends)
[[ $dev_depends == *"gstreamer1.0-cudastereo (= $(dpkg-deb -f "${main[0]}" Version))"* ]] ||
  fail "-dev does not depend on its exact package: $dev_depends"

# The packaged plugin loads (a fresh registry) and has no CUDA library
# among its NEEDED entries.
dpkg-deb -x "${main[0]}" "$work/root"
dpkg-deb -x "${dev[0]}" "$work/root"
plugin="$work/root$pluginsdir/libgstcudastereo.so"
readelf -d "$plugin" | grep NEEDED | grep -E '\[lib(cuda|cudart|nvrtc|nvidia)' && fail "packaged plugin needs a CUDA library"
env -u GST_PLUGIN_PATH GST_PLUGIN_PATH_1_0="$work/root$pluginsdir" GST_REGISTRY_1_0="$work/registry.bin" \
  gst-inspect-1.0 cudastereo > "$work/inspect.txt" 2>&1 || fail "gst-inspect-1.0 of the packaged plugin: $(head -n 5 "$work/inspect.txt")"
grep -q "Filename *$plugin" "$work/inspect.txt" || fail "gst-inspect-1.0 did not load the packaged plugin"
"$work/root/usr/bin/cs-makeseq" --help > /dev/null 2>&1 || fail "packaged cs-makeseq does not run"

# An application compiles against the packaged header with the .pc's cflags
# (prefix moved to the extracted tree) and reads no meta off a plain buffer.
mkdir -p "$work/pc"
sed "s#^prefix=.*#prefix=$work/root/usr#" "$work/root/usr/lib/$multiarch/pkgconfig/gstcudastereo-1.0.pc" > "$work/pc/gstcudastereo-1.0.pc"
cat > "$work/app.c" <<'EOF'
#include <gst/cudastereo/gstcudastereometa.h>
int main(void) {
  gst_init(NULL, NULL);
  GstBuffer *b = gst_buffer_new();
  int none = gst_buffer_get_cuda_stereo_meta(b) == NULL;
  gst_buffer_unref(b);
  return none ? 0 : 1;
}
EOF
flags=$(PKG_CONFIG_PATH="$work/pc" pkg-config --cflags --libs gstcudastereo-1.0) || fail "pkg-config gstcudastereo-1.0"
[[ $flags == *"-I$work/root/usr/include/gstreamer-1.0"* ]] || fail "cflags lack the packaged include directory: $flags"
cc -Wall -Werror "$work/app.c" -o "$work/app" $flags && "$work/app" || fail "a program using the packaged header"

# As a user installs them: on a disposable machine only (CI sets
# CS_TEST_SYSTEM_INSTALL=1 and runs as root), `apt install ./dist/*.deb`, then
# gst-inspect-1.0 with no GStreamer variable in the environment must find the
# plugin in GStreamer's own directory; then the packages are removed again.
if cs_may_install && [ $failed -eq 0 ]; then
  if [ -e "$cs_installed_plugin" ]; then
    fail "$cs_installed_plugin is already installed: not a fresh machine"
  else
    echo "== apt-get install ${main[0]##*/} ${dev[0]##*/}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${main[0]}" "${dev[0]}" > "$work/apt.log" 2>&1 ||
      fail "apt-get install of the packages: $(tail -n 5 "$work/apt.log")"
    cs_check_found "$work" "after apt install"
    cs_run_clean "$work/home" gst-launch-1.0 -q videotestsrc num-buffers=2 ! \
      video/x-raw,width=128,height=48,format=GRAY8 ! cudastereo backend=cpu input-layout=side-by-side \
      max-disparity=8 ! fakesink > "$work/launch.txt" 2>&1 || fail "the installed plugin does not run: $(tail -n 3 "$work/launch.txt")"
    [ "$(pkg-config --variable=includedir gstcudastereo-1.0 2>/dev/null)" = /usr/include ] ||
      fail "pkg-config does not find the installed gstcudastereo-1.0.pc"
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq gstreamer1.0-cudastereo-dev gstreamer1.0-cudastereo \
      > "$work/remove.log" 2>&1 || fail "apt-get remove: $(tail -n 5 "$work/remove.log")"
    [ -e "$cs_installed_plugin" ] && fail "the plugin is still there after apt-get remove"
    [ $failed -eq 0 ] && echo "ok: installed with apt, found by gst-inspect-1.0 with no environment variable, removed"
  fi
fi

[ $failed -eq 0 ] && { echo "ok: packages checked"; rm -rf "$work"; }
exit $failed
