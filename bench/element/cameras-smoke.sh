#!/usr/bin/env bash
# Smoke test of cs-bench-cameras on the CPU backend (meson test 'bench cameras
# smoke'): two streams of tiny side-by-side frames from each source that needs
# no GPU, for about a second each. Asserts that the program exits 0, prints
# one result line without error and a stream line with frames for every
# stream, and that outputs kept their order and timestamps. No speed is
# asserted.
#
#   bench/element/cameras-smoke.sh BUILD/bench/element/cs-bench-cameras WORKDIR
set -u
bench=$1
work=$2
mkdir -p "$work"
streams=2
failures=0
ran=0

kv() { # kv KEY LINE
  local f
  for f in $2; do case $f in "$1="*) echo "${f#*=}"; return ;; esac; done
}

run_case() { # run_case NAME ARGS...
  local name=$1; shift
  local out rc
  out=$("$bench" --backend cpu --streams $streams --size 64x48 --disparities 16 --duration 1 --timeout 60 \
        --label smoke "$@" 2>"$work/$name.err")
  rc=$?
  echo "$out" > "$work/$name.out"
  if [ $rc = 3 ] && grep -q 'element cudastereo not found' <<< "$out"; then
    echo "FAIL $name: the element is not found (GST_PLUGIN_PATH_1_0=${GST_PLUGIN_PATH_1_0:-unset})"
    failures=$((failures + 1))
    return
  fi
  if [ $rc = 3 ]; then
    echo "SKIP $name: not available here: $(grep -o 'error="[^"]*"' <<< "$out")"
    return
  fi
  ran=$((ran + 1))
  local why=""
  local result; result=$(grep '^result ' <<< "$out")
  [ $rc = 0 ] || why="exit code $rc"
  [ -n "$result" ] || why="${why:+$why; }no result line"
  grep -q 'error="' <<< "$result" && why="${why:+$why; }$(grep -o 'error="[^"]*"' <<< "$result")"
  local n; n=$(grep -c '^stream ' <<< "$out")
  [ "$n" = $streams ] || why="${why:+$why; }$n stream lines, not $streams"
  while read -r line; do
    [ -n "$line" ] || continue
    local i frames ooo
    i=$(kv index "$line"); frames=$(kv frames "$line"); ooo=$(kv out_of_order "$line")
    [ "${frames:-0}" -gt 0 ] 2>/dev/null || why="${why:+$why; }stream $i reported no frames"
    [ "${ooo:-1}" = 0 ] || why="${why:+$why; }stream $i: $ooo outputs out of order"
  done < <(grep '^stream ' <<< "$out")
  if [ -n "$why" ]; then
    echo "FAIL $name: $why"
    echo "--- output"; cat "$work/$name.out"; echo "--- stderr"; tail -n 20 "$work/$name.err"
    failures=$((failures + 1))
  else
    echo "ok   $name: total_fps=$(kv total_fps "$result") input_memory=$(kv input_memory "$result")" \
         "alloc_queries=$(kv alloc_queries "$result") lat_median_ms=$(kv lat_median_ms "$result")"
  fi
}

for src in system pool videoconvert; do
  run_case "$src" --source $src --warmup 0.2
done
run_case one-pipeline --source system --pipelines one --warmup 0.2
run_case live --source system --live 30 --warmup 0.2

# A moving sequence (--sequence: files as cs-bench-engine --write-pairs writes
# a surveillance scene's, here 3 warm-up and 4 moving frames of noise, PGM
# views of 64x48) played into each stream with the background model on.
seq="$work/sequence"
mkdir -p "$seq"
printf 'warmup 3\nmoving 4\nplay bounce\n' > "$seq/sequence.txt"
for i in 000 001 002 003 004 005 006; do
  for v in left right; do
    { printf 'P5\n64 48\n255\n'; head -c 3072 /dev/urandom; } > "$seq/${v}_$i.ppm"
  done
done
run_case sequence --source system --sequence "$seq" --set background=true --set warmup-frames=3 --warmup 0.2
frames=$(kv sequence_frames "$(grep '^result ' "$work/sequence.out")")
[ "$frames" = 7 ] || { echo "FAIL sequence: sequence_frames=${frames:-none}, not 7"; failures=$((failures + 1)); }
# A sequence that is not there is an error that names it, exit code 1.
"$bench" --backend cpu --source system --sequence "$work/no-such-sequence" --timeout 30 > "$work/no-seq.out" 2>&1
rc=$?
if [ $rc != 1 ] || ! grep -q 'no-such-sequence' "$work/no-seq.out"; then
  echo "FAIL: --sequence of a missing folder gave exit code $rc:"; cat "$work/no-seq.out"
  failures=$((failures + 1))
fi

# H.264 through openh264 (the GPU run decodes with nvh264dec): made here, then
# decoded per stream; the window may end at the file's end.
"$bench" --make-h264 "$work/sbs.mp4" --size 64x48 --frames 400 --timeout 60 > "$work/make-h264.out" 2>&1
rc=$?
if [ $rc = 0 ]; then
  run_case h264 --source h264 --h264 "$work/sbs.mp4" --decoder openh264dec --warmup 0
elif [ $rc = 3 ]; then
  echo "SKIP h264: $(tail -n 1 "$work/make-h264.out")"
else
  echo "FAIL make-h264 (exit code $rc):"; cat "$work/make-h264.out"
  failures=$((failures + 1))
fi

# A bad option is refused with exit code 2, not run.
"$bench" --source nowhere > /dev/null 2>&1
rc=$?
[ $rc = 2 ] || { echo "FAIL: --source nowhere gave exit code $rc, not 2"; failures=$((failures + 1)); }

if [ $ran = 0 ] && [ $failures = 0 ]; then
  echo "cameras smoke: skipped, no case could run here (elements missing, see above)"
  exit 77
fi
[ $failures = 0 ] && echo "cameras smoke: $ran cases passed" || echo "cameras smoke: $failures failed"
[ $failures = 0 ]
