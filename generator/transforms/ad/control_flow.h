// Control flow, for the normalizer (anf.h).
// A branch or a loop keeps its structure; what makes it differentiable is that every tensor it
// changes gets an explicit variable of its own outside it (`merged` after an if, `carried` around
// a loop) and that the condition of each if is a named bool: the taken branch, for the reverse pass.
#pragma once

#include <vector>

#include "ir/ir.h"
#include "transforms/ad/callee_facts.h"
#include "transforms/ad/functionalize.h"
#include "transforms/ad/normal_form.h"

namespace funcgen::ad::anf {

class ControlFlow {
 public:
  ControlFlow(NormalForm& form, Statements& stmts, Functionalizer& fz, CalleeFacts& facts)
      : form_(form), stmts_(stmts), fz_(fz), facts_(facts) {}

  void branch(const Stmt& s, Scope& scope, std::vector<ir::StmtPtr>& out);
  // A loop: each tensor it assigns that exists before it is carried in a variable of its own,
  // declared before the loop; the body starts by naming the value it starts from (`x_prev`) and
  // ends by assigning the value it leaves.
  void loop(const Stmt& s, Scope& scope, std::vector<ir::StmtPtr>& out);
  // A break or continue out of a loop that computes tensors: it would skip the loop's carried
  // assignments (and, in reverse mode, its trip bookkeeping).
  void leaving_loop(const Stmt& jump);

 private:
  // A new scope for statements inside control flow: the enclosing versions, no return.
  static Scope nested(const Scope& scope, const char* inside, bool in_loop);
  // `cond` as a named bool declared before the branch (the reverse pass reads it again).
  ExprPtr recorded(ExprPtr cond, std::vector<ir::StmtPtr>& out);
  // Runs each alternative body in a scope of its own (appending to the matching `outs`); then each
  // tensor of the enclosing scope that some path changed gets one merged variable, declared in
  // `out` and assigned at the end of every path.
  void alternatives(const std::vector<const std::vector<ir::StmtPtr>*>& bodies,
                    const std::vector<std::vector<ir::StmtPtr>*>& outs, Scope& scope, const char* inside,
                    std::vector<ir::StmtPtr>& out);

  NormalForm& form_;
  Statements& stmts_;
  Functionalizer& fz_;
  CalleeFacts& facts_;
};

}  // namespace funcgen::ad::anf
