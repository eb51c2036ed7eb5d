#!/usr/bin/env bash
# Installs what building and testing tandem needs, when it is missing:
# a C++ compiler, CMake, Ninja, OpenBLAS with LAPACK(E) and CBLAS headers,
# GoogleTest, and gnuplot for the benchmark's plot. Debian/Ubuntu (apt-get).
# CUDA is optional and never installed here: with nvcc on PATH (or in
# /usr/local/cuda/bin) the GPU backend is built too.
set -euo pipefail

have_header() { [ -e "/usr/include/$1" ] || [ -e "/usr/include/x86_64-linux-gnu/$1" ] || [ -e "/usr/local/include/$1" ]; }

missing=()
command -v c++ >/dev/null 2>&1 || missing+=(g++)
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v ninja >/dev/null 2>&1 || missing+=(ninja-build)
command -v git >/dev/null 2>&1 || missing+=(git)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
compgen -G '/usr/lib/*/libopenblas.so' >/dev/null || compgen -G '/usr/lib/libopenblas.so' >/dev/null ||
  missing+=(libopenblas-dev)
have_header cblas.h || missing+=(libopenblas-dev)
have_header lapacke.h || missing+=(liblapacke-dev)
{ [ -d /usr/src/googletest ] || [ -e /usr/lib/x86_64-linux-gnu/libgtest.a ] || [ -e /usr/lib/x86_64-linux-gnu/cmake/GTest ]; } || missing+=(libgtest-dev)
if [ "${TANDEM_SETUP_PLOT:-1}" = 1 ] && ! command -v gnuplot >/dev/null 2>&1 &&
   ! python3 -c 'import matplotlib' >/dev/null 2>&1; then
  missing+=(gnuplot-nox)
fi

if [ ${#missing[@]} -gt 0 ]; then
  # shellcheck disable=SC2207
  unique=($(printf '%s\n' "${missing[@]}" | sort -u))
  echo "setup: installing ${unique[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: apt-get not found; install these yourself: ${unique[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq || echo "setup: apt-get update failed; trying the install anyway" >&2
  $sudo apt-get install -y -qq --no-install-recommends "${unique[@]}"
else
  echo "setup: all dependencies present"
fi

# SciPy for the LAPACK drop-in's test under Python (optional: the test is left
# out without it). TANDEM_SETUP_SCIPY=0 skips it.
if [ "${TANDEM_SETUP_SCIPY:-1}" = 1 ] && [ -x /usr/bin/python3 ] &&
   ! /usr/bin/python3 -c 'import scipy.linalg' >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: installing python3-scipy (for the drop-in's SciPy test)"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-scipy ||
    echo "setup: python3-scipy did not install; the drop-in's SciPy test is left out" >&2
fi

# nvcc is often installed but not on PATH.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: nvcc found in /usr/local/cuda/bin (the build scripts add it to PATH)"
fi
