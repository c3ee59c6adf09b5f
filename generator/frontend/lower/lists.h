// Tensor lists read at run-time indices (ir::kListPush), filled lists, lists joined by fg::cat/fg::stack, elements set.
#pragma once

#include "frontend/lower/core.h"

namespace funcgen::lower {

class ListLowering : public virtual LowererCore {
 protected:
  bool filled_list(const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) override;
  const clang::VarDecl* joined_list(const clang::Expr* e) const override;
  void hoist_init_captures(std::vector<StmtPtr>& out, const clang::Stmt* s) override;
  void join_lists(std::vector<StmtPtr>& out, const clang::Stmt* s) override;
  StmtPtr assign_listed(const clang::Expr* e) override;
  bool list_parameter_set(const clang::VarDecl* vd, const clang::Expr* e);
  StmtPtr list_set(const clang::VarDecl* vd, const clang::Expr* e, ExprPtr index, ExprPtr value);
};

}  // namespace funcgen::lower
