# One call on the two-GPU machine (device tool, kind nvidia-h200-x2): build, the
# GPU tests (two GPUs), then tandem-bench lu at n = 32768 and 65536 on one GPU
# and on two (panels GPU to GPU, then through the host), the two-GPU peer run
# with a trace.
set -u
DEVICE_CHECK_STEPS=build tools/device-check.sh 2>&1 | tail -2
(cd build && ctest -R "gpu|Gpu|GPU" -j 4 --timeout 300 --output-on-failure > $OUT/tests.log 2>&1; grep -E "tests passed|tests failed|\(Failed\)" $OUT/tests.log | head)
SIZES=${SIZES:-32768,65536}
# RUNS: GPUS:PEER pairs (default: one GPU, two with peer copies, two without).
for run in ${RUNS:-1:1 2:1 2:0}; do
  set -- ${run/:/ }
  extra=""; [ $1 = 2 ] && [ $2 = 1 ] && extra="--trace $OUT/trace-2gpu.json"
  echo "== gpus $1 peer $2 $(date -u +%H:%M:%S)"
  build/bench/tandem-bench lu --sizes $SIZES --gpus $1 --peer $2 --cpu-max-n 0 --repeats ${REPEATS:-1} $extra 2>&1 | grep -E "^n=|^ *[0-9]+ "
done
