// Source-to-source AD on normalized functions (anf.h): reverse mode (the forward pass, then each
// op's FG_VJP rule, last op first, accumulating the gradient of every value the outputs depend on)
// and forward mode (each op's FG_JVP rule right after the op). Both produce ordinary IR functions,
// so their results can be differentiated again, vmapped and printed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "diag/reporter.h"
#include "ir/module.h"
#include "ir/ir.h"
#include "ops/derivative_rules.h"

namespace funcgen::ad {

struct ReverseResult {
  std::unique_ptr<ir::Function> fn;  // the forward pass then the backward pass; no return yet
  size_t forward_size = 0;           // fn->body[0, forward_size) is the forward pass
  std::vector<int> outputs;          // every returned value (differentiated ones first)
  std::vector<int> cotangents;       // the cotangent parameters added to fn (when not seeded)
  std::vector<int> grads;            // per entry of `wrt`: its gradient
};

// `wrt`: parameter positions to differentiate with respect to; the first `differentiated` outputs
// get cotangents: parameters of the result, or, with `seed` (grad), ones after checking that the
// output has one element (`name` in that message).
ReverseResult reverse(const ir::Function& normalized, const std::vector<int>& wrt, size_t differentiated, bool seed,
                      const std::string& name, const ir::Module& module, const OpResolver& resolver, Reporter& reporter);

struct ForwardResult {
  std::unique_ptr<ir::Function> fn;  // parameters: the primals, then one tangent per `wrt`; no return yet
  std::vector<int> outputs;          // every returned value
  std::vector<int> tangents;         // per differentiated output: its tangent
};

ForwardResult forward(const ir::Function& normalized, const std::vector<int>& wrt, size_t differentiated,
                      const ir::Module& module, const OpResolver& resolver, Reporter& reporter);

// Whether running `fn` draws random values (its random ops, those of the functions it vmaps).
bool draws_random(const ir::Function& fn);

// The function that vjp of output `output` of `fn` needs: fn's parameters and the cotangent of
// that output, returning the gradient of each of `wrt` (a tuple when several); nullptr on errors.
std::unique_ptr<ir::Function> vjp_function(const ir::Function& fn, const std::vector<int>& wrt, size_t output,
                                           const ir::Module& module, const OpResolver& resolver, Reporter& reporter,
                                           const std::string& what);

// The function that jvp needs: fn's parameters and one tangent per `wrt`, returning the tangent of
// each output of fn (a tuple when several); nullptr on errors.
std::unique_ptr<ir::Function> jvp_function(const ir::Function& fn, const std::vector<int>& wrt, const ir::Module& module,
                                           const OpResolver& resolver, Reporter& reporter, const std::string& what);

}  // namespace funcgen::ad
