#!/usr/bin/env bash
# Disparity from USB stereo cameras, shown in false colour.
#
#   examples/usb-cameras.sh side-by-side [DEVICE [WIDTH HEIGHT FPS]]
#       One UVC stereo camera that sends both views side by side in one
#       YUY2 frame (default /dev/video0, 2560x720 at 30: two 1280x720
#       views). YUY2 goes straight into cudastereo, no videoconvert.
#   examples/usb-cameras.sh mjpeg [DEVICE [WIDTH HEIGHT FPS]]
#       The same camera in its MJPEG mode (most reach full rate only there),
#       decoded by jpegdec.
#   examples/usb-cameras.sh two [LEFT RIGHT [WIDTH HEIGHT FPS]]
#       Two cameras, one view each, on sink_left and sink_right (default
#       /dev/video0 and /dev/video2, 640x480 at 30). Without a shared
#       trigger their frames are paired by timestamp, within half a frame.
#   examples/usb-cameras.sh h264 FILE
#       A recorded side-by-side H.264 file (MP4, Matroska or raw .h264),
#       decoded on the GPU by nvh264dec; the frames stay in CUDA memory up to
#       cudadownload. Decoders say multiview-mode=mono, so input-layout
#       names the packing.
#
# Without a calibration the views must come rectified (rows of the two
# views on the same lines), as most one-piece stereo USB cameras deliver
# them. Two separate cameras never do: calibrate them (OpenCV's
# stereo_calib, ROS camera_calibration or Kalibr) and name the file(s) in
# CALIBRATION; the element then rectifies on the GPU, and OUTPUT=depth gives
# millimetres from the file's baseline and focal length:
#   CALIBRATION=stereo.yml OUTPUT=rectified examples/usb-cameras.sh two
#       the rectified views side by side: a feature on one row of the left
#       view must be on the same row of the right one
#   CALIBRATION=left.yaml,right.yaml OUTPUT=depth examples/usb-cameras.sh two `v4l2-ctl -d DEVICE
# --list-formats-ext` lists the sizes and rates a camera sends. A
# side-by-side YUY2/UYVY frame needs a width divisible by 4 (each view
# starts on a whole 2-pixel macropixel); camera modes always are.
#
# Environment: MAX_DISPARITY (default 64), CALIBRATION (a calibration file,
# or two ROS camera_info files separated by a comma; default none), OUTPUT
# (disparity in false colour, depth or rectified; default disparity), SINK
# (default autovideosink),
# DRY_RUN=1 prints the launch line instead of running it, BUILD (default
# build) the build folder whose plugin is used.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export GST_PLUGIN_PATH_1_0="${GST_PLUGIN_PATH_1_0:-$root/${BUILD:-build}/gst}"
max_disparity=${MAX_DISPARITY:-64}
read -ra sink <<< "${SINK:-autovideosink}"
output=${OUTPUT:-disparity}
case $output in
  disparity | rectified) colour=("video/x-raw,format=RGBA" ! videoconvert ! "${sink[@]}") ;;
  depth) colour=("video/x-raw,format=GRAY16_LE" ! videoconvert ! "${sink[@]}") ;;
  *) echo "OUTPUT is disparity, depth or rectified, not $output" >&2; exit 2 ;;
esac
# The element's settings every line shares.
stereo=(max-disparity="$max_disparity" output-mode="$output")
[ -n "${CALIBRATION:-}" ] && stereo+=(calibration="$CALIBRATION")
if [ "$output" != disparity ] && [ -z "${CALIBRATION:-}" ]; then
  echo "OUTPUT=$output needs CALIBRATION (the stereo calibration file of these cameras)" >&2
  exit 2
fi

mode=${1:-}
shift || true
case $mode in
  side-by-side | mjpeg)
    device=${1:-/dev/video0} w=${2:-2560} h=${3:-720} fps=${4:-30}
    if [ "$mode" = side-by-side ]; then
      source=(v4l2src device="$device" ! "video/x-raw,format=YUY2,width=$w,height=$h,framerate=$fps/1")
    else
      source=(v4l2src device="$device" ! "image/jpeg,width=$w,height=$h,framerate=$fps/1" ! jpegdec)
    fi
    cmd=(gst-launch-1.0 "${source[@]}" ! cudastereo input-layout=side-by-side "${stereo[@]}"
         ! "${colour[@]}")
    ;;
  two)
    left=${1:-/dev/video0} right=${2:-/dev/video2} w=${3:-640} h=${4:-480} fps=${5:-30}
    caps=video/x-raw,format=YUY2,width=$w,height=$h,framerate=$fps/1
    cmd=(gst-launch-1.0 cudastereo name=s "${stereo[@]}" ! "${colour[@]}"
         v4l2src device="$left" ! "$caps" ! s.sink_left
         v4l2src device="$right" ! "$caps" ! s.sink_right)
    ;;
  h264)
    file=${1:?usage: usb-cameras.sh h264 FILE}
    cmd=(gst-launch-1.0 filesrc location="$file" ! parsebin ! nvh264dec
         ! cudastereo input-layout=side-by-side "${stereo[@]}" ! cudadownload ! "${colour[@]}")
    ;;
  *)
    sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}" >&2
    exit 2
    ;;
esac

if [ "${DRY_RUN:-0}" = 1 ]; then
  echo "${cmd[*]}"
else
  exec "${cmd[@]}"
fi
