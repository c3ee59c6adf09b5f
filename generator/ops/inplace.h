// The in-place ops of templates/inplace.def and the views of templates/views.def as the generator
// reads them: which op computes an
// in-place op's new value out of place, for AD's functionalization and vmap's checks.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace funcgen {

enum class InplaceKind {
  Update,  // self = self.partner(args...)
  Forget,  // self = fg::partner(self, args...): the old values are not read
  Source,  // self = source.partner(self.sizes())
};

struct InplaceOp {
  std::string partner;
  InplaceKind kind = InplaceKind::Update;
};

// The row of an in-place op listed in templates/inplace.def.
std::optional<InplaceOp> listed_inplace(const std::string& op);

// An op that also writes into some of its arguments (templates/inplace.def, FG_WRITES): their
// parameter names, the bool parameter that enables the writes ("" when always), and the argument
// whose values are written.
struct ArgumentWrites {
  std::vector<std::string> params;
  std::string when, source;
};
const ArgumentWrites* argument_writes(const std::string& op);

// Whether a call of `op` may write into its arguments: an in-place op (a name ending in '_', an
// in-place row), an out= op, an op with FG_WRITES rows, or an unnamed call.
bool writes_arguments(const std::string& op);

// Whether `op` returns a view of its first argument (templates/views.def).
bool is_view_op(const std::string& op);
// Whether `op` returns its input's memory only sometimes (views.def's FG_MAY_ALIAS).
bool may_alias_input(const std::string& op);

// How `op_` is computed out of place: its row, or an Update of `op` for any other name ending in
// '_'; nullopt for a name that does not.
std::optional<InplaceOp> find_inplace(const std::string& op);

}  // namespace funcgen
