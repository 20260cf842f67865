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
  line=$(DRY_RUN=1 MAX_DISPARITY=32 SINK="videoconvert ! video/x-raw,format=RGBA ! filesink location=out.rgba" bash "$example" "$@") ||
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

# Two cameras with a calibration (OpenCV's YAML, as stereo_calib writes it:
# two 320x240 cameras 10 cm apart, mild barrel distortion, slightly turned):
# the rectified views side by side (RGBA), and depth (GRAY16_LE shown
# through videoconvert, whose RGBA the sink stand-in writes).
cat > stereo.yml <<'EOF'
%YAML:1.0
---
imageSize: [ 320, 240 ]
M1: !!opencv-matrix
   rows: 3
   cols: 3
   dt: d
   data: [ 350., 0., 161.2, 0., 352., 119.1, 0., 0., 1. ]
D1: !!opencv-matrix
   rows: 1
   cols: 5
   dt: d
   data: [ -0.12, 0.03, 0., 0., 0. ]
M2: !!opencv-matrix
   rows: 3
   cols: 3
   dt: d
   data: [ 348., 0., 158.4, 0., 350., 121.3, 0., 0., 1. ]
D2: !!opencv-matrix
   rows: 1
   cols: 5
   dt: d
   data: [ -0.11, 0.02, 0., 0., 0. ]
R: !!opencv-matrix
   rows: 3
   cols: 3
   dt: d
   data: [ 0.99994987556912496, -0.00046998898653412621, 0.010001272901182495, 0.00052998830528724048, 0.99998187520579329, -0.0059973637793134874, -0.0099982729352448389, 0.0060023637225429128, 0.99993200077207978 ]
T: !!opencv-matrix
   rows: 3
   cols: 1
   dt: d
   data: [ -0.1, 0.001, 0.0005 ]
EOF
CALIBRATION=$work/stereo.yml OUTPUT=rectified check "two cameras, rectified views" 640 240 two /dev/video0 /dev/video2 320 240 30
CALIBRATION=$work/stereo.yml OUTPUT=depth check "two cameras, depth" 320 240 two /dev/video0 /dev/video2 320 240 30

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
