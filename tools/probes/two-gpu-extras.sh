# One call on the two-GPU machine (device tool, kind nvidia-h200-x2), after the
# build: where sgetrs should solve with factors from two GPUs (solve_choice.cpp),
# then cuSOLVERMg's getrf on the same two GPUs; SCALING=1 adds the 65536
# scaling in between. Each part logs to $OUT; a part that fails does not stop the next.
set -u
DEVICE_CHECK_STEPS=build tools/device-check.sh 2>&1 | tail -1
g++ -O2 -std=c++17 -fopenmp -Iinclude tools/probes/solve_choice.cpp -o build/solve_choice \
  -Lbuild -ltandem -Wl,-rpath,$PWD/build -lopenblas &&
  build/solve_choice 65536 3 > $OUT/solve.log 2>&1; cat $OUT/solve.log
[ "${SCALING:-0}" = 1 ] && for G in 1 2; do
  echo "== gpus $G $(date -u +%H:%M:%S)"
  build/bench/tandem-bench lu --sizes 65536 --gpus $G --cpu-max-n 0 --repeats 3 2>&1 | grep -E "^n="
done
nvcc -O3 -std=c++17 -arch=sm_90 tools/probes/cusolvermg_getrf.cu -o build/cusolvermg_getrf -lcusolverMg -lcudart &&
  build/cusolvermg_getrf --gpus 2 --sizes 32768,65536 --tile 256 --repeats ${MG_REPEATS:-3} > $OUT/cusolvermg.log 2>&1; cat $OUT/cusolvermg.log
