// funcgen-global-assignment: a transformed function stores into a variable that outlives it.
#include <clang/AST/RecursiveASTVisitor.h>

#include "checks/check_util.h"

namespace funcgen {

namespace {

class Finder : public clang::RecursiveASTVisitor<Finder> {
 public:
  std::vector<std::pair<const clang::Expr*, const clang::VarDecl*>> found;

  bool VisitBinaryOperator(clang::BinaryOperator* b) {
    if (b->isAssignmentOp()) check(b->getLHS(), b->getOperatorLoc());
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* u) {
    if (u->isIncrementDecrementOp()) check(u->getSubExpr(), u->getOperatorLoc());
    return true;
  }
  bool VisitCXXOperatorCallExpr(clang::CXXOperatorCallExpr* c) {
    if (c->isAssignmentOp() || c->getOperator() == clang::OO_PlusPlus || c->getOperator() == clang::OO_MinusMinus)
      check(c->getArg(0), c->getOperatorLoc());
    return true;
  }

 private:
  void check(const clang::Expr* lhs, clang::SourceLocation) {
    const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(lhs->IgnoreParenImpCasts());
    if (ref == nullptr) return;
    const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl());
    if (var != nullptr && var->hasGlobalStorage()) found.emplace_back(ref, var);
  }
};

}  // namespace

void check_global_assignment(const VmapCheckContext& ctx, const BatchingAnalysis& fn) {
  Finder finder;
  for (const clang::Stmt* s : checks::leaf_asts(fn.function().body)) finder.TraverseStmt(const_cast<clang::Stmt*>(s));
  for (const auto& [ref, var] : finder.found) {
    const std::string kind = var->isStaticLocal()        ? "static variable"
                             : var->isStaticDataMember() ? "static member"
                                                         : "global variable";
    ctx.reporter.report("global-assignment", ref->getBeginLoc(),
                        "assignment to " + kind + " '" + var->getNameAsString() + "' inside '" +
                            checks::user_name(fn.function()) + "', which '" + ctx.spec.name +
                            "' transforms; return the value as an extra output instead")
        << ref->getSourceRange();
    ctx.reporter.note(
        var->getLocation(),
        "'" + var->getNameAsString() + "' is declared here; " +
            (ctx.levels.empty() ? "a transform sees only what the function returns, so the value stored there is not "
                                  "transformed (with grad, return it beside the loss and use has_aux=True)"
                                : "under vmap it would hold the value of one call for the whole batch, not one per "
                                  "example"));
  }
}

static const CheckRegistration registration(
    {"global-assignment", false, "a transformed function assigns to a variable outside it",
     "Transforms see only what a function returns: a value stored in a global or static variable is the value "
     "of one call of the transformed function, not of each example. Return it as an extra output instead "
     "(has_aux=True for grad, an extra tuple element for vmap)."},
    check_global_assignment, CheckScope::EveryTransform);

}  // namespace funcgen
