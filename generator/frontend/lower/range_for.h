// Range-for loops: over lists, pieces, slices of a tensor, braced lists; elements written back.
#pragma once

#include "frontend/lower/core.h"

namespace funcgen::lower {

class RangeForLowering : public virtual LowererCore {
 protected:
  StmtPtr over_pieces(const clang::CXXForRangeStmt* rs, const Pieces& p);
  ExprPtr select_of(const clang::CXXRecordDecl* record, int tensor, ExprPtr dim, ExprPtr index) override;
  StmtPtr lower_range_for(const clang::CXXForRangeStmt* rs) override;
  const clang::Expr* unbound(const clang::Expr* e, const clang::Expr*& dim) override;
  StmtPtr slices(const clang::CXXForRangeStmt* rs, const clang::Expr* tensor, const clang::Expr* dim_expr) override;
  StmtPtr index_loop(const clang::CXXForRangeStmt* rs, const char* index_type, ExprPtr bound,
                     const std::function<ExprPtr(int)>& item) override;
  StmtPtr unrolled(const clang::CXXForRangeStmt* rs, const clang::InitListExpr* list);
  StmtPtr indexed(const clang::CXXForRangeStmt* rs, const clang::DeclRefExpr* range, bool tensors) override;
  void write_back_element(ir::Stmt& loop, const clang::CXXForRangeStmt* rs, const clang::DeclRefExpr* range);
  StmtPtr over_fixed(const clang::CXXForRangeStmt* rs, const pytree::Tree& t);
  StmtPtr over_made_list(const clang::CXXForRangeStmt* rs, const clang::CallExpr* call);
};

}  // namespace funcgen::lower
