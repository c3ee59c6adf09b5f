#include "transforms/ad/inline_calls.h"

#include <clang/AST/ExprCXX.h>

#include <algorithm>

#include "ir/build.h"
#include "ir/cxx_text.h"
#include "ir/types.h"
#include "ops/inplace.h"
#include "ops/registry.h"
#include "transforms/ad/returns.h"

namespace funcgen::ad::anf {

namespace {

// Whether `fn` reads its variable `var` anywhere.
bool reads_var(const ir::Function& fn, int var) {
  bool found = false;
  const auto in = [&](const std::vector<int>& vars) { found |= std::find(vars.begin(), vars.end(), var) != vars.end(); };
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) { in(s.reads); });
  ir::for_each_expr(fn.body, [&](const Expr& e) {
    found |= e.kind == ExprKind::VarRef && e.var == var;
    in(e.reads);
  });
  return found;
}

}  // namespace

std::vector<int> Inliner::inline_call(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
  if (e.callee == nullptr) {
    form_.fail(e, "internal error: a call of '" + e.op + "' without its function");
    return {};
  }
  if (chain_.recursive(e, facts_.module())) {
    form_.fail(e, "'" + e.op + "' calls itself (directly or through helpers); " + ir::recursion_advice("differentiated"));
    return {};
  }
  const ir::Function* callee = facts_.module().find(e);
  if (callee == nullptr) {
    if (facts_.module().contains(e))
      form_.failed();  // its lowering failed, reported there
    else  // never lowered: say so rather than fail without a diagnostic
      form_.fail(e, "internal error: '" + e.op + "' was not lowered before the transform met its call");
    return {};
  }
  callee = &structured_control_flow(*callee, single_returns_);  // ?:, switches, jumps and returns as ifs
  Scope inner;
  inner.fn = callee;
  inner.helper = true;
  std::vector<ExprPtr> results;
  inner.results = &results;
  std::map<int, int> entry;  // tensor parameter -> the version it was passed
  for (size_t i = 0; i < callee->params.size() && i < e.args.size(); ++i) {
    const ir::Var& p = callee->var(callee->params[i]);
    if (p.type == ir::Type::Tensor) {
      const bool unset = e.arg(i).kind == ExprKind::VarRef && scope.vars.count(e.arg(i).var) != 0 &&
                         scope.vars.at(e.arg(i).var) == kUnset;
      if (unset && CalleeFacts::by_reference(p)) {  // `fg::Tensor y; compute_into(y, x);`: an output parameter
        inner.vars[p.id] = entry[p.id] = kUnset;
        continue;
      }
      inner.vars[p.id] = entry[p.id] = stmts_.value(e.arg(i), scope, out, p.name);
      continue;
    }
    if (p.type == ir::Type::TensorList && e.arg(i).kind == ExprKind::VarRef &&
        scope.vars.count(e.arg(i).var) != 0) {  // a list parameter passed on: the same list
      inner.vars[p.id] = scope.vars.at(e.arg(i).var);
      if (p.name != form_.out().var(inner.vars[p.id]).name)
        inner.renames[p.name] = form_.out().var(inner.vars[p.id]).name;
      continue;
    }
    if (CalleeFacts::by_reference(p)) {  // `int64_t& n`: the caller's variable itself, as C++ binds it
      const Expr& a = e.arg(i);
      const int src = a.kind == ExprKind::VarRef ? a.var
                      : a.kind == ExprKind::Opaque && a.reads.size() == 1 && a.text == scope.fn->var(a.reads[0]).name
                          ? a.reads[0]  // a scalar variable, kept as its text
                          : -1;
      if (src < 0 || scope.vars.count(src) == 0) {
        form_.fail(e.arg(i), "'" + e.op + "' takes '" + p.name +
                                 "' by reference, which cannot be differentiated where it "
                                 "is passed something other than a variable; pass it a variable");
        return {};
      }
      inner.vars[p.id] = scope.vars.at(src);
      if (p.name != form_.out().var(inner.vars[p.id]).name)
        inner.renames[p.name] = form_.out().var(inner.vars[p.id]).name;
      continue;
    }
    // A level of a recursion whose folded body no longer reads a parameter (`n` where `n == 0`
    // took its side): passed a constant (which has no effects), it needs no local.
    const auto constant = [&](const auto& c) { return c.first == p.name; };
    if (std::any_of(e.constants.begin(), e.constants.end(), constant) && !reads_var(*callee, p.id)) continue;
    // A scalar parameter: a local of the caller's, holding the argument.
    const std::string name = form_.claim(p.name);
    if (name != p.name) inner.renames[p.name] = name;
    const int id = ir::add_var(form_.out(), name, p.type, "const " + ir::value_type(p));
    inner.vars[p.id] = id;
    out.push_back(ir::decl(id, stmts_.scalar(e.arg(i), scope, out)));
  }
  for (const auto& v : callee->vars) form_.add_name(v.name);
  form_.avoid_text_names(*callee);
  chain_.enter(e.callee, e.constants);
  stmts_.body(callee->body, inner, out);
  chain_.leave();
  if (!form_.ok()) return {};
  if (!inner.returned && callee->return_type != ir::Type::Void) {
    form_.fail(e, "'" + e.op + "' must end in a return of its tensors to be differentiated");
    return {};
  }
  carry_back(e, *callee, entry, inner, scope, out);
  std::vector<int> ids;
  for (const auto& r : results) ids.push_back(r->var);
  return ids;
}

void Inliner::carry_back(const Expr& call, const ir::Function& callee, const std::map<int, int>& entry,
                         const Scope& inner, Scope& scope, std::vector<ir::StmtPtr>& out) {
  for (size_t i = 0; i < callee.params.size() && i < call.args.size() && form_.ok(); ++i) {
    const ir::Var& p = callee.var(callee.params[i]);
    auto was = entry.find(p.id);
    if (was == entry.end() || inner.vars.at(p.id) == was->second) continue;
    const int now = inner.vars.at(p.id);
    const bool in_place = fz_.overwritten(was->second), rebound = facts_.assigns(callee, p.id);
    if (in_place && rebound) {
      form_.fail(call,
                 "'" + call.op + "' both assigns its parameter '" + p.name +
                     "' and writes into it in place, which "
                     "cannot be differentiated yet: its caller sees the write but not the assignment; return the new "
                     "value from '" +
                     call.op + "' instead");
      return;
    }
    if (in_place) {
      fz_.written_back(was->second, now, call, scope, out);
    } else if (rebound && CalleeFacts::by_reference(p)) {
      if (call.arg(i).kind != ExprKind::VarRef) {
        form_.fail(call.arg(i),
                   "'" + call.op + "' assigns its reference parameter '" + p.name +
                       "', which cannot be "
                       "differentiated where it is passed an element of a tuple or another expression; pass it "
                       "a variable");
        return;
      }
      scope.vars[call.arg(i).var] = now;
    }
  }
}

}  // namespace funcgen::ad::anf
