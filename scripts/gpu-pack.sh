#!/usr/bin/env bash
# Packs what a device call needs into one file under the carry limit
# (64 MiB): the slim build (scripts/slim-build.sh) and the GStreamer bundle
# (../shared/gpu/bundle) in one xz stream with a 512 MiB dictionary. Every
# test and bench executable links the whole CUDA engine (about 20 MB of
# fatbin each, 280 MB of build in all at ca97a99 with -Dgpu_archs=9.0); one
# dictionary that spans them stores that code once: about 33 MB, in about
# two and a half minutes on a 2-core machine.
#
# Here:   meson setup build -Dgpu_archs=9.0 && ninja -C build && scripts/gpu-pack.sh build
# There:  carry [".gpu-pack"] (and ".gpu-data", ".gpu-libsgm" as needed):
#         tar xJf .gpu-pack/pack.tar.xz && source .gpu/env.sh && bash scripts/gpu-tests-parallel.sh build-gpu [elas]
# (Extract it in every call: a machine that went back took it along. A
# folder git does not ignore would not even survive from one call to the
# next on a warm one: the working tree's copy replaces it.)
set -eu
src=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
git rev-parse --short HEAD > "$src/COMMIT"
bash scripts/slim-build.sh "$src" build-gpu > /dev/null
rm -rf .gpu .gpu-pack
mkdir -p .gpu-pack
../shared/gpu/bundle build-gpu/gst/libgstcudastereo.so build-gpu > /dev/null
rm -f .gpu/plugins/libgstcudastereo.so  # it travels in build-gpu
tar cf - .gpu build-gpu | xz -9 -T1 --lzma2=dict=512MiB > .gpu-pack/pack.tar.xz
rm -rf .gpu build-gpu
du -h .gpu-pack/pack.tar.xz
