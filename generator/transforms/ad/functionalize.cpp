#include "transforms/ad/functionalize.h"

#include <clang/AST/ExprCXX.h>

#include "ir/build.h"
#include "ir/cxx_text.h"
#include "ir/types.h"
#include "ops/inplace.h"
#include "ops/registry.h"

namespace funcgen::ad::anf {

void Functionalizer::made(int id, int self, const Expr& e, const Expr& call) {
  if (is_view_op(e.op)) {
    view_of_[id] = self;
    view_call_[id] = ir::clone(call);
  }
  if (ops::info(e).may_alias) sometimes_aliased_[id] = ops::id(e);  // (views.def)
}

bool Functionalizer::writable(const Expr& e, int self, int src, const Scope& scope) {
  const bool named = src >= 0;
  // The tensor written and the tensors it is a view of (`v[0][1] = y` writes into v[0] too).
  for (int b = self; b >= 0;) {
    const bool first = b == self;
    const std::string shown = first && named ? scope.fn->var(src).name : shown_name(b, scope);
    if (from_list_.count(b) != 0) {
      form_.fail(
          e, "in-place '" + e.op + "' on " + (first ? "" : "a view of ") +
                 "an element of a vector of tensors cannot "
                 "be differentiated yet (later reads of the vector would not see it); compute a new tensor (w = w * 2) "
                 "instead");
      return false;
    }
    if (detached_.count(b) != 0) {
      form_.fail(
          e, "in-place '" + e.op + "' writes into " + (first ? "" : "a view of ") + "'" + shown +
                 "', a view that an 'if' or a loop carried, which cannot be differentiated yet; take the view where "
                 "it is written");
      return false;
    }
    if (auto m = sometimes_aliased_.find(b); m != sometimes_aliased_.end()) {
      form_.fail(
          e, "in-place '" + e.op + "' writes into " + (first ? "" : "a view of ") + "what '" + ops::name_of(m->second) +
                 "' returned, " +
                 (m->second == ops::detach
                      ? "which shares its input's memory but not its derivatives, so the write cannot be "
                        "differentiated; write into the input itself, or into a clone()"
                      : "which is its input's memory or a copy depending on the input's layout, so funcgen cannot "
                        "tell whether the write changes the input; write into the input itself (or a view() of "
                        "it), or into a clone()"));
      return false;
    }
    auto up = view_of_.find(b);
    b = up == view_of_.end() ? -1 : up->second;
  }
  return true;
}

int Functionalizer::functional(const Expr& e, int self, std::vector<ExprPtr> rest, std::vector<ir::StmtPtr>& out) {
  auto call = std::make_unique<Expr>();
  call->kind = ExprKind::Call;
  call->type = ir::Type::Tensor;
  call->range = e.range;
  call->form = e.form == ir::CallForm::Operator ? ir::CallForm::Operator : ir::CallForm::Method;
  call->callee = nullptr;
  call->text = e.text.size() == 2 && e.text[1] == '=' ? e.text.substr(0, 1) : e.text;  // += -> +
  const InplaceOp form = *find_inplace(e.op);  // is_inplace: the name ends in '_'
  std::vector<ExprPtr> args;
  args.push_back(ir::var_ref(form_.out(), self));
  for (auto& a : rest) args.push_back(std::move(a));
  call->op = form.partner;
  call->params = e.params;
  if (form.kind == InplaceKind::Forget) {  // a write that forgets the old values: fg::zeros_like(self)
    call->form = ir::CallForm::Free;
  } else if (form.kind == InplaceKind::Source) {  // the source, broadcast to the destination's shape
    auto sizes = std::make_unique<Expr>();
    sizes->kind = ExprKind::Call;
    sizes->form = ir::CallForm::Method;
    sizes->op = "sizes";
    sizes->type = ir::Type::IntList;
    sizes->params = {"self"};
    sizes->param_types = {ir::Type::Tensor};
    sizes->args.push_back(ir::var_ref(form_.out(), self));
    ExprPtr source = std::move(args[1]);
    args.clear();
    args.push_back(std::move(source));
    args.push_back(std::move(sizes));
    call->form = ir::CallForm::Method;
    call->params = {"self", "size"};
  }
  call->param_types.clear();
  for (const auto& a : args) call->param_types.push_back(a->type);
  call->args = std::move(args);
  const int id = form_.new_tensor(form_.out().var(self).name);
  StmtPtr d = ir::decl(id, std::move(call));
  d->range = e.range;
  out.push_back(std::move(d));
  return id;
}

void Functionalizer::written(int old, int now, const Expr& at, Scope& scope, std::vector<ir::StmtPtr>& out) {
  overwritten_.insert(old);
  for (const auto& [held, list] : pushed_) {  // a list's entry shares memory with what was pushed
    bool shares = false;
    for (int b = held; !shares;) {  // held, the base of its view, that base's base, ...
      shares = b == old;
      auto up = view_of_.find(b);
      if (up == view_of_.end()) break;
      b = up->second;
    }
    if (shares) {
      form_.fail(at, held_by_list(at.op, form_.out().var(list).name));
      return;
    }
  }
  std::set<int> holders;  // the variables that held the written version
  for (auto& [src, version] : scope.vars)
    if (version == old) {
      version = now;
      holders.insert(src);
    }
  for (const auto& [src, version] : scope.vars) {  // a view of them that an if or a loop carried
    auto d = detached_.find(version);
    if (d == detached_.end()) continue;
    for (int base : d->second)
      if (holders.count(base) != 0) {
        form_.fail(at, "in-place '" + at.op + "' writes into '" + scope.fn->var(base).name + "', whose view '" +
                           scope.fn->var(src).name +
                           "' an 'if' or a loop carried, which cannot be differentiated yet; " +
                           "take the view again after the write");
        return;
      }
  }
  views_again(old, now, at, scope, out);
  auto base = view_of_.find(old);
  if (base == view_of_.end() || !form_.ok()) return;
  const int b = base->second;
  const int b_now = write_back(old, now, b, at, out);
  if (!form_.ok()) return;
  view_of_[now] = b_now;  // still a view: a later write into it reaches the base again
  view_call_[now] = view_call(*view_call_.at(old), b_now);
  written(b, b_now, at, scope, out);
}

void Functionalizer::written_back(int old, int now, const Expr& at, Scope& scope, std::vector<ir::StmtPtr>& out) {
  for (auto& [src, version] : scope.vars)
    if (version == old) version = now;
  views_again(old, now, at, scope, out);
  auto b = view_of_.find(old);
  if (b == view_of_.end()) return;
  auto b_now = view_of_.find(now);
  if (b_now == view_of_.end()) {
    form_.fail(at, "'" + at.op +
                       "' writes in place into a view of a tensor it is passed under an 'if' or in a loop, "
                       "which cannot be differentiated yet; pass the tensor itself, or write into it in the caller");
    return;
  }
  if (b_now->second != b->second) written_back(b->second, b_now->second, at, scope, out);
}

void Functionalizer::detach(int merged, const std::vector<int>& incoming, const std::vector<const Scope*>& where) {
  for (int v : incoming) {
    if (auto d = detached_.find(v); d != detached_.end()) detached_[merged].insert(d->second.begin(), d->second.end());
    auto b = view_of_.find(v);
    if (b == view_of_.end()) continue;
    std::set<int>& bases = detached_[merged];
    for (const Scope* s : where)
      for (const auto& [src, version] : s->vars)
        if (version == b->second) bases.insert(src);
  }
}

const Expr* Functionalizer::written_after_push(const std::vector<ir::StmtPtr>& body) {
  std::set<int> pushed;
  ir::for_each_stmt(body, [&](const Stmt& st) {
    if (st.kind == StmtKind::Eval && st.expr && st.expr->op == ir::kListPush && ir::is_tape_op(*st.expr))
      pushed.insert(st.expr->reads.back());
  });
  for (size_t before = 0; before != pushed.size();) {  // and the copies of those (`h = acc`)
    before = pushed.size();
    ir::for_each_stmt(body, [&](const Stmt& st) {
      if ((st.kind != StmtKind::Decl && st.kind != StmtKind::Assign) || !st.expr || st.expr->kind != ExprKind::VarRef)
        return;
      if (pushed.count(st.var) != 0) pushed.insert(st.expr->var);
      if (pushed.count(st.expr->var) != 0) pushed.insert(st.var);
    });
  }
  const Expr* found = nullptr;
  ir::for_each_expr(body, [&](const Expr& e) {
    if (found != nullptr || !is_inplace(e)) return;
    const Expr* target = e.args[0].get();  // the variable, or the base of the view written
    while (target->kind == ExprKind::Call && !target->args.empty()) target = target->args[0].get();
    if (target->kind == ExprKind::VarRef && pushed.count(target->var) != 0) found = &e;
  });
  return found;
}

std::string Functionalizer::held_by_list(const std::string& op, const std::string& list) {
  return "in-place '" + op + "' writes into a tensor that " +
         (list.empty() ? "a vector of tensors took on an earlier "
                         "trip of this loop"
                       : "the vector '" + list + "' holds") +
         " (push_back and assigning an element share its memory), which cannot be differentiated yet; store a "
         "clone(), or compute a new tensor (h = h * 2) instead of writing in place";
}

std::string Functionalizer::shown_name(int version, const Scope& scope) const {
  for (const auto& [src, v] : scope.vars)
    if (v == version) return scope.fn->var(src).name;
  return form_.out().var(version).name;
}

void Functionalizer::views_again(int old, int now, const Expr& at, Scope& scope, std::vector<ir::StmtPtr>& out) {
  std::map<int, int> again;  // view version -> its new version (aliases share one)
  for (auto& [src, version] : scope.vars) {
    auto v = view_of_.find(version);
    if (version < 0 || v == view_of_.end() || v->second != old || !form_.ok()) continue;
    auto done = again.find(version);
    if (done == again.end()) {
      const int w = form_.new_tensor(form_.out().var(version).name);
      StmtPtr d = ir::decl(w, view_call(*view_call_.at(version), now));
      d->range = at.range;
      out.push_back(std::move(d));
      view_of_[w] = now;
      view_call_[w] = view_call(*view_call_.at(version), now);
      done = again.emplace(version, w).first;
    }
    version = done->second;
  }
  for (const auto& [view, w] : again) views_again(view, w, at, scope, out);
}

ExprPtr Functionalizer::view_call(const Expr& call, int base) const {
  ExprPtr c = ir::clone(call);
  c->args[0] = ir::var_ref(form_.out(), base);
  return c;
}

int Functionalizer::write_back(int old, int now, int base, const Expr& at, std::vector<ir::StmtPtr>& out) {
  const Expr& call = *view_call_.at(old);
  const OpView v = view_of_call(call);
  const std::string* adjoint = nullptr;  // the view op's reverse rule for its base
  // (a write into an expanded view overlaps itself: the runtime refuses it, as PyTorch does)
  const ops::OpId view = ops::id_of(v.op);
  if (v.rule != nullptr && view != ops::expand && view != ops::expand_as && view != ops::broadcast_to)
    if (auto f = v.rule->vjp.find("self"); f != v.rule->vjp.end()) adjoint = &f->second;
  if (adjoint == nullptr) {
    const std::string shown = form_.declared_name(form_.out().var(base).name);  // none for a temporary
    form_.fail(at, "in-place '" + at.op + "' writes into a view" + (shown.empty() ? "" : " of '" + shown + "'") +
                       " made by '" + call.op + "', which cannot be differentiated; clone() the view first");
    return base;
  }
  const auto emit = [&](const std::string& name, const std::string& text, const FormulaEnv& env) {
    FormulaResult r = instantiate(text, env, form_.resolver());
    if (!r.error.empty()) {
      form_.fail(at, "internal error: writing into a view of '" + form_.out().var(base).name + "': " + r.error);
      return base;
    }
    const int id = form_.new_tensor(name);
    StmtPtr d = ir::decl(id, std::move(r.expr));
    d->range = at.range;
    out.push_back(std::move(d));
    return id;
  };
  ExprPtr now_ref = ir::var_ref(form_.out(), now), old_ref = ir::var_ref(form_.out(), old);
  const int change = emit(form_.out().var(old).name + "_change", "a - b", {{"a", now_ref.get()}, {"b", old_ref.get()}});
  std::vector<ExprPtr> keep;
  FormulaEnv env;
  if (std::string error = formula_env(call, v, form_.resolver(), keep, env); !error.empty()) {
    form_.fail(at, "internal error: writing into a view of '" + form_.out().var(base).name + "': " + error);
    return base;
  }
  ExprPtr change_ref = ir::var_ref(form_.out(), change), base_ref = ir::var_ref(form_.out(), base);
  env["grad"] = change_ref.get();
  const int placed = emit(form_.out().var(base).name + "_write", *adjoint, env);
  ExprPtr placed_ref = ir::var_ref(form_.out(), placed);
  return emit(form_.out().var(base).name, "a + b", {{"a", base_ref.get()}, {"b", placed_ref.get()}});
}

}  // namespace funcgen::ad::anf
