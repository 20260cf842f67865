#!/bin/bash
# Our engine and libSGM side by side, in one run on one GPU: for each
# configuration, ours, then libSGM with 4 paths, then with 8 paths, on the
# same grey pixels; the whole sequence twice; ratios = libSGM's time over ours.
#
#   bench/vs-libsgm.sh --build DIR --libsgm DIR --pair LEFT RIGHT [--label NAME]
#                      [--configs "WxH:D ..."] [--rounds N] [--iters N]
#                      [--out FILE.md] [--results FILE] [--quick] [--dry-run]
#
#   --build DIR     the project's build (bench/cs-bench-engine)
#   --libsgm DIR    folder holding sgm-bench, built outside the project by
#                   libSGM's build.sh (../shared/peers/libsgm/build.sh DIR);
#                   the project never builds or links libSGM
#   --pair L R      the real pair (any file tools/imageio reads)
#   --configs       default: "640x480:128 640x480:256 1024x768:128 1024x768:256
#                   1920x1080:128 1920x1080:256 3840x2160:256"; libSGM takes
#                   D = 64, 128 or 256 only
#   --rounds N      default 2; --iters N: sgm-bench iterations (default 100)
#   --out FILE.md   markdown (default: stdout only); --results FILE: append
#                   the raw result lines (key=value) there
#
# The pixels: cs-bench-engine --write-pairs converts the pair to grey (the
# engine's luma rule) and area-averages it to each size into 8-bit PGM files;
# both programs then read those files, and ours resizes nothing (same size).
# Times: ours "single" and libSGM's device_ms_median are each the median of
# frames timed one by one on an idle GPU (CUDA events around one frame,
# launch included); ours "one at a time" is frames back to back on one stream
# (median of 9 batches), libSGM's batch_ms is back to back on the host clock.
# libSGM's settings (sgm_bench.cpp): P1 10, P2 120, uniqueness 0.95,
# sub-pixel on, left-right check (max diff 1); output device-resident.
# Exit code: 0 when every run gave a number, 1 otherwise, 2 for bad options.
set -u
BUILD=build LIBSGM="" LEFT="" RIGHT="" LABEL=pair OUTMD="" RESULTS=""
CONFIGS="640x480:128 640x480:256 1024x768:128 1024x768:256 1920x1080:128 1920x1080:256 3840x2160:256"
ROUNDS=2 ITERS=100 DRY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --libsgm) LIBSGM=$2; shift 2 ;;
    --pair) [ $# -ge 3 ] || { echo "vs-libsgm.sh: --pair needs LEFT RIGHT" >&2; exit 2; }
            LEFT=$2; RIGHT=$3; shift 3 ;;
    --label) LABEL=$2; shift 2 ;;
    --configs) CONFIGS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    --out) OUTMD=$2; shift 2 ;;
    --results) RESULTS=$2; shift 2 ;;
    --quick) CONFIGS="640x480:128 1920x1080:256"; ITERS=30; shift ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) sed -n 2,31p "$0"; exit 0 ;;
    *) echo "vs-libsgm.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
