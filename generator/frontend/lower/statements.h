// Statements: blocks, if, switch, loops, asserts, expression statements.
#pragma once

#include "frontend/lower/core.h"

namespace funcgen::lower {

class StatementLowering : public virtual LowererCore {
 protected:
  void append(std::vector<StmtPtr>& out, const clang::Stmt* s);
  bool assign_structure(std::vector<StmtPtr>& out, const clang::Expr* e);
  bool fill_structure(std::vector<StmtPtr>& out, const clang::Expr* e);
  void append_block(std::vector<StmtPtr>& out, const clang::CompoundStmt* c);
  bool flat_switch_body(const clang::Stmt* s, std::vector<StmtPtr>& out);
  bool always_returns(const clang::Stmt* s) override;
  void splice_last_block(std::vector<StmtPtr>& out);
  std::vector<StmtPtr> lower_body(const clang::Stmt* s) override;
  StmtPtr lower_stmt(const clang::Stmt* s);
  StmtPtr lower_if(const clang::IfStmt* i);
  StmtPtr taken_branch(const clang::IfStmt* i);
  StmtPtr exit_unless(const clang::Expr* cond, const clang::Stmt* at);
  StmtPtr lower_switch(const clang::SwitchStmt* sw);
  StmtPtr flatten_label(StmtPtr label);
  bool is_assert(const clang::Expr* e) const;
  StmtPtr lower_assert(const clang::Expr* e);
  StmtPtr lower_tie(const clang::Expr* e, const clang::CallExpr* tie, const clang::Expr* value);
  StmtPtr lower_expr_stmt(const clang::Expr* e);
  // Assignments of tensors inside expressions (on the lazy side of &&, || and ?:, before a comma),
  // hoisted into statements in C++'s order of evaluation.
  bool assigns_inside(const clang::Expr* e) const;
  bool hoistable(const clang::Expr* e) const;
  void hoist_statement(const clang::Expr* e, std::vector<StmtPtr>& out);
  ExprPtr hoisted(const clang::Expr* e, std::vector<StmtPtr>& out);
  void assign_hoisted(int var, StmtPtr decl, const clang::Expr* e, std::vector<StmtPtr>& out);
  bool hoist_declaration(const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out);
  StmtPtr hoisted_condition(const clang::Stmt* s, const clang::Expr* cond, StmtKind kind);

  const clang::Stmt* pending_after_label_ = nullptr;
};

}  // namespace funcgen::lower
