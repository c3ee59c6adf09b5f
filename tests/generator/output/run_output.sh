#!/usr/bin/env bash
# What funcgen writes: deterministic outputs, a make-style depfile naming every header the source
# reads, nothing written (and the old outputs kept) when an error is reported, exit 2 on bad usage.
set -eu
funcgen=$1 gallery=$2 include_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
cp "$gallery"/fixed.cpp model.cpp

"$funcgen" model.cpp -o a --depfile a/model.d -- -std=c++17 -I"$include_dir" || fail "generation failed"
"$funcgen" model.cpp -o b -- -std=c++17 -I"$include_dir" || fail "second generation failed"
cmp a/model.funcgen.h b/model.funcgen.h || fail "header differs between runs"
cmp a/model.funcgen.cpp b/model.funcgen.cpp || fail "source differs between runs"
grep -q "^fg::Tensor batched_relu_select(const fg::Tensor& x);$" a/model.funcgen.h || fail "declaration missing"
grep -q "^#include \"$work/model.cpp\"$" a/model.funcgen.cpp || fail "generated source does not include the annotated file"
head -1 a/model.d | grep -q "^$work/a/model.funcgen.h $work/a/model.funcgen.cpp:" || fail "depfile targets"
grep -q "$work/model.cpp" a/model.d || fail "depfile lacks the source"
grep -q "funcgen/runtime/tensor.h" a/model.d || fail "depfile lacks an included header"

# An error: nothing is written and the previous outputs stay as they were.
cp a/model.funcgen.cpp before.cpp
cat "$gallery"/item.cpp >> model.cpp
"$funcgen" model.cpp -o a --depfile a/model.d -- -std=c++17 -I"$include_dir" >/dev/null 2>&1 && fail "expected exit 1"
cmp a/model.funcgen.cpp before.cpp || fail "outputs changed despite the error"
ls a | grep -q tmp && fail "temporary file left behind"

# Usage errors exit 2.
set +e
"$funcgen" --no-such-option model.cpp -- -std=c++17 >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown option did not exit 2"
"$funcgen" --explain funcgen-nope >/dev/null 2>&1
[ $? -eq 2 ] || fail "--explain of an unknown check did not exit 2"
set -e
"$funcgen" --list-checks | grep -q "^funcgen-inplace-batched: " || fail "--list-checks"
"$funcgen" --explain funcgen-randomness | grep -q "randomness='different'" || fail "--explain"

# --autograd-api adds a project's own eager autograd functions to funcgen-autograd-api.
cat > eager.cpp <<'SRC'
#include <funcgen/funcgen.h>
namespace mylib { fg::Tensor eager_grad(const fg::Tensor& y, const fg::Tensor& x); }
FUNCGEN("batched = vmap(f)")
fg::Tensor f(const fg::Tensor& x) { return mylib::eager_grad(x.sum(), x); }
SRC
"$funcgen" eager.cpp -o e -- -std=c++17 -I"$include_dir" >/dev/null 2>&1 || fail "eager.cpp without --autograd-api"
"$funcgen" eager.cpp -o e2 --autograd-api=mylib::eager_grad -- -std=c++17 -I"$include_dir" 2>&1 |
  grep -q "^$work/eager.cpp:4:44: error: 'mylib::eager_grad' is an eager autograd API" || fail "--autograd-api"
echo "1 passed, 0 failed"
