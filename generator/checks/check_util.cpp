#include "checks/check_util.h"

#include <clang/AST/ExprCXX.h>

#include <functional>

namespace funcgen::checks {

std::vector<const clang::Stmt*> leaf_asts(const std::vector<ir::StmtPtr>& body) {
  std::vector<const clang::Stmt*> out;
  ir::for_each_stmt(body, [&](const ir::Stmt& s) {
    switch (s.kind) {
      case ir::StmtKind::Decl:
        if (s.expr && s.expr->ast) out.push_back(s.expr->ast);
        break;
      case ir::StmtKind::Bind:
      case ir::StmtKind::Assign:
      case ir::StmtKind::Eval:
      case ir::StmtKind::Return:
      case ir::StmtKind::Opaque:
        if (s.ast) out.push_back(s.ast);
        break;
      case ir::StmtKind::If:
      case ir::StmtKind::While:
      case ir::StmtKind::DoWhile:
      case ir::StmtKind::Switch:
        if (s.expr && s.expr->ast) out.push_back(s.expr->ast);
        break;
      case ir::StmtKind::For:
        if (s.expr && s.expr->ast) out.push_back(s.expr->ast);
        if (s.step && s.step->ast) out.push_back(s.step->ast);
        break;
      default:
        break;
    }
  });
  return out;
}

std::string text_of(const clang::ASTContext& context, clang::SourceRange range) {
  const auto& sm = context.getSourceManager();
  // Inside a macro's argument (assert(x.sum() > 0)): the argument's text, not the whole macro use.
  const clang::CharSourceRange in_file =
      clang::Lexer::makeFileCharRange(clang::CharSourceRange::getTokenRange(range), sm, context.getLangOpts());
  const clang::CharSourceRange r = in_file.isValid() ? in_file
                                                     : clang::CharSourceRange::getTokenRange(sm.getExpansionRange(range).getAsRange());
  return clang::Lexer::getSourceText(r, sm, context.getLangOpts()).str();
}

std::string user_name(const ir::Var& v) {
  if (!v.written.empty()) return v.written;
  return v.decl != nullptr ? v.decl->getNameAsString() : v.name;
}
std::string user_name(const ir::Function& fn) { return fn.decl != nullptr ? fn.decl->getNameAsString() : fn.name; }

namespace {

// The initializer of a variable that a transform made (no declaration of the user's).
const ir::Expr* temporary_init(const ir::Function& fn, const ir::Expr& e) {
  if (e.kind != ir::ExprKind::VarRef || fn.var(e.var).decl != nullptr || fn.var(e.var).param_index >= 0)
    return nullptr;
  const ir::Expr* init = nullptr;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.kind == ir::StmtKind::Decl && s.var == e.var && s.expr && init == nullptr) init = s.expr.get();
  });
  return init;
}

}  // namespace

const ir::Expr& as_written(const ir::Function& fn, const ir::Expr& e) {
  const ir::Expr* init = temporary_init(fn, e);
  return init != nullptr && init->range.isValid() ? *init : e;
}

std::string describe(const ir::Function& fn, const clang::ASTContext& context, const ir::Expr& e) {
  if (e.kind == ir::ExprKind::VarRef && (fn.var(e.var).decl != nullptr || e.range.isInvalid()))
    return user_name(fn.var(e.var));
  return text_of(context, e.range);
}

std::string batched_source(const BatchingAnalysis& an, const ir::Expr& e) {
  const ir::Function& fn = an.function();
  std::string found;
  std::set<int> seen;
  // A temporary that a transform made stands for its definition: name what the user wrote.
  std::function<void(const ir::Expr&)> visit = [&](const ir::Expr& root) {
    ir::for_each_expr(root, [&](const ir::Expr& x) {
      if (!found.empty()) return;
      if (x.kind == ir::ExprKind::VarRef && an.of(x) != 0) {
        const ir::Expr* init = temporary_init(fn, x);
        if (init == nullptr) found = user_name(fn.var(x.var));
        else if (seen.insert(x.var).second) visit(*init);
      }
      if (x.kind == ir::ExprKind::Opaque)
        for (int v : x.reads)
          if (found.empty() && an.var(v) != 0) found = user_name(fn.var(v));
    });
  };
  visit(e);
  return found;
}

std::set<const ir::Expr*> condition_exprs(const std::vector<ir::StmtPtr>& body) {
  std::set<const ir::Expr*> out;
  auto add_all = [&](const ir::Expr& e) { ir::for_each_expr(e, [&](const ir::Expr& x) { out.insert(&x); }); };
  ir::for_each_stmt(body, [&](const ir::Stmt& s) {
    const bool control = s.kind == ir::StmtKind::If || s.kind == ir::StmtKind::While ||
                         s.kind == ir::StmtKind::DoWhile || s.kind == ir::StmtKind::Switch ||
                         s.kind == ir::StmtKind::For;
    if (control && s.expr) add_all(*s.expr);
  });
  // A condition that a transform named (`const bool taken = ...; if (taken)`) is a condition too.
  std::set<int> named;
  for (const ir::Expr* e : out)
    if (e->kind == ir::ExprKind::VarRef) named.insert(e->var);
  ir::for_each_stmt(body, [&](const ir::Stmt& s) {
    if (s.kind == ir::StmtKind::Decl && s.expr && named.count(s.var) != 0) add_all(*s.expr);
  });
  ir::for_each_expr(body, [&](const ir::Expr& e) {
    if (e.kind == ir::ExprKind::Conditional) add_all(e.arg(0));
    if (e.kind == ir::ExprKind::Binary && (e.text == "&&" || e.text == "||")) {
      add_all(e.arg(0));
      add_all(e.arg(1));
    }
  });
  return out;
}

clang::SourceLocation call_location(const ir::Expr& e) {
  if (e.ast == nullptr) return e.range.getBegin();
  if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(e.ast))
    if (const auto* me = llvm::dyn_cast<clang::MemberExpr>(mc->getCallee()->IgnoreParens())) return me->getMemberLoc();
  if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e.ast)) return oc->getOperatorLoc();
  if (const auto* c = llvm::dyn_cast<clang::CallExpr>(e.ast)) return c->getCallee()->getBeginLoc();
  return e.ast->getExprLoc();
}

}  // namespace funcgen::checks
