#!/usr/bin/env bash
# Runs every gst-launch-1.0 line of the element's documentation block (the
# |[ ... ]| examples in gst/gstcudastereo.cpp), with display sinks replaced
# by fakesink, and checks what they write.
# Usage: launch-lines.sh path/to/gstcudastereo.cpp   (GST_PLUGIN_PATH_1_0 set)
set -u
src=${1:?source file with the docs block}
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

failed=0
for line in "${lines[@]}"; do
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
[ $failed -eq 0 ] && echo "all ${#lines[@]} launch lines ran"
exit $failed
