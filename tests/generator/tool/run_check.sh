#!/usr/bin/env bash
# Runs funcgen on one test input and checks its diagnostics with FileCheck, clang-tidy style:
# the input's `// CHECK...` lines give the full expected messages (line, column, notes, fix-its),
# a `// EXIT: N` line the expected exit status, and a `// FLAGS: ...` line more compiler flags.
set -u
funcgen=$1 filecheck=$2 input=$3 include_dir=$4
expected_exit=$(sed -n 's|^// EXIT: *\([0-9]*\).*|\1|p' "$input")
flags=$(sed -n 's|^// FLAGS: *||p' "$input")
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT
output=$("$funcgen" "$input" -o "$out_dir" -- -std=c++17 -fdiagnostics-parseable-fixits -I"$include_dir" $flags 2>&1)
status=$?
if [ "$status" != "${expected_exit:-0}" ]; then
  echo "funcgen exited with $status, expected ${expected_exit:-0}; output:"
  echo "$output"
  exit 1
fi
printf '%s\n' "$output" | "$filecheck" --strict-whitespace --match-full-lines=false --implicit-check-not=error: --implicit-check-not=warning: "$input"
