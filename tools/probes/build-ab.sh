#!/usr/bin/env bash
# One call on the GPU machine (device tool), or any machine: the LU of this
# tree against another revision's, in processes that alternate. Processes on
# one machine differ by 5-30% from the host path's copies alone, so one
# process of each build compares nothing; the medians of several do.
#   git archive REV -o base.tar      # where the history is (the device's copy
#                                    # of the tree has none); not committed
#   BASE=base.tar tools/probes/build-ab.sh
#   SIZES=4096,8192,16384  ROUNDS=3  REPEATS=5  LU_ARGS (more tandem-bench lu
#   options; with a GPU "--cpu-max-n 0" unless given, e.g. "--matrix gpu")
# Builds the base under /tmp/tandem-base (kept for the next call on the same
# machine) and this tree under build/, runs `tandem-bench lu` with each in
# turn on one calibrated model, and prints per size the median over the
# processes of each build's median, with the baseline of the same calls
# (cuSOLVER where there is a GPU, else LAPACK). CSVs under $OUT/ab.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
base_tar="${BASE:?BASE=<git archive of the base revision>}"
[ -f "$base_tar" ] || { echo "no $base_tar"; exit 1; }
OUT="${OUT:-$TANDEM_ROOT/device-out}"
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$OUT/cache}"
arch=() lu_args="${LU_ARGS-}"
if command -v nvidia-smi >/dev/null 2>&1; then
  arch=(-DCMAKE_CUDA_ARCHITECTURES=90)
  lu_args="${LU_ARGS---cpu-max-n 0}"  # the GPU's path and cuSOLVER, LAPACK left out
fi
configure_and_build "${arch[@]}" >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
base=/tmp/tandem-base
if [ ! -x "$base/build/bench/tandem-bench" ]; then
  rm -rf "$base" && mkdir -p "$base" && tar -xf "$base_tar" -C "$base"
  TANDEM_BUILD_DIR="$base/build" TANDEM_ROOT="$base" configure_and_build "${arch[@]}" \
    >"$OUT/base-build.log" 2>&1 || { tail -30 "$OUT/base-build.log"; exit 1; }
fi
mkdir -p "$OUT/ab"
# The model calibrated once, before any timed process.
"$TANDEM_BUILD_DIR/bench/tandem-bench" lu --sizes 1024 --repeats 1 >/dev/null 2>&1
for round in $(seq "${ROUNDS:-3}"); do
  for build in this base; do
    bench="$TANDEM_BUILD_DIR/bench/tandem-bench"
    [ "$build" = base ] && bench="$base/build/bench/tandem-bench"
    # shellcheck disable=SC2086
    "$bench" lu --sizes "${SIZES:-4096,8192,16384}" --repeats "${REPEATS:-5}" $lu_args \
      --csv "$OUT/ab/$build-$round.csv" >"$OUT/ab/$build-$round.log" 2>&1 ||
      { tail -5 "$OUT/ab/$build-$round.log"; exit 1; }
    echo "-- $build, round $round ($(date -u +%T))"
  done
done
python3 - "$OUT/ab" <<'PY'
import csv, glob, os, statistics, sys
runs = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
    build = os.path.basename(path).split("-")[0]
    for row in csv.DictReader(open(path)):
        base = row["cusolver_seconds"] or row["lapack_seconds"]
        runs.setdefault((int(row["n"]), build), []).append(
            (float(row["tandem_seconds"]), float(base) if base else float("nan")))
print("%7s %6s %12s %14s  per process (ms)" % ("n", "build", "median ms", "baseline ms"))
for (n, build), rows in sorted(runs.items()):
    print("%7d %6s %12.2f %14.2f  %s" % (n, build, 1e3 * statistics.median(r[0] for r in rows),
          1e3 * statistics.median(r[1] for r in rows), " ".join("%.2f" % (1e3 * r[0]) for r in rows)))
for n in sorted({n for n, _ in runs}):
    if (n, "this") in runs and (n, "base") in runs:
        this = statistics.median(r[0] for r in runs[(n, "this")])
        base = statistics.median(r[0] for r in runs[(n, "base")])
        print("n = %d: this build %.3fx the base's speed" % (n, base / this))
PY
