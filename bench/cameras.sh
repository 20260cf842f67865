#!/bin/bash
# Issue 16's element measurements in one device call (planned: about 5 to 6
# minutes on the H100; every run is cut at --budget so the call ends in
# time): one stream against the engine (item 1), N streams in one process
# from CUDA memory, system memory (plain, through the element's pool, after
# videoconvert) and H.264 through nvh264dec, N = 1, 2, 4, 8, 16, 32 (item 3),
# variants at 16 streams (one CUDA context per pipeline, one pipeline for
# all, live 60 fps sources), and with two GPUs the streams split over both.
#
#   bench/cameras.sh --build DIR [--pair LEFT RIGHT] [--out DIR] [--budget S]
#                    [--quick] [--set NAME=VALUE]... [--streams LIST]
#                    [--sources LIST] [--backend B] [--size WxH]
#                    [--disparities D] [--decoder NAME] [--dry-run]
#
#   --pair L R      the views (any image; Aloe: .gpu-data/aloeL.jpg aloeR.jpg).
#                   cs-bench-engine --write-pairs makes them grey at the view
#                   size (area averaging), the pixels the engine bench times;
#                   the element gets them as RGBA with R = G = B = grey, whose
#                   luma is the same grey. Without --pair: a generated texture.
#   --budget S      seconds for the whole script (default 450); runs that
#                   would start after it are listed as skipped, not run
#   --set N=V       a cudastereo property for every run (e.g. when issue 16's
#                   frames-in-flight property exists: run twice with 1 and 2)
#   --streams LIST  the grid's N (default 1,2,4,8,16,32)
#   --sources LIST  the grid's sources (default cuda,system,pool,h264)
#   --formats LIST  system-memory input formats measured at 1 and 16 streams
#                   (default RGBA,GRAY8,I420,NV12; empty: none): converted once
#                   before imagefreeze, so the frames that cross PCIe are in
#                   that format; GRAY8 also converted every frame on a CPU
#                   thread (what reducing RGBA before the upload costs)
#   --backend, --size, --disparities, --decoder: for a check of the script on
#                   a machine without a GPU (--backend cpu --size 64x48
#                   --disparities 16 --decoder openh264dec --quick)
#   --dry-run       print the runs' command lines, run nothing
#
# Here (the CPU machine), once:
#   meson setup build -Dgpu_archs=9.0 && ninja -C build
#   git rev-parse --short HEAD > build/COMMIT
#   scripts/slim-build.sh build build-gpu
#   rm -rf build-gpu/tests build-gpu/examples   # with them the carry passes 64 MiB
#   ../shared/gpu/bundle build-gpu/gst/libgstcudastereo.so build-gpu
#   rm .gpu/plugins/libgstcudastereo.so
#   mkdir -p .gpu-data && cp ../shared/data/aloe/aloe[LR].jpg .gpu-data/
# Device call: carry [".gpu", "build-gpu", ".gpu-data"], timeout_s 600:
#   source .gpu/env.sh && bash bench/cameras.sh --build build-gpu \
#     --pair .gpu-data/aloeL.jpg .gpu-data/aloeR.jpg
# (a two-GPU kind, nvidia-h100-x2 or nvidia-h200-x2, adds the two-GPU table;
# with one GPU devices.md says so.)
#
# Writes to --out (default $OUT, else BUILD/cameras-results): env.md,
# single.md (item 1), cameras.md (the N grid), variants.md, devices.md,
# all.md (all of them, also printed last), results.txt (every result and
# stream line, key=value) and log.txt (everything else): the device tool's
# 8 files.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BUILD="" LEFT="" RIGHT="" OUTDIR=${OUT:-} BUDGET=450 QUICK=0 DRY=0
STREAMS="1,2,4,8,16,32" SOURCES="cuda,system,pool,h264" FORMATS="RGBA,GRAY8,I420,NV12"
BACKEND=cuda SIZE=1920x1080 D=128 DECODER=nvh264dec
SETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --pair) [ $# -ge 3 ] || { echo "cameras.sh: --pair needs LEFT RIGHT" >&2; exit 2; }
            LEFT=$2; RIGHT=$3; shift 3 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --set) SETS+=(--set "$2"); shift 2 ;;
    --streams) STREAMS=$2; shift 2 ;;
    --sources) SOURCES=$2; shift 2 ;;
    --formats) FORMATS=$2; shift 2 ;;
    --backend) BACKEND=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --disparities) D=$2; shift 2 ;;
    --decoder) DECODER=$2; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) sed -n 2,49p "$0"; exit 0 ;;
    *) echo "cameras.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
