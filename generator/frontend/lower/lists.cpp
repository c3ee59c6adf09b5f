#include "frontend/lower/lists.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <set>
#include <variant>

#include <clang/AST/DeclCXX.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Lex/Lexer.h>

#include "compat/clang_compat.h"
#include "frontend/pytree.h"
#include "ir/build.h"
#include "ir/cxx_text.h"

#include "frontend/lower/queries.h"

namespace funcgen::lower {

// std::vector<fg::Tensor> h(n, value);  ->  std::vector<fg::Tensor> h; { const fg::Tensor h_item__ =
// value; for (int64_t h_index__ = 0; h_index__ < n; ++h_index__) h.push_back(h_item__); }
// (the elements share value's memory, as the copies the constructor makes do; `h(n)` pushes an
// empty tensor). False for other declarations.
bool ListLowering::filled_list(const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) {
  const auto* ctor = llvm::dyn_cast_or_null<clang::CXXConstructExpr>(vd->getInit() ? strip(vd->getInit()) : nullptr);
  const clang::Expr* value = filled_with(ctor);
  if (value == nullptr) return false;
  StmtPtr d = make(StmtKind::Decl, ds);
  d->var = add_var(vd, vd->getType().getUnqualifiedType());  // (pushed to: not const)
  out.push_back(std::move(d));
  StmtPtr block = make(StmtKind::Block, ds);
  const std::string name = vd->getNameAsString();
  // (an empty tensor: declared without a value, which AD keeps unset in loops too)
  const int item = value == ctor ? declare_made(block->body, ds, name + "_item__", ir::Type::Tensor, "fg::Tensor", nullptr)
                                 : declare_made(block->body, ds, name + "_item__", ir::Type::Tensor, "const fg::Tensor",
                                                lower_expr(value));
  const int count = declare_made(block->body, ds, name + "_count__", ir::Type::Int, "const int64_t",
                                 lower_expr(ctor->getArg(0)));
  StmtPtr loop = make(StmtKind::For, ds);
  const int index = declare_made(loop->init, ds, name + "_index__", ir::Type::Int, "int64_t", ir::opaque("0", ir::Type::Int));
  loop->expr = ir::binary("<", ir::var_ref(f_, index), ir::var_ref(f_, count), ir::Type::Bool);
  loop->step = ir::unary("++", ir::var_ref(f_, index), ir::Type::Int);
  StmtPtr push = make(StmtKind::Eval, ds);
  push->expr = ir::tape_op(f_, ir::kListPush, {vars_.at(vd), item}, ir::Type::Void);
  loop->body.push_back(std::move(push));
  block->body.push_back(std::move(loop));
  out.push_back(std::move(block));
  return true;
}

// The list that `e`, fg::cat(v, ...) or fg::stack(v, ...), joins; null for other expressions.
const clang::VarDecl* ListLowering::joined_list(const clang::Expr* e) const {
  const auto* call = llvm::dyn_cast<clang::CallExpr>(e);
  const clang::FunctionDecl* f = call != nullptr ? call->getDirectCallee() : nullptr;
  if (f == nullptr || call->getNumArgs() == 0 || listed_.empty()) return nullptr;
  const std::string name = f->getQualifiedNameAsString();
  if (name != "fg::cat" && name != "fg::stack") return nullptr;
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(call->getArg(0)->IgnoreParenImpCasts());
  const auto* vd = ref != nullptr ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
  return vd != nullptr && listed_.count(vd) != 0 ? vd : nullptr;
}

// A lambda's init-captures of tensors and numbers (`[s = w * 2]`) in statement `s`, declared before
// it (`const fg::Tensor s_capture__ = w * 2;`): the lambda's helper is passed that variable. Not
// in a part that C++ may not evaluate (a side of ?:, the right of && and ||), nor in a lambda's
// body (its own lowering declares them).
void ListLowering::hoist_init_captures(std::vector<StmtPtr>& out, const clang::Stmt* s) {
  if (s == nullptr) return;
  if (const auto* c = llvm::dyn_cast<clang::AbstractConditionalOperator>(s)) return hoist_init_captures(out, c->getCond());
  if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(s); b != nullptr && b->isLogicalOp())
    return hoist_init_captures(out, b->getLHS());
  if (const auto* l = llvm::dyn_cast<clang::LambdaExpr>(s)) {
    for (const clang::LambdaCapture& c : l->captures()) {
      const clang::VarDecl* v = init_capture(c);
      if (v == nullptr || v->getInit() == nullptr || vars_.count(v) != 0) continue;
      const clang::QualType t = v->getType().getNonReferenceType();
      if (!is_fg_tensor(t) && !t->isArithmeticType()) continue;  // (reported where it is passed)
      hoist_init_captures(out, v->getInit());
      const int id = declare_made(out, v->getInit(), numbered(v->getNameAsString(), "_capture__") + "_capture__", ir_type_of(t),
                                  is_fg_tensor(t) ? "const fg::Tensor"
                                                  : "const " + cxx_spelling(t.getCanonicalType().getUnqualifiedType(), context_),
                                  lower_expr(v->getInit()));
      vars_[v] = id;
    }
    return;
  }
  for (const clang::Stmt* child : s->children()) hoist_init_captures(out, child);
}

