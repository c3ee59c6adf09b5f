// Calls of the user's helpers that the normalizer (anf.h) inlines: the helper's body normalized
// in place of the call, and what it did to what it was passed carried back to its caller.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <vector>

#include "ir/ir.h"
#include "ir/module.h"
#include "transforms/ad/callee_facts.h"
#include "transforms/ad/functionalize.h"
#include "transforms/ad/normal_form.h"

namespace funcgen::ad::anf {

class Inliner {
 public:
  Inliner(NormalForm& form, Statements& stmts, Functionalizer& fz, CalleeFacts& facts)
      : form_(form), stmts_(stmts), fz_(fz), facts_(facts) {}

  // The function being normalized: a call of it is a recursion.
  void enter(const ir::Function& fn) { chain_.enter(fn); }
  // The helper's body in place of the call; its results' versions.
  std::vector<int> inline_call(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out);

 private:
  // What a helper did to the tensors it was passed, in its caller: a write in place (`h.mul_(2)`, into
  // `h` or a view of it) is seen by every variable that shares the memory, as in C++; a new value
  // assigned to a non-const reference parameter (`void step(fg::Tensor& h) { h = ...; }`) by the
  // variable passed. `entry`: the version each tensor parameter was passed.
  void carry_back(const Expr& call, const ir::Function& callee, const std::map<int, int>& entry, const Scope& inner,
                  Scope& scope, std::vector<ir::StmtPtr>& out);

  NormalForm& form_;
  Statements& stmts_;
  Functionalizer& fz_;
  CalleeFacts& facts_;
  ir::CallChain chain_;
  std::vector<std::unique_ptr<ir::Function>> single_returns_;  // helpers with their control flow structured
};

}  // namespace funcgen::ad::anf
