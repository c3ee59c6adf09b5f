// funcgen-out-variant: an `_out` op under vmap (vmap does not support out= operations).
#include <clang/AST/Expr.h>

#include "checks/check_util.h"
#include "ops/batching_rules.h"
#include "ops/registry.h"

namespace funcgen {

void check_out_variant(const VmapCheckContext& ctx, const BatchingAnalysis& fn) {
  const ir::Function& f = fn.function();
  ir::for_each_expr(f.body, [&](const ir::Expr& e) {
    if (e.kind != ir::ExprKind::Call || e.form != ir::CallForm::Free || e.args.empty()) return;
    if (find_rule(e.op).rule != BatchRule::Out) return;
    Levels any = 0;
    for (const auto& a : e.args) any |= fn.of(*a);
    if (any == 0) return;  // nothing batched flows through it: it runs as written
    const std::string& functional = ops::info(e).out_functional;
    // fg::add_out(out, a, b)  ->  out = fg::add(a, b)
    std::vector<std::string> rest;
    for (size_t i = 1; i < e.args.size(); ++i) rest.push_back(checks::text_of(ctx.context, e.args[i]->range));
    std::string replacement = checks::text_of(ctx.context, e.arg(0).range) + " = fg::" + functional + "(";
    for (size_t i = 0; i < rest.size(); ++i) replacement += (i ? ", " : "") + rest[i];
    replacement += ")";
    ctx.reporter.report("out-variant", checks::call_location(e),
                        "'fg::" + e.op +
                            "' writes into its 'out' argument, which vmap does not support; use the "
                            "functional 'fg::" +
                            functional + "' and assign its result")
        << e.range << clang::FixItHint::CreateReplacement(clang::CharSourceRange::getTokenRange(e.range), replacement);
  });
}

static const CheckRegistration registration(
    {"out-variant", false, "an `_out` op under vmap",
     "vmap does not support out= operations: the destination has no batch dimension. Use the functional form "
     "(`fg::add(a, b)` instead of `fg::add_out(out, a, b)`)."},
    check_out_variant, CheckScope::Vmap);

}  // namespace funcgen
