#!/usr/bin/env bash
# The newcomer's benchmark command: install what is missing, build Release into
# build/, and run tandem-bench with a sweep suited to this machine:
#   a GPU visible    -> n = 2048..16384: tandem (hybrid) vs cuSOLVER vs LAPACK
#   no GPU           -> a small CPU sweep (about a minute on 2 cores)
# Results (log, CSV, PNG plot, Chrome trace) go to bench-results/<date-time>/.
#
#   tools/run-benchmark.sh                          # the default sweep
#   BENCH_SIZES=4096,8192 tools/run-benchmark.sh    # other sizes
#   tools/run-benchmark.sh --backend host --nb 128  # extra tandem-bench options
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$TANDEM_ROOT"

if [ -f tools/setup.sh ]; then bash tools/setup.sh; fi

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
# An existing build directory keeps the generator it was configured with.
[ -f "$TANDEM_BUILD_DIR/CMakeCache.txt" ] && generator=()
cmake -S "$TANDEM_ROOT" -B "$TANDEM_BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
cmake --build "$TANDEM_BUILD_DIR" -j "$(nproc)" --target tandem-bench

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  sizes="${BENCH_SIZES:-2048,4096,8192,12288,16384}"
  sweep_args=()   # tandem-bench's GPU defaults: LAPACK up to n = 8192
  echo "run-benchmark: GPU found: $(nvidia-smi -L | head -1)"
else
  # Sized for a 2-core laptop or CI box; LAPACK runs at every size.
  sizes="${BENCH_SIZES:-512,1024,2048,3072,4096,6144}"
  sweep_args=(--cpu-max-n 6144)
  echo "run-benchmark: no GPU found: CPU sweep only"
fi

results="$TANDEM_ROOT/bench-results/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$results"
status=0
"$TANDEM_BUILD_DIR/bench/tandem-bench" lu --sizes "$sizes" "${sweep_args[@]}" \
  --csv "$results/lu.csv" --plot "$results/lu.png" --trace "$results/lu-trace.json" "$@" \
  2>&1 | tee "$results/lu.log" || status=$?
echo "run-benchmark: results in ${results#"$TANDEM_ROOT"/}/ (lu.log, lu.csv, lu.png, lu-trace.json)"
exit "$status"
