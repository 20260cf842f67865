#!/bin/bash
# One command for the benchmark tables of bench/README.md, as markdown
# fragments in one output folder:
#
#   bench/run-all.sh [--build DIR] [--out DIR] [--parts LIST] [--quick]
#
#   --build DIR   build directory (default $BUILD, else build)
#   --out DIR     output folder (default $OUT when set, as on the device
#                 machine, else DIR/bench-results)
#   --parts LIST  comma-separated, any of:
#                   engine      CUDA engine grid: cs-bench-engine per size x D,
#                               full-frame and background, per-stage times
#                   cpu         CPU backend per frame, small sizes
#                   element     end-to-end cudastereo throughput and latency
#                               (cuda backend if a GPU is there, cpu at small sizes)
#                   opencv      OpenCV `disparity` baseline (needs gstreamer1.0-opencv)
#                   foreground  background-model accuracy on a generated sequence
#                   accuracy    Aloe accuracy grid (CPU, slow: about 15 min)
#                 default: engine,cpu,element,opencv
#   --quick       fewer sizes and frames (a smoke test of every part)
#
# Writes (at most 8 files, as the device tool returns): env.md, engine.md,
# cpu.md, element.md, opencv.md, accuracy.md (foreground and Aloe), all.md
# (everything, in README order) and log.txt (raw outputs). A part that cannot
# run here (no GPU, no OpenCV plugin) writes a line saying so, never a number.
# Exit code: 0 when every part that could run succeeded.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root" || exit 1
BUILD=${BUILD:-build}
OUTDIR=${OUT:-}
PARTS=engine,cpu,element,opencv
QUICK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --parts) PARTS=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    -h|--help) sed -n 2,27p "$0"; exit 0 ;;
    *) echo "run-all.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case "$BUILD" in /*) ;; *) BUILD=$root/$BUILD ;; esac
[ -d "$BUILD" ] || { echo "run-all.sh: build directory $BUILD not found" >&2; exit 1; }
OUTDIR=${OUTDIR:-$BUILD/bench-results}
mkdir -p "$OUTDIR" || exit 1
LOG=$OUTDIR/log.txt
: > "$LOG"
want() { case ",$PARTS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
ENGINE_BENCH=$BUILD/bench/cs-bench-engine
CPU_BENCH=$BUILD/bench/element/cs-bench-cpu
ELEMENT_BENCH=$BUILD/bench/element/cs-bench-element
FG_BENCH=$BUILD/bench/element/cs-bench-foreground
# The element from this build, unless the caller points elsewhere.
export GST_PLUGIN_PATH_1_0=${GST_PLUGIN_PATH_1_0:-${GST_PLUGIN_PATH:-$BUILD/gst}}
failures=0
note() { echo "$*" | tee -a "$LOG"; }

have_gpu=0
gpu_line="none"
if command -v nvidia-smi > /dev/null 2>&1 &&
   gpu_line=$(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null) &&
   [ -n "$gpu_line" ]; then
  have_gpu=1
else
  gpu_line="none"
fi
# The commit: from git when the tree has it, else from $BUILD/COMMIT (write
# it there before carrying the build to a machine without the .git folder).
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || cat "$BUILD/COMMIT" 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | head -1)
[ -n "$dirty" ] && commit="$commit (with uncommitted changes)"
cpu_model=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)
{
  echo "### Where these numbers come from"
  echo
  echo "| what | value |"
  echo "| --- | --- |"
  echo "| date (UTC) | $(date -u '+%Y-%m-%d %H:%M') |"
  echo "| commit | $commit |"
  echo "| GPU (name, driver, memory, max SM clock) | $gpu_line |"
  echo "| CPU | $cpu_model, $(nproc) cores |"
  echo "| system | $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(uname -m) |"
  echo "| GStreamer | $(gst-launch-1.0 --version 2>/dev/null | sed -n 's/^GStreamer //p' | head -1) |"
  echo "| command | bench/run-all.sh --parts $PARTS$([ $QUICK = 1 ] && echo ' --quick') |"
} > "$OUTDIR/env.md"
cat "$OUTDIR/env.md"

