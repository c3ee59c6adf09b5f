#include "frontend/lower/queries.h"

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

namespace funcgen::lower {

bool is_tensor_type(clang::QualType t) { return ir::is_tensor_like(ir_type_of(t)); }

bool points_to_tensor(clang::QualType t) { return t->isPointerType() && is_fg_tensor(t->getPointeeType()); }

// A struct or class of the user's that holds tensors (at any depth): its tensors cannot be followed
// through the object. The runtime's and the standard library's types are not: fg::Tensor and
// std::vector or std::tuple of tensors are lowered as such.
bool user_record_holds_tensors(clang::QualType type) {
  const auto* record = bare(type)->getAsCXXRecordDecl();
  if (record == nullptr) return false;
  const std::string name = record->getQualifiedNameAsString();
  if (name.rfind("fg::", 0) == 0 || name.rfind("std::", 0) == 0) return false;
  return funcgen::holds_tensors(type);  // (ir/types.h)
}

// The class of a lambda, where `t` is one (a helper template's `F f`, `const F&`, `F&&`).
const clang::CXXRecordDecl* closure_of(clang::QualType t) {
  const clang::CXXRecordDecl* r = t.isNull() ? nullptr : t.getNonReferenceType()->getAsCXXRecordDecl();
  return r != nullptr && r->isLambda() ? r : nullptr;
}

std::vector<const clang::ValueDecl*> captured(const clang::CXXRecordDecl* closure) {
  std::vector<const clang::ValueDecl*> out;
  for (const clang::LambdaCapture& c : closure->captures())
    if (c.capturesVariable()) out.push_back(c.getCapturedVar());
  return out;
}

// Whether a value of type `t` holds tensors: a tensor, a container or structure of them.
bool holds_tensors(clang::QualType t, int depth) {
  if (ir::is_tensor_like(ir_type_of(t))) return true;
  const clang::CXXRecordDecl* r = t.getNonReferenceType()->getAsCXXRecordDecl();
  if (r == nullptr || depth > 8) return false;
  const auto holds = [&](const clang::TemplateArgument& a) {
    return a.getKind() == clang::TemplateArgument::Type && holds_tensors(a.getAsType(), depth + 1);
  };
  if (const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(r))
    for (const clang::TemplateArgument& a : spec->getTemplateArgs().asArray())
      if (a.getKind() == clang::TemplateArgument::Pack ? std::any_of(a.pack_begin(), a.pack_end(), holds) : holds(a)) return true;
  if (!r->hasDefinition() || r->isInStdNamespace()) return false;
  return std::any_of(r->field_begin(), r->field_end(),
                     [&](const clang::FieldDecl* f) { return holds_tensors(f->getType(), depth + 1); });
}

// Whether `t` is a lambda that captures tensors (or structures or lambdas that hold them).
bool captures_tensors(clang::QualType t) {
  const clang::CXXRecordDecl* closure = closure_of(t);
  if (closure == nullptr) return false;
  for (const clang::ValueDecl* v : captured(closure))
    if (holds_tensors(v->getType()) || captures_tensors(v->getType())) return true;
  return false;
}

// Whether any part of an expression or statement has a tensor-like type: such code must be lowered
// op by op; everything else is kept as C++ text. A lambda that captures tensors counts as one: its
// calls compute with them (`norm()`, `count(dot, 3)`).
class TensorFinder : public clang::RecursiveASTVisitor<TensorFinder> {
 public:
  bool found = false;
  bool VisitExpr(clang::Expr* e) {
    // (a pointer to a tensor too: `p->size(0)` reads the tensor p points at)
    if (ir::is_tensor_like(ir_type_of(e->getType())) || captures_tensors(e->getType()) || points_to_tensor(e->getType()))
      found = true;
    return !found;
  }
  bool VisitVarDecl(clang::VarDecl* d) {
    if (ir::is_tensor_like(ir_type_of(d->getType()))) found = true;
    return !found;
  }
};

bool involves_tensors(const clang::Stmt* s) {
  if (s == nullptr) return false;
  TensorFinder finder;
  finder.TraverseStmt(const_cast<clang::Stmt*>(s));
  return finder.found;
}


const char* operator_op(clang::OverloadedOperatorKind k, bool unary) {
  switch (k) {
    case clang::OO_Plus: return unary ? "" : "add";
    case clang::OO_Minus: return unary ? "neg" : "sub";
    case clang::OO_Star: return "mul";
    case clang::OO_Slash: return "div";
    case clang::OO_Greater: return "gt";
    case clang::OO_Less: return "lt";
    case clang::OO_GreaterEqual: return "ge";
    case clang::OO_LessEqual: return "le";
    case clang::OO_EqualEqual: return "eq";
    case clang::OO_ExclaimEqual: return "ne";
    case clang::OO_PlusEqual: return "add_";
    case clang::OO_MinusEqual: return "sub_";
    case clang::OO_StarEqual: return "mul_";
    case clang::OO_SlashEqual: return "div_";
    case clang::OO_Subscript: return "select";
    default: return nullptr;
  }
}

// ------------------------------------------------------------------ structures (frontend/pytree.h)

bool list_parameter(const clang::ParmVarDecl* p, const clang::Stmt* body, int depth) {
  if (!is_tensor_vector(p->getType()) || body == nullptr || depth > 8) return false;
  struct Uses : clang::RecursiveASTVisitor<Uses> {
    const clang::ParmVarDecl* p;
    clang::ASTContext* context;
    int depth = 0;
    int refs = 0, constant = 0;
    bool VisitCallExpr(clang::CallExpr* call) {
      const clang::FunctionDecl* f = call->getDirectCallee();
      if (f == nullptr || !f->hasBody()) return true;
      const unsigned shift = llvm::isa<clang::CXXOperatorCallExpr>(call) && llvm::isa<clang::CXXMethodDecl>(f);
      for (unsigned i = shift; i < call->getNumArgs() && i - shift < f->getNumParams(); ++i)
        if (is_p(call->getArg(i)) && !list_parameter(f->getParamDecl(i - shift), f->getBody(), depth + 1)) ++constant;
      return true;
    }
    bool is_p(const clang::Expr* e) const {
      const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts());
      return r != nullptr && r->getDecl() == p;
    }
    void read(const clang::Expr* object, const clang::Expr* index) {
      if (is_p(object) && index->getIntegerConstantExpr(*context).has_value()) ++constant;
    }
    bool VisitDeclRefExpr(clang::DeclRefExpr* r) {
      refs += r->getDecl() == p;
      return true;
    }
    bool VisitCXXOperatorCallExpr(clang::CXXOperatorCallExpr* oc) {
      if (oc->getOperator() == clang::OO_Subscript) read(oc->getArg(0), oc->getArg(1));
      return true;
    }
    bool VisitCXXMemberCallExpr(clang::CXXMemberCallExpr* mc) {
      if (mc->getMethodDecl() != nullptr && mc->getMethodDecl()->getName() == "at" && mc->getNumArgs() == 1)
        read(mc->getImplicitObjectArgument(), mc->getArg(0));
      // its size alone is known from the elements read (the vector must hold exactly those)
      if (mc->getMethodDecl() != nullptr && (mc->getMethodDecl()->getName() == "size" || mc->getMethodDecl()->getName() == "empty") &&
          is_p(mc->getImplicitObjectArgument()))
        ++constant;
      return true;
    }
  } uses;
  uses.p = p;
  uses.depth = depth;
  uses.context = &p->getASTContext();
  uses.TraverseStmt(const_cast<clang::Stmt*>(body));
  return uses.refs > uses.constant;
}

