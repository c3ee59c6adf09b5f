// funcgen-side-effect (warning): under vmap the body runs once for the whole batch, so I/O and
// writes to state outside the function happen once, not once per example.
#include <clang/AST/RecursiveASTVisitor.h>

#include <algorithm>

#include "checks/check_util.h"
#include "ir/types.h"
#include "frontend/lower.h"

namespace funcgen {

namespace {

bool is_stream(clang::QualType t) {
  const auto* record = t.getNonReferenceType()->getAsCXXRecordDecl();
  if (record == nullptr || !record->hasDefinition()) return false;
  bool stream = false;
  auto is_ostream = [](const clang::CXXRecordDecl* r) {
    const std::string n = r->getQualifiedNameAsString();
    return n == "std::basic_ostream" || n == "std::basic_ios" || n == "std::ios_base";
  };
  if (is_ostream(record)) return true;
  record->forallBases([&](const clang::CXXRecordDecl* base) {
    if (is_ostream(base)) stream = true;
    return true;
  });
  return stream;
}

bool is_io_function(const clang::FunctionDecl* fn) {
  if (fn == nullptr) return false;
  static const char* const names[] = {"printf",       "puts",       "putchar",     "fprintf",   "fputs",
                                      "fwrite",       "perror",     "std::printf", "std::puts", "std::putchar",
                                      "std::fprintf", "std::fputs", "std::fwrite"};
  const std::string q = fn->getQualifiedNameAsString();
  for (const char* n : names)
    if (q == n) return true;
  return false;
}

// The variable an lvalue expression names, looking through members, subscripts and derefs.
const clang::ValueDecl* root_of(const clang::Expr* e, bool& through_pointer) {
  while (true) {
    e = e->IgnoreParenImpCasts();
    if (const auto* m = llvm::dyn_cast<clang::MemberExpr>(e)) {
      through_pointer |= m->isArrow();
      e = m->getBase();
    } else if (const auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
      e = a->getBase();
    } else if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(e);
               u != nullptr && u->getOpcode() == clang::UO_Deref) {
      through_pointer = true;
      e = u->getSubExpr();
    } else if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e);
               oc != nullptr && (oc->getOperator() == clang::OO_Subscript || oc->getOperator() == clang::OO_Star ||
                                 oc->getOperator() == clang::OO_Arrow)) {
      e = oc->getArg(0);
    } else if (const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
      return r->getDecl();
    } else {
      return nullptr;
    }
  }
}

struct Effect {
  clang::SourceLocation loc;
  clang::SourceRange range;
  std::string message;
  const clang::ValueDecl* state = nullptr;
};

class Finder : public clang::RecursiveASTVisitor<Finder> {
 public:
  // `helper`: a function the transformed one calls, whose reference parameters are the caller's
  // variables (batched with it), not state outside.
  // `owner`: the function whose parameters are state outside (null: any function's).
  Finder(const std::string& fn, bool helper, const clang::FunctionDecl* owner, const clang::SourceManager& sm)
      : fn_(fn), helper_(helper), owner_(owner), sm_(sm) {}
  std::vector<Effect> found;

  bool VisitCXXOperatorCallExpr(clang::CXXOperatorCallExpr* c) {
    if (c->getOperator() == clang::OO_LessLess && c->getNumArgs() == 2 && is_stream(c->getArg(0)->getType())) {
      // Report a chain `std::cout << a << b` once, at its start.
      const auto* inner = llvm::dyn_cast<clang::CXXOperatorCallExpr>(c->getArg(0)->IgnoreImplicit());
      if (inner == nullptr || inner->getOperator() != clang::OO_LessLess) io(c->getArg(0), c->getSourceRange());
    }
    if (c->isAssignmentOp() || c->getOperator() == clang::OO_PlusPlus || c->getOperator() == clang::OO_MinusMinus)
      write(c->getArg(0), c->getSourceRange());
    return true;
  }
  bool VisitCallExpr(clang::CallExpr* c) {
    const clang::FunctionDecl* callee = c->getDirectCallee();
    if (is_io_function(callee)) io(c, c->getSourceRange());
    // State outside passed on by non-const reference to a function of the user's (or a lambda) that
    // may change it.
    const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(c);
    if (callee == nullptr || !callee->hasBody() || sm_.isInSystemHeader(callee->getLocation()) ||
        (oc != nullptr && oc->getOperator() != clang::OO_Call))
      return true;
    const unsigned shift = oc != nullptr && llvm::isa<clang::CXXMethodDecl>(callee);  // (the object is argument 0)
    for (unsigned i = shift; i < c->getNumArgs() && i - shift < callee->getNumParams(); ++i) {
      const clang::QualType t = callee->getParamDecl(i - shift)->getType();
      if (t->isLValueReferenceType() && !t.getNonReferenceType().isConstQualified())
        write(c->getArg(i), c->getSourceRange(), "", oc != nullptr ? "a lambda" : "'" + callee->getNameAsString() + "'");
    }
    return true;
  }
  bool VisitCXXMemberCallExpr(clang::CXXMemberCallExpr* c) {
    const clang::CXXMethodDecl* m = c->getMethodDecl();
    if (m == nullptr || m->isConst() || is_fg_tensor(c->getImplicitObjectArgument()->getType())) return true;
    if (is_stream(c->getImplicitObjectArgument()->getType())) {
      io(c->getImplicitObjectArgument(), c->getSourceRange());
      return true;
    }
    write(c->getImplicitObjectArgument(), c->getSourceRange(), m->getNameAsString());
    return true;
  }
  bool VisitBinaryOperator(clang::BinaryOperator* b) {
    if (b->isAssignmentOp()) write(b->getLHS(), b->getSourceRange());
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* u) {
    if (u->isIncrementDecrementOp()) write(u->getSubExpr(), u->getSourceRange());
    return true;
  }

