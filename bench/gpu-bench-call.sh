#!/bin/bash
# Issue 15's measurements in one device call (about 5 minutes on the H100):
# the real-image engine grid with per-stage times, the content-cliff table,
# libSGM side by side (4 and 8 paths, twice) and an Nsight Compute summary of
# one real 1920x1080 x 128 frame, all under one output folder.
#
#   bench/gpu-bench-call.sh --build DIR --libsgm DIR --pair LEFT RIGHT
#                           [--label NAME] [--out DIR] [--no-ncu] [--quick] [--dry-run]
#
# Here (the CPU machine), once:
#   meson setup build -Dgpu_archs=9.0 && ninja -C build
#   scripts/slim-build.sh build build-gpu
#   ../shared/gpu/bundle build-gpu/gst/libgstcudastereo.so build-gpu   # libpng/libjpeg for the bench
#   ../shared/peers/libsgm/build.sh .gpu-libsgm                        # sgm-bench, outside the project
#   mkdir -p .gpu-data && cp ../shared/data/aloe/aloe[LR].jpg .gpu-data/
# Device call: carry [".gpu", "build-gpu", ".gpu-libsgm", ".gpu-data"], timeout_s 600:
#   bash bench/gpu-bench-call.sh --build build-gpu --libsgm .gpu-libsgm \
#     --pair .gpu-data/aloeL.jpg .gpu-data/aloeR.jpg
#
# Writes to --out (default $OUT): env.md, engine.md, cliff.md, libsgm.md,
# ncu.md, all.md (all of them; also printed last), results.txt (every result
# line, key=value) and log.txt (raw output): 8 files, what the device tool
# returns. --dry-run prints the GPU programs' command lines instead.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BUILD="" LIBSGM="" LEFT="" RIGHT="" LABEL="" OUTDIR=${OUT:-} NCU=1 QUICK=0 DRY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --libsgm) LIBSGM=$2; shift 2 ;;
    --pair) [ $# -ge 3 ] || { echo "gpu-bench-call.sh: --pair needs LEFT RIGHT" >&2; exit 2; }
            LEFT=$2; RIGHT=$3; shift 3 ;;
    --label) LABEL=$2; shift 2 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --no-ncu) NCU=0; shift ;;
    --quick) QUICK=1; shift ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) sed -n 2,23p "$0"; exit 0 ;;
    *) echo "gpu-bench-call.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
abs() { case "$1" in ""|/*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
BUILD=$(abs "$BUILD") LIBSGM=$(abs "$LIBSGM") LEFT=$(abs "$LEFT") RIGHT=$(abs "$RIGHT") OUTDIR=$(abs "$OUTDIR")
missing=""
[ -n "$BUILD" ] || missing="$missing --build"
[ -n "$LIBSGM" ] || missing="$missing --libsgm"
[ -n "$LEFT" ] || missing="$missing --pair"
[ -n "$OUTDIR" ] || missing="$missing --out(or \$OUT)"
[ -z "$missing" ] || { echo "gpu-bench-call.sh: missing:$missing" >&2; exit 2; }
cd "$root" || exit 1
mkdir -p "$OUTDIR" || exit 1
# The bundled runtime (libpng, libjpeg of the build machine; the CUDA
# libraries' path), when the call carries it.
[ -f .gpu/env.sh ] && source .gpu/env.sh
export PATH=$PATH:/usr/local/cuda/bin
bench=$BUILD/bench/cs-bench-engine
if [ $DRY = 0 ] && ldd "$bench" 2>/dev/null | grep -q 'not found'; then
  echo "gpu-bench-call.sh: $bench misses libraries (carry .gpu made by ../shared/gpu/bundle ... $BUILD):" >&2
  ldd "$bench" | grep 'not found' >&2
  exit 1
fi

start=$(date +%s)
args=(--build "$BUILD" --out "$OUTDIR" --pair "$LEFT" "$RIGHT" --libsgm "$LIBSGM" --parts "engine,cliff,libsgm")
[ -n "$LABEL" ] && args+=(--label "$LABEL")
[ $QUICK = 1 ] && args+=(--quick)
[ $DRY = 1 ] && args+=(--dry-run)
# run-all.sh prints all.md at the end; the copy printed below has ncu.md too.
bash "$here/run-all.sh" "${args[@]}" > /dev/null 2>> "$OUTDIR/log.txt"
rc=$?
echo "gpu-bench-call.sh: run-all.sh rc $rc after $(( $(date +%s) - start )) s" | tee -a "$OUTDIR/log.txt"

if [ $NCU = 1 ]; then
  md=$OUTDIR/ncu.md
  {
    echo "### Nsight Compute: every kernel of one real frame (1920x1080 x 128, $(basename "$LEFT"))"
    echo
    echo "bench/ncu-frame.sh (ncu --clock-control none --cache-control none; one graphed frame after"
    echo "warm-up; kernels serialised by the profiler, so their sum exceeds the frame's time):"
    echo
  } > "$md"
  t0=$(date +%s)
  if [ $DRY = 1 ]; then
    echo "dry run: bash $here/ncu-frame.sh $bench 1920x1080 128 DIR $LEFT $RIGHT" | tee -a "$OUTDIR/log.txt"
    echo "> dry run: not measured" >> "$md"
  elif ! command -v ncu > /dev/null; then
    echo "> not measured: ncu (Nsight Compute) not found" >> "$md"
  else
    ncu_dir=$(mktemp -d)
    timeout 240 bash "$here/ncu-frame.sh" "$bench" 1920x1080 128 "$ncu_dir" "$LEFT" "$RIGHT" >> "$md" 2>&1 ||
      { echo "> ncu-frame.sh failed or ran out of time (see log.txt)" >> "$md"; rc=1; }
    { echo "== ncu-frame.sh: kernels.csv"; cat "$ncu_dir/kernels.csv"; echo "== ncu.err"; cat "$ncu_dir/ncu.err"; } \
      >> "$OUTDIR/log.txt" 2>/dev/null
    rm -rf "$ncu_dir"
  fi
  echo "gpu-bench-call.sh: ncu $(( $(date +%s) - t0 )) s" | tee -a "$OUTDIR/log.txt"
  { echo; cat "$md"; } >> "$OUTDIR/all.md"
fi
echo "gpu-bench-call.sh: done in $(( $(date +%s) - start )) s, exit code $rc" | tee -a "$OUTDIR/log.txt"
cat "$OUTDIR/all.md"
exit $rc