bool is_lambda(const clang::FunctionDecl* fn) {
  const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(fn);
  return m != nullptr && m->getParent()->isLambda();
}

// The variables the lambda whose call operator is `fn` captures.
std::vector<const clang::ValueDecl*> captured(const clang::FunctionDecl* fn) {
  return lower::captured(llvm::cast<clang::CXXMethodDecl>(fn)->getParent());
}

const clang::VarDecl* init_capture(const clang::LambdaCapture& c) {
  const auto* v = c.capturesVariable() ? llvm::dyn_cast<clang::VarDecl>(c.getCapturedVar()) : nullptr;
  return v != nullptr && v->isInitCapture() ? v : nullptr;
}

CallParts parts_of(const clang::CallExpr* call, const clang::FunctionDecl* callee) {
  CallParts p;
  p.args.assign(call->arg_begin(), call->arg_end());
  if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(call)) {
    p.object = mc->getImplicitObjectArgument();
  } else if (llvm::isa<clang::CXXOperatorCallExpr>(call) && is_instance_method(callee) && !p.args.empty()) {
    p.object = p.args.front();
    p.args.erase(p.args.begin());
  }
  return p;
}

void leaf_names(const pytree::Tree& t, const std::string& at, std::vector<std::string>& out) {
  if (t.is_leaf()) {
    out.push_back(at);
    return;
  }
  for (size_t i = 0; i < t.children.size(); ++i)
    leaf_names(t.children[i],
               t.kind == pytree::Tree::Kind::Optional ? at : at + "_" + (t.keys.empty() ? std::to_string(i) : t.keys[i]),
               out);
}

