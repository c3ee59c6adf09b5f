#!/usr/bin/env bash
# Op names are compared only in generator/ops/ (issue 42): everywhere else the generator asks the
# registry (ops/registry.h: ops::id(e) == ops::sum, ops::info(e).view, ...). Fails, listing them,
# on comparisons of an expression's op name with a string literal outside generator/ops/:
#   e.op == "sum", x->op != "t", "sum" == e.op, e.op.rfind("ad::", 0), e.op.back() == '_'.
# (Local variables called `op` that hold a C++ operator's spelling, `op == "="`, are not matched:
# only the IR's field `.op` / `->op`. The name of a function of the user's, or of an External one, is
# no op: a comparison of it tests the call's form first on its line (`e.form == CallForm::User &&
# e.op == "lambda"`), or says so: "C++ name, not an op".)
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../../.." && pwd)}
cd "$root/generator"
pattern='(\.|->)op *(==|!=) *"|" *(==|!=) *[A-Za-z_]+(\.|->)op\b|(\.|->)op\.(rfind|find|compare|starts_with|back|front|substr) *\('
found=$(grep -rnE --include=*.cpp --include=*.h "$pattern" . | grep -v '^\./ops/' | grep -v 'C++ name, not an op' |
        grep -vE 'CallForm::(User|External)\b.*(\.|->)op\b' || true)
if [ -n "$found" ]; then
  echo "op names compared outside generator/ops/ (use ops::id / ops::info of ops/registry.h):"
  echo "$found"
  exit 1
fi
echo "op names are compared only in generator/ops/"
