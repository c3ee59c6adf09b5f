// The batching rules table (templates/batching_rules.def) as the generator reads it.
#pragma once

#include <string>
#include <vector>

#include "ops/op_params.h"

namespace funcgen {

enum class BatchRule { Pointwise, Reduce, Dims, Size, Helper, Factory, Like, Random, Query, Meta, Item, Dynamic, Out, None };

struct OpRule {
  BatchRule rule = BatchRule::None;
  bool inplace = false;  // the `op_` form of a Pointwise op, or an op of templates/inplace.def
  // Dims: the parameters in order, each with its default ("" when it has none) and whether it is a dim.
  using Param = OpParam;
  std::vector<Param> params;
};

// The rule of a runtime op by name: `add`, `add_` (in place), `add_out` (Out); None when the op has
// no batching rule.
OpRule find_rule(const std::string& op);

}  // namespace funcgen
