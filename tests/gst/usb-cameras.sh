#!/usr/bin/env bash
# Runs the launch lines of examples/usb-cameras.sh without the hardware:
# videotestsrc stands in for each v4l2src (sending YUY2 as a UVC camera
# does, or JPEG through jpegenc for the MJPEG mode) and the display sink
# becomes a file, whose size must be that of every frame in false colour.
# The nvh264dec line runs where a GPU answers (else it is skipped, and said so).
# Usage: usb-cameras.sh path/to/examples/usb-cameras.sh   (GST_PLUGIN_PATH_1_0 set)
set -u
example=$(realpath "${1:?the example script}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
frames=10
failed=0

# check NAME VIEW_W VIEW_H ARGS...: the example's line for ARGS, with its
# sources stood in for, writes `frames` RGBA frames of VIEW_W x VIEW_H.
check() {
  local name=$1 vw=$2 vh=$3
  shift 3
  local line
  line=$(DRY_RUN=1 MAX_DISPARITY=32 SINK="filesink location=out.rgba" bash "$example" "$@") ||
    { echo "FAIL: $name: the example printed no line"; failed=1; return; }
  [[ $line == *cudastereo* ]] || { echo "FAIL: $name: no cudastereo in: $line"; failed=1; return; }
  line=$(sed -E "s#v4l2src device=[^ ]+ ! image/jpeg#videotestsrc num-buffers=$frames ! jpegenc ! image/jpeg#g;
                 s#v4l2src device=[^ ]+#videotestsrc num-buffers=$frames#g" <<< "$line")
  echo "RUN ($name): $line"
  rm -f out.rgba
  # The words of the example's own array (none holds a space here).
  local words
  read -ra words <<< "${line/gst-launch-1.0/gst-launch-1.0 -q}"
  if ! timeout 120 "${words[@]}" > out.txt 2>&1; then
    echo "FAIL: $name"; cat out.txt; failed=1; return
  fi
  if grep -q "ERROR" out.txt; then echo "FAIL (error message): $name"; cat out.txt; failed=1; return; fi
  local size want=$((frames * vw * vh * 4))
  size=$(stat -c %s out.rgba 2>/dev/null || echo 0)
  if [ "$size" -ne "$want" ]; then
    echo "FAIL: $name wrote $size bytes, not $frames frames of ${vw}x${vh} RGBA ($want)"; failed=1; return
  fi
  echo "ok: $name"
}

check "side-by-side YUY2" 320 240 side-by-side /dev/video0 640 240 30
check "side-by-side MJPEG" 320 240 mjpeg /dev/video0 640 240 30
check "two cameras" 320 240 two /dev/video0 /dev/video2 320 240 30

if gst-inspect-1.0 nvh264dec > /dev/null 2>&1 && gst-inspect-1.0 openh264enc > /dev/null 2>&1; then
  gst-launch-1.0 -q videotestsrc pattern=ball num-buffers=$frames ! video/x-raw,format=I420,width=640,height=240 ! \
    openh264enc ! h264parse ! matroskamux ! filesink location=sbs.mkv ||
    { echo "FAIL: could not make sbs.mkv"; exit 1; }
  check "recorded H.264" 320 240 h264 sbs.mkv
else
  echo "SKIP (no GPU or no openh264enc): the nvh264dec line"
fi
[ $failed -eq 0 ] && echo "usb-cameras.sh: every line that could run passed"
exit $failed
