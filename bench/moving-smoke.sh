#!/usr/bin/env bash
# Check of bench/moving.sh on the CPU backend (meson test 'bench moving
# smoke'): a generated textured pair (cs-bench-engine --write-pairs) as the
# scene's background, objects over 0, 5 and 25 % of the left view, two
# streams of tiny frames through cudastereo with the model on (and off at
# 5 %), about a second a run. Asserts that the script exits 0, that every run
# gave a rate, that the element's mean foreground fraction follows the
# moving share (the sequence reached the element and the model saw it), and
# that the table has its row. No speed is asserted.
#
#   bench/moving-smoke.sh BUILD_ROOT WORKDIR
set -u
build=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
"$build/bench/cs-bench-engine" --scene textured --sizes 96x72 --disparities 16 --write-pairs "$work/pair" --no-run \
  > "$work/pair.log" 2>&1 || { cat "$work/pair.log"; fail "cs-bench-engine could not write the generated pair"; }
bash "$here/moving.sh" --build "$build" --pair "$work/pair/textured_96x72_D16_left.pgm" \
  "$work/pair/textured_96x72_D16_right.pgm" --backend cpu --source system --size 96x72 --disparities 16 \
  --fractions 0,5,25 --streams 2 --outputs raw --quick --out "$work/out" > "$work/moving.out" 2>&1
rc=$?
cat "$work/moving.out"
[ $rc = 0 ] || fail "moving.sh exited with $rc (see $work/out/log.txt)"
results=$work/out/results.txt
[ "$(grep -c '^result ' "$results")" = 4 ] || fail "expected 4 result lines in $results"
# fraction model lowest-fg highest-fg: the element's mean foreground share.
check() {
  local line
  line=$(grep "^result .* fraction=$1 model=$2\$" "$results") || fail "no run at $1 % with the model $2"
  awk -v lo="$3" -v hi="$4" -v what="$1 % model=$2" '
    function kv(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
    { if (kv("error") != "") { print "FAIL " what ": " $0; exit 1 }
      if (kv("total_fps") + 0 <= 0) { print "FAIL " what ": no frames"; exit 1 }
      if (lo != "") { f = kv("fg_fraction")
        if (f == "" || f + 0 < lo || f + 0 > hi) { print "FAIL " what ": foreground fraction " f " not in [" lo ", " hi "]"; exit 1 } }
      print "ok " what ": " kv("total_fps") " fps, foreground " kv("fg_fraction") }' <<< "$line" || exit 1
}
check 0 true 0 0.005
check 5 true 0.03 0.08
check 25 true 0.18 0.32
check 5 false "" ""
grep -q '^| raw | 2 | [0-9.]* (' "$work/out/moving.md" || fail "moving.md has no row for raw output, 2 streams"
echo "bench moving smoke: ok"
