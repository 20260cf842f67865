#!/usr/bin/env bash
# Builds Debian packages of gst-cudastereo into dist/ (Debian 12 or Ubuntu):
#   gstreamer1.0-cudastereo      the plugin (in GStreamer's plugin directory)
#                                and the tools cs-stereo, cs-score, cs-makeseq
#   gstreamer1.0-cudastereo-dev  <gst/cudastereo/gstcudastereometa.h> and
#                                gstcudastereo-1.0.pc, for applications that
#                                read GstCudaStereoMeta
# Install both with: sudo apt install ./dist/*.deb
#
# The plugin carries the CUDA runtime statically (no libcudart dependency)
# and GPU code for every architecture of the default gpu_archs list, so the
# packages need only the NVIDIA driver on a GPU machine and nothing CUDA on a
# machine without one (the CPU backend). Building needs the CUDA toolkit
# (nvcc, in PATH or /usr/local/cuda); the rest it installs with apt.
#
# Environment:
#   CS_DEB_GPU_ARCHS  compute capabilities to build for instead of the full
#                     default list, e.g. "9.0" (quick builds, tests)
#   CS_DEB_CUDA       enabled (default) or disabled: a CPU-only package
#   CS_DEB_BUILD_DIR  build directory (default: build-deb in the source tree)
#   CS_DEB_DIST       where the .deb files go (default: dist in the source tree)
#   DEBFULLNAME, DEBEMAIL  the Maintainer field
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/deps.sh"

# What building the packages needs (no test dependencies).
cs_packages=(
  meson ninja-build pkg-config g++ git dpkg-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev
  libpng-dev libjpeg62-turbo-dev
)
cs_install_deps

cuda=${CS_DEB_CUDA:-enabled}
archs=${CS_DEB_GPU_ARCHS:-}
bdir=${CS_DEB_BUILD_DIR:-$cs_root/build-deb}
dist=${CS_DEB_DIST:-$cs_root/dist}
maintainer="${DEBFULLNAME:-gst-cudastereo maintainers} <${DEBEMAIL:-maintainers@gst-cudastereo.invalid}>"

if [ "$cuda" = enabled ]; then
  if ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
  if ! command -v nvcc > /dev/null; then
    echo "package-deb.sh: nvcc not found (PATH, /usr/local/cuda/bin): install the CUDA toolkit from NVIDIA's" >&2
    echo "repository, or set CS_DEB_CUDA=disabled for a package with the CPU backend only" >&2
    exit 1
  fi
fi

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
arch=$(dpkg --print-architecture)
setup_args=(--prefix=/usr --libdir="lib/$multiarch" --buildtype=release -Dtests=false -Delement=enabled
  -Dcuda="$cuda" --wrap-mode=nodownload)
[ -n "$archs" ] && setup_args+=(-Dgpu_archs="$archs")

echo "== configuring $bdir"
rm -rf "$bdir"
setup_log=$(mktemp)
meson setup "$bdir" "$cs_root" "${setup_args[@]}" > "$setup_log" 2>&1 || { cat "$setup_log"; rm -f "$setup_log"; exit 1; }
mv "$setup_log" "$bdir/setup.log"
echo "== building"
ninja -C "$bdir" > "$bdir/build.log" 2>&1 || { tail -n 40 "$bdir/build.log"; exit 1; }

stage="$bdir/deb"
root="$stage/root"
rm -rf "$stage"
DESTDIR="$root" meson install -C "$bdir" --no-rebuild --quiet

# Where things must be, and the facts the descriptions state.
pluginsdir=$(pkg-config --variable=pluginsdir gstreamer-1.0)
plugin="$root$pluginsdir/libgstcudastereo.so"
[ -f "$plugin" ] || { echo "package-deb.sh: meson install put no plugin in $pluginsdir" >&2; exit 1; }
gpu_code=$(meson introspect --buildoptions "$bdir" | python3 -c '
import json, sys
opts = {o["name"]: o["value"] for o in json.load(sys.stdin)}
print(opts["gpu_archs"] if opts["cuda"] != "disabled" else "")')
if [ "$cuda" = enabled ]; then
  cuda_version=$(nvcc --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1.\2/p')
  # Minimum driver of each CUDA major release (minor version compatibility,
  # NVIDIA's CUDA compatibility guide): 13.x needs 580, 12.x 525.
  case ${cuda_version%%.*} in
    13) min_driver=580 ;;
    12) min_driver=525 ;;
    *) echo "package-deb.sh: CUDA $cuda_version: minimum driver unknown to this script" >&2; exit 1 ;;
  esac
