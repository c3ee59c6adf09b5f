#!/usr/bin/env bash
# What the generator's optimizations leave in generated code (their results are checked against
# finite differences and torch.func by the AD tests): an hvp computes sin(x) once
# (transforms/simplify.h), jacobians of a linear layer never form their basis
# (transforms/ad/structured_basis.h), and a jacobian whose basis is used otherwise still forms it.
set -eu
funcgen=$1 include_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
cat > model.cpp <<'CPP'
#include <funcgen/funcgen.h>

FUNCGEN("hvp = jvp(grad(f))")
fg::Tensor f(const fg::Tensor& x) { return (x.sin() * x.cos()).sum(); }

FUNCGEN("layer_jacrev = jacrev(layer, argnums=1)")
FUNCGEN("layer_jacfwd = jacfwd(layer, argnums=1)")
fg::Tensor layer(const fg::Tensor& w, const fg::Tensor& x) { return fg::linear(x, w).tanh(); }

FUNCGEN("square_jacrev = jacrev(square)")
fg::Tensor square(const fg::Tensor& x) { return x * x; }
CPP
"$funcgen" model.cpp -o out -- -std=c++17 -I"$include_dir" || fail "generation failed"
src=out/model.funcgen.cpp
body() { sed -n "/^[a-z:<>, ]*fg::Tensor[>]* $1(/,/^}/p" "$src"; }
hvp=$(sed -n '/^std::tuple<fg::Tensor, fg::Tensor> hvp(/,/^}/p' "$src")
[ -n "$hvp" ] || fail "no hvp in the generated source"
sins=$(grep -o 'x\.sin()' <<<"$hvp" | wc -l)
[ "$sins" -eq 1 ] || fail "hvp computes sin(x) $sins times, expected once:
$hvp"
for fn in layer_jacrev layer_jacfwd; do
  b=$(body "$fn")
  grep -q 'fg::ad::basis_placeholder(' <<<"$b" || fail "$fn forms its basis:
$b"
done
grep -q 'fg::vmap::ad::basis_matmul_scaled(' "$src" || fail "jacrev's pullback does not take the diagonal's rows"
grep -q 'fg::vmap::ad::basis_matmul(' "$src" || fail "jacfwd's jvp does not take the weight's rows"
b=$(body square_jacrev)
grep -q 'fg::ad::basis(' <<<"$b" || fail "square_jacrev's basis is used by an add of two diagonals, yet not formed:
$b"
echo "ok"
