// Structured results: the tree a function returns, shaped by its returns, and the flat values each return gives.
#pragma once

#include "frontend/lower/core.h"

namespace funcgen::lower {

class ResultLowering : public virtual LowererCore {
 protected:
  bool structured_result(const clang::FunctionDecl* decl);
  bool returns_list(const clang::FunctionDecl* decl) override;
  const clang::FunctionDecl* list_maker(const clang::Expr* e) override;
  bool items_of(const clang::Expr* e, std::vector<const clang::Expr*>& items);
  std::pair<std::string, const clang::Expr*> map_item(const clang::Expr* item);
  bool shape_result(pytree::Tree& t, const clang::Expr* e, bool first);
  void flatten_value(const clang::Expr* e, const pytree::Tree& t, std::vector<ExprPtr>& out) override;
  ExprPtr lower_result(const clang::Expr* e) override;

  std::map<const clang::FunctionDecl*, bool> returns_list_;  // returns_list's answers
  bool open_result_ = false;            // the result holds a map or vector: its keys or length come from the returns
  bool result_shaped_ = false;          // (by the first return lowered)
  std::optional<pytree::Tree> result_;  // a structured result
};

}  // namespace funcgen::lower
