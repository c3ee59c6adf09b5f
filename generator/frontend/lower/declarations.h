// Declarations of locals: tensors, references, structures, bindings, C arrays.
#pragma once

#include "frontend/lower/core.h"

namespace funcgen::lower {

class DeclarationLowering : public virtual LowererCore {
 protected:
  void leaf_writes(const clang::Stmt* s, std::vector<int>& writes) override;
  void lower_decl(std::vector<StmtPtr>& out, const clang::Decl* d, const clang::DeclStmt* ds) override;
  std::vector<const clang::DeclRefExpr*> references_to(const clang::ValueDecl* v) const;
  const clang::BindingDecl* written_binding(const clang::DecompositionDecl* dd) const;
  bool tensor_reference(const clang::VarDecl* vd, const clang::DeclStmt* ds);
  void tensor_pointer(const clang::VarDecl* vd, const clang::DeclStmt* ds);
  bool pointer_parameter(const clang::ParmVarDecl* p);
  const clang::DeclRefExpr* retarget_of(const clang::CallExpr* call, const clang::VarDecl* vd, const clang::DeclStmt* ds) const;
  bool retargets(const clang::Expr* e) override;
  enum class PointerUse { Read, Passed, Retargeted, Other };
  PointerUse pointer_use(const clang::DeclRefExpr* r, const clang::CallExpr*& call) const;
  void tensor_array(const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out);
  std::string local_array(const clang::VarDecl* vd, const clang::DeclStmt* ds);

  // `retarget(p, y)` calls that point the pointer p at the variable y from there on
  std::map<const clang::CallExpr*, std::pair<const clang::VarDecl*, const clang::ValueDecl*>> retargets_;
};

}  // namespace funcgen::lower
