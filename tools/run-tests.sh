#!/usr/bin/env bash
# The newcomer's test command: install what is missing, build, run every test.
# GPU tests skip themselves on a machine without a GPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
TANDEM_SETUP_PLOT=0 "$TANDEM_ROOT/tools/setup.sh"
configure_and_build -DTANDEM_BUILD_TESTS=ON "$@"
run_ctest
