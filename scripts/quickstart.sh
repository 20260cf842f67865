#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and runs the main job on
# the built-in example: a generated stereo sequence (a textured object moving
# in front of a textured wall, side by side in one frame) goes through
# `cudastereo`, giving
#   out/disparity.webm      false-colour disparity video (turbo map)
#   out/disparity.png       one false-colour frame to open
#   out/disparity-raw.png   the same frame as raw 16-bit disparity (d * 16)
# and the raw frame is scored against the sequence's exact ground truth.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/deps.sh"
cs_install_deps
# What the example needs, and GPU code only for this machine's GPU (none
# without one): minutes, not the half hour of every architecture.
cs_build_project quick gst/libgstcudastereo.so tools/cs-makeseq tools/cs-score

out="$cs_root/out"
seq="$out/example"
mkdir -p "$seq"
export GST_PLUGIN_PATH_1_0="$cs_build/gst"
tools="$cs_build/tools"

echo "== generating the example sequence in $seq"
"$tools/cs-makeseq" --width 640 --height 360 --frames 90 --layout side-by-side --out "$seq" >/dev/null

src="multifilesrc location=$seq/sbs_%04d.png caps=image/png,framerate=30/1 ! pngdec ! videoconvert"
stereo="cudastereo input-layout=side-by-side max-disparity=64"

echo "== false-colour disparity video -> $out/disparity.webm"
gst-launch-1.0 -q $src ! $stereo ! videoconvert ! vp8enc deadline=1 ! webmmux ! filesink location="$out/disparity.webm"

echo "== first frame, false colour and raw -> $out/disparity.png, $out/disparity-raw.png"
gst-launch-1.0 -q multifilesrc location="$seq/sbs_%04d.png" stop-index=0 caps=image/png,framerate=30/1 ! pngdec ! videoconvert \
  ! $stereo ! video/x-raw,format=RGBA ! pngenc ! filesink location="$out/disparity.png"
gst-launch-1.0 -q multifilesrc location="$seq/sbs_%04d.png" stop-index=0 caps=image/png,framerate=30/1 ! pngdec ! videoconvert \
  ! $stereo ! video/x-raw,format=GRAY16_LE ! videoconvert ! video/x-raw,format=GRAY16_BE ! pngenc ! filesink location="$out/disparity-raw.png"

echo "== accuracy of frame 0 against the exact ground truth"
"$tools/cs-score" --disparity "$out/disparity-raw.png" --gt "$seq/gt_0000.png" --gt-scale 16

echo "done: open $out/disparity.png or play $out/disparity.webm"
