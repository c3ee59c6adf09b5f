// The vmap levels of a spec: what each vmap (the user's, or one over a jacobian's basis) maps and
// returns, resolved per parameter and output of the function it batches.
#pragma once

#include <clang/Basic/SourceLocation.h>

#include <optional>
#include <string>
#include <vector>

#include "frontend/annotations.h"
#include "ir/ir.h"

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
  // A result of nested tuples vmapped leaf by leaf: the output of the spec each leaf is in (for
  // diagnostics about its out_dims); empty where the outputs are the spec's.
  std::vector<size_t> output_of;
};

// The level of one vmap transform applied to `fn` (in_dims and out_dims resolved per parameter
// and output; None for parameters that are not tensors).
VmapLevel make_level(const spec::Transform& t, const SpecLocations* where, const ir::Function& fn);

// Where the spec gives output `output`'s out_dim (for diagnostics about it).
clang::SourceLocation out_dims_location(const VmapLevel& level, size_t output);
// The error for out_dims=None on an output that `fn` returns batched at that level.
std::string batched_out_dims_none(size_t output, const std::string& fn);

}  // namespace funcgen
