// jacrev and jacfwd push every vector of a standard basis through a linear function (the pullback,
// the jvp) under one vmap. Formed densely, the basis of a 2048-element output is a 2048 x 2048
// identity, and the products with it cost more than everything else: matmul(I * v, W) is a
// 2048^3 GEMM for what is v.unsqueeze(-1) * W. This pass rewrites such a function so that the
// basis is never formed: `basis * v` stays a diagonal (the scale v alone), and a matmul with the
// basis or a diagonal becomes fg::ad::basis_matmul and its siblings, whose batching rule makes
// the product's rows from v and W. It applies only when every use of the basis is one of those;
// otherwise the function is left as it was, and the caller forms the basis.
#pragma once

#include "ir/ir.h"
#include "ops/derivative_rules.h"

namespace funcgen::ad {

// Rewrites `fn` (whose parameter `param` is the basis, vmapped over at a level of its own) so that
// the basis is read only for its shape; false (fn unchanged) when some use of it is not a product.
bool structure_basis(ir::Function& fn, int param, const OpResolver& resolver);

}  // namespace funcgen::ad
