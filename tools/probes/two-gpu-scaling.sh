# One call on the two-GPU machine (device tool, kind nvidia-h200-x2): build, the
# GPU tests (two GPUs), then tandem-bench lu at n = 32768 and 65536 on one GPU and
# on two, the two-GPU run with a trace.
set -u
DEVICE_CHECK_STEPS=build tools/device-check.sh 2>&1 | tail -2
(cd build && ctest -R "gpu|Gpu|GPU" -j 4 --timeout 300 --output-on-failure > $OUT/tests.log 2>&1; grep -E "tests passed|tests failed|\(Failed\)" $OUT/tests.log | head)
for G in 1 2; do
  extra=""; [ $G = 2 ] && extra="--trace $OUT/trace-2gpu.json"
  build/bench/tandem-bench lu --sizes 32768,65536 --gpus $G --cpu-max-n 0 --repeats 1 $extra 2>&1 | grep -E "^n=|^ *[0-9]+ " 
done
