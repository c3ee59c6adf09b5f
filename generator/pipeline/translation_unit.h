// What funcgen makes of one parsed translation unit: its specs collected, checked and generated
// in order, and the files it read. Shared by the tool (tool/main.cpp) and its fuzz target
// (tests/fuzz/fuzz_tool.cpp), which run the same code on a file and on an in-memory input.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/Lex/Preprocessor.h>

#include <string>
#include <vector>

#include "emitter/output.h"

namespace funcgen {

struct ToolOptions {
  std::string checks;              // --checks globs
  std::string warnings_as_errors;  // --warnings-as-errors globs
  bool optimize = true;            // false: --no-optimize
};

struct TranslationUnitResult {
  size_t specs = 0;  // named specs found; each generates one function unless it reported an error
  std::vector<OutputFunction> functions;
  std::vector<std::string> dependencies;  // absolute, sorted, unique
};

// Reports through the context's diagnostics engine; a spec that reported an error generates nothing.
// `preprocessor` has the macros as they stand at the end of the file (a spec may not be named as one);
// `compile_errors` are where Clang reported errors (a function with one is not transformed: its AST
// lost the broken statement).
TranslationUnitResult generate_translation_unit(clang::ASTContext& context, const clang::Preprocessor& preprocessor,
                                                std::vector<clang::SourceLocation> compile_errors,
                                                const ToolOptions& options);

}  // namespace funcgen
