// Building and copying IR: what the transforms that produce new functions (AD) need.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace funcgen::ir {

// Deep copies; `remap` (when given) maps the var ids of VarRef and the reads/writes of Opaque.
ExprPtr clone(const Expr& e, const std::function<int(int)>& remap = nullptr);
StmtPtr clone(const Stmt& s, const std::function<int(int)>& remap = nullptr);

ExprPtr var_ref(const Function& fn, int id);
ExprPtr opaque(const std::string& text, Type type);
ExprPtr tuple(std::vector<ExprPtr> items);

// A new local of `fn` named `name` (which the caller made unique).
int add_var(Function& fn, const std::string& name, Type type, const std::string& cxx_type);

// A new function that stands for `src` (its names, namespaces, declaration and return type), with
// no variables, parameters or body yet.
std::unique_ptr<Function> derived_function(const Function& src);

// How a variable's value is held by value: its C++ type without `const` and `&`.
std::string value_type(const Var& v);

StmtPtr decl(int var, ExprPtr init);
StmtPtr assign(int var, ExprPtr value);
StmtPtr ret(ExprPtr value);
StmtPtr eval(ExprPtr value);

// The var ids that `body` reads (VarRefs and the reads of Opaque expressions and statements).
std::vector<int> reads_of(const std::vector<StmtPtr>& body);

}  // namespace funcgen::ir
