// Finds the FUNCGEN("...") annotations of a translation unit and turns each into a checked
// transform, reporting malformed specs as funcgen-spec errors at the byte inside the literal.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>

#include <memory>
#include <string>
#include <vector>

#include "frontend/spec.h"

namespace funcgen {

// One spec that parsed and checked: what to generate, for which function.
struct AnnotatedSpec {
  const clang::FunctionDecl* function = nullptr;
  std::string name;                      // of the generated function
  std::shared_ptr<const spec::Transform> transform;
  spec::FunctionInfo result;             // signature of the generated function
  clang::SourceLocation location;        // of the FUNCGEN use
};

// Collects the annotations of functions defined in the main file, in source order. Specs that
// fail are reported through the context's DiagnosticsEngine and left out.
std::vector<AnnotatedSpec> collect_specs(clang::ASTContext& context);

// The prefix FUNCGEN puts before the spec text in the annotation.
inline constexpr char kAnnotationPrefix[] = "funcgen:";

}  // namespace funcgen
