// The names a spec may give its generated function.
#pragma once

#include <clang/AST/Decl.h>
#include <clang/Lex/Preprocessor.h>

#include <optional>
#include <string>

namespace funcgen {

// Why `name` cannot name the function generated for a spec on `fn` (a keyword, `main`, a reserved
// name, a macro of the translation unit (`pp`, where known), or a name already declared where the
// generated function goes), or nothing when it can.
std::optional<std::string> generated_name_problem(const std::string& name, const clang::FunctionDecl* fn,
                                                  const clang::Preprocessor* pp);

}  // namespace funcgen
