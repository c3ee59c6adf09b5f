// control_flow='select': branches on batched values run both sides, and fg::where picks each
// example's values.
#include <algorithm>
#include <set>

#include "ir/build.h"
#include "ir/types.h"
#include "ops/registry.h"
#include "transforms/vmap/batcher.h"

namespace funcgen::vmap {

using ir::ExprKind;
using ir::StmtKind;

// The condition of a branch on batched values as a batched bool tensor: `t.item<bool>()` is t,
// a comparison of an item with a number is the tensor comparison, `!c` is c == 0.
std::optional<Val> Batcher::predicate(const Expr& e) {
  const auto binary = [](const std::string& op, ExprPtr a, ExprPtr b, Levels l) {
    auto x = std::make_unique<Expr>();
    x->kind = ExprKind::Binary;
    x->text = op;
    x->type = ir::Type::Tensor;
    x->levels = l;
    x->args = exprs(std::move(a), std::move(b));
    return Val{std::move(x), l};
  };
  if (e.kind == ExprKind::Call && (ops::id(e) == ops::item || ops::id(e) == ops::is_nonzero) && !e.args.empty() &&
      e.args[0]->type == ir::Type::Tensor) {
    Val t = expr(e.arg(0));
    if (ops::id(e) == ops::is_nonzero) return binary("!=", std::move(t.e), literal(0), t.levels);
    return t;
  }
  if (e.kind == ExprKind::Cast) return predicate(e.arg(0));
  if (e.kind == ExprKind::Unary && e.text == "!") {
    auto inner = predicate(e.arg(0));
    if (!inner) return std::nullopt;
    return binary("==", std::move(inner->e), literal(0), inner->levels);
  }
  static const std::set<std::string> compare = {"<", ">", "<=", ">=", "==", "!="};
  if (e.kind == ExprKind::Binary && compare.count(e.text) != 0) {
    const bool left = an_.of(e.arg(0)) != 0;
    const Expr& batched_side = left ? e.arg(0) : e.arg(1);
    const Expr& other = left ? e.arg(1) : e.arg(0);
    if (an_.of(other) != 0) return std::nullopt;
    auto t = predicate(batched_side);
    if (!t) return std::nullopt;
    ExprPtr o = expr(other).e;
    const Levels l = t->levels;
    return left ? binary(e.text, std::move(t->e), std::move(o), l) : binary(e.text, std::move(o), std::move(t->e), l);
  }
  return std::nullopt;
}

Val Batcher::predicate_or_report(const Expr& cond) {
  auto p = predicate(cond);
  if (!p) {
    ctx_.reporter->report("unsupported", cond.range.getBegin(),
                          "control_flow='select' cannot turn this condition into a per-example mask; write it as "
                          "a comparison of tensor values, e.g. (x > 0).item<bool>()")
        << cond.range;
    return {text("false", ir::Type::Bool), 0};
  }
  const Levels l = p->levels;
  return {bind(std::move(*p), "pred"), l};
}

// Variables declared outside `body` that it assigns.
void Batcher::assigned_outer(const std::vector<StmtPtr>& body, std::vector<int>& out) const {
  std::set<int> declared;
  ir::for_each_stmt(body, [&](const Stmt& s) {
    if (s.kind == StmtKind::Decl) declared.insert(s.var);
  });
  ir::for_each_stmt(body, [&](const Stmt& s) {
    if (s.kind == StmtKind::Assign && declared.count(s.var) == 0 && std::find(out.begin(), out.end(), s.var) == out.end())
      out.push_back(s.var);
  });
}

bool Batcher::side_effect_free(const std::vector<StmtPtr>& body, const std::vector<int>& vars) {
  for (const auto& st : body)
    if (!side_effect_free_stmt(*st)) return false;
  for (int v : vars)
    if (fn_.var(v).type != ir::Type::Tensor) {
      if (fn_.var(v).decl == nullptr) {  // one that derivative code made: not the user's to name
        ctx_.reporter->report("unsupported", fn_.decl != nullptr ? fn_.decl->getLocation() : clang::SourceLocation(),
                              "control_flow='select' cannot select per example what the derivative code of '" +
                                  (fn_.decl != nullptr ? fn_.decl->getNameAsString() : fn_.name) +
                                  "' records in a branch on batched values (indices, lists); choose the values with "
                                  "fg::where in place of the branch");
        return false;
      }
      ctx_.reporter->report("unsupported", fn_.var(v).decl->getLocation(),
                            "control_flow='select' can select tensors per example, not the C++ value '" + fn_.var(v).name +
                                "' that a branch on batched values assigns");
      return false;
    }
  return true;
}

bool Batcher::side_effect_free_stmt(const Stmt& s) {
  bool ok = true;
  const auto check = [&](const Expr& e) {
    // (the branch runs on a copy of the vector)
    if (ok && (e.op == ir::kListPush || e.op == ir::kListSet) && ir::is_tape_op(e)) {
      ok = false;
      const std::string list = fn_.var(e.reads[0]).name;
      ctx_.reporter->report("unsupported", e.range.getBegin(),
                            "control_flow='select' runs both branches, so they must be free of side effects; " +
                                (e.op == ir::kListPush ? "a push_back into '" + list + "' is not (its length would "
                                                         "differ per example); push_back after the if"
                                                       : "assigning an element of '" + list + "' is not; assign "
                                                         "it after the if") +
                                ", the value chosen with fg::where")
          << e.range;
      return;
    }
    if (!ok || e.kind != ExprKind::Call || ir::is_element(e)) return;  // (reading an element changes nothing)
    const clang::FunctionDecl* fn = e.callee;
    const bool changes_argument =  // a helper that takes a non-const reference (`accumulate(total, x)`)
        e.form == ir::CallForm::User && fn != nullptr && ir::takes_by_reference(*fn);
    if (ops::info(e).inplace_form() || e.form == ir::CallForm::External || changes_argument) {
      ok = false;
      ctx_.reporter->report("unsupported", e.range.getBegin(),
                            "control_flow='select' runs both branches, so they must be free of side effects; '" + e.op +
                                "' is not")
          << e.range;
    }
  };
  if (s.expr) ir::for_each_expr(*s.expr, check);
  ir::for_each_expr(s.body, check);
  ir::for_each_expr(s.else_body, check);
  return ok;
}

// Runs `body` in a lambda on copies of the variables and returns their new values.
ExprPtr Batcher::branch_lambda(const std::vector<StmtPtr>& body, const std::vector<int>& vars) {
  std::vector<StmtPtr> inner = sub_block(body);
  std::vector<ExprPtr> values;
  for (int v : vars) values.push_back(ref(v));
  inner.push_back(ir::ret(ir::tuple(std::move(values))));
  return lambda("[=]() mutable", std::move(inner), true, ir::Type::TensorTuple);
}

// fg::where(pred, a, b) on the three aligned: the statement that aligns them goes before.
ExprPtr Batcher::where(const Val& pred, ExprPtr a, Levels la, ExprPtr b, Levels lb) {
  const auto name_of = [&](const Expr& x, const std::string& fallback) {
    return x.kind == ExprKind::VarRef ? out_->var(x.var).name : fallback;
  };
  const int pb = local("pred_b", "auto"), ab = local(name_of(*a, "a") + "_b", "auto"),
            bb = local(name_of(*b, "b") + "_b", "auto");
  auto align = std::make_unique<Stmt>();
  align->kind = StmtKind::Bind;
  align->text = "auto";
  align->vars = {pb, ab, bb};
  align->expr = runtime("vmap::align",
                        exprs(braced(exprs(batched(ir::clone(*pred.e), pred.levels), batched(std::move(a), la),
                                           batched(std::move(b), lb)))),
                        ir::Type::TensorTuple);
  pre_.push_back(std::move(align));
  ExprPtr w = runtime("where", exprs(ref(pb), ref(ab), ref(bb)));
  w->levels = pred.levels | la | lb;
  return w;
}

// The merge after both branches: each variable takes the branch's value its example chose.
void Batcher::merge(const Val& pred, const std::vector<int>& vars, int then_t, int else_t, std::vector<StmtPtr>& out) {
  for (size_t k = 0; k < vars.size(); ++k) {
    const ir::Var& v = fn_.var(vars[k]);
    const int a = local(out_->var(then_t).name + std::to_string(k), "const fg::Tensor");
    const int b = local(out_->var(else_t).name + std::to_string(k), "const fg::Tensor");
    declare(a, ir::get(ref(then_t), static_cast<int>(k)));
    declare(b, ir::get(ref(else_t), static_cast<int>(k)));
    const Levels lv = an_.var(v.id);
    ExprPtr w = where(pred, ref(a), lv, ref(b), lv);
    emit(out, ir::assign(v.id, std::move(w)));
  }
}

void Batcher::select_if(const Stmt& s, std::vector<StmtPtr>& out) {
  std::vector<int> vars;
  assigned_outer(s.body, vars);
  assigned_outer(s.else_body, vars);
  if (!side_effect_free(s.body, vars) || !side_effect_free(s.else_body, vars)) return;
  emit(out, comment("control_flow='select': both branches run, fg::where picks each example's"));
  const Val pred = predicate_or_report(*s.expr);
  flush(out);
  const int then_t = local("then_values", "const auto", ir::Type::TensorTuple);
  const int else_t = local("else_values", "const auto", ir::Type::TensorTuple);
  ExprPtr then_v = branch_lambda(s.body, vars);
  emit(out, ir::decl(then_t, std::move(then_v)));
  ExprPtr else_v = branch_lambda(s.else_body, vars);
  emit(out, ir::decl(else_t, std::move(else_v)));
  merge(pred, vars, then_t, else_t, out);
}

void Batcher::select_while(const Stmt& s, std::vector<StmtPtr>& out) {
  std::vector<int> vars;
  assigned_outer(s.body, vars);
  if (!side_effect_free(s.body, vars)) return;
  emit(out, comment("control_flow='select': the loop runs while any example is active; finished ones keep their values"));
  flush(out);
  std::vector<StmtPtr> body;
  const Val pred = predicate_or_report(*s.expr);
  auto stop = std::make_unique<Stmt>();
  stop->kind = StmtKind::If;
  auto none = std::make_unique<Expr>();
  none->kind = ExprKind::Unary;
  none->text = "!";
  none->type = ir::Type::Bool;
  none->args.push_back(runtime("vmap::any", exprs(ir::clone(*pred.e)), ir::Type::Bool));
  stop->expr = std::move(none);
  stop->body.push_back(std::make_unique<Stmt>());
  stop->body.back()->kind = StmtKind::Break;
  emit(body, std::move(stop));
  const int step_t = local("step_values", "const auto", ir::Type::TensorTuple);
  const int keep_t = local("kept_values", "const auto", ir::Type::TensorTuple);
  ExprPtr step = branch_lambda(s.body, vars);
  emit(body, ir::decl(step_t, std::move(step)));
  std::vector<ExprPtr> kept;
  for (int v : vars) kept.push_back(ref(v));
  emit(body, ir::decl(keep_t, ir::tuple(std::move(kept))));
  merge(pred, vars, step_t, keep_t, body);
  flush(body);
  auto loop = std::make_unique<Stmt>();
  loop->kind = StmtKind::While;
  loop->range = s.range;
  loop->expr = text("true", ir::Type::Bool);
  loop->body = std::move(body);
  out.push_back(std::move(loop));
}

// `if (c) { ...; return a; } rest...`: both sides run to their return, fg::where picks.
void Batcher::select_return(const Stmt& s, const std::vector<StmtPtr>& body, size_t rest, std::vector<StmtPtr>& out) {
  if (!side_effect_free(s.body, {})) return;
  for (size_t i = rest; i < body.size(); ++i)
    if (!side_effect_free_stmt(*body[i])) return;
  if (fn_.return_type != ir::Type::Tensor) {
    ctx_.reporter->report("unsupported", s.range.getBegin(),
                          "control_flow='select' with an early return supports functions that return one tensor");
    return;
  }
  emit(out, comment("control_flow='select': both sides run to their return, fg::where picks each example's"));
  const Val pred = predicate_or_report(*s.expr);
  flush(out);
  const Levels target = an_.outputs()[0];
  const Levels saved = return_target_;
  return_target_ = target;
  std::vector<StmtPtr> then_body = sub_block(s.body);
  std::vector<StmtPtr> else_body = sub_block(body, rest);
  return_target_ = saved;
  const int a = local("then_value", "const fg::Tensor"), b = local("else_value", "const fg::Tensor");
  emit(out, ir::decl(a, lambda("[=]() mutable -> fg::Tensor", std::move(then_body), true, ir::Type::Tensor)));
  emit(out, ir::decl(b, lambda("[=]() mutable -> fg::Tensor", std::move(else_body), true, ir::Type::Tensor)));
  ExprPtr w = where(pred, ref(a), target, ref(b), target);
  const Levels lw = w->levels;
  ExprPtr value = coerce(Val{std::move(w), lw}, target);
  emit(out, ir::ret(std::move(value)));
}

// c ? a : b with c batched: both arms, picked per example.
Val Batcher::select_conditional(const Expr& e) {
  const Val pred = predicate_or_report(e.arg(0));
  Val a = expr(e.arg(1)), b = expr(e.arg(2));
  const Levels la = a.levels, lb = b.levels;
  ExprPtr an = bind(std::move(a)), bn = bind(std::move(b));
  ExprPtr w = where(pred, std::move(an), la, std::move(bn), lb);
  const Levels l = w->levels;
  return {std::move(w), l};
}

}  // namespace funcgen::vmap
