#!/usr/bin/env bash
# Copies a build directory without objects and meson state, small enough to
# carry to the device machine: scripts/slim-build.sh build build-gpu
set -eu
src=${1:-build}; dst=${2:-build-gpu}
rm -rf "$dst"; cp -r "$src" "$dst"
find "$dst" -name '*.p' -type d -prune -exec rm -rf {} +
find "$dst" \( -name '*.a' -o -name 'registry.bin' \) -delete
rm -rf "$dst"/meson-private "$dst"/meson-logs "$dst"/meson-info "$dst"/bench-results "$dst"/cuda/kept
find "$dst" -type f -perm -u+x -exec sh -c 'head -c4 "$1" | grep -q ELF && strip -g "$1"' _ {} \;
du -sh "$dst"
