#include "pipeline/callees.h"

#include <set>

namespace funcgen {

namespace {

// The walk of analyses/batching.cpp, statement by statement and arguments before their call.
class CalleeLowering {
 public:
  CalleeLowering(Lowering& lowering, ir::Module& module) : lowering_(lowering), module_(module) {}

  void function(const ir::Function& fn) {
    chain_.enter(fn);
    walk(fn.body);
    chain_.leave();
  }

 private:
  void walk(const std::vector<ir::StmtPtr>& body) {
    for (const auto& s : body) {
      if (s->expr) expr(*s->expr);
      walk(s->init);
      if (s->step) expr(*s->step);
      walk(s->body);
      walk(s->else_body);
    }
  }

  void expr(const ir::Expr& e) {
    for (const auto& a : e.args) expr(*a);
    if (e.kind != ir::ExprKind::Call) return;
    if (e.form == ir::CallForm::Vmapped && e.vmapped) function(*e.vmapped);
    if (e.form != ir::CallForm::User || e.callee == nullptr || chain_.endless(e)) return;
    // A level of a recursion is walked once (fib(n - 1) + fib(n - 2) meets each many times), and
    // past the limit not lowered: the passes report the call.
    if (chain_.reenters(e) &&
        (module_.contains(e) || module_.levels(e.callee) >= ir::CallChain::kMaxUnfolding))
      return;
    const ir::Function* callee = lowering_.lower(e.callee, e.absent, e.constants);
    module_.add(e.callee, e.absent, callee, e.constants);
    if (callee != nullptr) function(*callee);
  }

  Lowering& lowering_;
  ir::Module& module_;
  ir::CallChain chain_;  // the functions up the call chain
};

}  // namespace

void lower_callees(const ir::Function& fn, Lowering& lowering, ir::Module& module) {
  CalleeLowering(lowering, module).function(fn);
}

}  // namespace funcgen
