#!/usr/bin/env bash
# One call on a one-GPU machine (device tool): CPU panels inside factorizations
# from host memory (`--placement cpu`, fixed width NB) beside cuSOLVER in the
# same process, with what their teams did (tandem-bench prints, per size, the
# timed runs' CPU panels: seconds, panels with a thread whose CPU time fell
# short of the panel's, involuntary context switches, and each panel against
# its shape factored alone afterwards in the same process; the trace of the
# largest size has the figures of each panel), then a few of the same panel
# shapes factored alone by `tandem-bench panel` with a team of the size the
# factorization gives them (half of OpenMP's threads), beside LAPACK's.
# Logs and the trace in $OUT.
#   SIZES=16384,32768  REPEATS=10  NB=256  STREAM=0 (1: the matrix moved during the steps)
#   WAIT_POLICIES="active passive": the factorizations again under each OMP_WAIT_POLICY
#   EXTRA="--backend host": more tandem-bench lu arguments (that one runs it without a GPU)
set -u
: "${OUT:?set OUT to the output folder}"
DEVICE_CHECK_STEPS=build tools/device-check.sh > $OUT/build-step.log 2>&1 ||
  { tail -20 $OUT/build-step.log; exit 1; }
export XDG_CACHE_HOME=$OUT/cache  # the calibration, measured once in this call
SIZES=${SIZES:-16384,32768}
NB=${NB:-256}
for policy in ${WAIT_POLICIES:-default}; do
  echo "== in situ, wait policy $policy $(date -u +%H:%M:%S)"
  ( [ "$policy" = default ] || export OMP_WAIT_POLICY=$policy
    build/bench/tandem-bench lu --sizes $SIZES --placement cpu --nb $NB --stream ${STREAM:-0} \
      --repeats ${REPEATS:-10} --cpu-max-n 0 ${EXTRA:-} --trace $OUT/trace-cpu-panels-$policy.json \
      > $OUT/in-situ-$policy.log 2>&1 )
  grep -E "^n=|CPU panels|factored alone|FAILED" $OUT/in-situ-$policy.log
done
# The panels' heights in those factorizations: n, n - NB, ... ; alone, a few of them.
shapes=""
for n in ${SIZES//,/ }; do
  for rows in $n $((n * 3 / 4)) $((n / 2)) $((n / 4)); do shapes="$shapes,${rows}x$NB"; done
done
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
team=$(( cores / 2 > 0 ? cores / 2 : 1 ))  # cpu_panel_team_size()
echo "== alone, team of $team $(date -u +%H:%M:%S)"
build/bench/tandem-bench panel --shapes ${shapes#,} --threads $team --repeats 5 > $OUT/alone.log 2>&1
tail -20 $OUT/alone.log
echo "== done $(date -u +%H:%M:%S)"
