// funcgen-item: .item(), data_ptr() or another read of a batched tensor's values into C++.
#include "checks/check_util.h"
#include "ops/batching_rules.h"

namespace funcgen {

void check_item(const VmapCheckContext& ctx, const BatchingAnalysis& fn) {
  const ir::Function& f = fn.function();
  // Reads inside conditions are reported as data-dependent control flow.
  const std::set<const ir::Expr*> conditions = checks::condition_exprs(f.body);
  ir::for_each_expr(f.body, [&](const ir::Expr& e) {
    if (e.kind != ir::ExprKind::Call || e.args.empty() || conditions.count(&e) != 0) return;
    if (e.form == ir::CallForm::User || e.form == ir::CallForm::External) return;
    if (find_rule(e.op).rule != BatchRule::Item) return;
    Levels batched = 0;
    const ir::Expr* which = nullptr;
    for (const auto& a : e.args)
      if (a->type == ir::Type::Tensor && fn.of(*a) != 0 && which == nullptr) {
        batched |= fn.of(*a);
        which = a.get();
      }
    if (which == nullptr) return;
    const std::string name = checks::describe(f, ctx.context, *which);
    const std::string call = e.form == ir::CallForm::Method ? "." + e.op + "()" : "fg::" + e.op;
    ctx.reporter.report("item", checks::call_location(e),
                        "'" + call + "' reads batched tensor '" + name + "' into a C++ value, but under vmap '" + name +
                            "' holds one value per example; keep it a tensor and use tensor ops")
        << e.range;
  });
}

static const CheckRegistration registration(
    {"item", false, "a batched tensor converted to a C++ scalar",
     "`.item()`, `data_ptr()` and conversions to bool or numbers need one value, but a batched tensor has one per "
     "example. Keep the value a tensor and use tensor ops (fg::where, fg::maximum, ...)."},
    check_item, CheckScope::Vmap);

}  // namespace funcgen