# ------------------------------------------------------------------ engine
if want engine; then
  md=$OUTDIR/engine.md
  {
    echo "### CUDA engine (cs-bench-engine: device-resident RGBA frames, graph replays, median of 9 batches)"
    echo
  } > "$md"
  if [ ! -x "$ENGINE_BENCH" ]; then
    note "engine: $ENGINE_BENCH not built (no nvcc at build time, or the build failed)" | sed 's/^/> /' >> "$md"
  elif [ $have_gpu = 0 ]; then
    echo "> not measured: no GPU on this machine (nvidia-smi finds none)" >> "$md"
    note "engine: skipped, no GPU"
  else
    sizes="640x480 1024x768 1920x1080 3840x2160"
    ds="64 128 256 512"
    frames=200
    if [ $QUICK = 1 ]; then sizes="640x480 1920x1080"; ds="128 256"; frames=40; fi
    table=$(mktemp)
    stages=$(mktemp)
    inflight=$(mktemp)
    for s in $sizes; do
      for d in $ds; do
        out=$(timeout 120 "$ENGINE_BENCH" --size "$s" --disparities "$d" --frames $frames 2>&1)
        rc=$?
        echo "== cs-bench-engine --size $s --disparities $d --frames $frames (rc $rc)" >> "$LOG"
        echo "$out" >> "$LOG"
        [ $rc = 0 ] || { failures=$((failures + 1)); echo "engine $s D=$d: rc $rc" >&2; }
        # Result lines: size D mode ms spread fps Mde/s engMiB usedMiB, or ERROR.
        echo "$out" | awk -v s="$s" '$1 == s && ($3 == "full" || $3 == "background") {
            if ($4 == "ERROR") { d = $2; m = $3; $1 = $2 = $3 = $4 = ""; sub(/^ +/, "");
                                 printf "| %s | %s | %s | error: %s | | | | |\n", s, d, m, $0; next }
            printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $9 }' >> "$table"
        echo "$out" | sed -n 's/^stages \([^ ]*\) D=\([0-9]*\) \([a-z-]*\) (median of 21, ms): \(.*\)$/| \1 | \2 | \3 | \4 |/p' >> "$stages"
        echo "$out" | awk '$1 == "inflight" { printf "| %s | %s | %s | %s |\n", $2, $3, $4, $5 }' >> "$inflight"
      done
    done
    {
      echo "| size | D | mode | ms/frame | spread (min..max of 9 batches) | fps | Mde/s (W x H x D x fps) | GPU MiB in use |"
      echo "| --- | ---: | --- | ---: | --- | ---: | ---: | ---: |"
      cat "$table"
      echo
      echo "Per-stage times (profile_stages: events between stages, no graph; stages repeated per level summed):"
      echo
      echo "| size | D | mode | stage ms |"
      echo "| --- | ---: | --- | --- |"
      cat "$stages"
      echo
      echo "Two frames in flight (full-frame; set_frames_in_flight(2), batches timed on the host clock to synchronize()):"
      echo
      echo "| size | D | ms/frame | fps |"
      echo "| --- | ---: | ---: | ---: |"
      cat "$inflight"
    } >> "$md"
    rm -f "$table" "$stages" "$inflight"
  fi
fi

# ------------------------------------------------------------------ cpu
if want cpu; then
  md=$OUTDIR/cpu.md
  {
    echo "### CPU backend (cs-bench-cpu: the reference engine, one thread, host memory)"
    echo
  } > "$md"
  if [ ! -x "$CPU_BENCH" ]; then
    echo "> not measured: $CPU_BENCH not built" >> "$md"
  else
    configs="640x480:64 640x480:128 1024x768:128"
    [ $QUICK = 1 ] && configs="320x240:64"
    header=--header
    for c in $configs; do
      for mode in full background; do
        flag=""
        [ $mode = background ] && flag=--background
        row=$(timeout 300 "$CPU_BENCH" --size "${c%%:*}" --disparities "${c##*:}" $flag --frames 5 $header 2>&1)
        rc=$?
        echo "== cs-bench-cpu ${c%%:*} D=${c##*:} $mode (rc $rc)" >> "$LOG"
        echo "$row" >> "$LOG"
        if [ $rc = 0 ]; then echo "$row" >> "$md"; header=""; else failures=$((failures + 1)); fi
      done
    done
  fi
fi

# ------------------------------------------------------------------ element
# Runs cs-bench-element once per configuration; rows accumulate in $2.
element_rows() {
  local md=$1; shift
  local row rc
  row=$(timeout 300 "$ELEMENT_BENCH" "$@" 2>>"$LOG")
  rc=$?
  echo "== cs-bench-element $* (rc $rc)" >> "$LOG"
  echo "$row" >> "$LOG"
  case $rc in
    0|3) echo "$row" | grep '^|' >> "$md" ;;  # 3: not available here, the row says why
    *) failures=$((failures + 1)); echo "| cs-bench-element $* | failed, exit code $rc (see log.txt) |" >> "$md" ;;
  esac
}

