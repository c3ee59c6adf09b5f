// std::vector<fg::Tensor> built by push_back and read at constant or loop indices (held stacked), and pieces of
// fg::split/chunk/unbind.
#pragma once

#include "frontend/lower/core.h"

namespace funcgen::lower {

class StackedListLowering : public virtual LowererCore {
 protected:
  std::optional<Pieces> pieces_of(const clang::Expr* e) const override;
  ExprPtr piece_dim(const Pieces& p) override;
  ExprPtr piece_count(const Pieces& p, ExprPtr held, ExprPtr n, ExprPtr dim,
                      const clang::CXXRecordDecl* tensor) override;
  ExprPtr piece_at(const Pieces& p, ExprPtr held, ExprPtr n, ExprPtr dim, ExprPtr index) override;
  ExprPtr piece_read(const clang::Expr* e) override;
  void find_stacked(const clang::Stmt* body);
  bool element_assigned(const clang::Expr* e) const override;
  bool written_through(const clang::Expr* e) const override;
  Stacked* stacked_object(const clang::CXXMemberCallExpr* mc) override;
  const clang::VarDecl* listed_object(const clang::CXXMemberCallExpr* mc) override;
  StmtPtr push_listed(const clang::VarDecl* vd, const clang::CXXMemberCallExpr* mc) override;
  ExprPtr cat_of(const clang::Expr* at, std::vector<ExprPtr> items, ExprPtr dim) override;
  const clang::Expr* unmoved(const clang::Expr* e) override;
  void declare_stacked(Stacked& v, const clang::VarDecl* vd, const clang::DeclStmt* ds,
                       std::vector<StmtPtr>& out) override;
  StmtPtr push(Stacked& v, const clang::CXXMemberCallExpr* mc) override;
  ExprPtr made_list_read(const clang::Expr* e) override;
  ExprPtr stacked_read(const clang::Expr* e) override;
  StmtPtr indexed_stacked(const clang::CXXForRangeStmt* rs, const Stacked& v) override;
  ExprPtr element_of(const Stacked& v, const clang::CXXRecordDecl* tensor, ExprPtr index);
  ExprPtr piece_n(const Stacked& v);
};

}  // namespace funcgen::lower
