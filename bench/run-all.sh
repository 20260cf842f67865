#!/bin/bash
# One command for the benchmark tables of bench/README.md, as markdown
# fragments in one output folder:
#
#   bench/run-all.sh [--build DIR] [--out DIR] [--parts LIST] [--quick]
#                    [--pair LEFT RIGHT [--label NAME]] [--libsgm DIR]
#
#   --build DIR   build directory (default $BUILD, else build)
#   --out DIR     output folder (default $OUT when set, as on the device
#                 machine, else DIR/bench-results)
#   --pair L R    a real stereo pair (any file tools/imageio reads: PNG, JPEG,
#                 PGM/PPM), e.g. Middlebury Aloe; the project ships none.
#                 The engine part then times it (grey, area-averaged to each
#                 size) instead of the generated scenes
#   --label NAME  the pair's name in the tables (default: the left file's
#                 name without extension and a trailing L/left)
#   --libsgm DIR  folder holding sgm-bench (built by libSGM's build.sh), for
#                 the libsgm part
#   --parts LIST  comma-separated, any of:
#                   engine      CUDA engine grid (cs-bench-engine), 640x480,
#                               1024x768, 1920x1080, 3840x2160 x D = 64, 128,
#                               256, 512: one frame at a time, a single frame,
#                               two in flight, memory; per-stage times for
#                               640x480, 1024x768, 1920x1080 x 128, 256 (with
#                               --pair), else on the generated slanted plane
#                               and the background-model sequence
#                   cliff       content cliffs: the pair (if given) beside the
#                               generated textured, low-texture and
#                               wide-spread scenes at 640x480, 1024x768,
#                               1920x1080 x 128, 256
#                   libsgm      bench/vs-libsgm.sh: ours, then libSGM 4 and 8
#                               paths on the same grey pixels, twice (needs
#                               --pair and --libsgm)
#                   cpu         CPU backend per frame, small sizes
#                   element     end-to-end cudastereo throughput and latency
#                               (cuda backend if a GPU is there, cpu at small sizes)
#                   opencv      OpenCV `disparity` baseline (needs gstreamer1.0-opencv)
#                   foreground  background-model accuracy on a generated sequence
#                   accuracy    Aloe accuracy grid (CPU, slow: about 15 min)
#                 default: engine,cpu,element,opencv; with --pair:
#                 engine,cliff (and libsgm when --libsgm is given)
#   --quick       fewer sizes and frames (a smoke test of every part)
#   --dry-run     print the GPU programs' command lines instead of running
#                 them (checks the script and its tables here, no numbers)
#
# Writes (at most 8 files, as the device tool returns): env.md, engine.md,
# cliff.md, libsgm.md, cpu.md, element.md, opencv.md, accuracy.md (as the
# parts ask), all.md (everything, in README order), results.txt (every
# cs-bench-engine and sgm-bench result line, key=value) and log.txt (raw
# outputs); the device tool returns 8, so run at most 5 of the 8 parts that
# write a file in one call. A part that cannot run here (no GPU, no OpenCV
# plugin) writes a line saying so, never a number.
# Exit code: 0 when every part that could run succeeded.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BUILD=${BUILD:-build}
OUTDIR=${OUT:-}
PARTS=""
QUICK=0
DRY=0
PAIR_LEFT="" PAIR_RIGHT="" LABEL="" LIBSGM=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --parts) PARTS=$2; shift 2 ;;
    --pair) [ $# -ge 3 ] || { echo "run-all.sh: --pair needs LEFT RIGHT" >&2; exit 2; }
            PAIR_LEFT=$2; PAIR_RIGHT=$3; shift 3 ;;
    --label) LABEL=$2; shift 2 ;;
    --libsgm) LIBSGM=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) sed -n 2,53p "$0"; exit 0 ;;
    *) echo "run-all.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
