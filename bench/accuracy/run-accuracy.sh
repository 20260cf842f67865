#!/bin/bash
# Accuracy of the CPU reference on Middlebury Aloe, over the matcher's main
# parameters, as markdown tables (plus a CSV of every run).
#
#   bench/accuracy/run-accuracy.sh [--data DIR] [--build DIR] [--out DIR] [--quick]
#
#   --data DIR   Aloe files (aloeL.jpg aloeR.jpg aloeGT.png aloe_nonocc.png);
#                default $ALOE_DIR, else ../shared/data/aloe beside the repo
#   --build DIR  build directory holding tools/cs-stereo and tools/cs-score;
#                default $BUILD, else build-bench
#   --out DIR    where aloe.csv and aloe.md go; default $BUILD/bench-results
#   --quick      fewer combinations (defaults, each parameter alone)
#
# Grid, at full size (256 disparities) and half size (128, 2x2-averaged
# views scored against the halved ground truth):
#   levels auto,1,2,3,4 x window box,best1,best2,best4 x lr-check on,off x
#   subpixel on,off.
# Runs are sequential so that the run time (cs-stereo's own engine time,
# file I/O excluded) is not shared with a second run; other load on the
# machine still shows in it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
DATA=${ALOE_DIR:-$root/../shared/data/aloe}
BUILD=${BUILD:-build-bench}
OUTDIR=""
QUICK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --data) DATA=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    *) echo "run-accuracy.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case "$BUILD" in /*) ;; *) BUILD=$root/$BUILD ;; esac
OUTDIR=${OUTDIR:-$BUILD/bench-results}
STEREO=$BUILD/tools/cs-stereo
SCORE=$BUILD/tools/cs-score
for f in "$STEREO" "$SCORE"; do
  [ -x "$f" ] || { echo "run-accuracy.sh: $f not found: build the tools first (ninja -C $BUILD)" >&2; exit 1; }
done
for f in aloeL.jpg aloeR.jpg aloeGT.png aloe_nonocc.png; do
  [ -r "$DATA/$f" ] || { echo "run-accuracy.sh: $DATA/$f not found (use --data DIR or ALOE_DIR)" >&2; exit 1; }
done
mkdir -p "$OUTDIR" || exit 1
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
csv=$OUTDIR/aloe.csv
echo "size,disparities,levels_asked,levels_used,window,lr_check,subpixel,bad_1,bad_2,bad_4,avg_error,density,ms" > "$csv"

# One run: size levels window lr(1/0) subpixel(1/0). Appends a CSV row.
one() {
  local size=$1 levels=$2 window=$3 lr=$4 sub=$5
  local args=(--left "$DATA/aloeL.jpg" --right "$DATA/aloeR.jpg" --levels "$levels" --window "$window")
  local sargs=(--gt "$DATA/aloeGT.png" --mask "$DATA/aloe_nonocc.png" --json)
  local d=256
  if [ "$size" = half ]; then
    d=128
    args+=(--scale 2)
    sargs+=(--gt-scale 2 --downscale 2)
  fi
  [ "$lr" = 1 ] || args+=(--no-lr-check)
  [ "$sub" = 1 ] || args+=(--no-subpixel)
  local log
  if ! log=$("$STEREO" "${args[@]}" --max-disparity $d --out "$work/d.png" 2>&1); then
    echo "run-accuracy.sh: cs-stereo failed ($size levels $levels $window lr $lr subpixel $sub): $log" >&2
    return 1
  fi
  # "cpu engine: W x H, disparities 0..N, L levels, V % valid, T ms"
  local used ms json
  used=$(sed -n 's/.*, \([0-9]*\) levels,.*/\1/p' <<< "$log")
  ms=$(sed -n 's/.* \([0-9.]*\) ms$/\1/p' <<< "$log")
  if ! json=$("$SCORE" --disparity "$work/d.png" "${sargs[@]}" 2>&1); then
    echo "run-accuracy.sh: cs-score failed: $json" >&2
    return 1
  fi
  local lv=$levels
  [ "$levels" = 0 ] && lv=auto
  awk -v pre="$size,$d,$lv,$used,$window,$lr,$sub" -v ms="$ms" '{
      s = $0; gsub(/[{}" ]/, "", s); n = split(s, kv, ",")
      for (i = 1; i <= n; ++i) { split(kv[i], p, ":"); v[p[1]] = p[2] }
      printf "%s,%.2f,%.2f,%.2f,%.3f,%.2f,%s\n", pre, v["bad_1"], v["bad_2"], v["bad_4"],
             v["average_abs_error"], 100 * v["density"], ms }' <<< "$json" >> "$csv"
  tail -1 "$csv"
}

failures=0
for size in full half; do
  if [ $QUICK = 1 ]; then
    # Defaults, then each parameter changed alone.
    one $size 0 best2 1 1 || failures=$((failures + 1))
    for l in 2 3 4; do one $size $l best2 1 1 || failures=$((failures + 1)); done
    for w in box best1 best4; do one $size 0 $w 1 1 || failures=$((failures + 1)); done
    one $size 0 best2 0 1 || failures=$((failures + 1))
    one $size 0 best2 1 0 || failures=$((failures + 1))
    continue
  fi
  for l in 0 1 2 3 4; do
    for w in box best1 best2 best4; do
      for lr in 1 0; do
        for sub in 1 0; do
          one $size $l $w $lr $sub || failures=$((failures + 1))
        done
      done
    done
  done
done

# Markdown: the defaults row first, then one table per size with every run.
md=$OUTDIR/aloe.md
{
  echo "### Aloe accuracy (CPU reference)"
  echo
  echo "Data: $DATA. bad-t: % of non-occluded pixels with known ground truth whose"
  echo "estimate is missing or off by more than t pixels (half size: in half-size pixels)."
  echo "avg err: mean |error| over valid estimates; density: % of evaluated pixels with an estimate."
  echo "ms: cs-stereo's engine time on $(uname -m), $(nproc) cores ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1))."
  for size in full half; do
    echo
    if [ $size = full ]; then echo "#### Full size, 1282 x 1110, 256 disparities"; else
      echo "#### Half size, 641 x 555, 128 disparities (--scale 2)"; fi
    echo
    echo "| levels (used) | window | lr-check | subpixel | bad-1 % | bad-2 % | bad-4 % | avg err px | density % | ms |"
    echo "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    awk -F, -v size=$size 'NR > 1 && $1 == size {
        printf "| %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $3, $4, $5,
               ($6 ? "on" : "off"), ($7 ? "on" : "off"), $8, $9, $10, $11, $12, $13 }' "$csv"
  done
} > "$md"
echo "wrote $csv and $md ($failures failed runs)"
[ $failures = 0 ]
