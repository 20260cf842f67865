#!/usr/bin/env bash
# The sm_75 code paths (warp reductions by shuffles where sm_80 and newer
# have __reduce_*_sync, cuda/cuda_util.h) against the CPU reference, on
# whatever GPU is at hand: a build for 7.5 only carries SASS for sm_75 and
# PTX of compute_75, which the driver compiles for a newer GPU with
# __CUDA_ARCH__ = 750, so the sm_75 source paths run there. The CUDA test
# programs (every stage, the engine, method block) must pass bit-exact.
#
# Here:   meson setup build-75 -Dgpu_archs=7.5 -Delement=disabled && ninja -C build-75
# There:  bash scripts/check-sm75-path.sh build-75   (first run: about a minute
#         of PTX compilation per program; the driver caches it)
set -u
B=${1:-build-75}
[ -f .gpu/env.sh ] && source .gpu/env.sh
archs=$(sed -n 's/^#define CS_CUDA_ARCHS "\(.*\)"$/\1/p' "$B/config.h")
[ "$archs" = "sm_75 compute_75" ] || { echo "FAIL: $B carries '$archs', not a 7.5-only build"; exit 1; }
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null)
[ -n "$cc" ] || { echo "SKIP: no GPU"; exit 77; }
echo "GPU compute capability $cc; $B carries $archs"
export CUDA_CACHE_MAXSIZE=4294967296
O=${OUT:-/tmp/sm75-path}; mkdir -p "$O"
failed=0
for t in stages engine block; do
  ( s=$(date +%s); timeout 300 "$B/tests/cuda/cuda-test_$t" > "$O/sm75-$t.log" 2>&1; rc=$?
    echo "sm75 $t rc=$rc $(( $(date +%s) - s )) s $(grep -E '^\[  (PASSED|FAILED) ' "$O/sm75-$t.log" | tr '\n' ' ')"
    exit $rc ) &
done
for j in $(jobs -p); do wait "$j" || failed=1; done
[ $failed -eq 0 ] && echo "PASS: the sm_75 paths equal the CPU reference"
exit $failed
