// Structured parameters (frontend/pytree.h): which tree an expression names, optionals that hold no tensor, the trees
// of helpers' parameters.
#pragma once

#include "frontend/lower/core.h"

namespace funcgen::lower {

class StructureLowering : public virtual LowererCore {
 protected:
  std::vector<std::string> absent_at(const clang::CallExpr* call, const clang::FunctionDecl* callee,
                                     bool discovering) override;
  bool holds_no_tensor(const clang::Expr* arg);
  std::optional<bool> presence_test(const clang::Expr* e) override;
  void assigns_optional(const clang::Expr* e, const clang::Expr* object) override;
  pytree::Tree* optional_value(const clang::Expr* e, const clang::Expr* object, bool discovering);
  void discover(const clang::Stmt* s);
  const pytree::Tree* callee_tree(const clang::FunctionDecl* callee, unsigned i,
                                  const std::vector<std::string>& absent, const ir::Constants& constants = {}) override;
  const pytree::Tree* object_tree(const clang::FunctionDecl* callee, const std::vector<std::string>& absent) override;
  const pytree::Tree* signature_tree(const clang::FunctionDecl* callee, size_t k,
                                     const std::vector<std::string>& absent,
                                     const ir::Constants& constants = {}) override;
  bool takes_tensors(const clang::FunctionDecl* fn) const;
  bool is_user_function(const clang::FunctionDecl* callee) const override;
  pytree::Tree* resolve(const clang::Expr* e, bool discovering) override;
  std::optional<std::string> rebuilt(const pytree::Tree& t, std::vector<int>& reads) const override;
  pytree::Tree* resolve_decl(const clang::ValueDecl* d, bool discovering = false) override;
  pytree::Tree* not_constant(const clang::Expr* e, const pytree::Tree& base);
  ExprPtr node_value(const pytree::Tree& t, const clang::Expr* e) override;
  void pass_leaves(pytree::Tree& given, const pytree::Tree& wanted, const clang::Expr* e, ir::Expr& call) override;

  std::set<const pytree::Tree*> assigned_optionals_;  // reported: their reads are not reported again
};

}  // namespace funcgen::lower