# Paths given relative to where the caller stands, before moving to the root.
abs() { case "$1" in ""|/*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
PAIR_LEFT=$(abs "$PAIR_LEFT"); PAIR_RIGHT=$(abs "$PAIR_RIGHT"); LIBSGM=$(abs "$LIBSGM")
[ -n "$OUTDIR" ] && OUTDIR=$(abs "$OUTDIR")
case "$BUILD" in /*) ;; *) [ -d "$BUILD" ] && BUILD=$PWD/$BUILD || BUILD=$root/$BUILD ;; esac
cd "$root" || exit 1
if [ -n "$PAIR_LEFT" ]; then
  for f in "$PAIR_LEFT" "$PAIR_RIGHT"; do
    [ -r "$f" ] || { echo "run-all.sh: --pair: cannot read $f" >&2; exit 2; }
  done
  if [ -z "$LABEL" ]; then
    LABEL=$(basename "$PAIR_LEFT"); LABEL=${LABEL%.*}
    LABEL=$(echo "$LABEL" | sed -E 's/([-_]?left|[-_]?L)$//'); LABEL=${LABEL:-pair}
  fi
  default_parts=engine,cliff
  [ -n "$LIBSGM" ] && default_parts=$default_parts,libsgm
else
  default_parts=engine,cpu,element,opencv
fi
PARTS=${PARTS:-$default_parts}
[ -d "$BUILD" ] || { echo "run-all.sh: build directory $BUILD not found" >&2; exit 1; }
OUTDIR=${OUTDIR:-$BUILD/bench-results}
mkdir -p "$OUTDIR" || exit 1
LOG=$OUTDIR/log.txt
RESULTS=$OUTDIR/results.txt
: > "$LOG"
: > "$RESULTS"
want() {
  case ",$PARTS," in *",$1,"*) ;; *) return 1 ;; esac
  # A dry run covers the parts that run cs-bench-engine and sgm-bench.
  case "$DRY,$1" in 1,engine|1,cliff|1,libsgm|0,*) return 0 ;; esac
  echo "dry run: part $1 skipped" | tee -a "$LOG"
  return 1
}
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
[ $DRY = 1 ] && have_gpu=1
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
  echo "| command | bench/run-all.sh --parts $PARTS$([ $QUICK = 1 ] && echo ' --quick')$([ -n "$PAIR_LEFT" ] && echo " --pair $(basename "$PAIR_LEFT") $(basename "$PAIR_RIGHT")") |"
  if [ -n "$PAIR_LEFT" ]; then
    echo "| pair ($LABEL) | $(basename "$PAIR_LEFT") sha256 $(sha256sum < "$PAIR_LEFT" | cut -c1-12), $(basename "$PAIR_RIGHT") sha256 $(sha256sum < "$PAIR_RIGHT" | cut -c1-12) |"
  fi
  [ $DRY = 1 ] && echo "| mode | dry run: the GPU programs' command lines only, no numbers |"
} > "$OUTDIR/env.md"
cat "$OUTDIR/env.md"

# ------------------------------------------------------------------ engine
# key=value fields of cs-bench-engine's result and stages lines.
KV='function kv(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
function err(   e) { if (match($0, /error="[^"]*"/)) return substr($0, RSTART + 7, RLENGTH - 8); return "" }'

# engine_run OUTFILE ARGS...: one cs-bench-engine process; its result and
# stages lines go to OUTFILE and results.txt, everything to log.txt.
engine_run() {
  local file=$1; shift
  local out rc
  if [ $DRY = 1 ]; then
    echo "dry run: $ENGINE_BENCH $*" | tee -a "$LOG"
    return 0
  fi
  out=$(timeout 180 "$ENGINE_BENCH" "$@" ${ENGINE_ARGS:-} 2>&1)  # ENGINE_ARGS: A/B runs (e.g. --coarse-range-factor 1)
  rc=$?
  echo "== cs-bench-engine $* (rc $rc)" >> "$LOG"
  echo "$out" >> "$LOG"
  echo "$out" | grep -E '^(result|stages) ' | tee -a "$RESULTS" >> "$file"
  if [ $rc != 0 ]; then
    failures=$((failures + 1))
    echo "cs-bench-engine $*: rc $rc" >&2
    # A crash leaves no result line: say so in the tables.
    echo "$out" | grep -q '^result ' ||
      echo "result scene=? size=${size_arg:-?} D=${d_arg:-?} mode=full error=\"exit code $rc, see log.txt\"" >> "$file"
  fi
}

# Stage table with one column per stage, in the order they first appear.
stage_table() {
  awk -v withmode="$2" "$KV"'
    $1 == "stages" {
      n++; row[n] = kv("size") " | " kv("D") (withmode ? " | " kv("mode") : "")
      for (i = 2; i <= NF; i++) {
        split($i, kvp, "="); k = kvp[1]
        if (k == "scene" || k == "size" || k == "D" || k == "mode" || k == "sum") continue
        if (!(k in seen)) { seen[k] = 1; names[++m] = k }
        val[n, k] = kvp[2]
      }
      sum[n] = kv("sum")
    }
    END {
      if (!n) { print "> no per-stage times (see log.txt)"; exit }
      h = "| size | D" (withmode ? " | mode" : ""); a = "| --- | ---:" (withmode ? " | ---" : "")
      for (j = 1; j <= m; j++) { nm = names[j]; gsub(/_/, " ", nm); h = h " | " nm; a = a " | ---:" }
      print h " | sum |"; print a " | ---: |"
      for (r = 1; r <= n; r++) {
        line = "| " row[r]
        for (j = 1; j <= m; j++) line = line " | " ((r, names[j]) in val ? val[r, names[j]] : "")
        print line " | " sum[r] " |"
      }
    }' "$1"
}

if want engine; then
  md=$OUTDIR/engine.md
  raw=$(mktemp)
  sizes="640x480 1024x768 1920x1080 3840x2160"
  ds="64 128 256 512"
  stage_sizes="640x480 1024x768 1920x1080"
  stage_ds="128 256"
  if [ $QUICK = 1 ]; then sizes="640x480 1920x1080"; ds="128 256"; stage_sizes=1920x1080; stage_ds=256; fi
  in_list() { case " $2 " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
  if [ -n "$PAIR_LEFT" ]; then
    {
      echo "### CUDA engine on $LABEL (real pair, grey, area-averaged to each size)"
      echo
      echo "cs-bench-engine --left $(basename "$PAIR_LEFT") --right $(basename "$PAIR_RIGHT"): frames on the GPU"
      echo "(GRAY8), the frame's work replayed as a CUDA graph, Q4 output in device memory. One at a"
      echo "time: median of 9 batches of frames back to back on one stream (each frame after the"
      echo "previous one; min..max of the batches beside it); single: median of 50 frames each timed"
      echo "alone on an idle GPU, launch included; 2 in flight: set_frames_in_flight(2), host clock."
      echo "The aspect ratio follows the size, so disparities scale with width / the file's width."
      echo
    } > "$md"
  else
    {
      echo "### CUDA engine on generated scenes (synthetic: textured slanted plane, RGBA; background = moving box sequence)"
      echo
      echo "cs-bench-engine: device-resident RGBA frames, graph replays, median of 9 batches one at a time;"
      echo "single: median of 50 frames each timed alone; 2 in flight: set_frames_in_flight(2), host clock."
      echo
    } > "$md"
  fi
  if [ ! -x "$ENGINE_BENCH" ] && [ $DRY = 0 ]; then
    note "engine: $ENGINE_BENCH not built (no nvcc at build time, or the build failed)" | sed 's/^/> /' >> "$md"
  elif [ $have_gpu = 0 ]; then
    echo "> not measured: no GPU on this machine (nvidia-smi finds none)" >> "$md"
    note "engine: skipped, no GPU"
  else
    for s in $sizes; do
      for d in $ds; do
        size_arg=$s d_arg=$d
        stages=""
        in_list "$s" "$stage_sizes" && in_list "$d" "$stage_ds" && stages=--stages
        if [ -n "$PAIR_LEFT" ]; then
          engine_run "$raw" --left "$PAIR_LEFT" --right "$PAIR_RIGHT" --label "$LABEL" --sizes "$s" \
            --disparities "$d" $stages
        else
          # The generated grid: full-frame at every D, the background model at 256.
          scenes=slanted
          [ "$d" = 256 ] && scenes=slanted,sequence
          [ "$s" = 1024x768 ] && stages=--stages
          engine_run "$raw" --scene "$scenes" --sizes "$s" --disparities "$d" $stages
        fi
      done
    done
    withmode=0
    [ -z "$PAIR_LEFT" ] && withmode=1
    {
      awk -v withmode=$withmode "$KV"'
        BEGIN {
          printf "| size | D |%s levels | ms/frame one at a time | spread (min..max) | single frame ms | 2 in flight ms/frame | fps one at a time | fps 2 in flight | engine MiB (1 set / 2 sets) | GPU MiB in use |\n", (withmode ? " mode |" : "")
          printf "| --- | ---: |%s ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n", (withmode ? " --- |" : "")
        }
        $1 == "result" {
          m = withmode ? " " kv("mode") " |" : ""
          if (err() != "") { printf "| %s | %s |%s error: %s | | | | | | | | |\n", kv("size"), kv("D"), m, err(); next }
          fl = kv("inflight_ms"); ff = kv("inflight_fps"); e2 = kv("engine_inflight_mib")
          printf "| %s | %s |%s %s | %s | %s..%s | %s | %s | %s | %s | %s%s | %s |\n", kv("size"), kv("D"), m,
                 kv("levels"), kv("batch_ms"), kv("batch_min_ms"), kv("batch_max_ms"), kv("single_ms"),
                 (fl == "" ? "-" : fl), kv("fps"), (ff == "" ? "-" : ff), kv("engine_mib"),
                 (e2 == "" ? "" : " / " e2), kv("used_mib")
        }' "$raw"
      echo
      # Issue 15, part 4: the time for D must not exceed the time for 2D.
      echo "ms/frame one at a time by range (a * marks a range that costs more than the next larger one):"
      echo
      awk "$KV"'
        $1 == "result" && err() == "" && kv("mode") == "full" {
          s = kv("size"); d = kv("D") + 0
          if (!(s in seen)) { seen[s] = 1; order[++n] = s }
          if (!(d in dseen)) { dseen[d] = 1; dl[++m] = d }
          t[s, d] = kv("batch_ms") + 0
        }
        END {
          if (!n) exit
          for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (dl[j] < dl[i]) { x = dl[i]; dl[i] = dl[j]; dl[j] = x }
          h = "| size"; a = "| ---"
          for (j = 1; j <= m; j++) { h = h " | D=" dl[j]; a = a " | ---:" }
          print h " | worst t(D) / t(2D) |"; print a " | ---: |"
          for (i = 1; i <= n; i++) {
            s = order[i]; line = "| " s; worst = 0
            for (j = 1; j <= m; j++) {
              d = dl[j]; cell = ((s, d) in t) ? sprintf("%.4f", t[s, d]) : ""
              if (((s, d) in t) && ((s, 2 * d) in t)) {
                r = t[s, d] / t[s, 2 * d]; if (r > worst) worst = r
                if (r > 1) cell = cell " *"
              }
              line = line " | " cell
            }
            print line " | " (worst > 0 ? sprintf("%.2f", worst) : "-") " |"
          }
        }' "$raw"
      echo
      echo "Per-stage times, ms (profile_stages: events between stages, no graph, so the sum is a little above"
      echo "the graphed frame; stages repeated per level summed; median of 21):"
      echo
      stage_table "$raw" $withmode
    } >> "$md"
  fi
  rm -f "$raw"
fi

# ------------------------------------------------------------------ cliff
# Issue 15, part 5: a frame of low texture or wide disparity spread must cost
# at most 1.5 x a textured one at the same size and range.
if want cliff; then
  md=$OUTDIR/cliff.md
  raw=$(mktemp)
  configs="640x480:128 640x480:256 1024x768:128 1024x768:256 1920x1080:128 1920x1080:256"
  [ $QUICK = 1 ] && configs="640x480:128 1920x1080:256"
  {
    echo "### Content cliffs: the same size and range, different content"
    echo
    echo "ms/frame one at a time (median of 9 batches, grey frames on the GPU). textured: synthetic"
    echo "textured slanted plane; low texture: synthetic, flat areas with +-2 sensor noise on five"
    echo "sixths of the view; wide spread: synthetic, 24 boxes with disparities over 0..D-1 side by side$([ -n "$PAIR_LEFT" ] && echo "; $LABEL: the real pair")."
    echo "Ratios: the scene's time over the textured plane's$([ -n "$PAIR_LEFT" ] && echo " and over $LABEL's")."
    echo
  } > "$md"
  if [ ! -x "$ENGINE_BENCH" ] && [ $DRY = 0 ]; then
    echo "> not measured: $ENGINE_BENCH not built" >> "$md"
  elif [ $have_gpu = 0 ]; then
    echo "> not measured: no GPU on this machine (nvidia-smi finds none)" >> "$md"
    note "cliff: skipped, no GPU"
  else
    for c in $configs; do
      size_arg=${c%%:*} d_arg=${c##*:}
      if [ -n "$PAIR_LEFT" ]; then
        engine_run "$raw" --left "$PAIR_LEFT" --right "$PAIR_RIGHT" --label "$LABEL" \
          --scene pair,textured,low-texture,wide-spread --sizes "${c%%:*}" --disparities "${c##*:}" \
          --no-inflight --singles 20
      else
        engine_run "$raw" --scene textured,low-texture,wide-spread --sizes "${c%%:*}" --disparities "${c##*:}" \
          --no-inflight --singles 20
      fi
    done
    awk -v label="$([ -n "$PAIR_LEFT" ] && echo "$LABEL")" "$KV"'
      $1 == "result" {
        k = kv("size") " | " kv("D")
        if (!(k in seen)) { seen[k] = 1; order[++n] = k }
        sc = kv("kind") == "real" ? "real" : kv("scene")
        t[k, sc] = err() == "" ? kv("batch_ms") : "error"
        lv[k, sc] = kv("levels")
      }
      function ratio(a, b) { return (a == "" || b == "" || a == "error" || b == "error" || b + 0 == 0) ? "-" : sprintf("%.2f", a / b) }
      END {
        h = "| size | D |" (label != "" ? " " label " (real) |" : "") " textured | low texture | wide spread | low / textured | wide / textured |"
        a = "| --- | ---: |" (label != "" ? " ---: |" : "") " ---: | ---: | ---: | ---: | ---: |"
        if (label != "") { h = h " low / " label " | wide / " label " |"; a = a " ---: | ---: |" }
        print h; print a
        for (i = 1; i <= n; i++) {
          k = order[i]; line = "| " k " |"
          if (label != "") line = line " " t[k, "real"] " |"
          line = line " " t[k, "textured"] " | " t[k, "low-texture"] " | " t[k, "wide-spread"] " | " \
                 ratio(t[k, "low-texture"], t[k, "textured"]) " | " ratio(t[k, "wide-spread"], t[k, "textured"]) " |"
          if (label != "") line = line " " ratio(t[k, "low-texture"], t[k, "real"]) " | " ratio(t[k, "wide-spread"], t[k, "real"]) " |"
          print line
        }
      }' "$raw" >> "$md"
  fi
  rm -f "$raw"
fi

# ------------------------------------------------------------------ libsgm
if want libsgm; then
  md=$OUTDIR/libsgm.md
  if [ -z "$PAIR_LEFT" ] || [ -z "$LIBSGM" ]; then
    { echo "### libSGM side by side"; echo; echo "> not measured: the libsgm part needs --pair LEFT RIGHT and --libsgm DIR"; } > "$md"
    failures=$((failures + 1))
  else
    args=(--build "$BUILD" --libsgm "$LIBSGM" --pair "$PAIR_LEFT" "$PAIR_RIGHT" --label "$LABEL" --out "$md"
          --results "$RESULTS")
    [ $QUICK = 1 ] && args+=(--quick)
    [ $DRY = 1 ] && args+=(--dry-run)
    bash "$here/vs-libsgm.sh" "${args[@]}" >> "$LOG" 2>&1 || failures=$((failures + 1))
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
  for f in env engine cliff libsgm cpu element opencv accuracy; do
    [ -s "$OUTDIR/$f.md" ] && { cat "$OUTDIR/$f.md"; echo; }
  done
} > "$OUTDIR/all.md"
note "run-all.sh: wrote $OUTDIR/all.md ($failures failed parts or runs)"
# The end of all.md is what a device reply shows: print it last.
cat "$OUTDIR/all.md"
[ $failures = 0 ]
