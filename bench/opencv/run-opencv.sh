#!/bin/bash
# The baseline users have today: GStreamer's stock OpenCV `disparity`
# element (gst-plugins-bad, Debian package gstreamer1.0-opencv), timed by
# cs-bench-element on the same generated frames and in the same way as
# cudastereo (appsrc x2 -> disparity -> appsink sync=false), on the CPU.
#
#   bench/opencv/run-opencv.sh [--build DIR] [--out FILE] [--quick]
#
# Writes a markdown fragment (default $BUILD/bench-results/opencv.md). If
# the element is not installed (the GPU machine has no apt), the fragment
# says so instead of giving numbers.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-build}
OUTFILE=""
QUICK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --out) OUTFILE=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    -h|--help) sed -n 2,11p "$0"; exit 0 ;;
    *) echo "run-opencv.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case "$BUILD" in /*) ;; *) BUILD=$root/$BUILD ;; esac
OUTFILE=${OUTFILE:-$BUILD/bench-results/opencv.md}
mkdir -p "$(dirname "$OUTFILE")" || exit 1
BENCH=$BUILD/bench/element/cs-bench-element
export GST_PLUGIN_PATH_1_0=${GST_PLUGIN_PATH_1_0:-${GST_PLUGIN_PATH:-$BUILD/gst}}

{
  echo "### Baseline: OpenCV \`disparity\` element (gst-plugins-bad), CPU"
  echo
  echo "Machine: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(nproc) cores;"
  echo "OpenCV $(dpkg-query -W -f '${Version}' 'libopencv-calib3d4*' 2>/dev/null | head -c 40 || echo '?')."
  echo "Its settings are fixed in the element: SGBM (default) searches 64 disparities"
  echo "(1..64, block 3, full 8-path MODE_HH), block matching 32 (0..31, block 9);"
  echo "no other property. Input RGB on sink_left/sink_right only; output the right"
  echo "buffer overwritten with a grey RGB picture min-max scaled per frame, so"
  echo "disparity values, invalid pixels and depth cannot be read back from it."
  echo
} > "$OUTFILE"
if [ ! -x "$BENCH" ]; then
  echo "> not measured: $BENCH not built" >> "$OUTFILE"
  cat "$OUTFILE"
  exit 1
fi
if ! gst-inspect-1.0 disparity > /dev/null 2>&1; then
  echo "> not measured on this machine: the \`disparity\` element is not installed (Debian: apt-get install gstreamer1.0-opencv)" >> "$OUTFILE"
  cat "$OUTFILE"
  exit 0
fi

"$BENCH" --header-only >> "$OUTFILE"
failures=0
row() {
  local out rc
  out=$(timeout 600 "$BENCH" "$@" 2>&1)
  rc=$?
  echo "$out" | grep '^|' >> "$OUTFILE"
  echo "$out" | grep -v '^|' >&2
  [ $rc = 0 ] || [ $rc = 3 ] || failures=$((failures + 1))
}
sizes="640x480 1024x768 1920x1080"
frames=60
if [ $QUICK = 1 ]; then sizes="320x240"; frames=10; fi
for s in $sizes; do
  row --element disparity --method sgbm --size "$s" --frames $frames --latency-frames 10 --warmup 2
  row --element disparity --method sbm --size "$s" --frames $frames --latency-frames 10 --warmup 2
done
# 4K: block matching only; SGBM's full-DP mode keeps a cost volume of
# W x H x 64 x 2 x 2 bytes (about 2 GB at 3840x2160).
[ $QUICK = 1 ] || row --element disparity --method sbm --size 3840x2160 --frames 20 --latency-frames 5 --warmup 1
# cudastereo's CPU backend on the same frames and machine, same input mode,
# at a search range OpenCV's SGBM also covers.
row --backend cpu --size 320x240 --disparities 64 --input pads --frames 10 --latency-frames 5 --warmup 1
[ $QUICK = 1 ] || row --backend cpu --size 640x480 --disparities 64 --input pads --frames 5 --latency-frames 3 --warmup 1
cat "$OUTFILE"
[ $failures = 0 ]
