# Shared by the build scripts: where the build goes and how it is configured.
# Sourced, not run.
TANDEM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TANDEM_BUILD_DIR="${TANDEM_BUILD_DIR:-$TANDEM_ROOT/build}"
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# configure_and_build [extra cmake args...]
configure_and_build() {
  local generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  if [ -f "$TANDEM_BUILD_DIR/CMakeCache.txt" ]; then generator=(); fi
  cmake -S "$TANDEM_ROOT" -B "$TANDEM_BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
  cmake --build "$TANDEM_BUILD_DIR" -j "$(nproc)"
}

# run_ctest [ctest args...]: the suite in the build directory, at most 8 tests
# at a time, each with its share of the cores for OpenMP's and OpenBLAS's
# threads (at least 2, so that the parallel paths run). Every test left at all
# cores spins that many threads beside the others': on the 16-core H100
# machine, 8 jobs of 16 threads took 52-59 s for each host-device
# Api/GetrsKinds test that takes under 1 s on a 2-core CI machine, and 429 s
# for the suite.
run_ctest() {
  local cores jobs threads
  cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # nproc reads both
  jobs=$(( cores < 8 ? cores : 8 ))
  threads=$(( cores / jobs > 2 ? cores / jobs : 2 ))
  (cd "$TANDEM_BUILD_DIR" &&
    OMP_NUM_THREADS="${OMP_NUM_THREADS:-$threads}" OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-$threads}" \
      ctest --output-on-failure -j "$jobs" "$@")
}

# seal_cache_file FILE: ends a cache file written or edited by hand with the
# line the library requires (its content's length), replacing an old one.
seal_cache_file() {
  local content
  content=$(grep -v '^end of tandem cache file, bytes ' "$1"; echo x)
  content=${content%x}
  printf '%send of tandem cache file, bytes %d\n' "$content" "$(printf '%s' "$content" | wc -c)" > "$1"
}
