// funcgen-dynamic-shape: nonzero and friends on a batched tensor: each example's result would have
// its own shape, which one batched tensor cannot hold.
#include "checks/check_util.h"
#include "ops/batching_rules.h"
#include "ops/registry.h"

namespace funcgen {

void check_dynamic_shape(const VmapCheckContext& ctx, const BatchingAnalysis& fn) {
  const ir::Function& f = fn.function();
  const std::set<const ir::Expr*> conditions = checks::condition_exprs(f.body);
  ir::for_each_expr(f.body, [&](const ir::Expr& e) {
    if (e.kind != ir::ExprKind::Call || e.args.empty() || conditions.count(&e) != 0) return;
    if (e.form == ir::CallForm::User || e.form == ir::CallForm::External) return;
    if (find_rule(e.op).rule != BatchRule::Dynamic) return;
    const ir::Expr* which = nullptr;
    for (const auto& a : e.args)
      if (a->type == ir::Type::Tensor && fn.of(*a) != 0 && which == nullptr) which = a.get();
    if (which == nullptr) return;
    const std::string name = checks::describe(f, ctx.context, *which);
    const bool is_bool = ops::id(e) == ops::is_nonzero;
    ctx.reporter.report("dynamic-shape", checks::call_location(e),
                        "'" + e.op + "' on batched tensor '" + name + "' " +
                            (is_bool ? "needs a single value, but '" + name + "' has one per example"
                                     : "gives a shape that depends on its values, which differ per example; vmap needs "
                                       "every example's result to have the same shape"))
        << e.range;
    ctx.reporter.note(e.range.getBegin(), is_bool ? "compare with tensor ops (fg::ne, fg::where) instead"
                                                  : "use a mask with fg::where, or a fixed-size alternative");
  });
}

static const CheckRegistration registration(
    {"dynamic-shape", false, "an op whose output shape depends on a batched tensor's values",
     "nonzero, masked_select, unique and is_nonzero give shapes that differ per example, which one batched tensor "
     "cannot hold. Use a mask and fg::where, or a fixed-size alternative."},
    check_dynamic_shape, CheckScope::Vmap);

}  // namespace funcgen
