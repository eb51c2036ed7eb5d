# One call on a one-GPU machine (device tool) for SGEMM work: build, the SGEMM
# and timer GPU tests, compute-sanitizer on chosen tests, then `tandem-bench
# gemm` once per argument list, with the SM clock and power beside the runs.
#   RUNS="--shapes lu --repeats 5;--shapes skinny --variants cublas,tall_skinny"
#     (a run "VAR=value ...|--shapes lu" sets those environment variables for it)
#   TESTS_REGEX="Sgemm|KernelTimer" (TESTS=0 skips), SANITIZE="<gtest filter>"
#   NCU="<shapes> <variants>": Nsight Compute counters of those (device-check's ncu step)
# Logs and CSVs packed into $OUT/logs.tgz (the device tool returns 8 files).
set -u
DEVICE_CHECK_STEPS=build tools/device-check.sh 2>&1 | tail -2
[ -x build/bench/tandem-bench ] || exit 1
mkdir -p "$OUT/logs"
if [ "${TESTS:-1}" != 0 ]; then
  (cd build && ctest -R "${TESTS_REGEX:-Sgemm|KernelTimer}" -j 4 --timeout 300 --output-on-failure \
    > "$OUT/logs/tests.log" 2>&1)
  grep -E "tests passed|tests failed|\(Failed\)" "$OUT/logs/tests.log" | head
fi
if [ -n "${SANITIZE:-}" ]; then
  compute-sanitizer --tool memcheck --error-exitcode 3 build/tests/tandem_gpu_tests \
    --gtest_filter="$SANITIZE" > "$OUT/logs/sanitizer.log" 2>&1
  echo "sanitizer exit $?: $(grep -E "ERROR SUMMARY" "$OUT/logs/sanitizer.log" | tail -1)," \
    "$(grep -cE "^\[       OK \]" "$OUT/logs/sanitizer.log") tests passed"
fi
nvidia-smi dmon -s pc -d 1 > "$OUT/logs/clocks.log" 2>&1 &
dmon=$!
index=0
IFS=';' read -ra runs <<< "${RUNS:---shapes all --repeats 5}"
for args in "${runs[@]}"; do
  index=$((index + 1))
  envs=""
  if [[ "$args" == *"|"* ]]; then envs="${args%%|*}"; args="${args#*|}"; fi
  echo "== gemm $index: ${envs:+$envs }$args ($(date -u +%H:%M:%S))"
  # shellcheck disable=SC2086
  env $envs build/bench/tandem-bench gemm $args --csv "$OUT/logs/gemm-$index.csv" \
    > "$OUT/logs/gemm-$index.log" 2>&1
  sed -n '/^shape /,$p' "$OUT/logs/gemm-$index.log"
done
kill "$dmon" 2>/dev/null
if [ -n "${NCU:-}" ]; then
  read -r shapes variants <<< "$NCU"
  OUT="$OUT/logs" NCU_SHAPES="$shapes" NCU_VARIANTS="$variants" DEVICE_CHECK_STEPS=ncu tools/device-check.sh \
    > "$OUT/logs/ncu-summary.log" 2>&1
  tail -60 "$OUT/logs/ncu-summary.log"
fi
echo "== done $(date -u +%H:%M:%S)"
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
