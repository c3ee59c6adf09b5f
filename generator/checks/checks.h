// The limitation checks of torch.func's "UX Limitations" page, run on the IR of a function to be
// vmapped, with the batching analysis that says which values are batched. One check per file.
#pragma once

#include <clang/AST/ASTContext.h>

#include <vector>

#include "analyses/batching.h"
#include "checks/reporter.h"
#include "frontend/annotations.h"
#include "frontend/lower.h"
#include "transforms/vmap.h"

namespace funcgen {

struct VmapCheckContext {
  const BatchingAnalysis& analysis;
  const std::vector<VmapLevel>& levels;
  const AnnotatedSpec& spec;
  Reporter& reporter;
  clang::ASTContext& context;
};

// More eager autograd functions for funcgen-autograd-api: qualified names ("mylib::backward"), or
// "::name" for a member function of any class.
void add_autograd_apis(const std::vector<std::string>& names);

// Runs every check on the function and, through the analyses of the calls, on the helpers it calls.
void run_vmap_checks(const VmapCheckContext& ctx);

// One function per check (checks/<id>.cpp). Each reports through ctx.reporter.
void check_global_assignment(const VmapCheckContext& ctx, const BatchingAnalysis& fn);
void check_autograd_api(const VmapCheckContext& ctx, const BatchingAnalysis& fn);
void check_side_effect(const VmapCheckContext& ctx, const BatchingAnalysis& fn);
void check_inplace_batched(const VmapCheckContext& ctx, const BatchingAnalysis& fn);
void check_out_variant(const VmapCheckContext& ctx, const BatchingAnalysis& fn);
void check_data_dependent_control_flow(const VmapCheckContext& ctx, const BatchingAnalysis& fn);
void check_item(const VmapCheckContext& ctx, const BatchingAnalysis& fn);
void check_dynamic_shape(const VmapCheckContext& ctx, const BatchingAnalysis& fn);
void check_randomness(const VmapCheckContext& ctx, const BatchingAnalysis& fn);

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
