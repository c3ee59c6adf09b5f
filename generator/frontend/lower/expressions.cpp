#include "frontend/lower/expressions.h"

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

namespace {

// Why an expression on tensors has no IR, and what to write instead, in C++ words.
std::string expression_problem(const clang::Expr* e) {
  if (llvm::isa<clang::LambdaExpr>(e))
    return "a lambda that uses tensors cannot be transformed; write it as a function in this file, which funcgen "
           "transforms with its caller";
  if (llvm::isa<clang::ArraySubscriptExpr>(e))
    return "indexing a C array of tensors cannot be transformed; use a std::vector<fg::Tensor> or separate variables";
  if (llvm::isa<clang::MemberExpr>(e))
    return "a member of an object that holds tensors cannot be transformed; pass and return the tensors themselves";
  if (llvm::isa<clang::CXXNewExpr>(e) || llvm::isa<clang::CXXDeleteExpr>(e))
    return "new and delete of tensors cannot be transformed; use fg::Tensor values";
  if (llvm::isa<clang::CXXThrowExpr>(e)) return "throwing a tensor cannot be transformed; throw a message instead";
  if (llvm::isa<clang::StmtExpr>(e))
    return "a statement expression ({ ... }) cannot be transformed; write its statements before the expression";
  if (const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e); r != nullptr && llvm::isa<clang::FunctionDecl>(r->getDecl()))
    return "a function used as a value cannot be transformed; call it directly";
  return "this expression on tensors cannot be transformed; compute it with fg ops on fg::Tensor values";
}

}  // namespace

// Removes what the source does not spell: implicit casts, temporaries, copies and conversions
// into the runtime's parameter types (fg::Scalar, IntArrayRef, std::optional).
const clang::Expr* ExpressionLowering::strip(const clang::Expr* e) {
  while (true) {
    e = e->IgnoreImplicit();
    if (const auto* p = llvm::dyn_cast<clang::ParenExpr>(e)) { e = p->getSubExpr(); continue; }
    if (const auto* w = llvm::dyn_cast<clang::ExprWithCleanups>(e)) { e = w->getSubExpr(); continue; }
    if (const auto* m = llvm::dyn_cast<clang::MaterializeTemporaryExpr>(e)) { e = m->getSubExpr(); continue; }
    if (const auto* b = llvm::dyn_cast<clang::CXXBindTemporaryExpr>(e)) { e = b->getSubExpr(); continue; }
    if (const auto* l = llvm::dyn_cast<clang::CXXStdInitializerListExpr>(e)) { e = l->getSubExpr(); continue; }
    if (const auto* il = llvm::dyn_cast<clang::InitListExpr>(e);  // `hs{steps(x, n)}`: a copy of that vector
        il != nullptr && il->getNumInits() == 1 && is_tensor_vector(il->getType()) &&
        is_tensor_vector(il->getInit(0)->getType())) {
      e = il->getInit(0);
      continue;
    }
    if (const auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(e);
        c != nullptr && !llvm::isa<clang::CXXTemporaryObjectExpr>(c) && c->getNumArgs() >= 1 &&
        (c->getNumArgs() == 1 || llvm::isa<clang::CXXDefaultArgExpr>(c->getArg(1)))) {
      const std::string name = record_name(c->getType());
      if (name == "fg::Tensor" || name == "fg::Scalar" || name == "fg::ArrayRef" || name == "std::optional" ||
          (name == "std::vector" && !c->getArg(0)->getType()->isIntegerType()) ||  // (not h(n): n empty tensors)
          name == "std::basic_string" ||
          (c->getConstructor()->isCopyOrMoveConstructor() && c->getNumArgs() == 1)) {  // a copy: the same value
        e = c->getArg(0);
        continue;
      }
    }
    if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u != nullptr && u->getOpcode() == clang::UO_Deref)
      if (const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(u->getSubExpr()->IgnoreParenImpCasts());
          r != nullptr && points_to_tensor(r->getType()) && vars_.count(r->getDecl()) != 0) {
        e = r;  // `*p` of `fg::Tensor* p = &y;`: y (tensor_pointer)
        continue;
      }
    if (const auto* f = llvm::dyn_cast<clang::CXXFunctionalCastExpr>(e);
        f != nullptr && (is_fg_tensor(f->getType()) || record_name(f->getType()) == "fg::Scalar")) {
      e = f->getSubExpr();
      continue;
    }
    return e;
  }
}

