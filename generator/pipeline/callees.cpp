#include "pipeline/callees.h"

#include <set>

namespace funcgen {

namespace {

// The walk of analyses/batching.cpp, statement by statement and arguments before their call.
class CalleeLowering {
 public:
  CalleeLowering(Lowering& lowering, ir::Module& module) : lowering_(lowering), module_(module) {}

  void function(const ir::Function& fn) {
    active_.insert(fn.decl);
    walk(fn.body);
    active_.erase(fn.decl);  // (as the analysis does, even where a caller had put it there)
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
    if (e.form != ir::CallForm::User || e.callee == nullptr || active_.count(e.callee) != 0) return;
    const ir::Function* callee = lowering_.lower(e.callee, e.absent);
    module_.add(e.callee, e.absent, callee);
    if (callee != nullptr) function(*callee);
  }

  Lowering& lowering_;
  ir::Module& module_;
  std::set<const clang::FunctionDecl*> active_;  // the functions up the call chain
};

}  // namespace

void lower_callees(const ir::Function& fn, Lowering& lowering, ir::Module& module) {
  CalleeLowering(lowering, module).function(fn);
}

}  // namespace funcgen
