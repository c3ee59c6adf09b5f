// funcgen-randomness: a random op under vmap with randomness='error' (the default).
#include "checks/check_util.h"
#include "transforms/batching_rules.h"

namespace funcgen {

namespace {

clang::FixItHint randomness_fix(const VmapLevel& level, const std::string& value) {
  const spec::Transform& t = *level.transform;
  const SpecLocations& where = *level.where;
  if (t.randomness_given) {
    const clang::SourceLocation b = where.at(t.randomness_offset);
    const clang::SourceLocation e = where.at(t.randomness_offset + t.randomness_length);
    return clang::FixItHint::CreateReplacement(clang::CharSourceRange::getCharRange(b, e), "'" + value + "'");
  }
  // Before the vmap call's closing parenthesis.
  return clang::FixItHint::CreateInsertion(where.at(t.end - 1), ", randomness='" + value + "'");
}

}  // namespace

void check_randomness(const VmapCheckContext& ctx, const BatchingAnalysis& fn) {
  const VmapLevel* error_level = nullptr;
  for (const auto& l : ctx.levels)
    if (l.randomness == spec::Randomness::Error) {
      error_level = &l;
      break;
    }
  if (error_level == nullptr) return;
  ir::for_each_expr(fn.function().body, [&](const ir::Expr& e) {
    if (e.kind != ir::ExprKind::Call || e.form == ir::CallForm::User || e.form == ir::CallForm::External) return;
    if (find_rule(e.op).rule != BatchRule::Random) return;
    const spec::Transform& t = *error_level->transform;
    const SpecLocations& where = *error_level->where;
    ctx.reporter.report("randomness", checks::call_location(e),
                        "random op 'fg::" + e.op + "' under vmap with randomness='error'; say whether each example "
                        "draws its own values (randomness='different') or the batch shares one draw (randomness='same')")
        << e.range;
    ctx.reporter.note(where.at(t.offset), "add randomness='different' for independent values per example")
        << randomness_fix(*error_level, "different");
    ctx.reporter.note(where.at(t.offset), "or randomness='same' for one draw shared by the batch")
        << randomness_fix(*error_level, "same");
  });
}

}  // namespace funcgen
