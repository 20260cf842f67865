#!/usr/bin/env bash
# Installs what gst-cudastereo needs on Debian 12 (or Ubuntu), then
# configures and builds it in ./build. Sourced by quickstart.sh and test.sh;
# safe to run again (it installs only what is missing and rebuilds only
# what changed).
set -euo pipefail

cs_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cs_build="$cs_root/build"

cs_packages=(
  meson ninja-build pkg-config g++ git
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
  libpng-dev libjpeg62-turbo-dev libgtest-dev valgrind dpkg-dev
  # calibration files (YAML, OpenCV's XML)
  libyaml-cpp-dev libxml2-dev
  # the Python examples (examples/*.py) and the RTSP server's encoders
  python3-gi python3-numpy gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0 gir1.2-gst-rtsp-server-1.0
  gstreamer1.0-plugins-ugly
)

cs_install_deps() {
  local missing=()
  for p in "${cs_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The GPU code a first run needs: each GPU's compute capability here
# (nvidia-smi), space-separated; nothing without a GPU.
cs_local_gpu_archs() {
  command -v nvidia-smi >/dev/null 2>&1 || return 0
  nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' ' | grep -E '^[0-9]+\.[0-9]+$' |
    sort -u | paste -sd' ' || true
}

# Configures $cs_build if needed and builds it.
#   cs_build_project           everything, with the CUDA engine where nvcc is
#                              (a new build: every architecture of
#                              -Dgpu_archs' default, as tests, packages and
#                              CI build; a build the quick start made without
#                              CUDA gets it now)
#   cs_build_project quick T.. the quick start, only targets T..; a new build
#                              gets GPU code only for the GPUs here, none
#                              without one (the CPU backend runs the example)
cs_build_project() {
  local mode=${1:-full}
  [ $# -gt 0 ] && shift
  # CUDA is optional: nvcc in its usual prefix enables the CUDA engine.
  if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
  local options=(-Dcuda=auto)
  if [ "$mode" = quick ] && [ -f "$cs_build/build.ninja" ]; then
    options=()  # a build made before is used as it is
  elif [ "$mode" = quick ]; then
    local archs
    archs=$(cs_local_gpu_archs)
    if [ -z "$archs" ]; then
      options=(-Dcuda=disabled)
      echo "== no NVIDIA GPU here: building the CPU backend only (scripts/test.sh builds the CUDA engine too)"
    elif command -v nvcc >/dev/null; then
      options=(-Dcuda=auto "-Dgpu_archs=$archs")
      echo "== building the CUDA engine for this machine's GPU (compute capability $archs)"
    fi
  fi
  if [ ! -f "$cs_build/build.ninja" ]; then
    echo "== configuring $cs_build"
    local log="$cs_root/.meson-setup.log"
    if ! meson setup "$cs_build" "$cs_root" "${options[@]}" >"$log" 2>&1; then
      # Show why: the configure output and meson's own log, then fail.
      tail -n 40 "$log" >&2
      [ -f "$cs_build/meson-logs/meson-log.txt" ] && tail -n 40 "$cs_build/meson-logs/meson-log.txt" >&2
      rm -rf "$cs_build"
      echo "meson setup failed (log above)" >&2
      exit 1
    fi
    rm -f "$log"
  elif [ ${#options[@]} -gt 0 ] && ! cs_build_has_options "${options[@]}"; then
    echo "== reconfiguring $cs_build (${options[*]})"
    if ! meson configure "$cs_build" "${options[@]}" >"$cs_root/.meson-setup.log" 2>&1; then
      tail -n 40 "$cs_root/.meson-setup.log" >&2
      echo "meson configure failed (log above)" >&2
      exit 1
    fi
    rm -f "$cs_root/.meson-setup.log"
  fi
  echo "== building"
  if ! ninja -C "$cs_build" "$@" >"$cs_build/ninja-output.log" 2>&1; then
    tail -n 60 "$cs_build/ninja-output.log" >&2
    echo "build failed (log above: $cs_build/ninja-output.log)" >&2
    exit 1
  fi
}

# True when $cs_build is configured with every -Dname=value given.
cs_build_has_options() {
  local current
  current=$(meson introspect --buildoptions "$cs_build" 2>/dev/null) || return 1
  local o
  for o in "$@"; do
    CS_OPT="$o" python3 -c '
import json, os, sys
name, value = os.environ["CS_OPT"][2:].split("=", 1)
for opt in json.load(sys.stdin):
    if opt["name"] == name:
        v = opt["value"]
        sys.exit(0 if str(v) == value else 1)
sys.exit(1)' <<<"$current" || return 1
  done
}
