# One call on a one-GPU machine (device tool): build, the GPU tests, then
# tandem::sgetrf_gpu (the matrix already in GPU memory: `tandem-bench lu
# --matrix gpu`) beside cuSOLVER's getrf on a device-resident matrix, the same
# sizes through tandem::sgetrf on host memory for reference, and the resident
# LU on each SGEMM (GEMMS, e.g. "auto cublas tandem"). Logs in $OUT.
#   SIZES=2048,...  REPEATS=5  GEMMS="auto cublas tandem"  GEMM_SIZES=16384,32768
#   TRACE_SIZES="16384": a trace of these sizes as well as of the largest
#   HOST=0 skips the host-memory sweep; TESTS=0 the tests; EXTRA="--placement cpu" etc.
#   SANITIZE="GpuGetrfResident.*": compute-sanitizer memcheck on these GPU tests
#   NO_WHOLE_SIZES=16384,32768: these sizes again on the same model without its
#     whole-matrix timings (plans of steps only, never one device panel over the
#     whole matrix), for a same-call comparison
#   PANELS="cusolver": the sizes again with these --device-panel methods
#     (PANEL_SIZES, default SIZES), on their own calibrated models
#   PACK=1: everything under $OUT into $OUT/logs.tgz (the device tool returns 8 files)
set -u
DEVICE_CHECK_STEPS=build tools/device-check.sh 2>&1 | tail -2
[ -x build/bench/tandem-bench ] || exit 1
if [ "${TESTS:-1}" != 0 ]; then
  (cd build && ctest -R "${TESTS_REGEX:-gpu|Gpu|GPU}" -j 4 --timeout 300 --output-on-failure > $OUT/tests.log 2>&1)
  grep -E "tests passed|tests failed|\(Failed\)" $OUT/tests.log | head
fi
if [ -n "${SANITIZE:-}" ]; then
  compute-sanitizer --tool memcheck --error-exitcode 3 build/tests/tandem_gpu_tests \
    --gtest_filter="$SANITIZE" > $OUT/sanitizer.log 2>&1
  echo "sanitizer exit $?: $(grep -E "ERROR SUMMARY" $OUT/sanitizer.log | tail -1)"
fi
export XDG_CACHE_HOME=$OUT/cache  # the calibration, measured once in this call
SIZES=${SIZES:-2048,4096,8192,16384,32768}
largest=${SIZES##*,}
echo "== resident $(date -u +%H:%M:%S)"
build/bench/tandem-bench lu --matrix gpu --sizes $SIZES --repeats ${REPEATS:-5} --cpu-max-n 0 --plan \
  --trace $OUT/trace-resident-$largest.json ${EXTRA:-} > $OUT/resident.log 2>&1
grep -E "^n=|^ *[0-9]+ \||FAILED" $OUT/resident.log
for n in ${TRACE_SIZES:-}; do  # a trace of each of these sizes too
  build/bench/tandem-bench lu --matrix gpu --sizes $n --repeats 3 --cpu-max-n 0 \
    --trace $OUT/trace-resident-$n.json ${EXTRA:-} 2>&1 | grep -E "^n=|FAILED"
done
for gemm in ${GEMMS:-}; do
  echo "== resident, gemm $gemm $(date -u +%H:%M:%S)"
  build/bench/tandem-bench lu --matrix gpu --gemm $gemm --sizes ${GEMM_SIZES:-16384,32768} \
    --repeats ${REPEATS:-5} --cpu-max-n 0 ${EXTRA:-} 2>&1 | grep -E "^n=|FAILED"
done
for panel in ${PANELS:-}; do
  echo "== resident, device panel $panel $(date -u +%H:%M:%S)"
  build/bench/tandem-bench lu --matrix gpu --device-panel $panel --sizes ${PANEL_SIZES:-$SIZES} \
    --repeats ${REPEATS:-5} --cpu-max-n 0 --plan ${EXTRA:-} > $OUT/resident-panel-$panel.log 2>&1
  grep -E "^n=|^ *[0-9]+ \||FAILED" $OUT/resident-panel-$panel.log
done
if [ -n "${NO_WHOLE_SIZES:-}" ]; then
  echo "== resident, model without whole-matrix timings $(date -u +%H:%M:%S)"
  rm -rf $OUT/cache-no-whole && cp -r $OUT/cache $OUT/cache-no-whole
  sed -i '/^device_whole /d' $OUT/cache-no-whole/tandem/model-*.txt
  source tools/common.sh
  for f in $OUT/cache-no-whole/tandem/model-*.txt; do seal_cache_file "$f"; done
  XDG_CACHE_HOME=$OUT/cache-no-whole build/bench/tandem-bench lu --matrix gpu --sizes $NO_WHOLE_SIZES \
    --repeats ${REPEATS:-5} --cpu-max-n 0 --plan --trace $OUT/trace-no-whole.json ${EXTRA:-} \
    > $OUT/no-whole.log 2>&1
  grep -E "^n=|^ *[0-9]+ \||FAILED" $OUT/no-whole.log
fi
if [ "${HOST:-1}" != 0 ]; then
  echo "== host memory $(date -u +%H:%M:%S)"
  build/bench/tandem-bench lu --sizes $SIZES --repeats ${REPEATS:-5} --cpu-max-n 0 ${EXTRA:-} 2>&1 |
    grep -E "^n=|FAILED"
fi
echo "== done $(date -u +%H:%M:%S)"
if [ "${PACK:-0}" != 0 ]; then
  (cd $OUT && tar czf /tmp/logs.tgz --exclude=logs.tgz . && mv /tmp/logs.tgz . &&
    find . -mindepth 1 ! -name logs.tgz -delete)
fi
