// funcgen-randomness: a random op under vmap with randomness='error' (the default), also under a
// derivative transform whose vmap runs the function (jacfwd, hessian) or inside a vmap of one.
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "checks/check_util.h"
#include "ir/module.h"
#include "ops/batching_rules.h"
#include "ops/registry.h"

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

// dropout's `train` argument (dropout, feature_dropout and their masks), or nullptr.
const ir::Expr* train_argument(const ir::Expr& e) {
  const ops::OpId op = ops::id(e);
  if (op != ops::dropout && op != ops::dropout_mask && op != ops::feature_dropout && op != ops::feature_dropout_mask)
    return nullptr;
  for (size_t i = 0; i < e.params.size() && i < e.args.size(); ++i)
    if (e.params[i] == "train") return e.args[i].get();
  return e.args.size() == 3 ? e.args[2].get() : nullptr;
}

// dropout's `train` as a constant, where it is one.
std::optional<bool> constant_train(const ir::Expr& e, const clang::ASTContext& context) {
  const ir::Expr* train = train_argument(e);
  bool value = true;
  if (train == nullptr || train->ast == nullptr || train->ast->isValueDependent() ||
      !train->ast->EvaluateAsBooleanCondition(value, context))
    return std::nullopt;
  return value;
}

// Whether the call draws random values: a random op, but not dropout in evaluation (train a
// constant false), which is the identity and which torch.func's vmap accepts whatever randomness is.
bool draws(const ir::Expr& e, const clang::ASTContext& context) {
  return find_rule(e.op).rule == BatchRule::Random && constant_train(e, context) != false;
}

// The notes for a random op's report: the randomness options, and for dropout whose `train` is
// not a constant, that evaluation (false) needs none.
void randomness_notes(Reporter& reporter, const ir::Expr& e, const VmapLevel& level, const clang::ASTContext& context) {
  const spec::Transform& t = *level.transform;
  const SpecLocations& where = *level.where;
  reporter.note(where.at(t.offset), "add randomness='different' for independent values per example")
      << randomness_fix(level, "different");
  reporter.note(where.at(t.offset), "or randomness='same' for one draw shared by the batch")
      << randomness_fix(level, "same");
  if (const ir::Expr* train = train_argument(e); train != nullptr && !constant_train(e, context))
    reporter.note(train->range.getBegin(), "in evaluation, dropout is the identity and draws nothing: pass train as "
                                           "the constant false (or a constexpr bool) to say so");
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
    if (!draws(e, ctx.context)) return;
    ctx.reporter.report(
        "randomness", checks::call_location(e),
        "random op 'fg::" + e.op +
            "' under vmap with randomness='error'; say whether each example "
            "draws its own values (randomness='different') or the batch shares one draw (randomness='same')")
        << e.range;
    randomness_notes(ctx.reporter, e, *error_level, ctx.context);
  });
}

bool check_randomness_under_derivatives(const RandomnessContext& ctx) {
  // The first transform that runs the function's forward pass under a vmap in 'error' mode: a vmap,
  // jacfwd (its basis), hessian (jacfwd(jacrev), whose jacfwd has randomness='error'). jacrev,
  // grad and jvp run only derivative code under their vmaps (as torch.func's do), so they are
  // not; the user's own vmaps around them are.
  const VmapLevel* level = nullptr;
  VmapLevel found;
  for (const auto& [t, where] : ctx.chain) {
    const bool vmaps = t->kind == spec::TransformKind::Vmap || t->kind == spec::TransformKind::Jacfwd ||
                       t->kind == spec::TransformKind::Hessian;
    if (!vmaps || (t->kind != spec::TransformKind::Hessian && t->randomness != spec::Randomness::Error)) continue;
    found.transform = t;
    found.where = where;
    level = &found;
    break;
  }
  if (level == nullptr) return false;
  bool reported = false;
  std::set<std::tuple<const clang::FunctionDecl*, std::vector<std::string>, ir::Constants>> seen;
  std::map<const clang::FunctionDecl*, size_t> levels;  // of a recursion (at most as many as the passes unfold)
  std::function<void(const clang::FunctionDecl*, const std::vector<std::string>&, const ir::Constants&)> visit =
      [&](const clang::FunctionDecl* decl, const std::vector<std::string>& absent, const ir::Constants& constants) {
    if (decl == nullptr || !seen.emplace(decl, absent, constants).second) return;
    if (!constants.empty() && ++levels[decl] > ir::CallChain::kMaxUnfolding) return;
    const ir::Function* fn = ctx.lowering.lower(decl, absent, constants);
    if (fn == nullptr) return;
    ir::for_each_expr(fn->body, [&](const ir::Expr& e) {
      if (e.kind != ir::ExprKind::Call || e.form == ir::CallForm::External) return;
      if (e.form == ir::CallForm::User) {
        visit(e.callee, e.absent, e.constants);
        return;
      }
      if (!draws(e, decl->getASTContext())) return;
      const spec::Transform& t = *level->transform;
      const SpecLocations& where = *level->where;
      const std::string name = spec::name_of(t.kind);
      const std::string message =
          t.kind == spec::TransformKind::Hessian
              ? "random op 'fg::" + e.op +
                    "' under hessian, whose vmap over the basis has randomness='error' "
                    "(jacfwd's default)"
              : "random op 'fg::" + e.op + "' under " + name +
                    " with randomness='error'; say whether each example "
                    "draws its own values (randomness='different') or the batch shares one draw (randomness='same')";
      ctx.reporter.report("randomness", checks::call_location(e), message) << e.range;
      reported |= ctx.reporter.last_reported();
      if (t.kind == spec::TransformKind::Hessian) {
        ctx.reporter.note(where.at(t.offset),
                          "hessian is jacfwd(jacrev(f)) with jacfwd's default randomness='error', "
                          "as in torch.func; write jacfwd(jacrev(f), randomness='same') to choose");
        return;
      }
      randomness_notes(ctx.reporter, e, *level, decl->getASTContext());
    });
  };
  visit(ctx.function, {}, {});
  return reported;
}

static const CheckRegistration registration(
    {"randomness", false, "a random op under vmap with randomness='error'",
     "vmap must know whether random values should differ per example. Add randomness='different' (independent "
     "per example) or randomness='same' (one draw shared by the batch) to the vmap."},
    check_randomness, CheckScope::UserVmap);

}  // namespace funcgen
