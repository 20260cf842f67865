#!/bin/bash
# One device-machine session for the CUDA engine: tests, compute-sanitizer
# (memcheck, racecheck) and the engine benchmark; logs under $OUT (or ./out).
# Run from the project root after `ninja -C build-cuda` here.
B=${BUILD:-build-cuda}
O=${OUT:-out}
mkdir -p "$O"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$O/gpu.txt" 2>&1
cat "$O/gpu.txt"
for t in test_stages test_engine; do
  timeout 240 "$B/tests/cuda/cuda-$t" > "$O/$t.log" 2>&1
  echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$O/$t.log" | tr '\n' ' ')"
done
grep -E '^\[  FAILED|Failure|expected|differ' "$O"/test_*.log | head -40
SAN=compute-sanitizer
timeout 200 $SAN --tool memcheck --error-exitcode 9 "$B/tests/cuda/cuda-test_stages" \
  --gtest_filter='CudaStages.Census:CudaStages.MatchFullRangeAndRefine:CudaStages.BackgroundLevelOverFrames:CudaStages.EncodeEveryFormat' \
  > "$O/memcheck.log" 2>&1
echo "memcheck stages rc=$? $(tail -1 "$O/memcheck.log")"
timeout 200 $SAN --tool memcheck --error-exitcode 9 "$B/tests/cuda/cuda-test_engine" \
  --gtest_filter='CudaEngine.PipelineMatchesReferenceOnScenes:CudaEngine.DeviceFramesOnCallerStream' > "$O/memcheck_engine.log" 2>&1
echo "memcheck engine rc=$? $(tail -1 "$O/memcheck_engine.log")"
timeout 200 $SAN --tool racecheck --error-exitcode 9 "$B/tests/cuda/cuda-test_stages" \
  --gtest_filter='CudaStages.Census:CudaStages.MatchFullRangeAndRefine' > "$O/racecheck.log" 2>&1
echo "racecheck rc=$? $(tail -1 "$O/racecheck.log")"
timeout ${BENCH_TIMEOUT:-200} "$B/bench/cs-bench-engine" ${BENCH_ARGS:---quick} > "$O/bench.log" 2>&1
echo "bench rc=$?"
cat "$O/bench.log"