// fg::cat(v, d) or fg::stack(v, d) of a list in statement `s`, computed before it by a loop that
// concatenates its elements one by one (each transform goes through cat and element reads):
//   fg::Tensor v_joined__ = v[0] (.unsqueeze(d)); for (k = 1; k < v.size(); ++k) v_joined__ =
//   fg::cat({v_joined__, v[k] (.unsqueeze(d))}, d);
// The call then reads v_joined__. Not inside a lambda, or a part that C++ may not evaluate (a side
// of ?:, the right of && and ||): there it stays a call on the whole vector, reported.
void ListLowering::join_lists(std::vector<StmtPtr>& out, const clang::Stmt* s) {
  if (listed_.empty() || s == nullptr || llvm::isa<clang::LambdaExpr>(s)) return;
  if (const auto* c = llvm::dyn_cast<clang::AbstractConditionalOperator>(s)) {  // its condition always runs
    join_lists(out, c->getCond());
    return;
  }
  if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(s); b != nullptr && b->isLogicalOp()) {
    join_lists(out, b->getLHS());
    return;
  }
  for (const clang::Stmt* child : s->children()) join_lists(out, child);
  const auto* call = llvm::dyn_cast<clang::CallExpr>(s);
  const clang::VarDecl* vd = call != nullptr ? joined_list(call) : nullptr;
  if (vd == nullptr || vars_.count(vd) == 0) return;
  const bool stack = call->getDirectCallee()->getName() == "stack";
  const clang::Expr* dim_arg = call->getNumArgs() > 1 && !llvm::isa<clang::CXXDefaultArgExpr>(call->getArg(1)) ? call->getArg(1) : nullptr;
  const clang::CXXRecordDecl* tensor = bare(call->getType())->getAsCXXRecordDecl();
  const std::string list = numbered(vd->getNameAsString(), "_joined__");  // (from the second join of it)
  const int dim = declare_made(out, call, list + "_dim__", ir::Type::Int, "const int64_t",
                               dim_arg != nullptr ? lower_expr(dim_arg) : ir::opaque("0", ir::Type::Int));
  const auto element = [&](ExprPtr index) {  // v[index], unsqueezed at dim for a stack
    ExprPtr x = ir::element(ir::var_ref(f_, vars_.at(vd)), std::move(index));
    if (!stack) return x;
    std::vector<ExprPtr> args;
    args.push_back(std::move(x));
    args.push_back(ir::var_ref(f_, dim));
    return method_call(tensor, "unsqueeze", ir::Type::Tensor, std::move(args));
  };
  std::vector<ExprPtr> first;  // the first element, as std::vector::at would check it
  first.push_back(ir::opaque(vd->getNameAsString() + ".size()", ir::Type::Int));
  first.push_back(ir::opaque("0", ir::Type::Int));
  const int joined = generated_var(list + "_joined__", ir::Type::Tensor, "fg::Tensor");
  StmtPtr start = make(StmtKind::Decl, call);
  start->var = joined;
  start->expr = element(ir::external_call("fg::ad::checked_index", std::move(first), ir::Type::Int));
  if (!stack)  // fg::cat({v[0]}, d): one element is checked as cat checks it (its dim, not 0-dim)
    start->expr = cat_of(call, exprs_of(std::move(start->expr)), ir::var_ref(f_, dim));
  out.push_back(std::move(start));
  StmtPtr loop = make(StmtKind::For, call);
  const int k = declare_made(loop->init, call, list + "_index__", ir::Type::Int, "int64_t", ir::opaque("1", ir::Type::Int));
  ExprPtr size = ir::opaque("static_cast<int64_t>(" + vd->getNameAsString() + ".size())", ir::Type::Int);
  size->op = ir::kListSize;
  size->reads = {vars_.at(vd)};
  loop->expr = ir::binary("<", ir::var_ref(f_, k), std::move(size), ir::Type::Bool);
  loop->step = ir::unary("++", ir::var_ref(f_, k), ir::Type::Int);
  StmtPtr grow = make(StmtKind::Assign, call);
  grow->var = joined;
  grow->text = "=";
  grow->expr = cat_of(call, exprs_of(ir::var_ref(f_, joined), element(ir::var_ref(f_, k))), ir::var_ref(f_, dim));
  loop->body.push_back(std::move(grow));
  out.push_back(std::move(loop));
  joined_[call] = joined;
}

