#include "checks/checks.h"

#include <algorithm>
#include <functional>
#include <set>

namespace funcgen {

namespace {

struct Registered {
  std::string id;
  CheckFunction function;
  CheckScope scope;
};

// By id, so that the order of the diagnostics does not depend on the order of registration.
std::vector<Registered>& registered() {
  static std::vector<Registered> checks;
  return checks;
}

void run_on(const VmapCheckContext& ctx, const BatchingAnalysis& fn, const std::vector<CheckFunction>& checks,
            std::set<const BatchingAnalysis*>& seen) {
  if (!seen.insert(&fn).second) return;
  for (CheckFunction c : checks) c(ctx, fn);
  // Helpers called with batched arguments are checked with their own batching.
  ir::for_each_expr(fn.function().body, [&](const ir::Expr& e) {
    if (const BatchingAnalysis* callee = fn.callee(e)) run_on(ctx, *callee, checks, seen);
  });
}

std::vector<CheckFunction> checks_for(bool vmap, bool derived) {
  std::vector<CheckFunction> out;
  for (const Registered& r : registered()) {
    if (!vmap && r.scope != CheckScope::EveryTransform) continue;
    if (derived && r.scope == CheckScope::UserVmap) continue;
    out.push_back(r.function);
  }
  return out;
}

}  // namespace

CheckRegistration::CheckRegistration(const CheckInfo& info, CheckFunction function, CheckScope scope) {
  register_check_info(info);
  std::vector<Registered>& checks = registered();
  const auto at = std::lower_bound(checks.begin(), checks.end(), info.id,
                                   [](const Registered& r, const char* id) { return r.id < id; });
  checks.insert(at, Registered{info.id, function, scope});
}

void run_vmap_checks(const VmapCheckContext& ctx) {
  std::set<const BatchingAnalysis*> seen;
  run_on(ctx, ctx.analysis, checks_for(true, ctx.derived), seen);
}

void run_function_checks(const VmapCheckContext& ctx) {
  std::set<const BatchingAnalysis*> seen;
  run_on(ctx, ctx.analysis, checks_for(false, ctx.derived), seen);
}

void run_vmapped_call_checks(const VmapCheckContext& ctx) {
  std::set<const BatchingAnalysis*> seen;
  const std::vector<CheckFunction> checks = checks_for(true, ctx.derived);
  std::function<void(const BatchingAnalysis&)> visit = [&](const BatchingAnalysis& fn) {
    if (!seen.insert(&fn).second) return;
    ir::for_each_expr(fn.function().body, [&](const ir::Expr& e) {
      const BatchingAnalysis* callee = fn.callee(e);
      if (callee == nullptr) return;
      if (e.form == ir::CallForm::Vmapped)
        run_on(ctx, *callee, checks, seen);
      else
        visit(*callee);
    });
  };
  visit(ctx.analysis);
}

}  // namespace funcgen
