# One call on a one-GPU machine (device tool): the resident LU with the shipped
# SGEMM table against an edited copy of it, alternating, each on its own
# calibrated model. The edited table goes in as the tuning cache file that the
# library reads ($XDG_CACHE_HOME/tandem), so nothing is rebuilt.
#   TABLE_EDIT='<sed -E script on "<bucket> = <variant>" lines>'
#     default: sgemm_rm_64x128x16_8x8_s3 wherever the table names 128x128x16 or
#     64x128x8 for k <= 256
#   SIZES=16384,32768  ROUNDS=2  SMS=132  CUDA_VERSION=13000 (the cache file's key)
# Logs packed into $OUT/logs.tgz.
set -u
DEVICE_CHECK_STEPS=build tools/device-check.sh 2>&1 | tail -1
bench=build/bench/tandem-bench
[ -x $bench ] || exit 1
edit="${TABLE_EDIT:-/k<=(64|128|256) /s/= sgemm_rm_(128x128x16|64x128x8)_8x8_s3\$/= sgemm_rm_64x128x16_8x8_s3/}"
mkdir -p "$OUT/logs" "$OUT/edited/tandem" "$OUT/shipped"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
file="$OUT/edited/tandem/sgemm-$(echo -n "$name" | sed 's/[^A-Za-z0-9]/_/g')-${SMS:-132}sm-cuda${CUDA_VERSION:-13000}.txt"
{ printf 'tandem-sgemm-tuning 1\ngpu %s\nsms %s\ncuda %s\n' "$name" "${SMS:-132}" "${CUDA_VERSION:-13000}"
  sed -n '/kSm90Table = R"(/,/^)"/p' gpu/sgemm_default_table.cpp | grep -E '^[a-z]+ k[<>]' | sed -E "$edit"
} > "$file"
source tools/common.sh
seal_cache_file "$file"
cp "$file" "$OUT/logs/edited-table.txt"
diff <(sed -n '/kSm90Table = R"(/,/^)"/p' gpu/sgemm_default_table.cpp | grep -E '^[a-z]+ k[<>]') \
  <(grep -E '^[a-z]+ k[<>]' "$file") | grep -c '^>' | sed 's/^/buckets edited: /'
# The library must take the file (a foreign or malformed one falls back to the shipped table).
XDG_CACHE_HOME="$OUT/edited" $bench gemm --shapes 2048x2048x128 --variants cublas --repeats 1 |
  grep "dispatch table" | tee "$OUT/logs/table-source.log"
grep -q "tuned on this device" "$OUT/logs/table-source.log" || { echo "edited table not taken"; exit 1; }
lu() {  # cache dir, log name, extra arguments
  XDG_CACHE_HOME="$OUT/$1" $bench lu --matrix gpu --sizes "${SIZES:-16384,32768}" --repeats 5 --cpu-max-n 0 \
    "${@:3}" > "$OUT/logs/$2.log" 2>&1
  echo "-- $2 ($(date -u +%T))"
  grep -E "^n=" "$OUT/logs/$2.log"
}
for round in $(seq "${ROUNDS:-2}"); do
  lu edited "edited-$round" --plan
  lu shipped "shipped-$round" --plan
done
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs" "$OUT/edited" "$OUT/shipped"
