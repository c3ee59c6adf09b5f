// vmap: emits the batched version of a lowered function. Batched values keep one batch dim per vmap
// level in front (fg/runtime/vmap.h's layout); each op is rewritten by its batching rule
// (templates/batching_rules.def) into ops over the whole batch.
#pragma once

#include <clang/AST/ASTContext.h>

#include <string>
#include <vector>

#include "analyses/batching.h"
#include "diag/reporter.h"
#include "frontend/annotations.h"
#include "frontend/lower.h"

namespace funcgen {

// One vmap level of a (possibly nested) vmap spec, outermost first, with in_dims and out_dims
// resolved to one entry per parameter and per output.
struct VmapLevel {
  std::vector<spec::Dim> in_dims;
  std::vector<spec::Dim> out_dims;
  spec::Randomness randomness = spec::Randomness::Error;
  std::optional<int64_t> chunk_size;
  spec::ControlFlow control_flow = spec::ControlFlow::Error;
  const spec::Transform* transform = nullptr;
  const SpecLocations* where = nullptr;  // of the spec text this level was written in
};

// The level of one vmap transform applied to `fn` (in_dims and out_dims resolved per parameter
// and output; None for parameters that are not tensors).
VmapLevel make_level(const spec::Transform& t, const SpecLocations* where, const ir::Function& fn);

// Where the spec gives output `output`'s out_dim (for diagnostics about it).
clang::SourceLocation out_dims_location(const VmapLevel& level, size_t output);
// The error for out_dims=None on an output that `fn` returns batched at that level.
std::string batched_out_dims_none(size_t output, const std::string& fn);

struct GeneratedFunction {
  std::string declaration;  // for the .funcgen.h
  std::string helpers;      // static functions the definition calls (bodies, batched helpers)
  std::string definition;
};

// Emits the vmap of `fn`; the analysis must be of `fn` with the levels' in_dims.
GeneratedFunction emit_vmap(const std::string& name, const ir::Function& fn, const std::vector<VmapLevel>& levels,
                            const BatchingAnalysis& analysis, Reporter& reporter);

// The body of `fn` as C++ statements, unbatched (the printer of functions that transforms other
// than vmap produce), emitted as `name`; `helpers` receives what it needs beside the body.
// `analysis` is of `fn` with no batched parameters (it holds the analyses of its vmapped calls).
std::string emit_plain_body(const ir::Function& fn, const std::string& name, const BatchingAnalysis& analysis,
                            Reporter& reporter, std::string& helpers);

// The C++ signature of `fn` under `name` (parameters as fn spells their types).
std::string function_signature(const ir::Function& fn, const std::string& name);

}  // namespace funcgen
