// Questions about the Clang AST that the lowerings (frontend/lower/*.cpp) share: which types and
// statements involve tensors, how calls, lambdas, labels and lists are written.
#pragma once

#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/Stmt.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "frontend/pytree.h"
#include "ir/ir.h"
#include "ir/types.h"

namespace funcgen::lower {

using ir::ExprKind;
using ir::ExprPtr;
using ir::StmtKind;
using ir::StmtPtr;

bool is_tensor_type(clang::QualType t);
// fg::Tensor* or const fg::Tensor*.
bool points_to_tensor(clang::QualType t);
// A struct or class of the user's that holds tensors (at any depth): its tensors cannot be followed
// through the object. The runtime's and the standard library's types are not: fg::Tensor and
// std::vector or std::tuple of tensors are lowered as such.
bool user_record_holds_tensors(clang::QualType type);
// The class of a lambda, where `t` is one (a helper template's `F f`, `const F&`, `F&&`).
const clang::CXXRecordDecl* closure_of(clang::QualType t);
// The variables a lambda captures, in order (its helper's first parameters).
std::vector<const clang::ValueDecl*> captured(const clang::CXXRecordDecl* closure);
// Whether a value of type `t` holds tensors: a tensor, a container or structure of them.
bool holds_tensors(clang::QualType t, int depth = 0);
// Whether `t` is a lambda that captures tensors (or structures or lambdas that hold them).
bool captures_tensors(clang::QualType t);
// Whether any part of an expression or statement has a tensor-like type: such code must be lowered
// op by op; everything else is kept as C++ text.
bool involves_tensors(const clang::Stmt* s);
// The runtime op of an overloaded operator on tensors ("" for unary plus), or null.
const char* operator_op(clang::OverloadedOperatorKind k, bool unary);

// A call's object (a member function's, a functor's whose operator() it calls) and arguments.
struct CallParts {
  const clang::Expr* object = nullptr;
  std::vector<const clang::Expr*> args;
};

// A std::vector<fg::Tensor> parameter that the body reads at run-time indices, iterates, sizes or
// passes on whole is a list of the flat function (its length is known only at run time); one
// read only at constant indices is a structure whose leaves are the elements read.
// Passed whole to a helper, it is what the helper's parameter is.
bool list_parameter(const clang::ParmVarDecl* p, const clang::Stmt* body, int depth = 0);
bool is_lambda(const clang::FunctionDecl* fn);
// The variables a lambda captures, in order (its helper's first parameters: lower_lambda_call,
// closure_parameter).
std::vector<const clang::ValueDecl*> captured(const clang::FunctionDecl* fn);
// The variable an init-capture declares (`s` of `[s = w * 2]`), or nullptr for another capture.
const clang::VarDecl* init_capture(const clang::LambdaCapture& c);
CallParts parts_of(const clang::CallExpr* call, const clang::FunctionDecl* callee);
// The leaves' names by their paths: p.w1 -> p_w1, std::get<0>(t) -> t_0, params.at("fc1.weight") ->
// params_fc1.weight (made an identifier by fresh_name).
void leaf_names(const pytree::Tree& t, const std::string& at, std::vector<std::string>& out);
bool is_instance_method(const clang::FunctionDecl* fn);
// A non-const member function that returns a reference to its own object, `return *this;` at
// every return (`Acc& operator+=(const fg::Tensor& x)`): its flat function returns nothing (its
// caller's object is what it returns).
bool returns_its_object(const clang::FunctionDecl* fn);
bool non_const_reference(clang::QualType t);
// The object whose part `e` reads (`s.state.h`, `std::get<0>(t)`, `a[1]`: `s`, `t`, `a`), or nullptr.
const clang::Expr* base_of_part(const clang::Expr* e);
// The two sides of `a = b` (a built-in or a class's operator=), or false.
bool assignment_sides(const clang::Expr* e, const clang::Expr*& lhs, const clang::Expr*& rhs, std::string& op);
// Whether a case label of a switch follows (control enters there however the code before ends).
bool case_after(clang::CompoundStmt::const_body_iterator it, clang::CompoundStmt::const_body_iterator end);
bool has_case_label(const clang::Stmt* s);
bool is_tensor_vector(clang::QualType t);
bool is_push(const clang::CXXMemberCallExpr* mc);
// The construction of a vector of `n` copies of a tensor (`h(n, h0)`: h0) or of `n` empty ones
// (`h(n)`: the ctor itself); null for other constructions.
const clang::Expr* filled_with(const clang::CXXConstructExpr* ctor);

// The arguments as a vector (ExprPtr cannot be copied out of an initializer list).
template <class... E>
std::vector<ExprPtr> exprs_of(E... e) {
  std::vector<ExprPtr> out;
  (out.push_back(std::move(e)), ...);
  return out;
}

// The locals an opaque piece of code reads and writes.
class VarUses : public clang::RecursiveASTVisitor<VarUses> {
 public:
  explicit VarUses(const std::map<const clang::ValueDecl*, int>& vars) : vars_(vars) {}
  std::vector<int> reads, writes;

  bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
    if (auto it = vars_.find(e->getDecl()); it != vars_.end()) add(reads, it->second);
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* u) {
    if (u->isIncrementDecrementOp()) mark_written(u->getSubExpr());
    return true;
  }
  bool VisitBinaryOperator(clang::BinaryOperator* b) {
    if (b->isAssignmentOp()) mark_written(b->getLHS());
    return true;
  }

 private:
  void mark_written(const clang::Expr* e) {
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts()))
      if (auto it = vars_.find(ref->getDecl()); it != vars_.end()) add(writes, it->second);
  }
  static void add(std::vector<int>& v, int id) {
    if (std::find(v.begin(), v.end(), id) == v.end()) v.push_back(id);
  }
  const std::map<const clang::ValueDecl*, int>& vars_;
};

}  // namespace funcgen::lower
