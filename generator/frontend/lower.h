// Lowers a C++ function definition from the Clang AST to funcgen's IR (ir/ir.h). Constructs that
// the IR cannot express are reported as funcgen-unsupported errors at the construct.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>

#include <map>
#include <memory>

#include "diag/reporter.h"
#include "ir/ir.h"
#include "ir/types.h"

namespace funcgen {

// Lowers functions on demand and keeps them (helpers are lowered once, however often called).
class Lowering {
 public:
  Lowering(clang::ASTContext& context, Reporter& reporter) : context_(context), reporter_(reporter) {}
  // nullptr when the function could not be lowered (the errors were reported).
  const ir::Function* lower(const clang::FunctionDecl* fn);

 private:
  clang::ASTContext& context_;
  Reporter& reporter_;
  std::map<const clang::FunctionDecl*, std::unique_ptr<ir::Function>> done_;
  std::map<const clang::FunctionDecl*, bool> failed_;
};

}  // namespace funcgen