ExprPtr ExpressionLowering::lower_expr(const clang::Expr* original) {
  const clang::Expr* e = strip(original);
  if (const std::optional<bool> known = presence_test(e)) {
    ExprPtr x = ir::opaque(*known ? "true" : "false", ir::Type::Bool);
    x->range = e->getSourceRange();
    x->ast = e;
    return x;
  }
  if (const auto* c = llvm::dyn_cast<clang::ConditionalOperator>(e))
    if (const std::optional<bool> taken = presence_test(c->getCond()))  // `b ? *b : zero`
      return lower_expr(*taken ? c->getTrueExpr() : c->getFalseExpr());
  if (ExprPtr chosen = fixed_element(e)) return chosen;
  if (const pytree::Tree* t = resolve(e, false)) return node_value(*t, e);
  if (auto j = joined_.find(e); j != joined_.end()) {  // join_lists computed it
    ExprPtr x = ir::var_ref(f_, j->second);
    x->range = e->getSourceRange();
    return x;
  }
  if (const clang::VarDecl* list = joined_list(e)) {  // where join_lists does not go
    unsupported(e, "concatenating or stacking the list '" + list->getNameAsString() + "' here cannot be transformed: "
                   "funcgen joins a vector of tensors in a statement of its own or an if's condition (not a "
                   "loop's, a side of ?:, the right of && or ||, or a lambda); compute it into a variable before this");
    return ir::opaque("fg::Tensor()", ir::Type::Tensor);
  }
  if (ExprPtr x = call_part(e)) return x;
  if (ExprPtr x = made_list_read(e)) return x;
  if (ExprPtr x = stacked_read(e)) return x;
  if (ExprPtr x = piece_read(e)) return x;
  if ((!needs_ir(e) && !helper_call(e)) || llvm::isa<clang::UnaryExprOrTypeTraitExpr>(e)) return opaque(e);

  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (auto it = vars_.find(ref->getDecl()); it != vars_.end()) {
      ExprPtr x = make_expr(ExprKind::VarRef, e);
      x->var = it->second;
      x->type = f_.var(it->second).type;
      return x;
    }
    return opaque(e);  // a global tensor: read as a constant (assignments to it are diagnosed)
  }
  if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(e)) return lower_member_call(mc);
  if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e)) return lower_operator_call(oc);
  if (const auto* call = llvm::dyn_cast<clang::CallExpr>(e);
      call != nullptr && call->getNumArgs() == 1 && call->getDirectCallee() != nullptr &&
      call->getDirectCallee()->getQualifiedNameAsString() == "std::size" &&
      ir_type_of(call->getArg(0)->getType()) == ir::Type::TensorList) {
    ExprPtr x = opaque(e);  // the length of a list (of a C array of tensors too): the same in every example
    x->op = ir::kListSize;
    return x;
  }
  if (const auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(e))
    if (const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(a->getBase()->IgnoreParenImpCasts());
        r != nullptr && vars_.count(r->getDecl()) != 0 && f_.var(vars_.at(r->getDecl())).type == ir::Type::TensorList) {
      // `a[i]` of a C array of tensors, declared as the std::vector it stands for (tensor_array):
      // the element, as `v[i]` of a vector is (lower_operator_call)
      ExprPtr x = make_expr(ExprKind::Call, e);
      x->form = ir::CallForm::External;
      x->text = "[]";
      x->op = "operator[]";
      const clang::Expr* args[] = {a->getBase(), a->getIdx()};
      add_args(*x, nullptr, args);
      return x;
    }
  if (const auto* call = llvm::dyn_cast<clang::CallExpr>(e)) return lower_call(call);
  if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(e);
      u != nullptr && (u->getOpcode() == clang::UO_AddrOf || u->getOpcode() == clang::UO_Deref)) {
    unsupported(e, "a pointer to a tensor cannot be transformed; use the tensor itself (fg::Tensor is a handle: "
                   "copies share its storage) or a reference");
    return opaque(e);
  }
  if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(e)) {
    ExprPtr x = make_expr(ExprKind::Unary, e);
    x->text = clang::UnaryOperator::getOpcodeStr(u->getOpcode()).str();
    x->args.push_back(lower_expr(u->getSubExpr()));
    return x;
  }
  if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e)) {
    ExprPtr x = make_expr(ExprKind::Binary, e);
    x->text = b->getOpcodeStr().str();
    x->args.push_back(lower_expr(b->getLHS()));
    x->args.push_back(lower_expr(b->getRHS()));
    return x;
  }
  if (const auto* c = llvm::dyn_cast<clang::ConditionalOperator>(e)) {
    ExprPtr x = make_expr(ExprKind::Conditional, e);
    x->args.push_back(lower_expr(c->getCond()));
    x->args.push_back(lower_expr(c->getTrueExpr()));
    x->args.push_back(lower_expr(c->getFalseExpr()));
    return x;
  }
  if (const auto* il = llvm::dyn_cast<clang::InitListExpr>(e)) {
    const ir::Type t = ir_type_of(il->getType());
    ExprPtr x = make_expr(t == ir::Type::TensorTuple ? ExprKind::Tuple : ExprKind::List, e);
    for (const clang::Expr* item : il->inits()) x->args.push_back(lower_expr(item));
    return x;
  }
  if (const auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(e)) {
    // std::tuple<fg::Tensor, fg::Tensor>{a, b} / std::vector<fg::Tensor>{a, b}
    const ir::Type t = ir_type_of(c->getType());
    if (t == ir::Type::TensorTuple || t == ir::Type::TensorList) {
      ExprPtr x = make_expr(t == ir::Type::TensorTuple ? ExprKind::Tuple : ExprKind::List, e);
      for (const clang::Expr* item : c->arguments()) {
        if (llvm::isa<clang::CXXDefaultArgExpr>(item)) break;
        x->args.push_back(lower_expr(item));
      }
      if (t == ir::Type::TensorList && x->args.size() == 1 && x->args[0]->kind == ExprKind::List)
        return std::move(x->args[0]);
      return x;
    }
    // `{}` for an optional tensor argument (nll_loss(x, t, {}, Reduction::Sum)), `fg::Tensor()`:
    // an undefined tensor, the same under every transform.
    if (c->getNumArgs() == 0) return opaque(e);
  }
  if (const auto* cast = llvm::dyn_cast<clang::ExplicitCastExpr>(e)) {
    ExprPtr x = make_expr(ExprKind::Cast, e);
    x->text = cxx_spelling(cast->getType(), context_);
    x->args.push_back(lower_expr(cast->getSubExpr()));
    return x;
  }
  if (const auto* ic = llvm::dyn_cast<clang::ImplicitCastExpr>(original->IgnoreParens());
      ic != nullptr && ir::is_scalar(ir_type_of(ic->getType())) && !ir::is_scalar(ir_type_of(e->getType()))) {
    ExprPtr x = make_expr(ExprKind::Cast, ic);
    x->text = cxx_spelling(ic->getType(), context_);
    x->args.push_back(lower_expr(ic->getSubExpr()));
    return x;
  }
  if (const auto* m = llvm::dyn_cast<clang::MemberExpr>(e)) {
    const auto* call = llvm::dyn_cast<clang::CallExpr>(strip(m->getBase()));
    if (call != nullptr && call->getDirectCallee() != nullptr && is_structured_type(call->getType())) {
      unsupported(call, "'" + call->getDirectCallee()->getNameAsString() + "' returns a structure, which funcgen "
                        "cannot take apart in its caller yet; return std::tuple or tensors from helpers");
      ExprPtr x = make_expr(ExprKind::Opaque, e);  // reported: its parts are not reported again
      x->text = text_of(e);
      return x;
    }
  }
  unsupported(e, expression_problem(e));
  return opaque(e);
}

}  // namespace funcgen::lower
