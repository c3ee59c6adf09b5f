// funcgen-data-dependent-control-flow: a branch or loop whose condition depends on the values of a
// batched tensor. Conditions on shapes (x.dim(), x.size(0)) and on unbatched values are fine.
#include "checks/check_util.h"

namespace funcgen {

namespace {

const char* construct(const ir::Stmt& s) {
  switch (s.kind) {
    case ir::StmtKind::If:
      return "if";
    case ir::StmtKind::While:
      return "while";
    case ir::StmtKind::DoWhile:
      return "do-while";
    case ir::StmtKind::For:
      return "for";
    case ir::StmtKind::Switch:
      return "switch";
    default:
      return "";
  }
}

void report(const VmapCheckContext& ctx, const BatchingAnalysis& fn, const std::string& what,
            const ir::Expr& named) {
  const ir::Expr& cond = checks::as_written(fn.function(), named);
  const std::string source = checks::batched_source(fn, cond);
  ctx.reporter.report("data-dependent-control-flow", cond.range.getBegin(),
                      "the condition of this " + what + " depends on the values of batched tensor '" + source +
                          "'; under vmap each example could take a different branch")
      << cond.range;
  ctx.reporter.note(ctx.spec.location,
                    "select per example with fg::where(condition, a, b), or let funcgen do it: "
                    "vmap(..., control_flow='select')");
}

}  // namespace

void check_data_dependent_control_flow(const VmapCheckContext& ctx, const BatchingAnalysis& fn) {
  const bool select = fn.vmap().select;
  ir::for_each_stmt(fn.function().body, [&](const ir::Stmt& s) {
    const std::string what = construct(s);
    if (what.empty() || !s.expr || fn.of(*s.expr) == 0) return;
    if (select && (s.kind == ir::StmtKind::If || s.kind == ir::StmtKind::While)) return;
    report(ctx, fn, "'" + what + "'", *s.expr);
  });
  ir::for_each_expr(fn.function().body, [&](const ir::Expr& e) {
    if (e.kind == ir::ExprKind::Conditional && fn.of(e.arg(0)) != 0 && !(select && e.type == ir::Type::Tensor))
      report(ctx, fn, "'?:'", e.arg(0));
    if (e.kind == ir::ExprKind::Binary && (e.text == "&&" || e.text == "||") && fn.of(e.arg(0)) != 0)
      report(ctx, fn, "'" + e.text + "' (its right side runs only for some values)", e.arg(0));
  });
}

static const CheckRegistration registration(
    {"data-dependent-control-flow", false, "control flow on the values of a batched tensor",
     "Under vmap each example could take a different branch, but the body runs once for the whole batch. Use "
     "fg::where for if/else on values, or vmap(..., control_flow='select') to let funcgen compute both branches "
     "and select per example. Control flow on shapes (x.dim(), x.size(0)) or unbatched values is fine."},
    check_data_dependent_control_flow, CheckScope::Vmap);

}  // namespace funcgen
