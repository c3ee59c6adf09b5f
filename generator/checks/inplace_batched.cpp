// funcgen-inplace-batched: an in-place op writes batched values into a tensor that is not batched
// (more elements than the destination holds), as `x.add_(y)` under in_dims=(None, 0).
#include <clang/AST/ExprCXX.h>

#include <algorithm>

#include "checks/check_util.h"
#include "ops/batching_rules.h"
#include "ops/inplace.h"
#include "ops/registry.h"

namespace funcgen {

namespace {

// The variable a destination is a view of: `result` for result.diagonal().
const ir::Expr* view_root(const ir::Expr* e) {
  while (e->kind == ir::ExprKind::Call &&
         (e->form == ir::CallForm::Method || e->form == ir::CallForm::Free ||
          (e->form == ir::CallForm::Operator && e->text == "[]")) &&
         !e->args.empty() && (is_view_op(e->op) || e->text == "[]"))
    e = e->args[0].get();
  return e;
}

// The declaration that initialised a local from a factory, if it did.
const ir::Expr* factory_init(const ir::Function& fn, int var) {
  const ir::Expr* found = nullptr;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if ((s.kind == ir::StmtKind::Decl || s.kind == ir::StmtKind::Assign) && s.var == var && s.expr &&
        s.expr->kind == ir::ExprKind::Call && s.expr->form == ir::CallForm::Free &&
        (ops::id(*s.expr) == ops::zeros || ops::id(*s.expr) == ops::empty || ops::id(*s.expr) == ops::ones ||
         ops::id(*s.expr) == ops::full))
      found = s.expr.get();
  });
  return found;
}

}  // namespace

namespace {
// An op that writes into other arguments (batch_norm's running statistics): a batched input with
// an unbatched destination, where the writes are on (their flag not literally false).
void check_argument_writes(const VmapCheckContext& ctx, const BatchingAnalysis& fn, const ir::Expr& e,
                           const ArgumentWrites& w) {
  const ir::Function& f = fn.function();
  Levels src = 0;
  const ir::Expr* flag = nullptr;
  std::vector<size_t> dests;
  for (size_t i = 0; i < e.args.size() && i < e.params.size(); ++i) {
    const bool written = std::find(w.params.begin(), w.params.end(), e.params[i]) != w.params.end();
    if (e.params[i] == w.when) flag = e.args[i].get();
    if (written && !ir::is_absent(*e.args[i])) dests.push_back(i);
    else if (e.params[i] == w.source) src |= fn.of(*e.args[i]);
  }
  const bool off = flag != nullptr && flag->kind == ir::ExprKind::Opaque &&
                   (flag->text == "false" || flag->text.find_first_not_of('0') == std::string::npos);
  if (!w.when.empty() && (flag == nullptr || off)) return;
  for (size_t i : dests) {
    if ((src & ~fn.of(*e.args[i])) == 0) continue;
    const std::string dest_name = checks::describe(f, ctx.context, *e.args[i]);
    ctx.reporter.report("inplace-batched", checks::call_location(e),
                        "'" + e.op + "' updates '" + dest_name + "' in place with batched values, but '" + dest_name +
                            "' is not batched; under vmap it cannot hold one result per example (torch.func raises "
                            "here too): pass {} for it (torch.func's replace_all_batch_norm_modules_ does so for "
                            "batch_norm)" + (w.when.empty() ? "" : ", or call it with " + w.when + "=false"))
        << e.range;
    return;  // once per call
  }
}
}  // namespace

void check_inplace_batched(const VmapCheckContext& ctx, const BatchingAnalysis& fn) {
  const ir::Function& f = fn.function();
  ir::for_each_expr(f.body, [&](const ir::Expr& e) {
    if (e.kind != ir::ExprKind::Call || e.args.empty()) return;
    if (const ArgumentWrites* w = argument_writes(e.op); w != nullptr && e.form != ir::CallForm::User) {
      check_argument_writes(ctx, fn, e, *w);
      return;
    }
    if (e.form != ir::CallForm::Method && e.form != ir::CallForm::Operator && e.form != ir::CallForm::Free) return;
    if (!find_rule(e.op).inplace) return;
    const Levels dest = fn.of(e.arg(0));
    Levels src = 0;
    const ir::Expr* batched_src = nullptr;
    for (size_t i = 1; i < e.args.size(); ++i) {
      if (e.args[i]->type != ir::Type::Tensor) continue;
      src |= fn.of(*e.args[i]);
      if (fn.of(*e.args[i]) & ~dest) batched_src = e.args[i].get();
    }
    if ((src & ~dest) == 0 || batched_src == nullptr) return;
    const std::string dest_name = checks::describe(f, ctx.context, e.arg(0));
    const std::string src_name = checks::describe(f, ctx.context, *batched_src);
    const std::string op = e.form == ir::CallForm::Operator ? "operator" + e.text : e.op;
    const ir::Expr* root = view_root(&e.arg(0));
    const ir::Expr* factory = root->kind == ir::ExprKind::VarRef ? factory_init(f, root->var) : nullptr;
    {
      auto diag =
          ctx.reporter.report("inplace-batched", checks::call_location(e),
                              "in-place '" + op + "' writes batched values of '" + src_name + "' into '" + dest_name +
                                  "', which is not batched; under vmap it cannot hold one result per example");
      diag << e.range;
    }
    if (factory != nullptr && factory->ast != nullptr) {
      // The page's fix: create the destination from a batched tensor, so that it is batched too.
      const auto* call = llvm::dyn_cast<clang::CallExpr>(factory->ast);
      const ir::Expr* like = view_root(batched_src);
      const std::string like_name = like->kind == ir::ExprKind::VarRef ? checks::user_name(f.var(like->var)) : src_name;
      const std::string method = "new_" + factory->op;
      const std::string root_name = checks::user_name(f.var(root->var));
      const clang::SourceRange callee = call->getCallee()->IgnoreImplicit()->getSourceRange();
      ctx.reporter.note(call->getBeginLoc(), "'" + root_name + "' is created by 'fg::" + factory->op +
                                                 "', which is not batched; create it with '" + like_name + "." +
                                                 method + "' so that it is batched like '" + like_name + "'")
          << clang::FixItHint::CreateReplacement(clang::CharSourceRange::getTokenRange(callee),
                                                 like_name + "." + method);
    } else if (root->kind == ir::ExprKind::VarRef && f.var(root->var).param_index >= 0) {
      ctx.reporter.note(f.var(root->var).decl->getLocation(),
                        "'" + checks::user_name(f.var(root->var)) +
                            "' is not mapped: its in_dim is None; map it too, or use the "
                            "out-of-place form ('" +
                            dest_name + " = " + dest_name + " + ...')");
    }
  });
}

static const CheckRegistration registration(
    {"inplace-batched", false, "an in-place op writes batched data into an unbatched tensor",
     "An in-place op cannot make its destination batched: `x.add_(y)` with x unbatched and y batched has no "
     "per-example result to write. Use the out-of-place op (`x = x + y`), or create the destination from a "
     "batched tensor (`y.new_zeros(...)` instead of `fg::zeros(...)`)."},
    check_inplace_batched, CheckScope::Vmap);

}  // namespace funcgen
