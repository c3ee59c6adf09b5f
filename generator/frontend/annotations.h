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

// Where each byte of a spec's text was written: FUNCGEN's string literal(s), found by lexing the
// macro use. Literals are mapped character for character; an escape sequence maps all of its
// bytes to its backslash.
class SpecLocations {
 public:
  SpecLocations() = default;
  SpecLocations(const clang::SourceManager& sm, const clang::LangOptions& lang, clang::SourceLocation attr_loc);
  clang::SourceLocation at(size_t offset) const {
    if (offset < bytes_.size()) return bytes_[offset];
    return end_.isValid() ? end_ : fallback_;
  }

 private:
  clang::SourceLocation fallback_;
  clang::SourceLocation end_;  // the closing quote of the last literal: past the text (all of "")
  std::vector<clang::SourceLocation> bytes_;
};

// One spec that parsed and checked: what to generate, for which function.
struct AnnotatedSpec {
  // The user function the spec's innermost name resolves to (through earlier specs' names): the
  // one resolution that the spec check and every stage of generation use.
  const clang::FunctionDecl* function = nullptr;
  std::string name;                      // of the generated function
  std::shared_ptr<const spec::Transform> transform;
  spec::FunctionInfo result;             // signature of the generated function
  clang::SourceLocation location;        // of the FUNCGEN use
  SpecLocations spec_locations;          // of each byte of the spec text
};

// FUNCGEN("custom_vjp(f)") / FUNCGEN("custom_jvp(f)") before `rule`: AD uses `rule` for calls of
// `primal` instead of differentiating its body.
//   custom_vjp rule: (f's parameters..., result, grad) -> the gradient of each tensor parameter
//                    (fg::Tensor, or a std::tuple when f has several)
//   custom_jvp rule: (f's parameters..., one tangent per tensor parameter) -> the result's tangent
struct CustomRule {
  bool vjp = true;  // else jvp
  const clang::FunctionDecl* primal = nullptr;
  const clang::FunctionDecl* rule = nullptr;
};

// Collects the annotations of functions defined in the main file, in source order. Specs that
// fail are reported through the context's DiagnosticsEngine and left out. Derivative rules go to
// `rules` (checked against their primal's signature). `pp`, where given, is the translation unit's
// preprocessor, whose macros a generated function's name must not be.
std::vector<AnnotatedSpec> collect_specs(clang::ASTContext& context, std::vector<CustomRule>* rules = nullptr,
                                        const clang::Preprocessor* pp = nullptr);

// One transform of a spec, with the spec text it was written in.
struct SpecLink {
  const spec::Transform* t = nullptr;
  const SpecLocations* where = nullptr;
};

// The transforms of `spec` from the outermost in, continuing through the transforms of earlier
// specs it names (`vmap(batched)`), ending with the link of the user function (kind Function).
// `specs` is the translation unit's list (collect_specs's result) that `spec` belongs to.
std::vector<SpecLink> spec_chain(const AnnotatedSpec& spec, const std::vector<AnnotatedSpec>& specs);

// The prefix FUNCGEN puts before the spec text in the annotation.
inline constexpr char kAnnotationPrefix[] = "funcgen:";

}  // namespace funcgen
