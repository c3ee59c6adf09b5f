#!/usr/bin/env bash
# --export-fixes and --fix on the limitations gallery: the YAML is clang-tidy's (what
# clang-apply-replacements reads) and --fix rewrites exactly the fix-its that are not alternatives.
set -eu
funcgen=$1 gallery=$2 include_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$gallery"/out_variant.cpp "$gallery"/inplace_batched.cpp "$gallery"/randomness.cpp "$work"/
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }

# Errors stop generation (exit 1) but the fixes are still exported.
"$funcgen" out_variant.cpp -o out --export-fixes=fixes.yaml -- -std=c++17 -I"$include_dir" >/dev/null 2>&1 && fail "expected exit 1"
grep -q "^MainSourceFile: *out_variant.cpp" fixes.yaml || fail "MainSourceFile"
grep -q "DiagnosticName: *funcgen-out-variant" fixes.yaml || fail "DiagnosticName"
grep -q "ReplacementText: *'out = fg::add(x, y)'" fixes.yaml || fail "ReplacementText"
grep -q "Length: *22" fixes.yaml || fail "Length"
[ ! -e out ] || fail "outputs written despite errors"

# --fix applies the out-variant rewrite and the new_zeros note, not randomness's two alternatives.
cp randomness.cpp randomness.orig
"$funcgen" out_variant.cpp inplace_batched.cpp randomness.cpp -o out --fix -- -std=c++17 -I"$include_dir" >/dev/null 2>&1 || true
grep -q "^  out = fg::add(x, y);$" out_variant.cpp || fail "out_variant.cpp not fixed"
grep -q "fg::Tensor result = vec.new_zeros({vec.size(0), vec.size(0)});" inplace_batched.cpp || fail "inplace_batched.cpp not fixed"
cmp -s randomness.cpp randomness.orig || fail "randomness.cpp changed: its fix-its are alternatives"

# The fixed out_variant.cpp now generates.
"$funcgen" out_variant.cpp -o out -- -std=c++17 -I"$include_dir" >/dev/null 2>&1 || fail "fixed file still fails"
[ -s out/out_variant.funcgen.h ] && [ -s out/out_variant.funcgen.cpp ] || fail "no outputs"
echo "1 passed, 0 failed"
