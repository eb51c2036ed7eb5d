#!/usr/bin/env bash
# The CPU test suite under the compilers' sanitizers: AddressSanitizer with
# UndefinedBehaviorSanitizer, then ThreadSanitizer (one OpenMP and one OpenBLAS
# thread: neither library is instrumented, and their own threads would only
# give false reports). CPU-only builds in build-asan/ and build-tsan/.
#
#   tools/sanitize.sh            # both
#   SANITIZERS=asan tools/sanitize.sh
#
# Left out: the tests that load the library into a program built without the
# sanitizer (the install test and the LAPACK drop-in's preload), which a
# sanitizer runtime cannot follow; and under ThreadSanitizer the CPU panel's
# tests, whose OpenMP teams of several threads meet at libgomp's barriers,
# which ThreadSanitizer cannot see: its reports there (10, GCC 12) were of the
# pivots thread 0 writes before the base case's `omp barrier` and the others
# read after it, and of the workspace freed after the parallel region's end.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
TANDEM_SETUP_PLOT=0 "$TANDEM_ROOT/tools/setup.sh"
status=0
for sanitizer in ${SANITIZERS:-asan tsan}; do
  case $sanitizer in
    asan) flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined" ;;
    tsan) flags="-fsanitize=thread" ;;
    *) echo "sanitize.sh: unknown sanitizer $sanitizer (asan or tsan)" >&2; exit 2 ;;
  esac
  dir="$TANDEM_ROOT/build-$sanitizer"
  echo "== $sanitizer: $dir"
  cmake -S "$TANDEM_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTANDEM_ENABLE_CUDA=OFF \
    -DTANDEM_BUILD_BENCH=OFF -DCMAKE_C_FLAGS="$flags -fno-omit-frame-pointer" \
    -DCMAKE_CXX_FLAGS="$flags -fno-omit-frame-pointer" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
    -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
  cmake --build "$dir" -j "$(nproc)"
  (cd "$dir" &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    TSAN_OPTIONS=halt_on_error=1 OMP_NUM_THREADS=$([ "$sanitizer" = tsan ] && echo 1 || nproc) \
    OPENBLAS_NUM_THREADS=1 \
    ctest --output-on-failure -j "$(nproc)" \
      -E "install_and_find_package|lapack_dropin$([ "$sanitizer" = tsan ] && echo '|CpuPanel\.')") || status=1
done
exit $status
