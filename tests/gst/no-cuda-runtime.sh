#!/usr/bin/env bash
# The plugin must load, and its CPU backend work, on a machine with no CUDA
# toolkit, no CUDA runtime and no NVIDIA driver: the CUDA runtime is linked
# statically and loads the driver itself when a GPU is asked for. If the
# plugin had a CUDA library among its NEEDED entries, GStreamer would
# blacklist all of it there, CPU backend included.
#
# Usage: no-cuda-runtime.sh PLUGIN.so TEST-GST-CUDASTEREO
#   1. PLUGIN.so's NEEDED entries name no CUDA library;
#   2. in a private mount namespace where every CUDA library and toolkit
#      directory is covered by an empty file or directory, with
#      LD_LIBRARY_PATH cleared and a fresh registry: gst-inspect-1.0 finds
#      the element, a launch line with backend=auto (which falls back to the
#      CPU) writes every frame, and the CPU element tests pass.
# Without the right to make a mount namespace (not root and no user
# namespaces) step 2 cannot hide anything: the link is checked instead, it
# says so and exits 77 (skipped).
set -u

# Shared libraries of the CUDA toolkit and the driver that the plugin must
# not need (libgstcuda-1.0 is GStreamer's and loads the driver with dlopen).
cuda_lib_re='^lib(cuda|cudart|nvrtc|nvJitLink|nvidia-ptxjitcompiler|cublas|cufft|curand|npp[a-z]*)(\.|-|_)'

if [ "${1:-}" = --hidden ]; then
  # Step 2, inside the namespace.
  plugin=$2 test_exe=$3 work=$4
  empty_dir="$work/empty-dir" empty_file="$work/empty-file"
  mkdir -p "$empty_dir"; : > "$empty_file"
  mapfile -t dirs < <(for d in /usr/local/cuda* /opt/cuda* /opt/nvidia/cuda*; do [ -d "$d" ] && realpath "$d"; done | sort -u)
  for d in "${dirs[@]}"; do
    mount --bind "$empty_dir" "$d" || { echo "FAIL: could not cover $d"; exit 1; }
  done
  # Libraries outside those directories: what the loader's cache lists and
  # what sits in the usual library directories (the driver's libcuda.so.1).
  mapfile -t libs < <({
      ldconfig -p 2>/dev/null | sed -n 's/^\s*\(lib[^ ]*\) .* => \(.*\)$/\1 \2/p' |
        while read -r name path; do [[ $name =~ $cuda_lib_re ]] && echo "$path"; done
      find /lib /lib64 /usr/lib /usr/lib64 /usr/local/lib -maxdepth 2 \( -type f -o -type l \) \
        \( -name 'libcuda.so*' -o -name 'libcudart.so*' -o -name 'libnvrtc*.so*' -o -name 'libnvJitLink.so*' \
           -o -name 'libnvidia-ptxjitcompiler.so*' \) 2>/dev/null
    } | while read -r p; do [ -e "$p" ] && realpath "$p"; done | sort -u)
  for f in "${libs[@]}"; do
    mount --bind "$empty_file" "$f" || { echo "FAIL: could not cover $f"; exit 1; }
  done
  echo "covered ${#dirs[@]} directories (${dirs[*]:-none}) and ${#libs[@]} library files"
  # The hiding itself is checked: none of these may load any more.
  if command -v python3 > /dev/null; then
    python3 - <<'PY' || { echo "FAIL: a CUDA library still loads inside the namespace"; exit 1; }
import ctypes, sys
still = []
for name in ["libcuda.so.1", "libcuda.so", "libcudart.so", "libcudart.so.13", "libcudart.so.12", "libnvrtc.so"]:
    try:
        ctypes.CDLL(name)
        still.append(name)
    except OSError:
        pass
if still:
    print("still loadable:", " ".join(still))
    sys.exit(1)
PY
  fi

  cd "$work"
  failed=0
  run() { env -u LD_LIBRARY_PATH -u LD_PRELOAD -u GST_PLUGIN_PATH -u GST_REGISTRY \
      GST_PLUGIN_PATH_1_0="$(dirname "$plugin")" GST_REGISTRY_1_0="$work/registry.bin" "$@"; }
  if run gst-inspect-1.0 cudastereo > "$work/inspect.txt" 2>&1 && grep -q 'backend' "$work/inspect.txt"; then
    echo "ok: gst-inspect-1.0 cudastereo"
  else
    echo "FAIL: gst-inspect-1.0 cudastereo without the CUDA libraries:"
    head -n 20 "$work/inspect.txt"
    run gst-inspect-1.0 -b 2>&1 | sed -n '1,10p'
    failed=1
  fi
  # backend=auto finds no driver and falls back to the CPU: every frame
  # comes out (3 frames of 64x48 GRAY16_LE disparity).
  if run gst-launch-1.0 -q videotestsrc num-buffers=3 pattern=ball ! video/x-raw,format=RGBA,width=128,height=48 \
      ! cudastereo backend=auto input-layout=side-by-side max-disparity=16 ! video/x-raw,format=GRAY16_LE \
      ! filesink location="$work/disparity.raw" > "$work/launch.txt" 2>&1 \
      && [ "$(stat -c %s "$work/disparity.raw" 2>/dev/null)" = $((3 * 64 * 48 * 2)) ]; then
    echo "ok: backend=auto launch line, 3 frames out"
  else
    echo "FAIL: backend=auto launch line without the CUDA libraries:"
    head -n 20 "$work/launch.txt"
    failed=1
  fi
  if run CK_FORK=no "$test_exe" > "$work/tests.txt" 2>&1; then
    echo "ok: $(grep -E '^[0-9]+%: Checks' "$work/tests.txt" | tail -n 1)"
  else
    echo "FAIL: CPU element tests without the CUDA libraries:"
    tail -n 30 "$work/tests.txt"
    failed=1
  fi
  exit $failed
fi

plugin=$(realpath "${1:?plugin .so}")
test_exe=$(realpath "${2:?test-gst-cudastereo}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

needed=$(readelf -d "$plugin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
bad=$(for n in $needed; do [[ $n =~ $cuda_lib_re ]] && echo "$n"; done)
if [ -n "$bad" ]; then
  echo "FAIL: $(basename "$plugin") needs CUDA libraries: $(echo $bad)"
  failed=1
else
  echo "ok: NEEDED has no CUDA library ($(echo $needed))"
fi

# A private mount namespace: as root directly, otherwise in a user namespace
# where we are root.
ns=()
if [ "$(id -u)" -eq 0 ] && unshare -m --propagation private true 2> /dev/null; then
  ns=(unshare -m --propagation private)
elif unshare -r -m --propagation private true 2> /dev/null; then
  ns=(unshare -r -m --propagation private)
fi
if [ ${#ns[@]} -gt 0 ]; then
  "${ns[@]}" bash "${BASH_SOURCE[0]}" --hidden "$plugin" "$test_exe" "$work" || failed=1
  exit $failed
fi

echo "NOTE: no mount namespace can be made here (needs root or user namespaces): the CUDA libraries"
echo "      were NOT hidden; only the plugin's link was checked (below); skipped if that passes"
closure=$(env -u LD_LIBRARY_PATH ldd "$plugin" 2>&1 | awk '{print $1}')
bad=$(for n in $closure; do [[ $n =~ $cuda_lib_re ]] && echo "$n"; done)
if [ -n "$bad" ]; then
  echo "FAIL: the plugin's library closure has CUDA libraries: $(echo $bad)"
  failed=1
else
  echo "ok: no CUDA library in the plugin's library closure (ldd)"
fi
[ $failed -ne 0 ] && exit 1
exit 77
