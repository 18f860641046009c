#!/usr/bin/env bash
# Fuzzes the ONNX import, verify, type inference and graph passes (tests/fuzz) under libFuzzer
# with ASan + UBSan, seeded with the committed corpus, the default model and the test models'
# graphs (weights shrunk; run `ctest --preset release` once first to export them).
#   scripts/fuzz.sh                      a random campaign of 600 s (before landing a change)
#   scripts/fuzz.sh --seconds 3600       a longer one
#   scripts/fuzz.sh --seed 1 --runs N    N inputs from a fixed seed: what CI runs (.ci/run)
# A crash leaves its input in build/fuzz/crash-*; add it to tests/fuzz/corpus/onnx_import/crashes/
# with the fix (the replay tests feed it to the target; the top level holds valid models only). Inputs that found new coverage collect in build/fuzz/found.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=600 seed="" runs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzz_onnx_import seed_models
rm -rf build/fuzz/seeds build/fuzz/found && mkdir -p build/fuzz/seeds build/fuzz/found
shopt -s nullglob
build/fuzz/bin/seed_models build/fuzz/seeds build/release/tests/models/exported/*/model.onnx
cp tests/fuzz/corpus/onnx_import/*.onnx tests/fuzz/corpus/onnx_import/crashes/* \
  examples/models/small_cnn.onnx build/fuzz/seeds/
limits=(-max_total_time="$seconds")
[ -n "$seed" ] && limits+=(-seed="$seed")
[ -n "$runs" ] && limits=(-seed="${seed:-1}" -runs="$runs" -max_total_time=900)
ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 build/fuzz/bin/fuzz_onnx_import build/fuzz/found build/fuzz/seeds \
  "${limits[@]}" -timeout=20 -rss_limit_mb=4096 -artifact_prefix=build/fuzz/ -print_final_stats=1