// v[i] = y; (also v.at(i), v.back(), v.front(), a[i] of a C array) on a list  ->  { const fg::Tensor v_item__ = y;
// const int64_t v_at__ = i; v[v_at__] = v_item__; } (ir::kListSet); null for other statements.
StmtPtr ListLowering::assign_listed(const clang::Expr* e) {
  const clang::Expr* lhs = nullptr;
  const clang::Expr* rhs = nullptr;
  std::string op;
  if (!assignment_sides(e, lhs, rhs, op) || op != "=") return nullptr;
  lhs = strip(lhs);
  const clang::Expr* list = nullptr;
  ExprPtr index;
  if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(lhs); oc != nullptr && oc->getOperator() == clang::OO_Subscript) {
    list = oc->getArg(0);
    index = lower_expr(oc->getArg(1));
  } else if (const auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(lhs)) {  // of a C array of tensors
    list = a->getBase();
    index = lower_expr(a->getIdx());
  } else if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(lhs); mc != nullptr && mc->getMethodDecl() != nullptr) {
    list = mc->getImplicitObjectArgument();
    const std::string m = mc->getMethodDecl()->getNameAsString(), name = text_of(list);
    if (m == "at") {
      std::vector<ExprPtr> args;
      args.push_back(ir::opaque(name + ".size()", ir::Type::Int));
      args.push_back(lower_expr(mc->getArg(0)));
      index = ir::external_call("fg::ad::checked_index", std::move(args), ir::Type::Int);
    } else if (m == "back" || m == "front") {
      index = ir::opaque(m == "front" ? "0" : "static_cast<int64_t>(" + name + ".size()) - 1", ir::Type::Int);
    }
  }
  const auto* ref = list != nullptr ? llvm::dyn_cast<clang::DeclRefExpr>(strip(list)) : nullptr;
  const auto* vd = ref != nullptr ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
  if (vd == nullptr || !index || vars_.count(vd) == 0 || (listed_.count(vd) == 0 && !list_parameter_set(vd, e)))
    return nullptr;
  return list_set(vd, e, std::move(index), lower_expr(unmoved(rhs)));
}

// Whether `v[i] = y` (`e`) on the parameter `vd` is a list operation: `vd` is a list of the flat
// function taken by non-const reference, whose caller sees the element assigned (AD inlines the
// helper, anf.cpp). A list taken by value is the helper's copy, which the list operation would
// not be: reported.
bool ListLowering::list_parameter_set(const clang::VarDecl* vd, const clang::Expr* e) {
  if (!llvm::isa<clang::ParmVarDecl>(vd) || f_.var(vars_.at(vd)).type != ir::Type::TensorList) return false;
  if (!non_const_reference(vd->getType())) {
    unsupported(e, "an element of '" + vd->getNameAsString() + "', a std::vector of tensors taken by value, cannot "
                   "be assigned yet; take it by reference (std::vector<fg::Tensor>& " + vd->getNameAsString() +
                   ") to change the caller's list, or build a new vector of the results and return it");
    return false;
  }
  return true;
}

// { const fg::Tensor v_item__ = value; const int64_t v_at__ = index; v[v_at__] = v_item__; } (ir::kListSet)
StmtPtr ListLowering::list_set(const clang::VarDecl* vd, const clang::Expr* e, ExprPtr index, ExprPtr value) {
  StmtPtr block = make(StmtKind::Block, e);
  const std::string name = vd->getNameAsString();
  const int item = declare_made(block->body, e, name + "_item__", ir::Type::Tensor, "const fg::Tensor", std::move(value));
  const int at = declare_made(block->body, e, name + "_at__", ir::Type::Int, "const int64_t", std::move(index));
  StmtPtr set = make(StmtKind::Eval, e);
  set->expr = ir::tape_op(f_, ir::kListSet, {vars_.at(vd), at, item}, ir::Type::Void);
  set->expr->range = e->getSourceRange();
  block->body.push_back(std::move(set));
  return block;
}

}  // namespace funcgen::lower
