// Lambdas: the captures of a lambda lowered as a helper, lambdas passed to helpers, their calls.
#pragma once

#include "frontend/lower/core.h"

namespace funcgen::lower {

class LambdaLowering : public virtual LowererCore {
 protected:
  bool capture_parameters(const clang::FunctionDecl* decl) override;
  bool closure_parameter(const clang::ValueDecl* p, const clang::CXXRecordDecl* closure);
  bool hold_captures(const std::string& prefix, const clang::CXXRecordDecl* closure, std::vector<int>& held);
  const clang::ValueDecl* copied_variable(const clang::LambdaCapture& c);
  std::string uncapturable(const clang::LambdaCapture& c) const override;
  clang::QualType captured_type(const clang::ValueDecl* v) const;
  const clang::Expr* forwarded(const clang::Expr* e);
  const clang::Stmt* assignment_after(const clang::Stmt* s, const clang::ValueDecl* v,
                                      clang::SourceLocation after) const;
  const clang::Stmt* assignment_to(const clang::Stmt* s, const clang::ValueDecl* v) const;
  std::string pass_lambda(const clang::Expr* arg, const clang::CXXRecordDecl* closure,
                          const clang::FunctionDecl* callee, ir::Expr& call) override;
  std::optional<size_t> pass_captures(const clang::FunctionDecl* op, const clang::LambdaExpr* lambda,
                                      const clang::Expr* at, ir::Expr& call);
  const clang::LambdaExpr* lambda_expr_of(const clang::Expr* e);
  const clang::Expr* capture_init(const clang::LambdaExpr& lambda, const clang::ValueDecl* v);
  bool pass_list(const clang::Expr* arg, const pytree::Tree& wanted, ir::Expr& call) override;
  ExprPtr lower_lambda_call(const clang::CXXOperatorCallExpr* oc, const clang::FunctionDecl* op) override;

  std::map<const clang::ValueDecl*, std::vector<int>>
      closure_vars_;  // a lambda parameter's captures (closure_parameter)
  // The leaves of a structure that a lambda this helper was passed captures (closure_parameter).
  std::map<const clang::ValueDecl*, std::vector<int>> captured_leaves_;
};

}  // namespace funcgen::lower
