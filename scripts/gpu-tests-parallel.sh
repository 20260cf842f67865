#!/usr/bin/env bash
# Every step of scripts/gpu-tests.sh in two device calls: the main part
# (about nine minutes on the H200 at 49d3812) and method elas's part
# (PART=elas, the second argument). Each runs the GPU tests and
# compute-sanitizer runs in groups side by side (the sanitizers are
# CPU-bound, the machine has 16 cores); the main part then runs the CUDA
# reliability suite alone (its GPU-memory bounds read the
# device-wide cudaMemGetInfo, which other processes' allocations move).
# Every log goes into one archive, since the device tool returns at most 8
# files. The CPU-only steps (gst-cpu, gst-live, gst-reliability-cpu) are
# left to CI: the live test's timing does not belong beside the sanitizers.
#
# Here:   meson setup build -Dgpu_archs=9.0 && ninja -C build && scripts/slim-build.sh build build-gpu
#         ../shared/gpu/bundle build-gpu/gst/libgstcudastereo.so build-gpu
# There:  carry [".gpu", "build-gpu"], timeout_s 600:
#         bash scripts/gpu-tests-parallel.sh build-gpu [main|elas|model]
# Prints each step's "== name rc=N seconds" line, the sanitizers' summaries
# and the failing logs' names; writes $OUT/gpu-tests.tar.xz.
# (On 2026-11-25, at 546655b in this layout, the groups took 319 s and the
# reliability suite 50 s.)
set -u
B=${1:-build-gpu}
PART=${2:-main}
here=$(cd "$(dirname "$0")" && pwd)
O=${OUT:-/tmp/gpu-tests}
mkdir -p "$O"
start=$(date +%s)
# group NAME REGEX STEP_LIMIT: one gpu-tests.sh with its own output folder.
group() {
  (ONLY="$2" OUT="$O/$1" TMAX="$3" timeout -k 5 480 bash "$here/gpu-tests.sh" "$B" > /dev/null 2>&1) &
}
if [ "$PART" = elas ]; then
  # Method elas's tests and sanitizer runs: a second call (beside the main
  # part's groups they pushed steps past their limits, 2026-11-30).
  group elas '^cuda-elas' 300
  group elas-mem '^memcheck-elas' 300
  group elas-race-prior '^racecheck-elas-prior$' 400
  group elas-race-dense '^racecheck-elas-dense$' 400
  group elas-race-support '^racecheck-elas-support$' 400
elif [ "$PART" = model ]; then
  # A change to the conversion, the model's passes or the finish, and not
  # to the matching kernels: every GPU test, the element's, and the
  # sanitizer runs of the engine, the element and the model, without the
  # matching's racecheck (ten groups) or method elas's part. About five
  # minutes.
  group stages '^cuda-(stages|engine|block-emulation|cross)$' 200
  group configs '^cuda-(configs|block)$|^memcheck-engine$' 200
  group element '^gst-cuda|^launch-lines$|^usb-cameras$|^embed$' 420
  group race-e '^racecheck-(pair|rival)$' 300
  group mem '^memcheck-(rival|engine-rival|element|pad-release|host-pin)$' 200
  group model '^(memcheck|racecheck|synccheck)-model$' 300
  group race-engine '^racecheck-engine-model$' 420
else
  group stages '^cuda-(stages|engine|block-emulation|cross)$' 200
  group configs '^cuda-(configs|block)$|^memcheck-engine$' 200
  group element '^gst-cuda|^launch-lines$|^usb-cameras$|^embed$' 420
  for part in 0-1 2-3 4 5 6-7 8 9 10 11 12-13; do group "race-$part" "^racecheck-match-$part\$" 450; done
  group race-e '^racecheck-(pair|rival)$' 300
  # memcheck-instances alone takes about 150 s (its own group since the six
  # memcheck steps together came to the group's 480 s, 2026-11-26).
  group mem '^memcheck-(rival|engine-rival|element|pad-release|host-pin)$' 200
  group mem-instances '^memcheck-instances$' 400
  group block '^(memcheck-block|racecheck-block|racecheck-block-tiles|synccheck-block)$' 150
  group cross '^(memcheck-cross|racecheck-cross|synccheck-cross)$' 300
  group model '^(memcheck|racecheck|synccheck)-model$' 300
  group race-engine '^racecheck-engine-model$' 420
fi
wait
echo "groups: $(( $(date +%s) - start )) s"
if [ "$PART" != elas ]; then
  ONLY='^gst-reliability-cuda$' OUT="$O/reliability" TMAX=300 bash "$here/gpu-tests.sh" "$B" > /dev/null 2>&1
fi
echo "all: $(( $(date +%s) - start )) s"
cd "$O" || exit 1
head -2 ./*/summary.txt | head -3
cat ./*/summary.txt | grep '^== '
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|SYNCCHECK SUMMARY" ./*/*.log | sort | uniq -c
grep -h "resident .* MiB (" ./*/*.log
failed=$(grep -h '^== ' ./*/summary.txt | grep -vc ' rc=0 ')
echo "steps failed: $failed"
grep -l "FAILED\|:F:" ./*/*.log 2>/dev/null
tar cJf gpu-tests.tar.xz ./*/ && find . -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
exit $(( failed > 0 ))
