// Calls: runtime ops, methods, operators, helpers of the user's (with structures), std::swap.
#pragma once

#include "frontend/lower/core.h"

namespace funcgen::lower {

class CallLowering : public virtual LowererCore {
 protected:
  void add_args(ir::Expr& x, const clang::FunctionDecl* callee, llvm::ArrayRef<const clang::Expr*> args,
                bool fill_defaults = false, std::vector<std::string> packing = {}) override;
  void pass_pointer(ir::Expr& x, const clang::ParmVarDecl* p, const clang::Expr* arg);
  bool is_structured_type(clang::QualType t) const override;
  ExprPtr lower_member_call(const clang::CXXMemberCallExpr* mc) override;
  ExprPtr lower_member_call_on(const clang::CXXMemberCallExpr* mc, const clang::CXXMethodDecl* method,
                               const clang::Expr* object);
  bool structured_result_of(ir::Expr& x, const clang::FunctionDecl* callee, const clang::Expr* call) override;
  ExprPtr call_part(const clang::Expr* e) override;
  ExprPtr lower_method_call(const clang::CallExpr* mc, const clang::FunctionDecl* method, pytree::Tree* object,
                            const clang::Expr* object_expr = nullptr);
  ExprPtr lower_virtual_call(const clang::CXXMemberCallExpr* mc, const clang::CXXMethodDecl* method,
                             const clang::Expr* object);
  const clang::Expr* dynamic_object(const clang::Expr* object) const;
  bool only_read(const clang::VarDecl* vd) const;
  static bool qualified_call(const clang::CXXMemberCallExpr* mc);
  void pass_constants(const pytree::Tree& wanted, const clang::Expr* object, ir::Expr& x);
  bool of_numbers_only(const clang::FunctionDecl* method, const clang::Expr* object, bool devirtualized = false) const;
  bool statement_of_its_own(const clang::Expr* e) const;
  ExprPtr assignment_into(const clang::CXXOperatorCallExpr* oc, const clang::FunctionDecl* callee);
  ExprPtr lower_operator_call(const clang::CXXOperatorCallExpr* oc) override;
  ExprPtr lower_call(const clang::CallExpr* call) override;
  bool writes_no_tensor_argument(const clang::CallExpr* call, const clang::FunctionDecl* callee,
                                 const std::string& qname);
  StmtPtr lower_swap(const clang::Expr* e) override;
};

}  // namespace funcgen::lower
