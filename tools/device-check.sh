#!/usr/bin/env bash
# One call on the lent GPU machine (device tool): build for sm_90, run the whole
# test suite with the GPU tests, compute-sanitizer on a small factorization, and a
# benchmark beside cuSOLVER and LAPACK. Logs, CSV, plot and trace go to $OUT.
#
#   tools/device-check.sh                      # everything, default sizes
#   BENCH_SIZES=2048,4096 tools/device-check.sh
#   DEVICE_CHECK_STEPS="build bench" tools/device-check.sh   # a subset
#   BENCH_ARGS="--placement cpu" BENCH_PLOT=1 tools/device-check.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
OUT="${OUT:-$TANDEM_ROOT/device-out}"
mkdir -p "$OUT"
STEPS="${DEVICE_CHECK_STEPS:-build tests sanitizer plan bench gemm panel}"  # also: solve first-call tune ncu
# The performance model is calibrated at the first GPU call and cached here, so
# that it comes back with the logs.
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$OUT/cache}"
BENCH_SIZES="${BENCH_SIZES:-2048,4096,8192,16384,32768}"
BENCH_ARGS="${BENCH_ARGS:-}"
status=0
run_step() { echo "=== $1 ($(date +%T))"; }

run_step info
{
  nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv
  nproc; nvcc --version | tail -1; cmake --version | head -1
  ls /usr/lib/x86_64-linux-gnu/ | grep -E 'openblas|lapacke' | head
} 2>&1 | tee "$OUT/info.log"

if [[ " $STEPS " == *" build "* ]]; then
  run_step build
  configure_and_build -DCMAKE_CUDA_ARCHITECTURES=90 -DTANDEM_BUILD_TESTS=ON >"$OUT/build.log" 2>&1 ||
    { tail -50 "$OUT/build.log"; echo "BUILD FAILED"; exit 1; }
  grep -E "tandem: CUDA" "$OUT/build.log"
fi

if [[ " $STEPS " == *" tests "* ]]; then
  run_step tests
  # TESTS_REGEX narrows the run (e.g. to the GPU tests: the rest run in CI).
  # A model calibrated while the tests run side by side times everything
  # several times slow (CPU panels 10-100x): the suite keeps its own in the
  # build tree, and whatever else a test calibrates goes to a cache of its
  # own, not to the one the benchmarks read.
  XDG_CACHE_HOME="${TMPDIR:-/tmp}/tandem-tests-cache" run_ctest --timeout 600 \
    ${TESTS_REGEX:+-R "$TESTS_REGEX"} >"$OUT/tests.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|Failed|Skipped|\*\*\*" "$OUT/tests.log" | tail -30
fi

if [[ " $STEPS " == *" sanitizer "* ]]; then
  run_step sanitizer
  # The device operations on small shapes, and whole small factorizations on the GPU.
  # A model calibrated under the sanitizer would time everything 10-100x slow:
  # it goes to a cache of its own, not to the one the benchmarks read.
  ( export XDG_CACHE_HOME="${TMPDIR:-/tmp}/tandem-sanitizer-cache"
    compute-sanitizer --tool memcheck --error-exitcode 3 "$TANDEM_BUILD_DIR/tests/tandem_gpu_tests" \
      --gtest_filter="${SANITIZER_GPU_FILTER:-GpuDevice.*:GpuAgainstHost.*:GpuHostOnePanel.*:GpuRefined.*:GpuCatchUp.*:-*Offsets*}" &&
    compute-sanitizer --tool memcheck --error-exitcode 3 "$TANDEM_BUILD_DIR/tests/tandem_tests" \
      --gtest_filter="${SANITIZER_LU_FILTER:-Devices/HybridScheduler.*/gpu_*}" ) \
    >"$OUT/sanitizer.log" 2>&1 || status=1
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/sanitizer.log" | tail -6
  # Shared-memory races and barrier misuse in the panel leaves and the row
  # swaps, on small shapes (racecheck runs them 100x slower).
  ( export XDG_CACHE_HOME="${TMPDIR:-/tmp}/tandem-sanitizer-cache"
    for tool in racecheck synccheck; do
      timeout 300 compute-sanitizer --tool $tool --error-exitcode 3 "$TANDEM_BUILD_DIR/tests/tandem_gpu_tests" \
        --gtest_filter="${RACECHECK_FILTER:-GpuDevice.FactorPanelReportsZeroPivots*:GpuDevice.SwapRowsPermutation*}" ||
        exit 1
    done ) >"$OUT/racecheck.log" 2>&1 || status=1
  grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$OUT/racecheck.log" | tail -6
