// Helpers the checks share: where the IR keeps the AST of code it did not lower, names for
// messages, and which expressions are conditions of control flow.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/Lex/Lexer.h>

#include <set>
#include <string>
#include <vector>

#include "checks/checks.h"

namespace funcgen::checks {

// The AST of every statement and condition of the function that the IR holds as a whole: opaque
// statements, declarations, assignments, expression statements, returns and conditions. Each
// piece of source appears once.
std::vector<const clang::Stmt*> leaf_asts(const std::vector<ir::StmtPtr>& body);

// The source text of a range.
std::string text_of(const clang::ASTContext& context, clang::SourceRange range);

// The names the user wrote: of a variable (not a version or a temporary that a transform made) and
// of a function (the one a derivative transform made code of).
std::string user_name(const ir::Var& v);
std::string user_name(const ir::Function& fn);

// What a temporary that a transform made stands for: the expression it was declared with (the
// condition the user wrote, which AD names `const bool taken = ...`); `e` itself otherwise.
const ir::Expr& as_written(const ir::Function& fn, const ir::Expr& e);

// A name for a tensor expression in messages: the variable's name, or the expression as written.
std::string describe(const ir::Function& fn, const clang::ASTContext& context, const ir::Expr& e);

// The first batched tensor variable an expression reads (for "depends on batched tensor 'x'").
std::string batched_source(const BatchingAnalysis& an, const ir::Expr& e);

// Every expression that is (part of) the condition of an if, loop, switch, ?:, && or ||.
std::set<const ir::Expr*> condition_exprs(const std::vector<ir::StmtPtr>& body);

// Where the call's name is (the member name of x.add_(y), the operator of x += y).
clang::SourceLocation call_location(const ir::Expr& e);

}  // namespace funcgen::checks
