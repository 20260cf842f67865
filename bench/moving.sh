#!/bin/bash
# The background model through the element on a moving scene (issue 35), in
# one device call. cs-bench-engine renders its surveillance frames (a real
# pair in colour, camera noise sigma 2, textured objects bouncing over a
# share of the left view) and writes them as files; cs-bench-cameras
# --sequence plays them into cudastereo (from CUDA memory: uploaded once,
# before the streams start), with the model on at every share and off on
# one, for each output and stream count. The engine's own numbers on the
# same frames come first (one camera, and as many as the most streams).
#
#   bench/moving.sh --build DIR --pair LEFT RIGHT [--out DIR] [--size WxH]
#                   [--disparities D] [--fractions LIST] [--off-fraction F]
#                   [--streams LIST] [--outputs LIST] [--source S]
#                   [--backend B] [--no-engine] [--quick] [--dry-run]
#
#   --fractions L   moving shares in % (default 0,5,25,100; 0: a still scene)
#   --off-fraction F  the share whose frames run with the model off too
#                   (default 5; added to --fractions where missing)
#   --streams L     cudastereo elements in one process (default 1,16)
#   --outputs L     cs-bench-cameras --output values (default color-cuda,raw)
#   --source S      cuda (default) or system (every frame crosses PCIe)
#   --backend B     cuda (default) or cpu: with --size 96x72 --disparities 16
#                   --quick, a check of the script on a machine without a GPU
#   --no-engine     skip the engine's run
#   --quick         0.3 s warm-up and 1 s measured a run (default 1 and 3)
#   --dry-run       print the commands, run nothing
#   --tables-from DIR  only make DIR/moving.md again from an earlier run's
#                   DIR/results.txt and DIR/run.env (nothing else needed)
#
# Here (the CPU machine): meson setup build -Dgpu_archs=9.0 && ninja -C build
#   && scripts/gpu-pack.sh build; mkdir -p .gpu-data && cp ../shared/data/aloe/aloe[LR].jpg .gpu-data/
# Device call: carry [".gpu-pack", ".gpu-data"], timeout_s 600:
#   tar xJf .gpu-pack/pack.tar.xz && source .gpu/env.sh &&
#   bash bench/moving.sh --build build-gpu --pair .gpu-data/aloeL.jpg .gpu-data/aloeR.jpg
# (at 1920x1080 about 2.8 GB of frames under $TMPDIR, removed at the end;
# about 4 minutes with the defaults on an H200).
#
# Writes to --out (default $OUT, else BUILD/moving-results): moving.md (the
# tables, also printed), results.txt (every result line), run.env (the run's
# settings, for --tables-from) and log.txt.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BUILD="" LEFT="" RIGHT="" OUTDIR=${OUT:-} SIZE=1920x1080 D=128 FRACTIONS=0,5,25,100 OFF=5
STREAMS=1,16 OUTPUTS=color-cuda,raw SOURCE=cuda BACKEND=cuda ENGINE_RUN=1 QUICK=0 DRY=0 TABLES_FROM=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --pair) [ $# -ge 3 ] || { echo "moving.sh: --pair needs LEFT RIGHT" >&2; exit 2; }
            LEFT=$2; RIGHT=$3; shift 3 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --disparities) D=$2; shift 2 ;;
    --fractions) FRACTIONS=$2; shift 2 ;;
    --off-fraction) OFF=$2; shift 2 ;;
    --streams) STREAMS=$2; shift 2 ;;
    --outputs) OUTPUTS=$2; shift 2 ;;
    --source) SOURCE=$2; shift 2 ;;
    --backend) BACKEND=$2; shift 2 ;;
    --no-engine) ENGINE_RUN=0; shift ;;
    --quick) QUICK=1; shift ;;
    --dry-run) DRY=1; shift ;;
    --tables-from) TABLES_FROM=$2; shift 2 ;;
    -h|--help) sed -n 2,40p "$0"; exit 0 ;;
    *) echo "moving.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
