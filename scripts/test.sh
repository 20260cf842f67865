#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test.
# GPU tests skip (exit 77) on a machine without an NVIDIA GPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/deps.sh"
cs_install_deps
cs_build_project
cd "$cs_build"
meson test --no-rebuild --print-errorlogs --num-processes "$(nproc)" "$@"
