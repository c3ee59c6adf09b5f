#include "checks/checks.h"

#include <set>

namespace funcgen {

namespace {

void run_on(const VmapCheckContext& ctx, const BatchingAnalysis& fn, std::set<const BatchingAnalysis*>& seen) {
  if (!seen.insert(&fn).second) return;
  check_global_assignment(ctx, fn);
  check_autograd_api(ctx, fn);
  check_side_effect(ctx, fn);
  check_inplace_batched(ctx, fn);
  check_out_variant(ctx, fn);
  check_data_dependent_control_flow(ctx, fn);
  check_item(ctx, fn);
  check_dynamic_shape(ctx, fn);
  check_randomness(ctx, fn);
  // Helpers called with batched arguments are checked with their own batching.
  ir::for_each_expr(fn.function().body, [&](const ir::Expr& e) {
    if (const BatchingAnalysis* callee = fn.callee(e)) run_on(ctx, *callee, seen);
  });
}

}  // namespace

void run_vmap_checks(const VmapCheckContext& ctx) {
  std::set<const BatchingAnalysis*> seen;
  run_on(ctx, ctx.analysis, seen);
}

}  // namespace funcgen
