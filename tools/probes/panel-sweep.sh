# The CPU panel's team size and base-case width on the GPU machine's cores
# (a CPU-only build: no GPU is used).
set -u
cmake -S . -B build-cpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_ENABLE_CUDA=OFF -DTANDEM_BUILD_TESTS=OFF >/dev/null &&
  cmake --build build-cpu -j "$(nproc)" --target tandem-bench >/dev/null || exit 1
for t in 2 4 6 8 12 16; do
  for b in 16 32 64; do
    echo "threads $t base $b: $(build-cpu/bench/tandem-bench panel --shapes 4096x128,32768x256 --threads $t --base-width $b --repeats 15 2>&1 | grep -E '^ *[0-9]+x' | awk '{print $1, $3, $4, $7}' | tr '\n' ' ')"
  done
done
