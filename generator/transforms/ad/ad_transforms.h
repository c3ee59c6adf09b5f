// The specs with differentiation transforms: grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
// hessian, linearize, nested in each other and under vmap.
//
// grad, grad_and_value and jvp produce IR functions (differentiate.h), so they nest freely
// (grad(grad(f)), jvp(grad(f)), ...) and vmap over them is the vmap emitter run on their IR.
// vjp and linearize return a callable: the forward pass runs once and the callable holds what the
// backward (tangent) pass reads. jacrev is that pullback vmapped over the standard basis of the
// output's cotangents, jacfwd the jvp vmapped over the basis of the input's tangents, hessian
// jacfwd of jacrev, as in torch.func.
#pragma once

#include <functional>
#include <optional>

#include "checks/reporter.h"
#include "frontend/annotations.h"
#include "frontend/lower.h"
#include "transforms/ad/rules.h"
#include "transforms/vmap.h"

namespace funcgen::ad {

using EarlierSpec = std::function<const AnnotatedSpec*(const std::string&)>;

// Whether the spec (following names of earlier specs) has a transform other than vmap.
bool needs_ad(const AnnotatedSpec& spec, const EarlierSpec& earlier);

// The generated code of such a spec; nullopt when errors were reported.
std::optional<GeneratedFunction> emit_ad_spec(const AnnotatedSpec& spec, Lowering& lowering, Reporter& reporter,
                                              const OpResolver& resolver, const EarlierSpec& earlier);

}  // namespace funcgen::ad