if want element; then
  md=$OUTDIR/element.md
  {
    echo "### Element end to end (cs-bench-element: appsrc -> cudastereo -> appsink sync=false)"
    echo
    echo "fps: frames pushed as fast as appsrc takes them (up to 3 queued); latency: one frame in flight,"
    echo "from handing the pair to appsrc until the output reaches appsink. RGBA input, frames from memory."
    echo
  } > "$md"
  if [ ! -x "$ELEMENT_BENCH" ]; then
    echo "> not measured: $ELEMENT_BENCH not built (needs the element and gstreamer-app-1.0)" >> "$md"
  else
    "$ELEMENT_BENCH" --header-only >> "$md"
    if [ $have_gpu = 1 ]; then
      sizes="640x480 1280x720 1920x1080 3840x2160"
      frames=200
      if [ $QUICK = 1 ]; then sizes="640x480 1920x1080"; frames=40; fi
      for s in $sizes; do
        n=$frames
        [ "$s" = 3840x2160 ] && n=$((frames / 2))
        for input in sbs pads; do
          for output in raw color; do
            element_rows "$md" --backend cuda --size "$s" --disparities 128 --input $input --output $output --frames $n
          done
          element_rows "$md" --backend cuda --size "$s" --disparities 128 --input $input --memory cuda --frames $n
        done
      done
      element_rows "$md" --backend cuda --size 1920x1080 --disparities 256 --frames $frames
    else
      element_rows "$md" --backend cuda --size 640x480 --disparities 128 --frames 10
    fi
    # CPU backend at small sizes (one thread: a few frames are enough).
    for input in sbs pads; do
      for output in raw color; do
        element_rows "$md" --backend cpu --size 320x240 --disparities 64 --input $input --output $output \
          --frames 10 --latency-frames 5 --warmup 1
      done
    done
    [ $QUICK = 1 ] || element_rows "$md" --backend cpu --size 640x480 --disparities 128 --frames 5 \
      --latency-frames 3 --warmup 1
  fi
fi

# ------------------------------------------------------------------ opencv
if want opencv; then
  md=$OUTDIR/opencv.md
  args=(--build "$BUILD" --out "$md")
  [ $QUICK = 1 ] && args+=(--quick)
  bash "$here/opencv/run-opencv.sh" "${args[@]}" >> "$LOG" 2>&1 || failures=$((failures + 1))
fi

# ------------------------------------------------------------------ accuracy
if want foreground || want accuracy; then
  md=$OUTDIR/accuracy.md
  : > "$md"
  if want foreground; then
    {
      echo "### Background model on a generated sequence (cs-bench-foreground, CPU reference)"
      echo
    } >> "$md"
    if [ ! -x "$FG_BENCH" ]; then
      echo "> not measured: $FG_BENCH not built" >> "$md"
    else
      configs="640x480:64:3 640x480:64:2 640x480:64:4 1280x720:128:0 1280x720:128:4"
      [ $QUICK = 1 ] && configs="320x240:32:3"
      header=--header
      for c in $configs; do
        IFS=: read -r s d l <<< "$c"
        row=$(timeout 600 "$FG_BENCH" --size "$s" --disparities "$d" --levels "$l" $header 2>&1)
        rc=$?
        echo "== cs-bench-foreground --size $s --disparities $d --levels $l (rc $rc)" >> "$LOG"
        echo "$row" >> "$LOG"
        if [ $rc = 0 ]; then echo "$row" >> "$md"; header=""; else failures=$((failures + 1)); fi
      done
    fi
    echo >> "$md"
  fi
  if want accuracy; then
    args=(--build "$BUILD" --out "$OUTDIR/aloe")
    [ $QUICK = 1 ] && args+=(--quick)
    if bash "$here/accuracy/run-accuracy.sh" "${args[@]}" >> "$LOG" 2>&1; then
      cat "$OUTDIR/aloe/aloe.md" >> "$md"
    else
      failures=$((failures + 1))
      echo "> Aloe accuracy failed: see log.txt" >> "$md"
    fi
    # Keep within the 8 files the device tool returns.
    rm -rf "$OUTDIR/aloe"
  fi
fi

# ------------------------------------------------------------------ summary
{
  for f in env engine cpu element opencv accuracy; do
    [ -s "$OUTDIR/$f.md" ] && { cat "$OUTDIR/$f.md"; echo; }
  done
} > "$OUTDIR/all.md"
note "run-all.sh: wrote $OUTDIR/all.md ($failures failed parts or runs)"
# The end of all.md is what a device reply shows: print it last.
cat "$OUTDIR/all.md"
[ $failures = 0 ]