fi

version=$(meson introspect --projectinfo "$bdir" | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
if git -C "$cs_root" rev-parse --git-dir > /dev/null 2>&1; then
  version="$version+git$(git -C "$cs_root" rev-list --count HEAD).$(git -C "$cs_root" rev-parse --short=7 HEAD)"
  git -C "$cs_root" diff --quiet HEAD 2> /dev/null || version="$version.dirty"
fi
version="$version-1"

# What dh_strip would do: no debugging symbols in the package.
while IFS= read -r -d '' f; do
  head -c 4 "$f" | grep -q ELF && strip --strip-unneeded --remove-section=.comment --remove-section=.note "$f"
done < <(find "$root" -type f -print0)

# Library dependencies of the binaries, as dpkg-shlibdeps (which reads a
# debian/control) computes them from the libraries' shlibs/symbols files.
mkdir -p "$stage/debian"
printf 'Source: gst-cudastereo\n\nPackage: gstreamer1.0-cudastereo\nArchitecture: any\n' > "$stage/debian/control"
mapfile -t elves < <(find "$root" -type f \( -name '*.so' -o -perm -u+x \) -exec sh -c 'head -c 4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
shlibs=$(cd "$stage" && dpkg-shlibdeps -O "${elves[@]}" 2> "$stage/shlibdeps.log" | sed -n 's/^shlibs:Depends=//p') || {
  cat "$stage/shlibdeps.log" >&2; exit 1; }
# GStreamer loads a plugin only into a core of at least the minor version it
# was built against; the symbols file alone would allow older ones.
gst_built=$(pkg-config --modversion gstreamer-1.0 | cut -d. -f1,2)
shlibs=$(sed -E "s/libgstreamer1\.0-0 \(>= [^)]*\)/libgstreamer1.0-0 (>= $gst_built)/" <<< "$shlibs")
# The GStreamer runtime libraries the plugin links (gstcuda, from -bad, only
# with CUDA) must be named, or the package would install without them.
needed_pkgs=(libgstreamer1.0-0 libgstreamer-plugins-base1.0-0)
[ "$cuda" = enabled ] && needed_pkgs+=(libgstreamer-plugins-bad1.0-0)
for p in "${needed_pkgs[@]}"; do
  [[ ", $shlibs" == *", $p "* ]] || { echo "package-deb.sh: $p missing from the dependencies: $shlibs" >&2; exit 1; }
done

if [ "$cuda" = enabled ]; then
  gpus=""
  for cc in $gpu_code; do
    case $cc in
      7.5) gpus+=" T4, RTX 20xx (7.5);" ;;
      8.0) gpus+=" A100, A30 (8.0);" ;;
      8.6) gpus+=" RTX 30xx, A10, A40 (8.6);" ;;
      8.7) gpus+=" Jetson Orin (8.7);" ;;
      8.9) gpus+=" RTX 40xx, L4, L40 (8.9);" ;;
      9.0) gpus+=" H100, H200, GH200 (9.0);" ;;
      *) gpus+=" compute capability $cc;" ;;
    esac
  done
  cuda_text=$(fold -s -w 72 <<EOF | sed 's/ *$//; s/^/ /'
The CUDA backend carries GPU code for${gpus%;}, and PTX of the newest, which the driver compiles for newer GPUs. The CUDA $cuda_version runtime is linked statically into the plugin: no CUDA toolkit or libcudart is needed, only the NVIDIA driver, version $min_driver or newer. Without a GPU or driver the element uses its CPU backend (backend=auto), which needs nothing CUDA at all.
EOF
)
else
  cuda_text=" This build has the CPU backend only (built without CUDA)."
fi

