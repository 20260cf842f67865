#!/bin/bash
# Accuracy of method block (SSD block matching, CPU reference) on Middlebury
# Aloe over block size and uniqueness ratio, as a markdown table plus a CSV;
# with --method progressive or cross, of that method over the ratio (cross:
# its parameters through --extra, e.g. "--sample-restore 2 --cross-tau 15").
#
#   bench/accuracy/run-block-accuracy.sh [--data DIR] [--build DIR] [--out DIR]
#       [--method block|progressive|cross] [--sizes "half full"]
#       [--blocks "5 7 9 11 13 15"] [--ratios "0 5 10 15"] [--extra "ARGS"]
#
#   --data DIR    Aloe files; default $ALOE_DIR, else ../shared/data/aloe
#   --build DIR   build directory with tools/cs-stereo and tools/cs-score
#                 (default $BUILD, else build)
#   --out DIR     where METHOD.csv and METHOD.md go (default $BUILD/bench-results)
#   --extra ARGS  more cs-stereo options for every run (e.g. "--lr-tolerance 1")
#
# Each run is scored twice, as bench/README.md's Aloe sections do:
#  - visible: over aloe_nonocc.png (known ground truth, visible in the right
#    view), bad-2 with missing estimates counted as bad (the project's goal
#    metric), and the density there;
#  - all GT: over every pixel with ground truth, bad-2 over the valid
#    estimates only and the density (the way OpenCV StereoBM's 62.4 % density
#    and 1.86 % bad-2 at half size were counted in issue 14).
# Full size: 256 disparities; half: --scale 2, 128 disparities, scored with
# --gt-scale 2 --downscale 2. ms = cs-stereo's engine time, one thread.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
DATA=${ALOE_DIR:-$root/../shared/data/aloe}
BUILD=${BUILD:-build}
OUTDIR=""
SIZES="half full"
BLOCKS="5 7 9 11 13 15"
RATIOS="0 5 10 15"
EXTRA=""
METHOD=block
while [ $# -gt 0 ]; do
  case "$1" in
    --data) DATA=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --blocks) BLOCKS=$2; shift 2 ;;
    --ratios) RATIOS=$2; shift 2 ;;
    --extra) EXTRA=$2; shift 2 ;;
    --method) METHOD=$2; shift 2 ;;
    -h|--help) sed -n 2,25p "$0"; exit 0 ;;
    *) echo "run-block-accuracy.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case "$BUILD" in /*) ;; *) BUILD=$root/$BUILD ;; esac
OUTDIR=${OUTDIR:-$BUILD/bench-results}
STEREO=$BUILD/tools/cs-stereo
SCORE=$BUILD/tools/cs-score
for f in "$STEREO" "$SCORE"; do
  [ -x "$f" ] || { echo "run-block-accuracy.sh: $f not found: build the tools first" >&2; exit 1; }
done
for f in aloeL.jpg aloeR.jpg aloeGT.png aloe_nonocc.png; do
  [ -r "$DATA/$f" ] || { echo "run-block-accuracy.sh: $DATA/$f not found (use --data DIR)" >&2; exit 1; }
done
case "$METHOD" in
  block) ;;
  progressive|cross) BLOCKS=- ;;
  *) echo "run-block-accuracy.sh: --method must be block, progressive or cross" >&2; exit 2 ;;
esac
mkdir -p "$OUTDIR" || exit 1
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
csv=$OUTDIR/$METHOD.csv
md=$OUTDIR/$METHOD.md
echo "size,disparities,block,ratio,extra,visible_bad_2,visible_density,all_gt_valid_bad_2,all_gt_density,ms" > "$csv"
{
  echo "| size, D | block | uniqueness % | visible bad-2 % (invalid = bad) | visible density % | all GT: valid-only bad-2 % | all GT: density % | ms |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
} > "$md"

field() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" <<< "$2"; }

failures=0
for size in $SIZES; do
  d=256
  sargs=()
  args=(--left "$DATA/aloeL.jpg" --right "$DATA/aloeR.jpg" --method "$METHOD")
  if [ "$size" = half ]; then
    d=128
    args+=(--scale 2)
    sargs+=(--gt-scale 2 --downscale 2)
  fi
  for b in $BLOCKS; do
    for r in $RATIOS; do
      bargs=()
      [ "$b" = - ] || bargs=(--block-size "$b")
      # shellcheck disable=SC2086
      if ! log=$("$STEREO" "${args[@]}" "${bargs[@]}" --max-disparity $d --uniqueness-ratio "$r" $EXTRA \
                   --out "$work/d.png" 2>&1); then
        echo "run-block-accuracy.sh: cs-stereo failed ($size block $b ratio $r): $log" >&2
        failures=$((failures + 1))
        continue
      fi
      ms=$(sed -n 's/.* \([0-9.]*\) ms$/\1/p' <<< "$log")
      vis=$("$SCORE" --disparity "$work/d.png" --gt "$DATA/aloeGT.png" --mask "$DATA/aloe_nonocc.png" \
              "${sargs[@]}" --json) || { failures=$((failures + 1)); continue; }
      all=$("$SCORE" --disparity "$work/d.png" --gt "$DATA/aloeGT.png" "${sargs[@]}" --json) ||
        { failures=$((failures + 1)); continue; }
      vb=$(field bad_2 "$vis")
      vd=$(awk -v x="$(field density "$vis")" 'BEGIN { printf "%.2f", 100 * x }')
      # bad_2_count counts missing estimates too: take them out for valid-only.
      read -r ab ad < <(awk -v bad="$(field bad_2_count "$all")" -v ev="$(field evaluated "$all")" \
                            -v va="$(field valid_estimates "$all")" \
                            'BEGIN { printf "%.2f %.2f\n", va ? 100 * (bad - (ev - va)) / va : 0, 100 * va / ev }')
      echo "$size,$d,$b,$r,$EXTRA,$vb,$vd,$ab,$ad,$ms" >> "$csv"
      echo "| $size, $d | $b | $r | $vb | $vd | $ab | $ad | $ms |" >> "$md"
      echo "$size d=$d $METHOD block $b ratio $r $EXTRA: visible bad-2 $vb density $vd | all GT valid-only bad-2 $ab density $ad | $ms ms" >&2
    done
  done
done
cat "$md"
[ $failures = 0 ]