bool is_instance_method(const clang::FunctionDecl* fn) {
  const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(fn);
  return m != nullptr && !m->isStatic();
}

bool returns_its_object(const clang::FunctionDecl* fn) {
  const auto* m = llvm::dyn_cast_or_null<clang::CXXMethodDecl>(fn != nullptr ? fn->getDefinition() : nullptr);
  if (m == nullptr || !ir::changes_object(*m) || !m->getReturnType()->isLValueReferenceType() ||
      m->getReturnType()->getPointeeCXXRecordDecl() != m->getParent() || m->getBody() == nullptr)
    return false;
  struct Returns : clang::RecursiveASTVisitor<Returns> {
    bool all_this = true, any = false;
    bool TraverseLambdaExpr(clang::LambdaExpr*) { return true; }  // a lambda's returns are its own
    bool VisitReturnStmt(clang::ReturnStmt* r) {
      const auto* star = llvm::dyn_cast_or_null<clang::UnaryOperator>(
          r->getRetValue() != nullptr ? r->getRetValue()->IgnoreParenImpCasts() : nullptr);
      any = true;
      all_this = all_this && star != nullptr && star->getOpcode() == clang::UO_Deref &&
                 llvm::isa<clang::CXXThisExpr>(star->getSubExpr()->IgnoreParenImpCasts());
      return true;
    }
  } returns;
  returns.TraverseStmt(m->getBody());
  return returns.any && returns.all_this;
}

bool non_const_reference(clang::QualType t) {
  return t->isLValueReferenceType() && !t.getNonReferenceType().isConstQualified();
}

const clang::Expr* base_of_part(const clang::Expr* e) {
  if (const auto* m = llvm::dyn_cast<clang::MemberExpr>(e)) return m->getBase();
  if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e); oc != nullptr && oc->getOperator() == clang::OO_Subscript)
    return oc->getArg(0);
  if (const auto* c = llvm::dyn_cast<clang::CallExpr>(e);
      c != nullptr && c->getDirectCallee() != nullptr && c->getDirectCallee()->getQualifiedNameAsString() == "std::get")
    return c->getArg(0);
  return nullptr;
}

bool assignment_sides(const clang::Expr* e, const clang::Expr*& lhs, const clang::Expr*& rhs, std::string& op) {
  e = e->IgnoreImplicit();
  if (const auto* w = llvm::dyn_cast<clang::ExprWithCleanups>(e)) e = w->getSubExpr()->IgnoreImplicit();
  if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e); b != nullptr && b->isAssignmentOp()) {
    lhs = b->getLHS();
    rhs = b->getRHS();
    op = b->getOpcodeStr().str();
    return true;
  }
  if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e);
      oc != nullptr && oc->getOperator() == clang::OO_Equal && oc->getNumArgs() == 2) {
    lhs = oc->getArg(0);
    rhs = oc->getArg(1);
    op = "=";
    return true;
  }
  return false;
}

bool case_after(clang::CompoundStmt::const_body_iterator it, clang::CompoundStmt::const_body_iterator end) {
  for (++it; it != end; ++it)
    if (has_case_label(*it)) return true;
  return false;
}

bool has_case_label(const clang::Stmt* s) {
  if (s == nullptr || llvm::isa<clang::SwitchStmt>(s)) return false;  // (its labels are its own)
  if (llvm::isa<clang::SwitchCase>(s)) return true;
  for (const clang::Stmt* child : s->children())
    if (has_case_label(child)) return true;
  return false;
}

bool is_tensor_vector(clang::QualType t) {
  const clang::QualType b = bare(t);
  if (record_name(b) != "std::vector") return false;
  const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(b->getAsCXXRecordDecl());
  return spec != nullptr && is_fg_tensor(spec->getTemplateArgs()[0].getAsType());
}

bool is_push(const clang::CXXMemberCallExpr* mc) {
  const std::string m = mc->getMethodDecl()->getNameAsString();
  return (m == "push_back" || m == "emplace_back") && mc->getNumArgs() == 1;
}

const clang::Expr* filled_with(const clang::CXXConstructExpr* ctor) {
  if (ctor == nullptr || ctor->getNumArgs() == 0 || llvm::isa<clang::CXXDefaultArgExpr>(ctor->getArg(0)) ||
      !ctor->getArg(0)->getType()->isIntegerType())
    return nullptr;
  if (ctor->getNumArgs() >= 2 && is_fg_tensor(ctor->getArg(1)->getType())) return ctor->getArg(1);
  return ctor->getNumArgs() == 1 || llvm::isa<clang::CXXDefaultArgExpr>(ctor->getArg(1)) ? ctor : nullptr;
}

}  // namespace funcgen::lower
