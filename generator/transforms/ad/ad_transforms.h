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

#include "diag/reporter.h"
#include "frontend/annotations.h"
#include "ir/module.h"
#include "ops/derivative_rules.h"
#include "transforms/vmap.h"

namespace funcgen::ad {

// What the pipeline does with each function a transform makes, `link` being the index in the
// spec's chain of the transform that made it: vmap it at `levels` (nullopt when reported), or
// print it as it is (its body; `helpers` receives what the body needs beside it).
struct Stages {
  std::function<std::optional<GeneratedFunction>(const ir::Function& fn, const std::string& name,
                                                 const std::vector<VmapLevel>& levels, size_t link)>
      vmap;
  std::function<std::string(const ir::Function& fn, const std::string& name, size_t link, std::string& helpers)> plain;
  // Whether jacrev/jacfwd may keep their basis structured (structured_basis.h).
  bool optimize = true;
};

// The generated code of a spec whose chain (spec_chain) has a transform other than vmap; nullopt
// when errors were reported.
std::optional<GeneratedFunction> emit_ad_spec(const AnnotatedSpec& spec, const std::vector<SpecLink>& chain,
                                              const ir::Module& module, Reporter& reporter, const OpResolver& resolver,
                                              const Stages& stages);

}  // namespace funcgen::ad
