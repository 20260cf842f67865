#!/usr/bin/env bash
# Sends false-colour disparity video as bare RTP (VP8) to one receiver's
# address. For players (VLC, ffplay, NVRs) and any number of viewers use the
# RTSP server instead, examples/rtsp_server.py (rtsp://127.0.0.1:8554/disparity).
#   examples/stream-server.sh [HOST] [PORT]       (default 127.0.0.1 5000)
# Watch it with:
#   gst-launch-1.0 udpsrc port=5000 caps="application/x-rtp,media=video,encoding-name=VP8,payload=96,clock-rate=90000" \
#     ! rtpjitterbuffer ! rtpvp8depay ! vp8dec ! videoconvert ! autovideosink
# The source here is the built-in example sequence (scripts/quickstart.sh
# makes it); replace the first line of the pipeline with your camera, e.g.
# `v4l2src ! videoconvert` for a side-by-side USB stereo camera.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
host=${1:-127.0.0.1}
port=${2:-5000}
export GST_PLUGIN_PATH_1_0="$root/build/gst"
exec gst-launch-1.0 multifilesrc location="$root/out/example/sbs_%04d.png" loop=true caps=image/png,framerate=30/1 \
  ! pngdec ! videoconvert ! cudastereo input-layout=side-by-side max-disparity=64 background=true \
  ! videoconvert ! vp8enc deadline=1 ! rtpvp8pay ! udpsink host="$host" port="$port"
