#!/usr/bin/env bash
# Leak check of the element over a long CPU-backend run under valgrind:
# two pipelines (packed side-by-side, and two pads with background model,
# false colour and alpha mask), 300 frames each, then the element test suite's
# state-change cycles. Fails on any "definitely lost" or "indirectly lost"
# block that is not in gst.supp (one-time GLib/GStreamer allocations only).
# Usage: leak-check.sh <plugin dir> <work dir> <suppressions> <element test binary>
#   wired as: ninja -C build-gst gst-leak-check
set -u
plugin_dir=${1:?} work=${2:?} supp=${3:?} checks=${4:?}
export GST_PLUGIN_PATH_1_0=$plugin_dir
export GST_REGISTRY_1_0=$work/registry-leak.bin
export G_SLICE=always-malloc G_DEBUG=gc-friendly
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 77; }
# Build the registry outside valgrind (plugin scanning is slow there).
gst-inspect-1.0 cudastereo > /dev/null || exit 1

vg=(valgrind --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
    --error-exitcode=42 --num-callers=30 --suppressions="$supp" --gen-suppressions=all)
status=0
run() {
  local name=$1; shift
  echo "== $name"
  "${vg[@]}" --log-file="$work/valgrind-$name.log" "$@" > "$work/leak-$name.out" 2>&1
  local rc=$?
  grep -E "definitely lost|indirectly lost|ERROR SUMMARY" "$work/valgrind-$name.log"
  if [ $rc -ne 0 ]; then echo "FAIL ($rc): see $work/valgrind-$name.log"; status=1; fi
}
run packed gst-launch-1.0 -q videotestsrc pattern=ball num-buffers=300 ! \
  video/x-raw,width=128,height=48,format=RGBA ! cudastereo backend=cpu input-layout=side-by-side max-disparity=16 ! \
  fakesink
run twopads gst-launch-1.0 -q cudastereo name=s backend=cpu background=true warmup-frames=5 alpha-mask=true \
  max-disparity=16 ! video/x-raw,format=RGBA ! fakesink \
  videotestsrc pattern=ball num-buffers=300 ! video/x-raw,width=64,height=48,format=I420 ! s.sink_left \
  videotestsrc pattern=ball num-buffers=300 ! video/x-raw,width=64,height=48,format=I420 ! s.sink_right
# Element checks that cycle states, pads and errors (one process: CK_FORK=no).
CK_FORK=no GST_CHECKS=test_state_cycles,test_two_pads_unpaired_frame,test_bad_short_buffer,test_renegotiation_restarts_model,test_flush_and_seek \
  run checks "$checks"
exit $status
