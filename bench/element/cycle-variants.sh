#!/usr/bin/env bash
# Issue 16: where host memory grows across start/stop cycles. Runs
# cs-cycle-memory over the variants that separate the suspects (backend,
# pipeline rebuilt or reused, own or shared CUDA context, input format,
# system or CUDA memory, stopping mid-stream or at EOS), all at once, and
# prints each one's growth per cycle after the first eighth of its cycles
# (caches and pools are made by then).
#
#   bench/element/cycle-variants.sh BUILD_DIR [CYCLES] [OUTDIR]
#
# On the device machine (GStreamer from ../shared/gpu/bundle):
#   source .gpu/env.sh; GST_PLUGIN_PATH_1_0=$PWD/build-gpu/gst \
#     bash bench/element/cycle-variants.sh build-gpu 400 $OUT/cycles
set -u
B=${1:?build directory}
N=${2:-400}
O=${3:-${OUT:-/tmp}/cycles}
mkdir -p "$O"
tool=$B/bench/element/cs-cycle-memory
[ -x "$tool" ] || { echo "cycle-variants.sh: $tool not built" >&2; exit 2; }
caps_i420="video/x-raw,format=I420,width=192,height=64,framerate=25/1"
caps_gray="video/x-raw,format=GRAY8,width=192,height=64,framerate=25/1"
stereo() { echo "cudastereo backend=$1 max-disparity=24 input-layout=side-by-side"; }
sink="video/x-raw,format=GRAY16_LE ! fakesink name=sink sync=false"
run() {  # name, options..., pipeline (last)
  local name=$1; shift
  timeout 300 "$tool" "$@" > "$O/$name.txt" 2>&1 &
}
# The reliability test's state cycles: one pipeline, shared context, frames flowing at NULL.
run cuda-reuse-shared-i420-midstream --reuse --shared-cuda-context --frames 3 "$N" \
  "videotestsrc pattern=ball ! $caps_i420 ! $(stereo cuda) ! $sink"
run cuda-reuse-own-i420-midstream --reuse --frames 3 "$N" "videotestsrc pattern=ball ! $caps_i420 ! $(stereo cuda) ! $sink"
run cuda-rebuild-shared-i420-midstream --shared-cuda-context --frames 3 "$N" \
  "videotestsrc pattern=ball ! $caps_i420 ! $(stereo cuda) ! $sink"
run cuda-reuse-shared-gray-midstream --reuse --shared-cuda-context --frames 3 "$N" \
  "videotestsrc pattern=ball ! $caps_gray ! $(stereo cuda) ! $sink"
run cuda-reuse-shared-i420-eos --reuse --shared-cuda-context "$N" \
  "videotestsrc pattern=ball num-buffers=3 ! $caps_i420 ! $(stereo cuda) ! $sink"
run cuda-reuse-shared-cudamem-midstream --reuse --shared-cuda-context --frames 3 "$N" \
  "videotestsrc pattern=ball ! $caps_i420 ! cudaupload ! video/x-raw(memory:CUDAMemory) ! $(stereo cuda) ! $sink"
run cpu-reuse-i420-midstream --reuse --frames 3 "$N" "videotestsrc pattern=ball ! $caps_i420 ! $(stereo cpu) ! $sink"
wait
printf '| variant | first | last | growth / cycle |\n| --- | ---: | ---: | ---: |\n'
for f in "$O"/*.txt; do
  python3 - "$f" <<'PY'
import re, sys
rows = [l for l in open(sys.argv[1]) if l.startswith("cycle")]
name = sys.argv[1].rsplit("/", 1)[-1][:-4]
if len(rows) < 3:
    print(f"| {name} | failed: {open(sys.argv[1]).read().strip()[-120:]} | | |")
    sys.exit(0)
def parse(l):
    m = re.match(r"cycle\s+(\d+)\s+resident\s+([\d.]+)", l)
    return int(m.group(1)), float(m.group(2))
c0, r0 = parse(rows[1])
c1, r1 = parse(rows[-1])
per = (r1 - r0) * 1024 / max(1, c1 - c0)
print(f"| {name} | {r0:.1f} MiB (cycle {c0}) | {r1:.1f} MiB (cycle {c1}) | {per:.1f} KiB |")
PY
done
