// The names a spec may give its generated function.
#pragma once

#include <clang/AST/Decl.h>
#include <clang/Lex/Preprocessor.h>

#include <optional>
#include <string>

namespace funcgen {

// The longest name a generated function may have: compilers take longer ones, but no one writes
// them, and every helper's name and message repeats it.
inline constexpr size_t kMaxNameLength = 1024;

// Why `name` cannot name the function generated for a spec on `fn` (a keyword, `main`, a reserved
// name, a macro of the translation unit (`pp`, where known), or a name already declared where the
// generated function goes), or nothing when it can.
std::optional<std::string> generated_name_problem(const std::string& name, const clang::FunctionDecl* fn,
                                                  const clang::Preprocessor* pp);

}  // namespace funcgen
