// Recursion whose depth is a compile-time constant at the call. A call of a recursive helper passes
// the values of its integer arguments that are constants there (ir::Constants: a literal, or an
// expression of the caller's own known parameters, `n - 1`), and the helper is lowered once per
// pattern with those parameters known: a condition on them (`n == 0 ? x : halve(x / 2, n - 1)`,
// `if (n == 0) return x;`) takes one branch, as it does when the program runs, and the other is
// not lowered. Each level is then a function of its own that calls the next, and the last calls
// none; the passes unfold them (ir::CallChain) and report a recursion that does not end.
#pragma once

#include <llvm/ADT/APSInt.h>

#include "frontend/lower/core.h"

namespace funcgen::lower {

class RecursionLowering : public virtual LowererCore {
 protected:
  // The parameters `constants` names, known in the function being lowered.
  void known_parameters(const clang::FunctionDecl* decl, const ir::Constants& constants);
  ir::Constants constants_at(const clang::CallExpr* call, const clang::FunctionDecl* callee) override;
  std::optional<bool> known_test(const clang::Expr* e) override;
  // A switch on known parameters: the statements its case runs, from its label up to a break
  // (none where it is not one, or where a break stands deeper in the case than its statements).
  std::optional<std::vector<const clang::Stmt*>> known_case(const clang::SwitchStmt* sw) override;

 private:
  // Whether `p` is only read in `fn` (its value stays the one it was passed).
  static bool only_read(const clang::ParmVarDecl* p, const clang::FunctionDecl* fn);
  // The value of an integer expression of constants and known parameters, as C++ computes it
  // (none where it is not one, or where C++ leaves it undefined: a signed overflow, a division by 0).
  std::optional<llvm::APSInt> value_of(const clang::Expr* e) const;
  std::optional<llvm::APSInt> cast_value(const clang::CastExpr* c) const;
  std::optional<llvm::APSInt> unary_value(const clang::UnaryOperator* u) const;
  std::optional<llvm::APSInt> binary_value(const clang::BinaryOperator* b) const;
  bool reads_known(const clang::Stmt* s) const;
  llvm::APSInt of_type(const llvm::APInt& v, clang::QualType t) const;

  std::map<const clang::ValueDecl*, llvm::APSInt> known_;
};

}  // namespace funcgen::lower
