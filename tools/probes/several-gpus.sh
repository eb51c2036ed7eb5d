#!/usr/bin/env bash
# One call on a machine of several GPUs (device tool, kinds nvidia-h200-x2 /
# -x4): build, then `tandem-bench lu` from host memory on G GPUs for each G
# in GPUS, one process each, cuSOLVER on one GPU beside every run and, from
# two GPUs, cusolverMg on the same GPUs; every G records a trace. With
# REPEATS=3 at 32768 and 65536 a process took 100-120 s on four H200s (one
# GPU, calibration included; two GPUs ran past 120 s), most of it cuSOLVER's
# and cusolverMg's warm-up and repeats: give LIMIT enough, and keep the call
# under its 10 minutes (TESTS=1 adds the whole suite, about 6 minutes there).
#   GPUS="1 2 4"  SIZES=32768,65536  REPEATS=2  LIMIT=180 (seconds a process)
set -u
: "${OUT:?set OUT to the output folder}"
DEVICE_CHECK_STEPS=build tools/device-check.sh > "$OUT/build.log" 2>&1 ||
  { tail -20 "$OUT/build.log"; exit 1; }
export XDG_CACHE_HOME="$OUT/cache"  # calibrated once, by the first process
if [ "${TESTS:-0}" = 1 ]; then
  XDG_CACHE_HOME=/tmp/tandem-tests-cache timeout 420 bash -c 'source tools/common.sh; run_ctest --timeout 300' \
    > "$OUT/tests.log" 2>&1
  grep -E "tests passed|tests failed|\(Failed\)" "$OUT/tests.log" | tail -5
fi
gpus_list=${GPUS:-1 2 4}
for g in $gpus_list; do
  extra=(--trace "$OUT/trace-${g}gpus.json" --plan)
  echo "== $g GPU(s) $(date -u +%H:%M:%S)"
  timeout "${LIMIT:-180}" build/bench/tandem-bench lu --gpus "$g" --sizes "${SIZES:-32768,65536}" \
    --repeats "${REPEATS:-2}" --cpu-max-n 0 --csv "$OUT/gpus-$g.csv" "${extra[@]}" > "$OUT/gpus-$g.log" 2>&1
  grep -E "^n=" "$OUT/gpus-$g.log"
done