abs() { case "$1" in ""|/*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
list() { echo "$1" | tr ',' ' '; }
KV='function kv(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
function err(   e) { if (match($0, /error="[^"]*"/)) return substr($0, RSTART + 7, RLENGTH - 8); return "" }'

# make_tables: OUTDIR/moving.md from OUTDIR/results.txt and the settings
# (run.env's variables), also printed.
make_tables() {
  local results=$OUTDIR/results.txt
  {
    echo "### The background model through the element, a moving scene"
    echo
    echo "$RUN_DATE UTC, commit $COMMIT, GPU: $GPU; $PAIR_NAMES at $SIZE,"
    echo "D = $D, backend $BACKEND, frames from $SOURCE memory; warm-up $WARMUP s, $DURATION s measured a run."
    echo "Command: \`bench/moving.sh --pair $PAIR_NAMES_ARGS --size $SIZE --disparities $D"
    echo "--fractions $FRACTIONS --off-fraction $OFF --streams $STREAMS --outputs $OUTPUTS --source $SOURCE$([ "$QUICK" = 1 ] && echo ' --quick')\`."
    echo
    if grep -q '^result scene=surveillance' "$results"; then
      echo "The engine, one camera, ms a frame with the model on (one at a time / two in flight), then off on the"
      echo "same frames; with $MOST cameras (engines side by side), frames a second in all, on / off:"
      echo
      echo "| moving % | on | off | on / off | $MOST cameras on | off |"
      echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
      awk "$KV"'
        $1 == "result" && $2 == "scene=surveillance" { f = kv("fraction_pct"); on[f] = kv("background_ms") " / " kv("background_inflight_ms")
                         off[f] = kv("full_ms") " / " kv("full_inflight_ms"); r[f] = kv("ratio"); order[++n] = f }
        $1 == "cameras" { con[kv("fraction_pct")] = kv("background_fps"); coff[kv("fraction_pct")] = kv("full_fps") }
        END { for (i = 1; i <= n; i++) { f = order[i]
                printf "| %s | %s | %s | %s | %s | %s |\n", f, on[f], off[f], r[f], (f in con ? con[f] : "-"), (f in coff ? coff[f] : "-") } }' \
        "$results"
      echo
    fi
    echo "Through the element: frames a second in all (total_fps), and against the model off on the $OFF % frames:"
    echo
    local header="| output | streams |" rule="| --- | ---: |" f
    for f in $(list "$FRACTIONS"); do header="$header $f % |"; rule="$rule ---: |"; done
    echo "$header model off ($OFF %) | foreground / matched at $OFF % | latency median ms at $OFF %, on / off | GPU MiB a stream at $OFF %, on / off |"
    echo "$rule ---: | ---: | ---: | ---: |"
    awk -v fractions="$FRACTIONS" -v off="$OFF" "$KV"'
      $1 == "result" && kv("model") != "" {
        key = kv("output") SUBSEP kv("streams")
        if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
        v = err() != "" ? "error: " err() : kv("total_fps")
        if (kv("model") == "true") { on[key, kv("fraction")] = v; lat_on[key, kv("fraction")] = kv("lat_median_ms")
                                     fg[key, kv("fraction")] = kv("fg_fraction") " / " kv("matched")
                                     mib_on[key, kv("fraction")] = kv("gpu_mib_per_stream") }
        else { offv[key] = v; lat_off[key] = kv("lat_median_ms"); mib_off[key] = kv("gpu_mib_per_stream") }
      }
      END {
        nf = split(fractions, fr, ",")
        for (k = 1; k <= nk; k++) {
          key = keys[k]; split(key, parts, SUBSEP)
          printf "| %s | %s |", parts[1], parts[2]
          for (i = 1; i <= nf; i++) {
            v = on[key, fr[i]]
            if (v + 0 > 0 && offv[key] + 0 > 0) printf " %s (%.2fx) |", v, v / offv[key]
            else printf " %s |", v
          }
          printf " %s | %s | %s / %s | %s / %s |\n", offv[key], fg[key, off], lat_on[key, off], lat_off[key],
                 mib_on[key, off], mib_off[key]
        }
      }' "$results"
    echo
  } > "$OUTDIR/moving.md"
  cat "$OUTDIR/moving.md"
}
if [ -n "$TABLES_FROM" ]; then
  OUTDIR=$(abs "$TABLES_FROM")
  [ -f "$OUTDIR/run.env" ] && [ -f "$OUTDIR/results.txt" ] ||
    { echo "moving.sh: $OUTDIR has no run.env and results.txt of a run" >&2; exit 2; }
  source "$OUTDIR/run.env"
  make_tables
  exit 0
fi
[ -n "$BUILD" ] || { echo "moving.sh: --build DIR is needed" >&2; exit 2; }
[ -n "$LEFT" ] || { echo "moving.sh: --pair LEFT RIGHT is needed (the scene's background: a real pair)" >&2; exit 2; }
for f in "$LEFT" "$RIGHT"; do
  [ -f "$f" ] || { echo "moving.sh: no such file: $f" >&2; exit 2; }
done
case ",$FRACTIONS," in *",$OFF,"*) ;; *) FRACTIONS="$FRACTIONS,$OFF" ;; esac
BUILD=$(abs "$BUILD") LEFT=$(abs "$LEFT") RIGHT=$(abs "$RIGHT")
OUTDIR=$(abs "${OUTDIR:-$BUILD/moving-results}")
CAM=$BUILD/bench/element/cs-bench-cameras
ENGINE=$BUILD/bench/cs-bench-engine
for p in "$CAM" "$ENGINE"; do
  [ $DRY = 1 ] || [ -x "$p" ] || { echo "moving.sh: $p not built" >&2; exit 1; }
done
cd "$root" || exit 1
mkdir -p "$OUTDIR" || exit 1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/moving.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
LOG=$OUTDIR/log.txt RESULTS=$OUTDIR/results.txt
: > "$LOG"; : > "$RESULTS"
export GST_PLUGIN_PATH_1_0=$BUILD/gst
WARMUP=1 DURATION=3
[ $QUICK = 1 ] && WARMUP=0.3 DURATION=1
most=1
for n in $(list "$STREAMS"); do [ "$n" -gt "$most" ] && most=$n; done
seq_of() { echo "$WORK/seq/surveillance_${SIZE}_D${D}_f$1"; }

# ------------------------------------------------------------------ frames
write=("$ENGINE" --left "$LEFT" --right "$RIGHT" --label "$(basename "${LEFT%.*}")" --scene surveillance
       --sizes "$SIZE" --disparities "$D" --fractions "$FRACTIONS")
if [ $DRY = 1 ]; then
  echo "dry run: ${write[*]} --write-pairs $WORK/seq --no-run"
else
  t=$(date +%s)
  if ! "${write[@]}" --write-pairs "$WORK/seq" --no-run >> "$LOG" 2>&1; then
    echo "moving.sh: cs-bench-engine could not write the sequences (see $LOG)" >&2
    tail -3 "$LOG" >&2
    exit 1
  fi
  echo "sequences written in $(( $(date +%s) - t )) s: $(du -sm "$WORK/seq" | cut -f1) MiB" | tee -a "$LOG"
fi

# ------------------------------------------------------------------ engine
gpu="none"
command -v nvidia-smi > /dev/null 2>&1 &&
  gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
[ -n "$gpu" ] || gpu="none"
{
  printf 'RUN_DATE=%q COMMIT=%q GPU=%q\n' "$(date -u '+%Y-%m-%d %H:%M')" \
    "$(cat "$BUILD/COMMIT" 2>/dev/null || git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)" "$gpu"
  printf 'PAIR_NAMES=%q PAIR_NAMES_ARGS=%q\n' "$(basename "$LEFT") and $(basename "$RIGHT")" \
    "$(basename "$LEFT") $(basename "$RIGHT")"
  printf 'SIZE=%q D=%q BACKEND=%q SOURCE=%q WARMUP=%q DURATION=%q QUICK=%q\n' "$SIZE" "$D" "$BACKEND" "$SOURCE" \
    "$WARMUP" "$DURATION" "$QUICK"
  printf 'FRACTIONS=%q OFF=%q STREAMS=%q OUTPUTS=%q MOST=%q\n' "$FRACTIONS" "$OFF" "$STREAMS" "$OUTPUTS" "$most"
} > "$OUTDIR/run.env"
source "$OUTDIR/run.env"
if [ $ENGINE_RUN = 1 ] && [ "$BACKEND" = cuda ]; then
  run=("${write[@]}" --batch-ms 40)
  [ "$most" -gt 1 ] && run+=(--cameras "$most")
  if [ $DRY = 1 ]; then
    echo "dry run: ${run[*]}"
  elif [ "$gpu" != none ]; then
    timeout -k 5 300 "${run[@]}" > "$WORK/engine.txt" 2>&1
    echo "== cs-bench-engine (rc $?): ${run[*]}" >> "$LOG"
    cat "$WORK/engine.txt" >> "$LOG"
    grep -E '^(result|cameras) scene=surveillance' "$WORK/engine.txt" >> "$RESULTS"
  fi
fi

# ------------------------------------------------------------------ element
# cam OUTPUT STREAMS FRACTION MODEL: one cs-bench-cameras run; its result
# line (with tags) to results.txt, everything to log.txt.
cam() {
  local args=(--source "$SOURCE" --backend "$BACKEND" --sequence "$(seq_of "$3")" --streams "$2"
              --disparities "$D" --output "$1" --set "background=$4" --warmup "$WARMUP" --duration "$DURATION"
              --label "moving-f$3-$4")
  if [ $DRY = 1 ]; then echo "dry run: $CAM ${args[*]}"; return; fi
  local out rc
  out=$(timeout -k 5 120 "$CAM" --timeout 100 "${args[@]}" 2> "$WORK/err")
  rc=$?
  { echo "== cs-bench-cameras ${args[*]} (rc $rc)"; echo "$out"; cat "$WORK/err"; } >> "$LOG"
  local line
  line=$(echo "$out" | grep '^result ' | head -1)
  [ -n "$line" ] || line="result label=moving-f$3-$4 streams=$2 output=$1 error=\"exit code $rc without a result line, see log.txt\""
  echo "$line fraction=$3 model=$4" >> "$RESULTS"
  echo "  $1 streams=$2 fraction=$3 model=$4: $(echo "$line" | grep -o 'total_fps=[0-9.]*\|error="[^"]*"')" >&2
}
for o in $(list "$OUTPUTS"); do
  for n in $(list "$STREAMS"); do
    for f in $(list "$FRACTIONS"); do cam "$o" "$n" "$f" true; done
    cam "$o" "$n" "$OFF" false
  done
done
[ $DRY = 1 ] && exit 0

# ------------------------------------------------------------------ tables
make_tables
# A run without a number is a failed run.
if grep -q 'error=' "$RESULTS"; then
  echo "moving.sh: some runs failed (see results.txt and log.txt)" >&2
  exit 1
fi
