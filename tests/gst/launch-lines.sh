#!/usr/bin/env bash
# Runs every gst-launch-1.0 line of the element's documentation block (the
# |[ ... ]| examples in gst/gstcudastereo.cpp), with display sinks replaced
# by fakesink, and checks what they write.
# Usage: launch-lines.sh path/to/gstcudastereo.cpp   (GST_PLUGIN_PATH_1_0 set)
set -u
src=$(realpath "${1:?source file with the docs block}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

gst-inspect-1.0 cudastereo > inspect.txt 2>&1 || { echo "FAIL: gst-inspect-1.0 cudastereo"; cat inspect.txt; exit 1; }
for word in max-disparity input-layout output-mode reset-background sink_left sink_right GRAY16_LE; do
  grep -q -- "$word" inspect.txt || { echo "FAIL: gst-inspect output lacks $word"; exit 1; }
done

# Input for the side-by-side example: 5 PNG frames of 640x240 (two 320x240 views).
gst-launch-1.0 -q videotestsrc pattern=smpte num-buffers=5 ! video/x-raw,width=640,height=240 ! pngenc ! \
  multifilesink location=sbs_%04d.png || { echo "FAIL: could not make sbs_%04d.png"; exit 1; }

mapfile -t lines < <(sed -n 's/^ \* \(gst-launch-1\.0 .*cudastereo.*\)$/\1/p' "$src")
[ ${#lines[@]} -ge 4 ] || { echo "FAIL: expected at least 4 launch lines in $src, found ${#lines[@]}"; exit 1; }

# Lines with CUDA elements need a GPU: nvcodec registers cudaupload only when
# a device answers. They are skipped (and said so) without one.
have_gpu=0
gst-inspect-1.0 cudaupload > /dev/null 2>&1 && have_gpu=1
is_cuda_line() { [[ $1 == *cudaupload* || $1 == *cudadownload* || $1 == *nvh264dec* || $1 == *backend=cuda* ]]; }

failed=0
ran=0
for line in "${lines[@]}"; do
  if is_cuda_line "$line"; then
    if [ $have_gpu -eq 0 ]; then echo "SKIP (no GPU): $line"; continue; fi
    if [[ $line == *sbs.h264* && ! -f sbs.h264 ]]; then
      # A side-by-side H.264 stream for the decoder example.
      gst-launch-1.0 -q videotestsrc pattern=ball num-buffers=30 ! video/x-raw,width=640,height=240,format=I420 ! \
        openh264enc ! h264parse ! filesink location=sbs.h264 || { echo "FAIL: could not make sbs.h264"; failed=1; continue; }
    fi
  fi
  ran=$((ran + 1))
  run=${line//autovideosink/fakesink}
  echo "RUN: $run"
  rm -f disparity.raw
  if ! timeout 120 bash -c "${run/gst-launch-1.0/gst-launch-1.0 -q}" > out.txt 2>&1; then
    echo "FAIL: $line"; cat out.txt; failed=1; continue
  fi
  if grep -q "ERROR" out.txt; then echo "FAIL (error message): $line"; cat out.txt; failed=1; continue; fi
  if [[ $line == *"filesink location=disparity.raw"* ]]; then
    size=$(stat -c %s disparity.raw 2>/dev/null || echo 0)
    # 30 frames of 320x240 GRAY16_LE
    if [ "$size" -ne $((30 * 320 * 240 * 2)) ]; then echo "FAIL: disparity.raw has $size bytes"; failed=1; fi
  fi
done
[ $failed -eq 0 ] && echo "$ran of ${#lines[@]} launch lines ran, all passed"
exit $failed