doc_files() {  # package name
  local d="$1/usr/share/doc/$2"
  mkdir -p "$d"
  cat > "$d/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: gst-cudastereo
License: LGPL-2.1-or-later

Files: *
License: LGPL-2.1-or-later
 On Debian systems the full text of the GNU Lesser General Public License
 version 2.1 is in /usr/share/common-licenses/LGPL-2.1.
EOF
  printf 'gst-cudastereo (%s) unstable; urgency=medium\n\n  * Built from the source tree by scripts/package-deb.sh.\n\n -- %s  %s\n' \
    "$version" "$maintainer" "$(date -R)" | gzip -9n > "$d/changelog.Debian.gz"
}

control() {  # package root, package name, Depends, Recommends, summary, long description
  mkdir -p "$1/DEBIAN"
  {
    echo "Package: $2"
    echo "Source: gst-cudastereo"
    echo "Version: $version"
    echo "Architecture: $arch"
    echo "Maintainer: $maintainer"
    echo "Installed-Size: $(du -sk --exclude=DEBIAN "$1" | cut -f1)"
    echo "Depends: $3"
    [ -n "$4" ] && echo "Recommends: $4"
    echo "Section: video"
    echo "Priority: optional"
    echo "Homepage: https://github.com/gst-cudastereo"
    echo "Description: $5"
    printf '%s\n' "$6"
  } > "$1/DEBIAN/control"
}

# Split the staged tree: headers and pkg-config file go to -dev.
main="$stage/gstreamer1.0-cudastereo"
dev="$stage/gstreamer1.0-cudastereo-dev"
mkdir -p "$main" "$dev/usr/lib/$multiarch"
cp -a "$root/." "$main/"
mv "$main/usr/include" "$dev/usr/"
mv "$main/usr/lib/$multiarch/pkgconfig" "$dev/usr/lib/$multiarch/"
doc_files "$main" gstreamer1.0-cudastereo
doc_files "$dev" gstreamer1.0-cudastereo-dev
cp "$cs_root/README.md" "$main/usr/share/doc/gstreamer1.0-cudastereo/"
gzip -9n "$main/usr/share/doc/gstreamer1.0-cudastereo/README.md"

control "$main" gstreamer1.0-cudastereo "$shlibs" \
  "gstreamer1.0-tools, gstreamer1.0-plugins-base, gstreamer1.0-plugins-good" \
  "GStreamer element cudastereo: real-time stereo disparity on CUDA or CPU" \
  " The cudastereo element turns stereo video (side by side, top-bottom or two
 streams) into disparity, depth or false-colour video with progressive
 multi-resolution adaptive windows (Zhao & Taubin 2011) and an optional
 per-pixel background model, so a surveillance pipeline matches only what
 moves. Every output buffer carries a GstCudaStereoMeta.
 .
$cuda_text
 .
 Also the tools cs-stereo (match an image pair), cs-score (accuracy against
 ground truth) and cs-makeseq (a generated example sequence)."
control "$dev" gstreamer1.0-cudastereo-dev "gstreamer1.0-cudastereo (= $version), libgstreamer1.0-dev (>= 1.22)" "" \
  "GStreamer element cudastereo: header for applications reading its meta" \
  " <gst/cudastereo/gstcudastereometa.h> declares GstCudaStereoMeta, the
 metadata every output buffer of the cudastereo element carries (scale,
 invalid value, disparity range, foreground fraction, levels, backend).
 The header needs no library: compile with
 \`pkg-config --cflags gstcudastereo-1.0\`."

sed -i 's/^Section: video$/Section: libdevel/' "$dev/DEBIAN/control"

mkdir -p "$dist"
rm -f "$dist"/gstreamer1.0-cudastereo_*.deb "$dist"/gstreamer1.0-cudastereo-dev_*.deb
for p in "$main" "$dev"; do
  dpkg-deb --root-owner-group -Zxz --build "$p" "$dist/$(basename "$p")_${version}_$arch.deb" > /dev/null
done

echo "== packages in $dist (GPU code: ${gpu_code:-none}${cuda_version:+, CUDA $cuda_version runtime static, driver >= $min_driver}):"
for deb in "$dist"/gstreamer1.0-cudastereo*_"${version}"_"$arch".deb; do
  echo "$(basename "$deb") ($(du -h "$deb" | cut -f1))"
  dpkg-deb -f "$deb" Depends | sed 's/^/  Depends: /'
done
echo "install with: sudo apt install $dist/*.deb"
