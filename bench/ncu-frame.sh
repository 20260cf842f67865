#!/usr/bin/env bash
# Where one frame's GPU time goes, kernel by kernel (Nsight Compute, on the
# device machine; the clocks are left as found).
#   bench/ncu-frame.sh BENCH_BINARY [WxH] [D] [OUTDIR] [LEFT RIGHT]
# With LEFT RIGHT (a real pair, any file cs-bench-engine reads) the frame is
# that pair, grey, area-averaged to WxH; without, the generated slanted plane.
# Writes OUTDIR/kernels.csv (every kernel of one graphed frame: duration,
# grid, registers, achieved occupancy, warp instructions), a summary table
# on stdout and, with DETAIL=1, OUTDIR/detail.txt (stall reasons, issue
# slots and the hottest SASS lines of the matching kernels: DETAIL_KERNELS,
# a regular expression, default "match|refine").
set -eu
bin=$1; size=${2:-1024x768}; d=${3:-256}; out=${4:-${OUT:-/tmp}}
scene=(--full-only)
if [ $# -ge 6 ]; then scene=(--left "$5" --right "$6" --label real); fi
export PATH=$PATH:/usr/local/cuda/bin
command -v ncu > /dev/null || { echo "ncu-frame.sh: ncu (Nsight Compute) not found" >&2; exit 1; }
mkdir -p "$out"
ncu --clock-control none --cache-control none --profile-from-start off --csv --print-units base \
  --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
  "$bin" --size "$size" --disparities "$d" "${scene[@]}" --profile > "$out/kernels.csv" 2> "$out/ncu.err" || true
python3 - "$out/kernels.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows:
    print("ncu-frame.sh: no kernel rows (see ncu.err)")
    sys.exit(1)
head, rows = rows[0], rows[1:]
col = {n: i for i, n in enumerate(head)}
k = collections.OrderedDict()
for r in rows:
    key = (r[col["ID"]], r[col["Kernel Name"]][:60])
    k.setdefault(key, {})[r[col["Metric Name"]]] = r[col["Metric Value"]]
total = 0.0
print("| # | kernel | us | grid | block | regs | occupancy % | warp instr |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for (i, name), m in k.items():
    num = lambda x: float(str(x).replace(",", ""))
    us = num(m.get("gpu__time_duration.sum", 0)) / 1000.0
    total += us
    print(f"| {i} | {name} | {us:.1f} | {m.get('launch__grid_size')} | {m.get('launch__block_size')} | "
          f"{m.get('launch__registers_per_thread')} | {num(m.get('sm__warps_active.avg.pct_of_peak_sustained_active', 0)):.0f} | "
          f"{m.get('smsp__inst_executed.sum')} |")
print(f"sum of kernel durations: {total:.1f} us ({len(k)} kernels)")
PY
if [ "${DETAIL:-0}" = 1 ]; then
  ncu --clock-control none --profile-from-start off -k "regex:${DETAIL_KERNELS:-match|refine}" \
    --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section InstructionStats \
    --section SourceCounters \
    "$bin" --size "$size" --disparities "$d" "${scene[@]}" --profile > "$out/detail.txt" 2>&1 || true
fi
