#!/usr/bin/env bash
# run_fuzzer.sh <fuzzer> <seconds> <work dir> <corpus dirs...> [-- <libFuzzer flags...>]
# One fuzz target for <seconds>, from its seed corpus and regressions (read only), keeping what it
# finds new in <work dir>/corpus (emptied first, so that a run with a fixed -seed is repeatable)
# and a failing input in <work dir>/<kind>-<hash>. The test suite runs each for 45 s; for hours:
#   tests/fuzz/run_fuzzer.sh build-asan/tests/fuzz_tool 14400 /tmp/fuzz-tool \
#     tests/fuzz/regressions/tool tests/generator/mutation/cases -- -jobs=2 -workers=2
# A failing input, once fixed, goes into tests/fuzz/regressions/<name>/ with the fix.
set -euo pipefail
fuzzer=$1 seconds=$2 work=$3
shift 3
corpus=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do corpus+=("$1"); shift; done
[ $# -gt 0 ] && shift
rm -rf "$work/corpus"
mkdir -p "$work/corpus"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
exec "$fuzzer" -max_total_time="$seconds" -print_final_stats=1 -print_funcs=0 -artifact_prefix="$work/" "$@" "$work/corpus" "${corpus[@]}"
