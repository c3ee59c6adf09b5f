// Element-wise fusion over a function about to be printed (batched or not): runs of element-wise
// ops (sin, cos, neg, add, sub, mul, div, ... of tensors and numbers) become one fg::Fused call
// (runtime/include/funcgen/runtime/fused.h) that computes them in one tiled pass, allocating only
// the values that code after the run reads. Derivative code is made of such runs (an hvp is ~25
// element-wise ops on one shape, between a few reductions), and an op at a time it pays a tensor
// and a pass over memory per op.
//
// AD's broadcasting between them, `x.expand(y.sizes())` (a tangent) and `fg::ad::sum_to(x, y.sizes())`
// (a gradient), is part of a run too, as fg::Fused's shape steps: on values of one shape they are
// their operand, and a run that meets another shape runs op by op.
//
// Only the top-level statements move, and only the element-wise ones: each moves down to where
// the first statement that reads one of its run's values stands, past statements that read none
// of them and write nothing. Sub-expressions of other statements are taken out into locals first
// (not out of conditionals). A run of fewer than two ops is left as it is.
#pragma once

#include <string>

#include "ir/ir.h"

namespace funcgen {

// Rewrites fn's runs of element-wise ops into fg::Fused calls; whether anything changed.
bool fuse_elementwise(ir::Function& fn);

// Whether `op` is one that runs fuse (templates/fused.def): a new tensor computed element by
// element from its operands.
bool fusable_op(const std::string& op);

}  // namespace funcgen