T_START=$(date +%s)
abs() { case "$1" in ""|/*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
[ -n "$BUILD" ] || { echo "cameras.sh: --build DIR is needed" >&2; exit 2; }
BUILD=$(abs "$BUILD") LEFT=$(abs "$LEFT") RIGHT=$(abs "$RIGHT")
OUTDIR=$(abs "${OUTDIR:-$BUILD/cameras-results}")
cd "$root" || exit 1
mkdir -p "$OUTDIR" || exit 1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cameras.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
LOG=$OUTDIR/log.txt RESULTS=$OUTDIR/results.txt RAW=$WORK/raw.txt
: > "$LOG"; : > "$RESULTS"; : > "$RAW"
CAM=$BUILD/bench/element/cs-bench-cameras
ENGINE=$BUILD/bench/cs-bench-engine
export GST_PLUGIN_PATH_1_0=$BUILD/gst
[ $QUICK = 1 ] && STREAMS=1,2 && BUDGET=$((BUDGET < 120 ? BUDGET : 120))
WARMUP=1 DURATION=3
[ $QUICK = 1 ] && WARMUP=0.3 DURATION=1
note() { echo "$*" | tee -a "$LOG" >&2; }
elapsed() { echo $(( $(date +%s) - T_START )); }
if [ $DRY = 0 ] && [ ! -x "$CAM" ]; then
  echo "cameras.sh: $CAM not built" >&2; exit 1
fi
if [ $DRY = 0 ] && ldd "$CAM" 2>/dev/null | grep -q 'not found'; then
  echo "cameras.sh: $CAM misses libraries (on the GPU machine: source .gpu/env.sh first):" >&2
  ldd "$CAM" | grep 'not found' >&2
  exit 1
fi

# ------------------------------------------------------------------ env
gpus=0
gpu_lines="none"
if command -v nvidia-smi > /dev/null 2>&1 &&
   gpu_lines=$(nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>/dev/null) &&
   [ -n "$gpu_lines" ]; then
  gpus=$(echo "$gpu_lines" | wc -l)
else
  gpu_lines="none"
fi
commit=$(cat "$BUILD/COMMIT" 2>/dev/null || git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)  # the build measured, not the tree
{
  echo "### Where these numbers come from"
  echo
  echo "| what | value |"
  echo "| --- | --- |"
  echo "| date (UTC) | $(date -u '+%Y-%m-%d %H:%M') |"
  echo "| commit | $commit |"
  echo "| GPUs (index, name, driver, memory) | $(echo "$gpu_lines" | paste -sd ';' | sed 's/;/; /g') |"
  echo "| CPU | $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(nproc) cores |"
  echo "| GStreamer | $(gst-launch-1.0 --version 2>/dev/null | sed -n 's/^GStreamer //p' | head -1) |"
  echo "| element settings | backend=$BACKEND max-disparity=$D input-layout=side-by-side, views $SIZE, output to fakesink sync=false${SETS[*]:+, ${SETS[*]}} |"
  echo "| runs | warm-up ${WARMUP} s after every stream's first output, then ${DURATION} s measured; one process per run |"
  echo "| command | bench/cameras.sh$([ -n "$LEFT" ] && echo " --pair $(basename "$LEFT") $(basename "$RIGHT")")$([ $QUICK = 1 ] && echo ' --quick') --budget $BUDGET |"
} > "$OUTDIR/env.md"

# ------------------------------------------------------------------ frames
# The views: grey at the view size by the engine bench's own area averaging,
# so the element and the engine match the same pixels.
VIEWS=()
frame_note="generated texture (synthetic)"
if [ -n "$LEFT" ]; then
  pairs=$WORK/pairs
  if [ $DRY = 0 ] && [ -x "$ENGINE" ] &&
     "$ENGINE" --left "$LEFT" --right "$RIGHT" --label pair --sizes "$SIZE" --disparities "$D" \
       --write-pairs "$pairs" --no-run >> "$LOG" 2>&1 &&
     [ -f "$pairs/pair_${SIZE}_left.pgm" ]; then
    VIEWS=(--left "$pairs/pair_${SIZE}_left.pgm" --right "$pairs/pair_${SIZE}_right.pgm")
    frame_note="$(basename "$LEFT") and $(basename "$RIGHT"), grey, area-averaged to $SIZE by cs-bench-engine --write-pairs (the engine bench's pixels)"
  else
    VIEWS=(--left "$LEFT" --right "$RIGHT")
    frame_note="$(basename "$LEFT") and $(basename "$RIGHT") scaled to $SIZE by videoscale (cs-bench-engine --write-pairs was not available: not the engine bench's exact pixels)"
  fi
fi
echo "| frame | $frame_note |" >> "$OUTDIR/env.md"
cat "$OUTDIR/env.md"

# ------------------------------------------------------------------ engine
engine_fps="" engine_ms=""
if [ -n "$LEFT" ] && [ $BACKEND = cuda ]; then
  if [ $DRY = 1 ]; then
    echo "dry run: $ENGINE --left $LEFT --right $RIGHT --label aloe --sizes $SIZE --disparities $D --no-inflight --singles 20"
  elif [ $gpus -gt 0 ] && [ -x "$ENGINE" ]; then
    out=$(timeout -k 5 120 "$ENGINE" --left "$LEFT" --right "$RIGHT" --label engine --sizes "$SIZE" \
          --disparities "$D" --no-inflight --singles 20 2>&1)
    echo "== cs-bench-engine (rc $?)" >> "$LOG"; echo "$out" >> "$LOG"
    line=$(echo "$out" | grep '^result ' | head -1)
    echo "$line" >> "$RESULTS"
    engine_ms=$(echo "$line" | tr ' ' '\n' | sed -n 's/^batch_ms=//p')
    engine_fps=$(echo "$line" | tr ' ' '\n' | sed -n 's/^fps=//p')
  fi
fi

# ------------------------------------------------------------------ runs
# What every cs-bench-cameras run takes.
RUN_ARGS=(--backend "$BACKEND" --size "$SIZE" --disparities "$D" --decoder "$DECODER" --warmup "$WARMUP"
          --duration "$DURATION")
# run_limit LABEL SOURCE STREAMS: prints the seconds a run starting now may
# take; fails, with the run recorded as skipped, once the call's budget is spent.
run_limit() {
  local left=$((BUDGET - $(elapsed)))
  if [ $left -lt 15 ]; then
    echo "result label=$1 source=$2 streams=$3 error=\"skipped: the call's budget of $BUDGET s was spent\"" >> "$RAW"
    return 1
  fi
  echo $((left < 90 ? left : 90))
}

# cam LABEL ARGS...: one cs-bench-cameras process; its result and stream
# lines go to the raw file and results.txt, everything to log.txt. A run
# that would start past the budget is recorded as skipped.
cam() {
  local label=$1; shift
  local source="-" streams="-" a prev="" sets=("${SETS[@]}")
  for a in "$@"; do
    [ "$prev" = --source ] && source=$a
    [ "$prev" = --streams ] && streams=$a
    [ "$prev" = --stage ] && [ "$a" = identity ] && sets=()  # no cudastereo to set
    prev=$a
  done
  local args=(--label "$label" "${RUN_ARGS[@]}" "${sets[@]}" "$@")
  if [ $DRY = 1 ]; then echo "dry run: $CAM ${args[*]}"; return; fi
  local limit
  limit=$(run_limit "$label" "$source" "$streams") || return
  local out rc
  out=$(timeout -k 5 $((limit + 10)) "$CAM" --timeout "$limit" "${args[@]}" 2>"$WORK/err")
  rc=$?
  { echo "== cs-bench-cameras ${args[*]} (rc $rc, $(elapsed) s into the call)"; echo "$out"; cat "$WORK/err"; } >> "$LOG"
  echo "$out" | grep -E '^(result|stream) ' | tee -a "$RESULTS" >> "$RAW"
  echo "$out" | grep -q '^result ' ||
    echo "result label=$label source=$source streams=$streams error=\"exit code $rc without a result line, see log.txt\"" >> "$RAW"
  echo "$out" | grep '^result ' | sed 's/^result /  /' | cut -c1-160 >&2
}

list() { echo "$1" | tr ',' ' '; }
in_list() { case ",$2," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

# H.264: the same frame encoded here with openh264enc (the H100 has no
# NVENC), with sensor-like noise per frame so that P-frames carry data.
H264=$WORK/sbs.mp4
h264_frames=1800
[ $QUICK = 1 ] && h264_frames=300
h264_note=""
if in_list h264 "$SOURCES"; then
  if [ $DRY = 1 ]; then
    echo "dry run: $CAM --make-h264 $H264 ${VIEWS[*]} --size $SIZE --frames $h264_frames"
  else
    t=$(date +%s)
    "$CAM" --make-h264 "$H264" "${VIEWS[@]}" --size "$SIZE" --frames $h264_frames --timeout 120 >> "$LOG" 2>&1
    rc=$?
    if [ $rc = 0 ]; then
      h264_note="H.264: $h264_frames frames made by openh264enc in $(( $(date +%s) - t )) s ($(du -m "$H264" | cut -f1) MiB), decoded by $DECODER per stream"
    else
      h264_note="H.264: the file could not be made (exit code $rc, see log.txt): no h264 rows"
      SOURCES=$(echo ",$SOURCES," | sed 's/,h264,/,/; s/^,//; s/,$//')
    fi
    note "$h264_note"
  fi
fi

# Item 1: one stream from each source (the N = 1 rows of the grid too).
for src in cuda system pool videoconvert h264; do
  [ $src = h264 ] && ! in_list h264 "$SOURCES" && continue
  extra=()
  [ $src = h264 ] && extra=(--h264 "$H264")
  cam single --source $src --streams 1 "${VIEWS[@]}" "${extra[@]}"
done
# The decoder's own rate, measured the same way: cudastereo replaced by identity.
in_list h264 "$SOURCES" && cam decoder-alone --source h264 --streams 1 --stage identity "${VIEWS[@]}" --h264 "$H264"
cam single-color --source cuda --streams 1 --output color-cuda "${VIEWS[@]}"

# Item 3: the N grid.
for src in $(list "$SOURCES"); do
  extra=()
  [ $src = h264 ] && extra=(--h264 "$H264")
  for n in $(list "$STREAMS"); do
    [ "$n" = 1 ] && continue  # measured above
    cam grid --source $src --streams "$n" "${VIEWS[@]}" "${extra[@]}"
  done
done

# Variants at 16 streams (2 with --quick).
vn=16
[ $QUICK = 1 ] && vn=2
for src in cuda system; do
  cam own-context --source $src --streams $vn --context own "${VIEWS[@]}"
  cam one-pipeline --source $src --streams $vn --pipelines one "${VIEWS[@]}"
done
for src in cuda system pool; do
  cam live60 --source $src --streams $vn --live 60 "${VIEWS[@]}"
done
[ $QUICK = 1 ] || cam live60 --source cuda --streams 32 --live 60 "${VIEWS[@]}"

# System-memory input formats (issue 36, item 3): bytes a pixel that cross PCIe.
for f in $(list "$FORMATS"); do
  for n in 1 16; do
    [ $QUICK = 1 ] && [ $n = 16 ] && continue
    cam format --source videoconvert --format $f --streams $n "${VIEWS[@]}"
    [ $f = GRAY8 ] && cam format-each --source videoconvert --format $f --convert each --streams $n "${VIEWS[@]}"
  done
done

# Two GPUs: the same streams over devices 0 and 1, in one process (a pipeline
# a stream, and all streams in one pipeline as gst-launch-1.0 builds them)
# and in two processes at once (one a GPU, half the streams each); with four
# GPUs or more, the streams over the first four too.
# cam_procs LABEL N ARGS...: two cs-bench-cameras at once, N/2 streams each,
# one on device 0 and one on device 1; both result lines are kept.
cam_procs() {
  local label=$1 n=$2; shift 2
  if [ $DRY = 1 ]; then echo "dry run: two processes of $CAM --streams $((n / 2)) --devices 0 | 1 $*"; return; fi
  local limit d
  limit=$(run_limit "$label" - "$n") || return
  local args=("${RUN_ARGS[@]}" "${SETS[@]}" --streams $((n / 2)) "$@")
  for d in 0 1; do
    timeout -k 5 $((limit + 10)) "$CAM" --timeout "$limit" --label "$label" --devices $d "${args[@]}" \
      > "$WORK/proc$d" 2> "$WORK/proc$d.err" &
  done
  wait
  for d in 0 1; do
    { echo "== cs-bench-cameras (process $d of 2) --label $label --devices $d ${args[*]}"; cat "$WORK/proc$d" "$WORK/proc$d.err"; } >> "$LOG"
    grep -E '^(result|stream) ' "$WORK/proc$d" | tee -a "$RESULTS" >> "$RAW"
    grep -q '^result ' "$WORK/proc$d" ||
      echo "result label=$label source=- streams=$((n / 2)) error=\"process $d of 2 gave no result line, see log.txt\"" >> "$RAW"
  done
}
if [ $gpus -ge 2 ] || [ $DRY = 1 ]; then
  for src in cuda system h264; do
    in_list $src "$SOURCES" || continue
    extra=()
    [ $src = h264 ] && extra=(--h264 "$H264")
    for n in 8 16 32; do
      [ $QUICK = 1 ] && [ $n != 8 ] && continue
      cam two-gpus --source $src --streams $n --devices 0,1 "${VIEWS[@]}" "${extra[@]}"
      [ $QUICK = 1 ] || in_list $n "$STREAMS" || cam grid --source $src --streams $n "${VIEWS[@]}" "${extra[@]}"
    done
    n=16
    [ $QUICK = 1 ] && n=8
    cam two-gpus-one-pipeline --source $src --streams $n --devices 0,1 --pipelines one "${VIEWS[@]}" "${extra[@]}"
    cam one-gpu-one-pipeline --source $src --streams $n --pipelines one "${VIEWS[@]}" "${extra[@]}"
    cam_procs two-processes $n --source $src "${VIEWS[@]}" "${extra[@]}"
    if [ $gpus -ge 4 ]; then
      cam four-gpus --source $src --streams $n --devices 0,1,2,3 "${VIEWS[@]}" "${extra[@]}"
      cam four-gpus-one-pipeline --source $src --streams $n --devices 0,1,2,3 --pipelines one "${VIEWS[@]}" "${extra[@]}"
    fi
  done
fi
[ $DRY = 1 ] && exit 0

# ------------------------------------------------------------------ tables
KV='function kv(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
function err(   e) { if (match($0, /error="[^"]*"/)) return substr($0, RSTART + 7, RLENGTH - 8); return "" }
function rank(s) { return s == "cuda" ? 1 : s == "system" ? 2 : s == "pool" ? 3 : s == "videoconvert" ? 4 : s == "h264" ? 5 : 6 }
# The goal (issue 16): 60 fps or more for every stream; a paced (live) run
# keeps up when every stream gives at least 95 % of its camera rate.
function goal(   live) { live = kv("live_fps") + 0; return (kv("fps_min") + 0 >= (live > 0 ? 0.95 * live : 60)) ? "yes" : "no" }'

{
  echo "### One stream against the engine (issue 16, item 1)"
  echo
  echo "One cudastereo element, the side-by-side frame repeated by imagefreeze into"
  echo "\`cudastereo ! video/x-raw,format=GRAY16_LE ! fakesink sync=false\` as fast as it takes frames."
  if [ -n "$engine_fps" ]; then
    echo "The engine alone (cs-bench-engine, one frame at a time on its stream, the same grey pixels): $engine_ms ms a frame, $engine_fps fps."
  else
    echo "The engine alone: not measured in this call (needs --pair, a GPU and cs-bench-engine)."
  fi
  echo
  echo "| input | memory reaching the element | fps | % of the engine | latency median ms | p99 ms | uploaded ahead | pinned in place / gathered | allocation queries | CPU cores busy | note |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
  awk -v efps="${engine_fps:-0}" -v dec="$DECODER" "$KV"'
    $1 == "result" && (kv("label") == "single" || kv("label") == "single-color" || kv("label") == "decoder-alone") {
      src = kv("source"); o = kv("output")
      name = src == "cuda" ? "CUDA memory (cudaupload ! imagefreeze)" : src == "system" ? "system memory, pageable (appsrc ! imagefreeze)" : \
             src == "pool" ? "system memory, the element'"'"'s proposed pool" : src == "videoconvert" ? "system memory after videoconvert ! imagefreeze" : \
             src == "h264" ? "H.264 through " dec : src
      if (kv("label") == "decoder-alone") name = "H.264, " dec " alone (identity in place of cudastereo)"
      else if (o != "raw") name = name ", output " o
      if (err() != "") { printf "| %s | | | | | | | | | | %s |\n", name, err(); next }
      pct = (efps + 0 > 0) ? sprintf("%.0f %%", 100 * kv("total_fps") / efps) : "-"
      pinned = kv("pinned_in_place") != "" ? kv("pinned_in_place") " / " kv("gathered") : "-"
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, kv("input_memory"), kv("total_fps"), pct,
             kv("lat_median_ms"), kv("lat_p99_ms"), kv("uploaded_ahead"), pinned, kv("alloc_queries"), kv("cpu_cores"),
             (kv("ended") == "eos" ? "window ended at the end of the file" : "")
    }' "$RAW"
  echo
} > "$OUTDIR/single.md"

grid_table() { # grid_table LABEL...: the rows of those labels, by source then N
  awk -v labels=" $* " "$KV"'
    $1 == "result" && index(labels, " " kv("label") " ") {
      printf "%d\t%d\t", rank(kv("source")), kv("streams")
      if (err() != "") { printf "| %s | %s | %s | | | | | | | | | | %s |\n", kv("source"), kv("streams"), kv("devices"), err(); next }
      printf "| %s | %s | %s | %s | %s (%s..%s) | %s | %s | %s | %s | %s | %s | %s | %s |\n", kv("source"), kv("streams"),
             kv("devices"), kv("total_fps"), kv("fps_mean"), kv("fps_min"), kv("fps_max"), goal(), kv("lat_median_ms"),
             kv("lat_p99_ms"), kv("worst_stream_p99_ms"), kv("gpu_mib_per_stream"), kv("cuda_contexts"),
             kv("cpu_cores") " / " kv("threads"),
             kv("input_memory") (kv("ended") == "eos" ? "; window ended at the end of the file" : "")
    }' "$RAW" | sort -t"$(printf '\t')" -k1,1n -k2,2n -s | cut -f3-
}
GRID_HEAD="| source | N | GPUs | total fps | fps per stream, mean (min..max) | every stream >= 60 | latency median ms | p99 ms | worst stream p99 ms | GPU MiB per stream | CUDA contexts | CPU cores busy / threads | memory reaching the element; note |
| --- | ---: | --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"

{
  echo "### Many cameras on one GPU (issue 16, item 3)"
  echo
  echo "N cudastereo elements in one process, one pipeline each (one CUDA context per GPU shared by the"
  echo "application), each with its own source; sources as fast as the elements take frames. Latency: a"
  echo "buffer entering the element's sink pad to its output leaving the src pad, over every stream's frames"
  echo "(under this flood it includes the frames queued before the element; see variants.md for paced sources)."
  echo "GPU MiB per stream: device memory in use after the warm-up minus before the pipelines existed, over N"
  echo "(a CUDA context, the engine's buffers, the uploaded frame or the decoder's surfaces)."
  [ -n "$h264_note" ] && { echo; echo "$h264_note."; }
  echo
  echo "$GRID_HEAD"
  grid_table single grid | awk -F'|' '$4 ~ /auto/ || $4 ~ /^ *-? *$/'
  echo
  echo "Per-stream fps at 16 streams:"
  echo
  awk "$KV"'$1 == "stream" && kv("label") == "grid" && kv("streams") == 16 {
      s = kv("source"); if (!(s in seen)) { seen[s] = 1; order[++n] = s }; f[s] = f[s] (f[s] == "" ? "" : ", ") kv("fps") }
    END { for (i = 1; i <= n; i++) printf "- %s: %s\n", order[i], f[order[i]] }' "$RAW"
  echo
} > "$OUTDIR/cameras.md"

{
  echo "### Variants at 16 streams"
  echo
  echo "own-context: every pipeline opens its own CUDA context (no context handed between pipelines);"
  echo "one-pipeline: all streams in one GstPipeline (GStreamer shares the context inside it);"
  echo "live60: imagefreeze is-live=true at 60 fps per stream, as cameras deliver (latency = processing);"
  echo "there \"every stream >= 60\" means every stream kept at least 95 % of 60 fps."
  echo
  echo "| variant | source | N | total fps | fps per stream, mean (min..max) | every stream >= 60 | latency median ms | p99 ms | worst stream p99 ms | GPU MiB per stream | CUDA contexts | CPU cores busy / threads | reported latency ms (live) |"
  echo "| --- | --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"
  awk "$KV"'
    $1 == "result" && (kv("label") == "own-context" || kv("label") == "one-pipeline" || kv("label") == "live60" || \
                       (kv("label") == "grid" && kv("streams") == 16 && (kv("source") == "cuda" || kv("source") == "system"))) {
      v = kv("label") == "grid" ? "reference: shared context, a pipeline each" : kv("label")
      if (err() != "") { printf "| %s | %s | %s | | | | | | | | | | %s |\n", v, kv("source"), kv("streams"), err(); next }
      printf "| %s | %s | %s | %s | %s (%s..%s) | %s | %s | %s | %s | %s | %s | %s | %s (%s) |\n", v, kv("source"), kv("streams"),
             kv("total_fps"), kv("fps_mean"), kv("fps_min"), kv("fps_max"), goal(),
             kv("lat_median_ms"), kv("lat_p99_ms"), kv("worst_stream_p99_ms"), kv("gpu_mib_per_stream"),
             kv("cuda_contexts"), kv("cpu_cores") " / " kv("threads"), kv("reported_latency_ms"),
             (kv("reported_live") == 1 ? "live" : "not live")
    }' "$RAW"
  echo
} > "$OUTDIR/variants.md"

{
  echo "### System-memory input by format (issue 36, item 3)"
  echo
  echo "appsrc ! videoconvert ! video/x-raw,format=F ! imagefreeze ! cudastereo: the frame is converted once,"
  echo "so every frame crosses PCIe in F (pinned in place after its first sighting); \"each\": imagefreeze"
  echo "before videoconvert n-threads=1, so every frame is converted on a CPU thread of its stream first."
  echo
  echo "| format | bytes a pixel | converted | N | total fps | fps per stream, mean (min..max) | latency median ms | CPU cores busy |"
  echo "| --- | ---: | --- | ---: | ---: | --- | ---: | ---: |"
  awk "$KV"'$1 == "result" && (kv("label") == "format" || kv("label") == "format-each") {
      f = kv("format"); b = f == "RGBA" ? 4 : f == "GRAY8" ? 1 : (f == "I420" || f == "NV12") ? 1.5 : "?"
      if (err() != "") { printf "| %s | %s | %s | %s | | | | %s |\n", f, b, kv("convert"), kv("streams"), err(); next }
      printf "| %s | %s | %s | %s | %s | %s (%s..%s) | %s | %s |\n", f, b, kv("convert"), kv("streams"), kv("total_fps"),
             kv("fps_mean"), kv("fps_min"), kv("fps_max"), kv("lat_median_ms"), kv("cpu_cores")
    }' "$RAW"
  echo
} >> "$OUTDIR/variants.md"  # one file more would pass the device tool's eight

{
  echo "### Two GPUs: streams split over both (cuda-device-id, round robin)"
  echo
  if [ $gpus -lt 2 ]; then
    echo "> not measured: this machine has $gpus GPU(s) (run on the kind nvidia-h200-x2)"
  else
    echo "$GRID_HEAD"
    grid_table two-gpus grid single | awk -F'|' -v ns=" 8 16 32 " 'index(ns, " " ($3 + 0) " ")'
    echo
    echo "All streams in one pipeline (as gst-launch-1.0 builds them), two processes at once (one a GPU,"
    echo "half the streams each; total of both), and four GPUs where the machine has them:"
    echo
    echo "| run | source | N | GPUs | total fps | over one GPU, same N | CUDA contexts | CPU cores busy |"
    echo "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |"
    awk "$KV"'$1 == "result" && err() == "" {
        l = kv("label"); s = kv("source"); n = kv("streams") + 0
        if (l == "grid" || l == "single") one[s " " n] = kv("total_fps")
        if (l == "one-gpu-one-pipeline") onep[s " " n] = kv("total_fps")
        if (l == "two-processes") { k = l " " s " " (2 * n); fps[k] += kv("total_fps"); ctx[k] += kv("cuda_contexts"); cpu[k] += kv("cpu_cores"); dev[k] = "0,1 (two processes)"; procs[k]++ }
        else if (l ~ /gpus/ || l == "one-gpu-one-pipeline") { k = l " " s " " n; fps[k] = kv("total_fps"); ctx[k] = kv("cuda_contexts"); cpu[k] = kv("cpu_cores"); dev[k] = kv("devices") }
        else next
        if (!(k in seen)) { seen[k] = 1; order[++m] = k }
      }
      END { for (i = 1; i <= m; i++) { split(order[i], p, " "); k = order[i]; base = p[1] ~ /one-pipeline/ && (p[2] " " p[3]) in onep ? onep[p[2] " " p[3]] : one[p[2] " " p[3]]
              printf "| %s | %s | %s | %s | %.0f | %s | %s | %.2f |\n", p[1], p[2], p[3], dev[k], fps[k],
                     (base + 0 > 0 ? sprintf("%.2f x", fps[k] / base) : "-"), ctx[k], cpu[k] } }' "$RAW"
    echo
    echo "(\"over one GPU\": one-pipeline runs against one-gpu-one-pipeline, the others against the grid's"
    echo "one-GPU run of the same source and N.)"
  fi
  echo
} > "$OUTDIR/devices.md"

{
  for f in env single cameras variants devices; do cat "$OUTDIR/$f.md"; echo; done
  echo "(cameras.sh: $(elapsed) s)"
} > "$OUTDIR/all.md"
failed=$(grep -c 'error="' "$RAW")
note "cameras.sh: $(elapsed) s, $failed run(s) with an error or skipped (see log.txt)"
cat "$OUTDIR/all.md"
[ "$failed" = 0 ]
