// vmap: emits the batched version of a lowered function. Batched values keep one batch dim per vmap
// level in front (fg/runtime/vmap.h's layout); each op is rewritten by its batching rule
// (templates/batching_rules.def) into ops over the whole batch.
#pragma once

#include <clang/AST/ASTContext.h>

#include <string>
#include <vector>

#include "analyses/batching.h"
#include "analyses/levels.h"
#include "diag/reporter.h"
#include "frontend/annotations.h"
#include "frontend/lower.h"

namespace funcgen {

struct GeneratedFunction {
  std::string declaration;  // for the .funcgen.h
  std::string helpers;      // static functions the definition calls (bodies, batched helpers)
  std::string definition;
};

// Emits the vmap of `fn`; the analysis must be of `fn` with the levels' in_dims.
// `what` names the function in the generated comments (default: fn's name).
GeneratedFunction emit_vmap(const std::string& name, const ir::Function& fn, const std::vector<VmapLevel>& levels,
                            const BatchingAnalysis& analysis, Reporter& reporter, const std::string& what = "");

// The body of `fn` as C++ statements, unbatched (the printer of functions that transforms other
// than vmap produce), emitted as `name`; `helpers` receives what it needs beside the body.
// `analysis` is of `fn` with no batched parameters (it holds the analyses of its vmapped calls).
std::string emit_plain_body(const ir::Function& fn, const std::string& name, const BatchingAnalysis& analysis,
                            Reporter& reporter, std::string& helpers);

// The C++ signature of `fn` under `name` (parameters as fn spells their types).
std::string function_signature(const ir::Function& fn, const std::string& name);

}  // namespace funcgen
