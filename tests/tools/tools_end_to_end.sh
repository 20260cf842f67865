#!/usr/bin/env bash
# The three tools together on the built-in sequence: cs-makeseq writes a pair
# and its exact ground truth, cs-stereo matches it, cs-score must find it
# accurate. Then the exit codes and messages of bad invocations.
# usage: tools_end_to_end.sh CS_MAKESEQ CS_STEREO CS_SCORE
set -euo pipefail
makeseq=$1 stereo=$2 score=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect CODE PATTERN -- command...: exit code CODE and PATTERN on stderr.
expect() {
  local code=$1 pattern=$2; shift 3
  local rc=0
  "$@" >"$work/out.txt" 2>"$work/err.txt" || rc=$?
  [ "$rc" -eq "$code" ] || fail "$* exited $rc, expected $code: $(cat "$work/err.txt")"
  grep -q -- "$pattern" "$work/err.txt" || fail "$*: stderr lacks '$pattern': $(cat "$work/err.txt")"
}

"$makeseq" --width 160 --height 96 --frames 2 --layout separate --object-width 40 --object-height 32 \
  --background-disparity 6 --object-disparity 14 --out "$work/seq"
for f in left_0000.png right_0000.png left_0001.png right_0001.png gt_0000.png; do
  [ -s "$work/seq/$f" ] || fail "cs-makeseq did not write $f"
done
"$makeseq" --width 64 --height 32 --frames 1 --layout side-by-side --out "$work/sbs"
[ -s "$work/sbs/sbs_0000.png" ] || fail "cs-makeseq did not write sbs_0000.png"

"$stereo" --left "$work/seq/left_0000.png" --right "$work/seq/right_0000.png" --max-disparity 32 \
  --out "$work/d.png" --color "$work/c.png"
[ -s "$work/c.png" ] || fail "cs-stereo did not write the colour picture"

# The ground truth is stored as d * 16, like the estimate.
"$score" --disparity "$work/d.png" --gt "$work/seq/gt_0000.png" --gt-scale 16 --json >"$work/score.json"
cat "$work/score.json"
bad2=$(sed -n 's/.*"bad_2": \([0-9.]*\).*/\1/p' "$work/score.json")
evaluated=$(sed -n 's/.*"evaluated": \([0-9]*\).*/\1/p' "$work/score.json")
[ -n "$bad2" ] || fail "no bad_2 in cs-score's JSON"
# Most of the 160 x 96 view has known ground truth (only occluded pixels lack it).
[ "$evaluated" -gt 12000 ] || fail "only $evaluated pixels evaluated"
awk -v b="$bad2" 'BEGIN { exit !(b < 10.0) }' || fail "bad-2 $bad2 % on an exact synthetic pair"

# Scoring the ground truth against itself is perfect; against a shifted
# reading of itself (scale 8 = every disparity doubled) it is all wrong.
"$score" --disparity "$work/seq/gt_0000.png" --gt "$work/seq/gt_0000.png" --gt-scale 16 --json | grep -q '"bad_1": 0.0000' \
  || fail "ground truth against itself is not perfect"
"$score" --disparity "$work/seq/gt_0000.png" --disparity-scale 8 --gt "$work/seq/gt_0000.png" --gt-scale 16 --json \
  | grep -q '"bad_4": 100.0000' || fail "doubled disparities are not all bad"

# Half size: the estimate at half size against every second ground-truth pixel.
"$stereo" --left "$work/seq/left_0000.png" --right "$work/seq/right_0000.png" --max-disparity 16 --scale 2 \
  --out "$work/h.png"
"$score" --disparity "$work/h.png" --gt "$work/seq/gt_0000.png" --gt-scale 32 --downscale 2 --json >"$work/half.json"
cat "$work/half.json"
grep -q '"pixels": 3840' "$work/half.json" || fail "half-size map is not 80 x 48"

# Bad invocations: exit 2 for options, 1 for unreadable input, and a message.
expect 2 "max" -- "$stereo" --left "$work/seq/left_0000.png" --right "$work/seq/right_0000.png" --max-disparity 0 --out "$work/x.png"
expect 2 "--window" -- "$stereo" --left a --right b --out c --window round
expect 2 "--scale" -- "$stereo" --left a --right b --out c --scale 3
expect 2 "unknown option --bogus" -- "$stereo" --bogus
expect 2 "--out is required" -- "$stereo" --left a --right b
expect 1 "nothing.png: cannot open" -- "$stereo" --left "$work/nothing.png" --right "$work/seq/right_0000.png" --out "$work/x.png"
expect 1 "left view is 160 x 96 but the right view is 128 x 32" -- \
  "$stereo" --left "$work/seq/left_0000.png" --right "$work/sbs/sbs_0000.png" --out "$work/x.png"
expect 1 "single-channel" -- "$score" --disparity "$work/seq/left_0000.png" --gt "$work/seq/gt_0000.png"
expect 1 "but the ground truth is" -- "$score" --disparity "$work/h.png" --gt "$work/seq/gt_0000.png"
expect 2 "--gt is required" -- "$score" --disparity "$work/h.png"
expect 2 "--layout" -- "$makeseq" --out "$work/y" --layout diagonal
echo "tools end to end: ok"
