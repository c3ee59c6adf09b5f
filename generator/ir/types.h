// C++ types as the IR sees them: which are fg::Tensor, the IR type of each, how generated code
// spells them.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Type.h>

#include <string>

#include "ir/ir.h"

namespace funcgen {

// Without references, qualifiers and sugar.
clang::QualType bare(clang::QualType t);
// The qualified name of a class type ("std::vector"), empty for other types.
std::string record_name(clang::QualType t);
// Template argument i's type of a class template specialization (std::vector, std::tuple).
clang::QualType template_arg(clang::QualType t, unsigned i = 0);

// fg::Tensor, by value or reference, const or not.
bool is_fg_tensor(clang::QualType type);
// Whether a value of the type holds fg::Tensors: a tensor, or a pointer, array, container, tuple
// or class with one inside, at any depth.
bool holds_tensors(clang::QualType type);
// A parameter through which its function may assign the caller's variable: a non-const lvalue
// reference, or a pointer to a non-const fg::Tensor (a helper's lowering takes it as a reference).
bool writable_parameter(const clang::ValueDecl* d);
// The IR type of a C++ type.
ir::Type ir_type_of(clang::QualType type);
// How a type is spelled in generated code (fully qualified).
std::string cxx_spelling(clang::QualType type, const clang::ASTContext& context);
// How generated code calls a function of the user's: from the global namespace (`::relu`,
// `::ns::f`), so that argument-dependent lookup adds no fg op of the same name (fg::relu beside a
// user's or a spec's relu), whatever the function is named.
std::string call_name(const clang::FunctionDecl* fn);

// `type` as a header that sees only the standard library and funcgen can spell it: the aliases the
// user declared (typedef, using) replaced by what they name, and names fully qualified. Aliases of
// system headers and of fg stay (int64_t).
clang::QualType without_user_aliases(clang::QualType type, const clang::ASTContext& context);

}  // namespace funcgen