 private:
  void io(const clang::Expr* at, clang::SourceRange range) {
    found.push_back(
        {at->getBeginLoc(), range,
         "output runs once for the whole batch, not once per example: vmap runs '" + fn_ + "' a single time", nullptr});
  }
  // `passed_to`: the function it is passed to by reference, which may change it.
  void write(const clang::Expr* target, clang::SourceRange range, const std::string& method = "",
             const std::string& passed_to = "") {
    bool through_pointer = false;
    const clang::ValueDecl* root = root_of(target, through_pointer);
    if (root == nullptr) return;
    const auto* parm = llvm::dyn_cast<clang::ParmVarDecl>(root);
    // A lambda's parameter names what its call passes (a call passing outside state is reported).
    if (const auto* m = parm != nullptr ? llvm::dyn_cast<clang::CXXMethodDecl>(parm->getDeclContext()) : nullptr;
        m != nullptr && m->getParent()->isLambda())
      return;
    const auto* var = llvm::dyn_cast<clang::VarDecl>(root);
    // (A helper inlined into the function, as AD inlines those that write their reference
    // parameters, brings statements on its own parameters: the caller's variables.)
    const bool own = parm == nullptr || owner_ == nullptr || parm->getDeclContext() == owner_;
    // (A helper's pointer to a tensor is a reference to the caller's variable, as its reference is.)
    const bool tensor_pointer = parm != nullptr && parm->getType()->isPointerType() && is_fg_tensor(parm->getType()->getPointeeType());
    const bool outside_param = parm != nullptr && ((parm->getType()->isReferenceType() && !helper_ && own) ||
                                                   (through_pointer && parm->getType()->isPointerType() &&
                                                    !(tensor_pointer && helper_)));
    // Plain assignments to globals are funcgen-global-assignment's; method calls on them are ours.
    const bool outside_global = var != nullptr && var->hasGlobalStorage() && (!method.empty() || !passed_to.empty());
    if (!outside_param && !outside_global) return;
    const std::string what = !passed_to.empty() ? "is passed by reference to " + passed_to + ", which may modify it"
                             : method.empty()   ? "is modified"
                                                : "is modified by '" + method + "'";
    found.push_back({target->getBeginLoc(), range,
                     "'" + root->getNameAsString() + "' " + what +
                         " once for the whole batch, not once per example: "
                         "vmap runs '" +
                         fn_ + "' a single time",
                     root});
  }
  std::string fn_;
  bool helper_;
  const clang::FunctionDecl* owner_;
  const clang::SourceManager& sm_;
};

}  // namespace

void check_side_effect(const VmapCheckContext& ctx, const BatchingAnalysis& fn) {
  // Only a vmap the user wrote has examples; jacfwd's and hessian's vmaps over the basis run the
  // function's effects once, as the function itself does.
  if (std::none_of(ctx.levels.begin(), ctx.levels.end(),
                   [](const VmapLevel& l) { return l.transform->kind == spec::TransformKind::Vmap; }))
    return;
  Finder finder(checks::user_name(fn.function()), &fn != &ctx.analysis, fn.function().decl, ctx.context.getSourceManager());
  for (const clang::Stmt* s : checks::leaf_asts(fn.function().body)) finder.TraverseStmt(const_cast<clang::Stmt*>(s));
  for (const Effect& e : finder.found) {
    ctx.reporter.report("side-effect", e.loc, e.message) << e.range;
    if (e.state != nullptr)
      ctx.reporter.note(e.state->getLocation(), llvm::isa<clang::ParmVarDecl>(e.state)
                                                    ? "'" + e.state->getNameAsString() + "' refers to state outside '" +
                                                          checks::user_name(fn.function()) + "'"
                                                    : "'" + e.state->getNameAsString() + "' is declared here");
    ctx.reporter.note(ctx.spec.location,
                      "return the values instead, or move the side effect out of the function that '" + ctx.spec.name +
                          "' transforms");
  }
}

static const CheckRegistration registration(
    {"side-effect", true, "vmap runs a side effect once for the whole batch",
     "Under vmap the function body runs once on the whole batch, so I/O and writes to state outside the function "
     "(reference or pointer parameters, containers, statics) happen once, not once per example. Return the "
     "values instead, or move the side effect outside the transformed function."},
    check_side_effect, CheckScope::Vmap);

}  // namespace funcgen
