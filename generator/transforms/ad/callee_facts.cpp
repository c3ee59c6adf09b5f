#include "transforms/ad/callee_facts.h"

#include <algorithm>
#include <functional>

#include <clang/AST/ExprCXX.h>

#include "ir/build.h"
#include "ir/cxx_text.h"
#include "ir/types.h"
#include "ops/inplace.h"
#include "ops/registry.h"

namespace funcgen::ad::anf {

bool CalleeFacts::must_inline(const Expr& call, const ir::Function& callee) {
  return changes_arguments(callee) || writes_in_place(callee.body) || ir::is_lambda_call(call) ||
         ir::passes_lambda(call);
}

const ir::Function* CalleeFacts::helper_of(const Expr& e) {
  if (e.kind != ExprKind::Call || e.form != ir::CallForm::User || e.callee == nullptr ||
      resolver_.has_custom_rule(e.callee))
    return nullptr;
  return module_.find(e);
}

bool CalleeFacts::changes_arguments(const ir::Function& fn, int depth) {
  for (int p : fn.params)
    if (by_reference(fn.var(p)) && assigns(fn, p)) return true;
  bool found = false;  // a write in place into a parameter, a view of one, or through a helper passed one
  const auto is_param = [&](const Expr& x) {
    const Expr* root = &x;
    while (root->kind == ExprKind::Call && !root->args.empty()) root = root->args[0].get();
    return root->kind == ExprKind::VarRef && std::count(fn.params.begin(), fn.params.end(), root->var) != 0;
  };
  ir::for_each_stmt(fn.body, [&](const Stmt& st) {
    if (st.expr && !found)
      ir::for_each_expr(*st.expr, [&](const Expr& e) {
        if (found) return;
        if (is_inplace(e))
          found = is_param(*e.args[0]);
        else if (e.op == ir::kListSet && ir::is_tape_op(e))  // `v[i] = y` on a list parameter (by reference)
          found = std::count(fn.params.begin(), fn.params.end(), e.reads[0]) != 0;
        else if (const ir::Function* callee = depth < 16 ? helper_of(e) : nullptr)
          found = std::any_of(e.args.begin(), e.args.end(), [&](const ExprPtr& a) { return is_param(*a); }) &&
                  changes_arguments(*callee, depth + 1);
      });
  });
  return found;
}

bool CalleeFacts::writes_in_place(const std::vector<ir::StmtPtr>& body, int depth) {
  bool found = false;
  ir::for_each_stmt(body, [&](const Stmt& st) {
    if (st.expr && !found)
      ir::for_each_expr(*st.expr, [&](const Expr& e) {
        const ir::Function* callee = depth < 16 ? helper_of(e) : nullptr;
        found = found || is_inplace(e) || (callee != nullptr && writes_in_place(callee->body, depth + 1));
      });
  });
  return found;
}

bool CalleeFacts::assigns(const ir::Function& fn, int var, int depth) {
  bool found = false;
  ir::for_each_stmt(fn.body, [&](const Stmt& st) {
    found = found || ((st.kind == StmtKind::Assign || st.kind == StmtKind::Decl) && st.var == var) ||
            (st.kind == StmtKind::Bind && std::count(st.vars.begin(), st.vars.end(), var) != 0);
    if (!found && st.expr && depth < 16)
      ir::for_each_expr(*st.expr, [&](const Expr& e) { found = found || passes_to_assigned(e, var, depth); });
  });
  return found;
}

bool CalleeFacts::assigned_tensors(const std::vector<ir::StmtPtr>& b, const ir::Function& fn, std::set<int>& out) {
  bool writes = false;
  ir::for_each_stmt(b, [&](const Stmt& t) {
    if (t.kind == StmtKind::Assign && t.var >= 0 && fn.var(t.var).type == ir::Type::Tensor) out.insert(t.var);
    if (t.expr)
      ir::for_each_expr(*t.expr, [&](const Expr& e) {
        if (const ir::Function* callee = helper_of(e)) {
          writes = writes || writes_in_place(callee->body);
          for (size_t i = 0; i < callee->params.size() && i < e.args.size(); ++i)
            if (e.arg(i).kind == ExprKind::VarRef && fn.var(e.arg(i).var).type == ir::Type::Tensor &&
                by_reference(callee->var(callee->params[i])) && assigns(*callee, callee->params[i]))
              out.insert(e.arg(i).var);
          return;
        }
        if (!is_inplace(e)) return;
        if (e.args[0]->kind == ExprKind::VarRef) out.insert(e.args[0]->var);
        writes = true;
      });
  });
  return writes;
}

const std::set<std::string>& CalleeFacts::changed_names(const ir::Function& fn) {
  auto it = changed_.find(&fn);
  if (it != changed_.end()) return it->second;
  std::set<std::string>& names = changed_[&fn];
  const auto writes = [&](const Expr& e) {
    ir::for_each_expr(e, [&](const Expr& x) {
      for (int w : x.writes) names.insert(fn.var(w).name);
      const bool steps = x.kind == ExprKind::Unary && (x.text == "++" || x.text == "--");
      const bool assigns = x.kind == ExprKind::Binary && !x.text.empty() && x.text.back() == '=' && x.text != "==" &&
                           x.text != "!=" && x.text != "<=" && x.text != ">=";
      if ((steps || assigns) && !x.args.empty()) {
        const std::set<std::string> target = ir::names_in(fn, x.arg(0));
        names.insert(target.begin(), target.end());
      }
      if (x.kind == ExprKind::Opaque &&
          (x.text.find("++") != std::string::npos || x.text.find("--") != std::string::npos ||
           x.text.find('=') != std::string::npos)) {
        const std::set<std::string> all = ir::names_in(fn, x);  // (conservative: every name of the text)
        names.insert(all.begin(), all.end());
      }
    });
  };
  std::function<void(const std::vector<ir::StmtPtr>&)> walk = [&](const std::vector<ir::StmtPtr>& body) {
    for (const auto& st : body) {
      if (st->kind == StmtKind::Assign && st->var >= 0 && ir::is_scalar(fn.var(st->var).type))
        names.insert(fn.var(st->var).name);
      for (int w : st->writes) names.insert(fn.var(w).name);
      if (st->kind == StmtKind::Opaque) {  // C++ kept as text may change any name it mentions
        Expr text;
        text.kind = ExprKind::Opaque;
        text.text = st->text;
        const std::set<std::string> all = ir::names_in(fn, text);
        names.insert(all.begin(), all.end());
      }
      if (st->expr) writes(*st->expr);
      if (st->step && st->kind != StmtKind::For) writes(*st->step);
      if (st->step && st->kind == StmtKind::For) {  // its own counter is stored per trip; others not
        std::set<std::string> own;
        for (const auto& i : st->init)
          if (i->var >= 0) own.insert(fn.var(i->var).name);
        const std::set<std::string> before = names;
        writes(*st->step);
        for (const std::string& n : own)
          if (before.count(n) == 0) names.erase(n);
      }
      walk(st->init);
      walk(st->body);
      walk(st->else_body);
    }
  };
  walk(fn.body);
  return names;
}

bool CalleeFacts::by_reference(const ir::Var& p) { return ir::by_reference(p); }

bool CalleeFacts::takes_structure_by_reference(const clang::FunctionDecl& fn) {
  return ir::changes_object(fn) || std::any_of(fn.param_begin(), fn.param_end(), [](const clang::ParmVarDecl* p) {
           const clang::QualType t = p->getType();
           return t->isLValueReferenceType() && !t.getNonReferenceType().isConstQualified() &&
                  t.getNonReferenceType()->getAsCXXRecordDecl() != nullptr;
         });
}

bool CalleeFacts::returns_inside(const Stmt& s) {
  bool found = false;
  ir::for_each_stmt(s.body, [&](const Stmt& t) { found = found || t.kind == StmtKind::Return || has_return(t.ast); });
  ir::for_each_stmt(s.else_body,
                    [&](const Stmt& t) { found = found || t.kind == StmtKind::Return || has_return(t.ast); });
  return found;
}

bool CalleeFacts::has_return(const clang::Stmt* s) {
  if (s == nullptr || llvm::isa<clang::LambdaExpr>(s)) return false;
  if (llvm::isa<clang::ReturnStmt>(s)) return true;
  return std::any_of(s->child_begin(), s->child_end(), [](const clang::Stmt* c) { return has_return(c); });
}

const Stmt* CalleeFacts::leaves_loop(const Stmt& s, bool in_switch) {
  const bool loop = s.kind == StmtKind::For || s.kind == StmtKind::While || s.kind == StmtKind::DoWhile;
  if (loop) return nullptr;
  if ((s.kind == StmtKind::Break && !in_switch) || s.kind == StmtKind::Continue) return &s;
  const bool sw = in_switch || s.kind == StmtKind::Switch;
  for (const auto* children : {&s.body, &s.else_body})
    for (const auto& c : *children)
      if (const Stmt* j = leaves_loop(*c, sw)) return j;
  return nullptr;
}

bool CalleeFacts::passes_to_assigned(const Expr& e, int var, int depth) {
  const ir::Function* callee = helper_of(e);
  for (size_t i = 0; callee != nullptr && i < callee->params.size() && i < e.args.size(); ++i)
    if (e.arg(i).kind == ExprKind::VarRef && e.arg(i).var == var && by_reference(callee->var(callee->params[i])) &&
        assigns(*callee, callee->params[i], depth + 1))
      return true;
  return false;
}

}  // namespace funcgen::ad::anf
