// The limitation checks of torch.func's "UX Limitations" page, run on the IR of a function to be
// vmapped, with the batching analysis that says which values are batched. One check per file.
#pragma once

#include <clang/AST/ASTContext.h>

#include <vector>

#include "analyses/batching.h"
#include "diag/reporter.h"
#include "frontend/annotations.h"
#include "frontend/lower.h"
#include "analyses/levels.h"

namespace funcgen {

struct VmapCheckContext {
  const BatchingAnalysis& analysis;
  const std::vector<VmapLevel>& levels;
  const AnnotatedSpec& spec;
  Reporter& reporter;
  clang::ASTContext& context;
  // The function was made by a derivative transform (vmap(grad(f)), jacfwd's basis, ...): its
  // random ops were checked on the spec's chain (check_randomness_under_derivatives).
  bool derived = false;
};

// More eager autograd functions for funcgen-autograd-api: qualified names ("mylib::backward"), or
// "::name" for a member function of any class.
void add_autograd_apis(const std::vector<std::string>& names);

// Runs every check on the function and, through the analyses of the calls, on the helpers it calls.
void run_vmap_checks(const VmapCheckContext& ctx);

// The checks that hold under every transform (global assignment, eager autograd APIs), on a
// function that derivative transforms apply to and its helpers; ctx.levels is empty.
void run_function_checks(const VmapCheckContext& ctx);

// The checks of each vmapped call (ir::CallForm::Vmapped) in a function that no vmap batches.
void run_vmapped_call_checks(const VmapCheckContext& ctx);

// Which vmaps a check looks at: every one, or only those the user wrote (the others are vmaps
// of derivative code, whose random ops check_randomness_under_derivatives checks on the chain);
// or every transform (run_function_checks: the limitations that hold for grad as for vmap).
enum class CheckScope { Vmap, UserVmap, EveryTransform };
using CheckFunction = void (*)(const VmapCheckContext& ctx, const BatchingAnalysis& fn);

// One check: a file checks/<id>.cpp defines its function and registers it with one line,
//   const CheckRegistration registration({"id", warning, "summary", "help"}, check_id, CheckScope::Vmap);
// (scripts/new_check.sh scaffolds a new one with its test).
struct CheckRegistration {
  CheckRegistration(const CheckInfo& info, CheckFunction function, CheckScope scope);
};

// For specs with derivative transforms: the transforms from the outermost in, the function they
// apply to; random ops in it (and its helpers) are reported when one of them vmaps the function's
// forward pass with randomness='error'. Whether it reported any.
struct RandomnessContext {
  std::vector<std::pair<const spec::Transform*, const SpecLocations*>> chain;
  const clang::FunctionDecl* function = nullptr;
  Lowering& lowering;
  Reporter& reporter;
};
bool check_randomness_under_derivatives(const RandomnessContext& ctx);

}  // namespace funcgen
