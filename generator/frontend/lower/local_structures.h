// Local structures (held leaf by leaf) and the C++ text that names their leaves.
#pragma once

#include "frontend/lower/core.h"

namespace funcgen::lower {

class LocalStructureLowering : public virtual LowererCore {
 protected:
  std::optional<pytree::Tree> local_tree(clang::QualType type) const override;
  bool is_local(const pytree::Tree& node) const;
  std::optional<bool> mutable_param(const pytree::Tree& leaf) const;
  bool writable(const pytree::Tree& node, const clang::Stmt* at, bool passed_on = false) override;
  void declare_leaves(pytree::Tree& t, const clang::ValueDecl* decl, const std::string& root, bool exact_name = false);
  bool needs_ir(const clang::Stmt* s) const override;
  bool names_textless(const clang::Stmt* s) const override;
  bool helper_call(const clang::Expr* e) const override;
  const clang::FunctionDecl* structured_callee(const clang::Expr* e) const override;
  const clang::ValueDecl* root_decl(const clang::Expr* e) override;
  const clang::FunctionDecl* call_root(const clang::Expr* e) override;
  void init_leaves(const pytree::Tree& t, clang::QualType type, const clang::Expr* init, bool declare,
                   const clang::Stmt* at, std::vector<StmtPtr>& out) override;
  void default_values(clang::QualType type, const pytree::Tree& t, std::vector<ExprPtr>& out);
  bool declare_structure(const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) override;
  bool declare_bindings(const clang::DecompositionDecl* dd, const clang::DeclStmt* ds,
                        std::vector<StmtPtr>& out) override;
  std::string with_leaves(const clang::Stmt* node, std::string text, std::vector<int>& reads) override;
  void find_fixed(const clang::Stmt* body);
  void keep_lengths(const std::vector<std::pair<const clang::CXXOperatorCallExpr*, const clang::VarDecl*>>& assignments);
  bool fixed_type(clang::QualType t) const;
  ExprPtr fixed_element(const clang::Expr* e) override;
  void find_init_captures(const clang::Stmt* s, std::vector<std::pair<clang::SourceRange, std::string>>& edits,
                          std::vector<int>& reads);
  void find_leaves(const clang::Stmt* s, std::vector<std::pair<clang::SourceRange, std::string>>& edits,
                   std::vector<int>& reads);
  void find_unqualified(const clang::Stmt* s, std::vector<std::pair<clang::SourceRange, std::string>>& edits);

  std::set<const clang::ValueDecl*> local_trees_;  // those of trees_ that are locals (held leaf by leaf)
};

}  // namespace funcgen::lower
