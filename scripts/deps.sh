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

cs_build_project() {
  # CUDA is optional: nvcc in its usual prefix enables the CUDA engine.
  if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
  if [ ! -f "$cs_build/build.ninja" ]; then
    echo "== configuring $cs_build"
    local log="$cs_root/.meson-setup.log"
    if ! meson setup "$cs_build" "$cs_root" >"$log" 2>&1; then
      # Show why: the configure output and meson's own log, then fail.
      tail -n 40 "$log" >&2
      [ -f "$cs_build/meson-logs/meson-log.txt" ] && tail -n 40 "$cs_build/meson-logs/meson-log.txt" >&2
      rm -rf "$cs_build"
      echo "meson setup failed (log above)" >&2
      exit 1
    fi
    rm -f "$log"
  fi
  echo "== building"
  if ! ninja -C "$cs_build" >"$cs_build/ninja-output.log" 2>&1; then
    tail -n 60 "$cs_build/ninja-output.log" >&2
    echo "build failed (log above: $cs_build/ninja-output.log)" >&2
    exit 1
  fi
}
