// One path from a spec to printed code, for every transform:
//   lower -> (derivative transforms: normalize, differentiate, IR to IR) -> vmap stage -> print.
// The vmap stage is the only place a function gets vmapped, whoever made it (the user, grad,
// jacrev's basis, jacfwd's basis, hessian): it resolves the levels to batch masks, runs the
// batching analysis and every limitation check on what that vmap batches, then prints the batched
// code. A spec whose run reported an error produces nothing.
#pragma once

#include <clang/AST/ASTContext.h>

#include <optional>
#include <vector>

#include "diag/reporter.h"
#include "emitter/output.h"
#include "frontend/annotations.h"
#include "frontend/lower.h"
#include "ir/module.h"
#include "ops/derivative_rules.h"
#include "transforms/structures.h"
#include "transforms/vmap.h"

namespace funcgen {

class Pipeline {
 public:
  Pipeline(clang::ASTContext& context, Reporter& reporter, Lowering& lowering, const ad::OpResolver& resolver,
           const std::vector<AnnotatedSpec>& specs, bool optimize = true)
      : context_(context),
        reporter_(reporter),
        lowering_(lowering),
        resolver_(resolver),
        specs_(specs),
        optimize_(optimize) {}

  // The generated code of `spec` (one of `specs`); nullopt when errors were reported.
  std::optional<OutputFunction> generate(const AnnotatedSpec& spec);

 private:
  std::optional<OutputFunction> generate_named(const AnnotatedSpec& spec);
  // A spec's function transformed: lowered, flattened (structured), generated; or, for a
  // specialization on optionals that cannot run, the error its case raises (`error`, g empty).
  struct Transformed {
    const ir::Function* fn = nullptr;
    std::optional<structures::Flat> flat;
    std::optional<GeneratedFunction> g;
    std::string error;
  };
  std::optional<Transformed> transform(const AnnotatedSpec& spec, const std::string& name);
  std::optional<OutputFunction> specialized(const AnnotatedSpec& spec, const clang::FunctionDecl& decl,
                                            const std::vector<std::string>& optionals);
  // vmap of `fn` (the user's function or one a transform made, described by `made_by`, empty for
  // the user's own) at `levels`; nullopt when it cannot be generated (reported).
  // vmap of a function that returns nested tuples: its leaves vmapped as one flat tuple, nested back.
  std::optional<GeneratedFunction> nested_vmap_stage(const AnnotatedSpec& spec, const ir::Function& fn,
                                                     const std::string& name, const std::vector<VmapLevel>& levels,
                                                     const std::string& made_by);
  std::optional<GeneratedFunction> vmap_stage(const AnnotatedSpec& spec, const ir::Function& fn,
                                              const std::string& name, const std::vector<VmapLevel>& levels,
                                              const std::string& made_by);
  // `fn`, which no vmap applies to, printed as `name` (the vmapped calls in it checked first).
  std::string plain_stage(const AnnotatedSpec& spec, const ir::Function& fn, const std::string& name,
                          const std::string& made_by, std::string& helpers);
  bool too_large(const AnnotatedSpec& spec, const GeneratedFunction& g);
  // The limitation checks of the user's function under the vmaps around a derivative transform.
  bool outer_vmap_checks(const AnnotatedSpec& spec, const ir::Function& fn, const std::vector<SpecLink>& chain,
                         size_t head);
  // The limitation checks of the user's function that hold under every transform.
  bool function_checks(const AnnotatedSpec& spec, const std::vector<SpecLink>& chain);
  // The module with the helpers `fn` calls lowered into it (pipeline/callees.h): the passes take
  // it, and it is filled where they first need it, before the batching analysis of each function.
  const ir::Module& module_of(const ir::Function& fn);

  clang::ASTContext& context_;
  Reporter& reporter_;
  Lowering& lowering_;
  ir::Module module_;  // the functions `lowering_` lowered (the spec's own under its declaration)
  const ad::OpResolver& resolver_;
  const std::vector<AnnotatedSpec>& specs_;
  // Whether the structured basis and simplify run (off: the code as the transforms derive it).
  const bool optimize_;
};

}  // namespace funcgen
