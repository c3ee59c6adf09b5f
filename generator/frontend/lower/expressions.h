// Expressions: the tree of runtime ops an expression computes, and what is kept as C++ text.
#pragma once

#include "frontend/lower/core.h"

namespace funcgen::lower {

class ExpressionLowering : public virtual LowererCore {
 protected:
  const clang::Expr* strip(const clang::Expr* e) override;
  ExprPtr lower_expr(const clang::Expr* original) override;
};

}  // namespace funcgen::lower
