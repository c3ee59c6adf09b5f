#include "transforms/ad/control_flow.h"

#include <set>
#include <utility>

#include <clang/AST/ExprCXX.h>

#include "ir/build.h"
#include "ir/cxx_text.h"
#include "ir/types.h"
#include "ops/inplace.h"
#include "ops/registry.h"

namespace funcgen::ad::anf {

namespace {

const char* statement_name(StmtKind k) {
  switch (k) {
    case StmtKind::If:
      return "an 'if'";
    case StmtKind::For:
      return "a 'for' loop";
    case StmtKind::While:
      return "a 'while' loop";
    case StmtKind::DoWhile:
      return "a 'do' loop";
    case StmtKind::Switch:
      return "a 'switch'";
    default:
      return "this statement";
  }
}

}  // namespace

void ControlFlow::branch(const Stmt& s, Scope& scope, std::vector<ir::StmtPtr>& out) {
  ExprPtr cond = recorded(stmts_.scalar(*s.expr, scope, out), out);
  auto st = std::make_unique<Stmt>();
  st->kind = StmtKind::If;
  st->range = s.range;
  st->ast = s.ast;
  st->expr = std::move(cond);
  alternatives({&s.body, &s.else_body}, {&st->body, &st->else_body}, scope, "an 'if'", out);
  st->has_else = !st->else_body.empty();
  out.push_back(std::move(st));
}

void ControlFlow::loop(const Stmt& s, Scope& scope, std::vector<ir::StmtPtr>& out) {
  const char* what = statement_name(s.kind);
  Scope inner = nested(scope, what, true);
  auto st = std::make_unique<Stmt>();
  st->kind = s.kind;
  st->range = s.range;
  st->ast = s.ast;
  for (const auto& i : s.init) {
    stmts_.statement(*i, inner, st->init);
    if (!form_.ok()) return;
  }
  for (const auto& i : st->init)
    if (i->var >= 0 && ir::is_tensor_like(form_.out().var(i->var).type)) {
      form_.fail(s.range.getBegin(),
                 "a tensor declared in a for loop's header cannot be differentiated; declare it "
                 "before the loop");
      return;
    }
  if (const Expr* w = Functionalizer::written_after_push(s.body)) {
    form_.fail(*w, Functionalizer::held_by_list(w->op, ""));
    return;
  }
  std::set<int> assigned;
  const bool writes = facts_.assigned_tensors(s.body, *scope.fn, assigned);
  if (writes)  // an in-place write may reach any tensor through a view or a copy: all are carried
    for (const auto& [src, version] : inner.vars)
      if (version >= 0 && scope.fn->var(src).type == ir::Type::Tensor) assigned.insert(src);
  std::vector<std::pair<int, int>> carried;  // source var, carried variable
  for (int src : assigned) {
    auto it = inner.vars.find(src);
    if (it == inner.vars.end()) continue;  // local to the body
    const int c = form_.new_tensor(scope.fn->var(src).name);
    if (it->second == kUnset) {  // first given a value in the loop: the first trip starts without one
      out.push_back(ir::decl(c, nullptr));
    } else {
      out.push_back(ir::decl(c, ir::var_ref(form_.out(), it->second)));
      fz_.detach(c, {it->second}, {&inner});
    }
    carried.emplace_back(src, c);
    it->second = c;
  }
  // Conditions and steps are evaluated on every trip: they may read tensors, not compute them.
  const auto trip_expr = [&](const Expr& e) -> ExprPtr {
    std::vector<ir::StmtPtr> computed;
    form_.set_in_trip_expr(true);  // a list's size read here is read where it is
    ExprPtr x = stmts_.scalar(e, inner, computed);
    form_.set_in_trip_expr(false);
    if (!computed.empty())
      form_.fail(e.range.getBegin(),
                 std::string("the condition of ") + what +
                     " computes tensors and the loop is left "
                     "by a 'continue' or 'return' inside a 'switch', or by a 'return' of a function that "
                     "returns no tensor, which cannot be differentiated yet; compute the condition into a "
                     "bool at the end of the loop body");
    return x;
  };
  if (s.expr) st->expr = trip_expr(*s.expr);
  if (s.step) st->step = trip_expr(*s.step);
  if (!form_.ok()) return;
  for (auto& [src, c] : carried) {
    const int prev =
        ir::add_var(form_.out(), form_.claim(form_.out().var(c).name + "_prev"), ir::Type::Tensor, "const fg::Tensor");
    st->body.push_back(ir::decl(prev, ir::var_ref(form_.out(), c)));
    fz_.detach(prev, {c}, {&inner});
    inner.vars[src] = prev;
  }
  stmts_.body(s.body, inner, st->body);
  if (!form_.ok()) return;
  for (auto& [src, c] : carried) {
    const int last = inner.vars.at(src);
    if (last == kUnset) continue;
    fz_.detach(c, {last}, {&inner});
    st->body.push_back(ir::assign(c, ir::var_ref(form_.out(), last)));
    scope.vars[src] = c;
  }
  out.push_back(std::move(st));
}

void ControlFlow::leaving_loop(const Stmt& jump) {
  form_.fail(jump.range.getBegin(), std::string("'") + (jump.kind == StmtKind::Break ? "break" : "continue") +
                                        "' in a loop that computes tensors cannot be differentiated yet; make the "
                                        "loop's condition say when it ends");
}

Scope ControlFlow::nested(const Scope& scope, const char* inside, bool in_loop) {
  Scope s = scope;
  s.results = nullptr;
  s.inside = inside;
  s.in_loop = in_loop;
  return s;
}

ExprPtr ControlFlow::recorded(ExprPtr cond, std::vector<ir::StmtPtr>& out) {
  const int taken = ir::add_var(form_.out(), form_.claim("taken"), ir::Type::Bool, "const bool");
  out.push_back(ir::decl(taken, std::move(cond)));
  return ir::var_ref(form_.out(), taken);
}

void ControlFlow::alternatives(const std::vector<const std::vector<ir::StmtPtr>*>& bodies,
                               const std::vector<std::vector<ir::StmtPtr>*>& outs, Scope& scope, const char* inside,
                               std::vector<ir::StmtPtr>& out) {
  std::vector<Scope> paths;
  for (size_t i = 0; i < bodies.size(); ++i) {
    paths.push_back(nested(scope, inside, scope.in_loop));
    if (bodies[i] != nullptr) stmts_.body(*bodies[i], paths.back(), *outs[i]);
    if (!form_.ok()) return;
  }
  for (auto& [src, version] : scope.vars) {
    if (scope.fn->var(src).type != ir::Type::Tensor) continue;
    bool changed = false;
    for (const auto& p : paths) changed |= p.vars.at(src) != version;
    if (!changed) continue;
    // A path that gives it no value leaves the merged variable without one, as the source does
    // (the derivative code of a later branch on the same condition reads it only where it is set).
    const int merged = form_.new_tensor(scope.fn->var(src).name);
    out.push_back(ir::decl(merged, nullptr));
    std::vector<int> incoming{version};
    std::vector<const Scope*> where{&scope};
    for (size_t i = 0; i < paths.size(); ++i)
      if (paths[i].vars.at(src) != kUnset) {
        outs[i]->push_back(ir::assign(merged, ir::var_ref(form_.out(), paths[i].vars.at(src))));
        incoming.push_back(paths[i].vars.at(src));
        where.push_back(&paths[i]);
      }
    fz_.detach(merged, incoming, where);
    version = merged;
  }
  for (const auto& p : paths)
    for (const auto& [src, items] : p.tuples)
      if (scope.tuples.count(src) != 0 && scope.tuples.at(src) != items) {
        form_.fail(clang::SourceLocation(), "a tuple of tensors changed inside " + std::string(inside) +
                                                " cannot be differentiated; change its elements instead");
        return;
      }
}

}  // namespace funcgen::ad::anf
