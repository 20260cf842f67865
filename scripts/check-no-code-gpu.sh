#!/usr/bin/env bash
# On a GPU the build has no code for, backend=auto must warn and fall back
# to the CPU, backend=cuda must fail, and both messages must name the GPU,
# its compute capability, the architectures the build carries and how to
# rebuild. Simulated on any GPU other than an 8.6 one with an sm_86-only
# build and PTX compilation switched off (CUDA_DISABLE_PTX_JIT=1).
#
# Here:   meson setup build-sm86 -Dgpu_archs=8.6 && ninja -C build-sm86 &&
#         scripts/slim-build.sh build-sm86 build-sm86-gpu
# There:  carry [".gpu", "build-sm86-gpu"], command: bash scripts/check-no-code-gpu.sh build-sm86-gpu
set -u
B=${1:-build-sm86-gpu}
[ -f .gpu/env.sh ] && source .gpu/env.sh
export PATH=$PATH:/usr/local/cuda/bin
export GST_PLUGIN_PATH_1_0=$PWD/$B/gst CUDA_DISABLE_PTX_JIT=1
O=${OUT:-/tmp/no-code-gpu}; mkdir -p "$O"

IFS=, read -r gpu cc < <(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader -i 0 | sed 's/, */,/')
[ -n "${gpu:-}" ] || { echo "FAIL: nvidia-smi names no GPU"; exit 1; }
archs=$(sed -n 's/^#define CS_CUDA_ARCHS "\(.*\)"$/\1/p' "$B/config.h")
echo "GPU: $gpu, compute capability $cc; build carries: $archs"
[ "$cc" != 8.6 ] || { echo "SKIP: this GPU is an sm_86 one; the sm_86 build has code for it"; exit 77; }

failed=0
# $1: backend, $2: expected gst-launch exit (0 or 1), $3: ERROR or WARNING.
check() {
  local backend=$1 want_rc=$2 kind=$3 log=$O/no-code-$1.log
  timeout -k 5 120 gst-launch-1.0 videotestsrc pattern=ball num-buffers=3 ! \
    video/x-raw,width=320,height=120,format=GRAY8 ! cudastereo backend="$backend" input-layout=side-by-side \
    max-disparity=32 ! fakesink > "$log" 2>&1
  local rc=$?
  local line; line=$(grep "^$kind: from element .*cudastereo" "$log")
  echo "backend=$backend: rc=$rc; $line"
  if { [ "$want_rc" = 0 ] && [ $rc -ne 0 ]; } || { [ "$want_rc" != 0 ] && [ $rc -eq 0 ]; }; then
    echo "FAIL: backend=$backend exited $rc"; failed=1
  fi
  for piece in "$gpu" "compute capability $cc" "$archs" "meson setup build -Dgpu_archs=$cc" "meson configure" \
               "CUDA_DISABLE_PTX_JIT"; do
    [[ $line == *"$piece"* ]] || { echo "FAIL: backend=$backend's $kind lacks '$piece'"; failed=1; }
  done
  # Source positions go to the debug string only.
  [[ $line != *".cu:"* ]] || { echo "FAIL: backend=$backend's $kind text names a source line"; failed=1; }
  grep -q "Additional debug info" "$log" || { echo "FAIL: no debug string"; failed=1; }
  grep -A2 "Additional debug info" "$log" | grep -q "cudaErrorJitCompilationDisabled" ||
    { echo "FAIL: backend=$backend's debug string lacks the CUDA error"; failed=1; }
}
check auto 0 WARNING
check cuda 1 ERROR
[ $failed -eq 0 ] && echo "PASS: both messages name the GPU, its capability, the build's code and the rebuild"
exit $failed