fi

if [[ " $STEPS " == *" plan "* ]]; then
  run_step plan
  # shellcheck disable=SC2086
  "$TANDEM_BUILD_DIR/bench/tandem-bench" --plan --sizes "$BENCH_SIZES" $BENCH_ARGS 2>&1 |
    tee "$OUT/plan.log" || status=1
fi

if [[ " $STEPS " == *" bench "* ]]; then
  run_step bench
  # shellcheck disable=SC2086
  "$TANDEM_BUILD_DIR/bench/tandem-bench" lu --sizes "$BENCH_SIZES" --csv "$OUT/bench.csv" \
    ${BENCH_PLOT:+--plot "$OUT/bench.png"} --trace "$OUT/trace.json" $BENCH_ARGS 2>&1 |
    tee "$OUT/bench.log" || status=1
fi
if [[ " $STEPS " == *" solve "* ]]; then
  run_step solve
  # sgesv from host and GPU memory beside cuSOLVER getrf+getrs, its IRS solvers and LAPACK.
  "$TANDEM_BUILD_DIR/bench/tandem-bench" solve --sizes "$BENCH_SIZES" --nrhs 1,16 --cpu-max-n 4096 \
    --csv "$OUT/solve.csv" >"$OUT/solve.log" 2>&1 || status=1
  tail -30 "$OUT/solve.log"
fi
if [[ " $STEPS " == *" first-call "* ]]; then
  run_step first-call
  # Each a process of its own; the model is cached by the steps before.
  for _ in 1 2 3; do "$TANDEM_BUILD_DIR/bench/tandem-bench" first-call --size 4096 || status=1; done
fi
if [[ " $STEPS " == *" gemm "* ]]; then
  run_step gemm
  # SM clock and power once a second beside the runs: at large k SGEMM is
  # limited by the power cap, which shows as the clock dropping below its maximum.
  nvidia-smi dmon -s pc -d 1 >"$OUT/gemm-clocks.log" 2>&1 &
  dmon=$!
  # shellcheck disable=SC2086
  "$TANDEM_BUILD_DIR/bench/tandem-bench" gemm ${GEMM_ARGS:---repeats 5} --csv "$OUT/gemm.csv" \
    >"$OUT/gemm.log" 2>&1 || status=1
  kill "$dmon" 2>/dev/null
  tail -40 "$OUT/gemm.log"
fi

if [[ " $STEPS " == *" ncu "* ]]; then
  run_step ncu
  # Hardware counters of our kernel and cuBLAS's on the shapes in NCU_SHAPES
  # (clocks left as they are: METHOD.md).
  NCU_SHAPES="${NCU_SHAPES:-32640x32640x128,32256x32256x512}"
  NCU_VARIANTS="${NCU_VARIANTS:-cublas,sgemm_rm_128x128x16_8x8_s3}"
  ncu --clock-control none -k regex:gemm --launch-count "${NCU_COUNT:-12}" \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats \
    --section SchedulerStats --print-details all \
    "$TANDEM_BUILD_DIR/bench/tandem-bench" gemm --shapes "$NCU_SHAPES" --variants "$NCU_VARIANTS" \
    --repeats 1 >"$OUT/ncu.log" 2>&1 || status=1
  grep -E "sgemm|gemm_|Throughput|Duration|SM Frequency|Registers|Achieved Occupancy|Issue Slots|Executed Ipc" \
    "$OUT/ncu.log" | head -80
fi

if [[ " $STEPS " == *" tune "* ]]; then
  run_step tune
  "$TANDEM_BUILD_DIR/bench/tandem-bench" --tune --cache-dir "$OUT/tune-cache" >"$OUT/tune.log" 2>&1 || status=1
  tail -60 "$OUT/tune.log"
fi

if [[ " $STEPS " == *" panel "* ]]; then
  run_step panel
  # shellcheck disable=SC2086
  "$TANDEM_BUILD_DIR/bench/tandem-bench" panel ${PANEL_ARGS:-} 2>&1 | tee "$OUT/panel.log" || status=1
fi
# The device tool brings back at most 8 files from $OUT: the machine and build
# logs go once the build has succeeded (their gist is printed above).
[ -x "$TANDEM_BUILD_DIR/bench/tandem-bench" ] && rm -f "$OUT/info.log" "$OUT/build.log"
echo "=== done, status $status"
exit $status