abs() { case "$1" in ""|/*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
BUILD=$(abs "$BUILD") LIBSGM=$(abs "$LIBSGM") LEFT=$(abs "$LEFT") RIGHT=$(abs "$RIGHT")
OUTMD=$(abs "$OUTMD") RESULTS=$(abs "$RESULTS")
ENGINE=$BUILD/bench/cs-bench-engine
SGM=$LIBSGM/sgm-bench
problem=""
[ -n "$LEFT" ] || problem="--pair LEFT RIGHT is required"
[ -n "$LIBSGM" ] || problem="--libsgm DIR is required"
[ -z "$problem" ] && [ ! -x "$ENGINE" ] && problem="$ENGINE not built"
[ -z "$problem" ] && [ $DRY = 0 ] && [ ! -x "$SGM" ] && problem="$SGM not found (build it with libSGM's build.sh)"
case "$ROUNDS$ITERS" in *[!0-9]*) problem="--rounds and --iters take whole numbers" ;; esac
for c in $CONFIGS; do
  case "$c" in [0-9]*x[0-9]*:[0-9]*) ;; *) problem="--configs: '$c' is not WxH:D" ;; esac
done
if [ -n "$problem" ]; then
  echo "vs-libsgm.sh: $problem" >&2
  exit 2
fi
md=$(mktemp)
raw=$(mktemp)
work=$(mktemp -d)
trap 'rm -rf "$md" "$raw" "$work"' EXIT
failures=0

{
  echo "### Side by side with libSGM ($LABEL, grey, area-averaged; one device call)"
  echo
  echo "Per configuration: ours (cs-bench-engine), libSGM 4 paths, libSGM 8 paths (sgm-bench: sub-pixel,"
  echo "P1 10, P2 120, uniqueness 0.95, LR check), on the same PGM pixels; all configurations twice."
  echo "single: median of frames timed one by one on an idle GPU (events around one frame, launch"
  echo "included; libSGM's device_ms_median); batch: frames back to back (ours: median of 9 batches"
  echo "on the GPU clock; libSGM: batch_ms, host clock). Ratio = libSGM ms / ours ms."
  echo
} > "$md"

have_gpu=0
if [ $DRY = 1 ]; then
  have_gpu=1
elif command -v nvidia-smi > /dev/null 2>&1 && [ -n "$(nvidia-smi -L 2>/dev/null)" ]; then
  have_gpu=1
fi

# The grey pixels both programs read (CPU only).
sizes=$(for c in $CONFIGS; do echo "${c%%:*}"; done | awk '!seen[$0]++' | paste -sd, -)
if ! "$ENGINE" --left "$LEFT" --right "$RIGHT" --label "$LABEL" --sizes "$sizes" --write-pairs "$work" --no-run \
     > "$work/pairs.txt" 2>&1; then
  cat "$work/pairs.txt" >&2
  echo "> not measured: cs-bench-engine could not write the grey pairs: $(tail -1 "$work/pairs.txt")" >> "$md"
  have_gpu=-1
  failures=1
fi
[ $have_gpu = 0 ] && echo "> not measured: no GPU on this machine (nvidia-smi finds none)" >> "$md"

# One sgm-bench run; its line, with round= prepended, into $raw. libSGM's
# program exits 0 even when CUDA fails (it prints errors and zero times), so
# a run counts only without "[CUDA Error]" and with a time above zero.
sgm_run() {
  local round=$1 s=$2 d=$3 paths=$4 l=$5 r=$6 out line
  if [ $DRY = 1 ]; then
    echo "dry run: $SGM $l $r $d $paths $ITERS"
    return
  fi
  out=$(timeout 120 "$SGM" "$l" "$r" "$d" "$paths" "$ITERS" 2>&1)
  echo "== sgm-bench $(basename "$l") $(basename "$r") $d $paths $ITERS (rc $?)"
  echo "$out" | head -20
  line=$(echo "$out" | grep '^libsgm ' | tail -1)
  if [ -z "$line" ] || echo "$out" | grep -q 'CUDA Error' ||
     ! echo "$line" | grep -Eq 'device_ms_median=0*[1-9]|device_ms_median=0\.0*[1-9]'; then
    echo "libsgm round=$round size=$s D=$d paths=$paths error=\"no valid time (see log)\"" >> "$raw"
    failures=$((failures + 1))
  else
    echo "$line" | sed "s/^libsgm /libsgm round=$round /" >> "$raw"
  fi
}

if [ $have_gpu = 1 ]; then
  for round in $(seq 1 "$ROUNDS"); do
    for c in $CONFIGS; do
      s=${c%%:*} d=${c##*:}
      l=$work/${LABEL}_${s}_left.pgm r=$work/${LABEL}_${s}_right.pgm
      if [ $DRY = 1 ]; then
        echo "dry run: $ENGINE --left $l --right $r --label $LABEL --sizes $s --disparities $d --no-inflight --singles 100"
      else
        out=$(timeout 180 "$ENGINE" --left "$l" --right "$r" --label "$LABEL" --sizes "$s" --disparities "$d" \
              --no-inflight --singles 100 ${ENGINE_ARGS:-} 2>&1)
        rc=$?
        echo "== cs-bench-engine $s D=$d round $round (rc $rc)"
        echo "$out"
        line=$(echo "$out" | grep '^result ' | tail -1)
        if [ $rc != 0 ] || [ -z "$line" ] || echo "$line" | grep -q 'error='; then
          failures=$((failures + 1))
          echo "ours round=$round size=$s D=$d error=\"exit code $rc (see log)\"" >> "$raw"
        else
          echo "$line" | sed "s/^result /ours round=$round /" >> "$raw"
        fi
      fi
      case "$d" in
        64|128|256)
          sgm_run "$round" "$s" "$d" 4 "$l" "$r"
          sgm_run "$round" "$s" "$d" 8 "$l" "$r" ;;
        *) echo "libsgm round=$round size=$s D=$d paths=4 error=\"libSGM takes D = 64, 128 or 256\"" >> "$raw"
           echo "libsgm round=$round size=$s D=$d paths=8 error=\"libSGM takes D = 64, 128 or 256\"" >> "$raw" ;;
      esac
    done
  done
  # sgm-bench prints its size as WxH and D=...; ours size=WxH D=...
  awk '
    function kv(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
    function r(a, b) { return (a == "" || b == "" || b + 0 == 0 || a + 0 == 0) ? "-" : sprintf("%.2f", a / b) }
    function v(x) { return x == "" ? "-" : x }
    {
      size = kv("size"); if (size == "") size = $3   # sgm-bench: "libsgm round=N WxH D=..."
      k = kv("round") SUBSEP size SUBSEP kv("D")
      if (!(k in seen)) { seen[k] = 1; order[++n] = k }
      if ($1 == "ours") { os[k] = kv("single_ms"); ob[k] = kv("batch_ms"); lev[k] = kv("levels") }
      else if ($1 == "libsgm") { p = kv("paths"); ls[k, p] = kv("device_ms_median"); lb[k, p] = kv("batch_ms") }
    }
    END {
      print "| round | size | D | ours single ms | ours one at a time ms | libSGM 4p single | libSGM 4p batch | libSGM 8p single | libSGM 8p batch | 4p / ours, single | 8p / ours, single | 4p / ours, batch | 8p / ours, batch |"
      print "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
      for (i = 1; i <= n; i++) {
        k = order[i]; split(k, f, SUBSEP)
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f[1], f[2], f[3],
               v(os[k]), v(ob[k]), v(ls[k, 4]), v(lb[k, 4]), v(ls[k, 8]), v(lb[k, 8]),
               r(ls[k, 4], os[k]), r(ls[k, 8], os[k]), r(lb[k, 4], ob[k]), r(lb[k, 8], ob[k])
      }
    }' "$raw" >> "$md"
  if grep -q 'error=' "$raw"; then
    echo >> "$md"
    echo "Runs without a number:" >> "$md"
    echo >> "$md"
    grep 'error=' "$raw" | sed 's/^/    /' >> "$md"
  fi
fi

[ -n "$RESULTS" ] && cat "$raw" >> "$RESULTS"
[ -n "$OUTMD" ] && cp "$md" "$OUTMD"
cat "$md"
[ $failures = 0 ]
