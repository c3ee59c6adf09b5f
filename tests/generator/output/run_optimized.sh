#!/usr/bin/env bash
# What the generator's optimizations leave in generated code (their results are checked against
# finite differences and torch.func by the AD tests): an hvp computes sin(x) and cos(x) once
# (transforms/simplify.h, transforms/fuse.h) in fused runs, jacobians of a linear layer never form their basis
# (transforms/ad/structured_basis.h), a jacobian whose basis is used otherwise still forms it, and
# vmap(jacrev) passes an unbatched weight from its forward pass to its pullback once, not per example.
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
FUNCGEN("batched_jacrev = vmap(jacrev(layer, argnums=1), in_dims=(None, 0))")
fg::Tensor layer(const fg::Tensor& w, const fg::Tensor& x) { return fg::linear(x, w).tanh(); }

FUNCGEN("plain_jacfwd = jacfwd(plain, argnums=1)")
fg::Tensor plain(const fg::Tensor& w, const fg::Tensor& x) { return fg::linear(x, w); }

FUNCGEN("square_jacrev = jacrev(square)")
fg::Tensor square(const fg::Tensor& x) { return x * x; }
CPP
"$funcgen" model.cpp -o out -- -std=c++17 -I"$include_dir" || fail "generation failed"
src=out/model.funcgen.cpp
body() { sed -n "/^[a-z:<>, ]*fg::Tensor[>]* $1(/,/^}/p" "$src"; }
hvp=$(sed -n '/^std::tuple<fg::Tensor, fg::Tensor> hvp(/,/^}/p' "$src")
[ -n "$hvp" ] || fail "no hvp in the generated source"
for f in sin cos; do
  n=$(grep -o "x\.$f()\|= $f(x)" <<<"$hvp" | wc -l)
  [ "$n" -eq 1 ] || fail "hvp computes $f(x) $n times, expected once:
$hvp"
done
# Its element-wise runs are fused (transforms/fuse.h): the first run is sin, cos and the products
# of the forward pass with their tangents, in one fg::Fused program.
grep -q 'static const fg::Fused fused1__(' <<<"$hvp" || fail "hvp's element-wise ops are not fused:
$hvp"
grep -q '"t = sin(x); "' <<<"$hvp" || fail "hvp's first run does not compute sin(x):
$hvp"
for fn in layer_jacrev layer_jacfwd; do
  b=$(body "$fn")
  grep -q 'fg::ad::basis_placeholder(' <<<"$b" || fail "$fn forms its basis:
$b"
done
grep -q 'fg::vmap::ad::basis_matmul_scaled(' "$src" || fail "jacrev's pullback does not take the diagonal's rows"
# jacfwd's jvp takes the weight's rows, and as they are only multiplied by tanh's derivative
# (never returned or written), as a view of the weight rather than a copy.
grep -q 'fg::vmap::ad::basis_matmul_view(' "$src" || fail "jacfwd's jvp does not take the weight's rows as a view"
# A jacobian that is the weight's rows themselves is a copy: the caller may write it.
b=$(sed -n '/plain_jacfwd__jvp__batched_body(/,/^}/p' "$src")
grep -q 'fg::vmap::ad::basis_matmul(' <<<"$b" || fail "plain_jacfwd's rows are not copied:
$b"
b=$(sed -n '/batched_jacrev__forward(/,/^}/p' "$src")
[ -n "$b" ] || fail "no forward pass of batched_jacrev"
! grep -q 'materialize' <<<"$b" || fail "batched_jacrev's forward pass copies the weight per example:
$b"
b=$(sed -n '/batched_jacrev__pullback_rows(/,/^}/p' "$src")
! grep -q 'move_in(w,' <<<"$b" || fail "batched_jacrev's pullback maps the weight:
$b"
b=$(body square_jacrev)
grep -q 'fg::ad::basis(' <<<"$b" || fail "square_jacrev's basis is used by an add of two diagonals, yet not formed:
$b"
echo "ok"
