# One device call for the SGEMM issue's evidence (tools/device-check.sh steps
# build, gemm on the tall-skinny shapes, ncu at k = 512), then the LU with our
# kernels against cuBLAS's in the same run.
set -u
DEVICE_CHECK_STEPS=build tools/device-check.sh 2>&1 | tail -2
DEVICE_CHECK_STEPS="gemm ncu" GEMM_ARGS="--shapes skinny --repeats 7" NCU_SHAPES=32256x32256x512 NCU_COUNT=7 \
  tools/device-check.sh 2>&1 | grep -E "GB/s|copy bandwidth|best of ours" | tail -40
for g in cublas tandem auto; do
  build/bench/tandem-bench lu --sizes 16384,32768 --gemm $g --cpu-max-n 0 --repeats 3 2>&1 | grep -E "^n="
done
rm -f $OUT/gemm-clocks.log  # device-check drops the build logs itself
