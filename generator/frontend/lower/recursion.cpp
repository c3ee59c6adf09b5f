#include "frontend/lower/recursion.h"

#include <clang/AST/RecursiveASTVisitor.h>

#include <algorithm>

namespace funcgen::lower {

namespace {

bool integer_parameter(const clang::ParmVarDecl* p) {
  const clang::QualType t = p->getType();
  return !t->isReferenceType() && t->isIntegralOrEnumerationType();
}

const clang::VarDecl* constant_local(const clang::Expr* e) {
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParens());
  const auto* vd = ref != nullptr ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
  if (vd == nullptr || llvm::isa<clang::ParmVarDecl>(vd) || !vd->isLocalVarDecl() || vd->getInit() == nullptr ||
      vd->getType()->isReferenceType() || !vd->getType().isConstQualified())
    return nullptr;
  return vd;
}

}  // namespace

void RecursionLowering::known_parameters(const clang::FunctionDecl* decl, const ir::Constants& constants) {
  for (const auto& [name, value] : constants)
    for (const clang::ParmVarDecl* p : decl->parameters())
      if (p->getName() == name && integer_parameter(p))
        known_.emplace(p, of_type(llvm::APInt(64, static_cast<uint64_t>(value), true), p->getType()));
}

bool RecursionLowering::only_read(const clang::ParmVarDecl* p, const clang::FunctionDecl* fn) {
  struct Uses : clang::RecursiveASTVisitor<Uses> {
    const clang::ParmVarDecl* p;
    size_t refs = 0, reads = 0;
    bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
      refs += e->getDecl() == p ? 1 : 0;
      return true;
    }
    bool VisitImplicitCastExpr(clang::ImplicitCastExpr* c) {
      const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(c->getSubExpr()->IgnoreParens());
      reads += c->getCastKind() == clang::CK_LValueToRValue && ref != nullptr && ref->getDecl() == p ? 1 : 0;
      return true;
    }
  } uses;
  uses.p = p;
  uses.TraverseStmt(fn->getBody());
  return uses.refs == uses.reads;
}

ir::Constants RecursionLowering::constants_at(const clang::CallExpr* call, const clang::FunctionDecl* callee) {
  if (callee == nullptr || llvm::isa<clang::CXXOperatorCallExpr>(call)) return {};
  const auto has_integer = [](const clang::FunctionDecl* f) {
    return std::any_of(f->param_begin(), f->param_end(), integer_parameter);
  };
  if (!has_integer(callee) || !lowering_.recursive(callee)) return {};
  ir::Constants out;
  for (unsigned i = 0; i < call->getNumArgs() && i < callee->getNumParams(); ++i) {
    const clang::ParmVarDecl* p = callee->getParamDecl(i);
    if (!integer_parameter(p) || !only_read(p, callee)) continue;
    const std::optional<llvm::APSInt> v = value_of(call->getArg(i));
    if (!v || !v->isRepresentableByInt64()) continue;
    out.emplace_back(p->getNameAsString(), v->getExtValue());
  }
  return out;
}

std::optional<bool> RecursionLowering::known_test(const clang::Expr* e) {
  if (known_.empty() || e == nullptr || !e->getType()->isBooleanType() || !reads_known(e)) return std::nullopt;
  const std::optional<llvm::APSInt> v = value_of(e);
  return v ? std::optional<bool>(!v->isZero()) : std::nullopt;
}

namespace {

// Whether a break of the switch whose body holds `s` stands in it (one of a loop or of another
// switch inside does not leave it).
bool breaks_switch(const clang::Stmt* s) {
  if (s == nullptr) return false;
  if (llvm::isa<clang::BreakStmt>(s)) return true;
  if (llvm::isa<clang::ForStmt>(s) || llvm::isa<clang::WhileStmt>(s) || llvm::isa<clang::DoStmt>(s) ||
      llvm::isa<clang::CXXForRangeStmt>(s) || llvm::isa<clang::SwitchStmt>(s))
    return false;
  for (const clang::Stmt* child : s->children())
    if (breaks_switch(child)) return true;
  return false;
}

const clang::Stmt* after_labels(const clang::Stmt* s) {
  while (const auto* label = llvm::dyn_cast_or_null<clang::SwitchCase>(s)) s = label->getSubStmt();
  return s;
}

}  // namespace

std::optional<std::vector<const clang::Stmt*>> RecursionLowering::known_case(const clang::SwitchStmt* sw) {
  if (known_.empty() || sw->getInit() != nullptr || sw->getConditionVariable() != nullptr || !reads_known(sw->getCond()))
    return std::nullopt;
  const std::optional<llvm::APSInt> v = value_of(sw->getCond());
  const auto* body = llvm::dyn_cast_or_null<clang::CompoundStmt>(sw->getBody());
  if (!v || body == nullptr) return std::nullopt;
  std::vector<const clang::Stmt*> items(body->body_begin(), body->body_end());
  std::optional<size_t> match, fallback;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto* label = llvm::dyn_cast_or_null<clang::SwitchCase>(items[i]);
    for (; label != nullptr; label = llvm::dyn_cast_or_null<clang::SwitchCase>(label->getSubStmt())) {
      if (llvm::isa<clang::DefaultStmt>(label)) {
        fallback = i;
        continue;
      }
      const auto* c = llvm::cast<clang::CaseStmt>(label);
      clang::Expr::EvalResult r;
      if (c->caseStmtIsGNURange() || !c->getLHS()->EvaluateAsInt(r, context_)) return std::nullopt;
      if (!match && llvm::APSInt::isSameValue(r.Val.getInt(), *v)) match = i;
    }
    const clang::Stmt* s = after_labels(items[i]);
    if (!llvm::isa_and_nonnull<clang::BreakStmt>(s) && (breaks_switch(s) || has_case_label(s))) return std::nullopt;
  }
  std::vector<const clang::Stmt*> out;
  if (!match) match = fallback;
  for (size_t i = match.value_or(items.size()); i < items.size(); ++i) {  // (falls through the labels)
    const clang::Stmt* s = after_labels(items[i]);
    if (llvm::isa_and_nonnull<clang::BreakStmt>(s)) break;
    if (s != nullptr) out.push_back(s);
  }
  return out;
}

bool RecursionLowering::reads_known(const clang::Stmt* s) const {
  if (s == nullptr || llvm::isa<clang::LambdaExpr>(s)) return false;
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(s)) {
    if (known_.count(ref->getDecl()) != 0) return true;
    const clang::VarDecl* local = constant_local(ref);
    return local != nullptr && reads_known(local->getInit());
  }
  for (const clang::Stmt* child : s->children())
    if (reads_known(child)) return true;
  return false;
}

llvm::APSInt RecursionLowering::of_type(const llvm::APInt& v, clang::QualType t) const {
  const bool is_unsigned = t->isUnsignedIntegerOrEnumerationType() || t->isBooleanType();
  llvm::APSInt out(v.sextOrTrunc(context_.getIntWidth(t)), is_unsigned);
  return out;
}

std::optional<llvm::APSInt> RecursionLowering::value_of(const clang::Expr* e) const {
  if (e == nullptr) return std::nullopt;
  e = e->IgnoreParens();
  if (const auto* d = llvm::dyn_cast<clang::CXXDefaultArgExpr>(e)) return value_of(d->getExpr());
  const clang::QualType t = e->getType();
  if (t.isNull() || e->isValueDependent() || !t->isIntegralOrEnumerationType()) return std::nullopt;
  if (!reads_known(e)) {  // a constant of C++'s own (a literal, a constexpr variable)
    clang::Expr::EvalResult r;
    if (!e->EvaluateAsInt(r, context_)) return std::nullopt;
    return r.Val.getInt();
  }
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (auto it = known_.find(ref->getDecl()); it != known_.end()) return it->second;
    if (const clang::VarDecl* local = constant_local(ref))  // `const int m = n - 1;`
      if (std::optional<llvm::APSInt> v = value_of(local->getInit())) return of_type(*v, local->getType());
    return std::nullopt;
  }
  if (const auto* c = llvm::dyn_cast<clang::CastExpr>(e)) return cast_value(c);
  if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(e)) return unary_value(u);
  if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e)) return binary_value(b);
  if (const auto* c = llvm::dyn_cast<clang::ConditionalOperator>(e)) {
    const std::optional<llvm::APSInt> cond = value_of(c->getCond());
    if (!cond) return std::nullopt;
    return value_of(cond->isZero() ? c->getFalseExpr() : c->getTrueExpr());
  }
  return std::nullopt;
}

std::optional<llvm::APSInt> RecursionLowering::cast_value(const clang::CastExpr* c) const {
  const std::optional<llvm::APSInt> v = value_of(c->getSubExpr());
  if (!v) return std::nullopt;
  switch (c->getCastKind()) {
    case clang::CK_LValueToRValue:
    case clang::CK_NoOp:
      return v;
    case clang::CK_IntegralCast:  // (extended as its own type is: by sign where it is signed)
      return of_type(v->isSigned() ? v->sext(std::max(64u, v->getBitWidth())) : v->zext(std::max(64u, v->getBitWidth())),
                     c->getType());
    case clang::CK_IntegralToBoolean:
      return of_type(llvm::APInt(1, v->isZero() ? 0 : 1), c->getType());
    default:
      return std::nullopt;
  }
}

std::optional<llvm::APSInt> RecursionLowering::unary_value(const clang::UnaryOperator* u) const {
  const std::optional<llvm::APSInt> v = value_of(u->getSubExpr());
  if (!v) return std::nullopt;
  switch (u->getOpcode()) {
    case clang::UO_Plus:
      return v;
    case clang::UO_Minus:
      if (v->isSigned() && v->isMinSignedValue()) return std::nullopt;  // (overflows)
      return llvm::APSInt(-*v);
    case clang::UO_Not:
      return llvm::APSInt(~*v);
    case clang::UO_LNot:
      return of_type(llvm::APInt(1, v->isZero() ? 1 : 0), u->getType());
    default:
      return std::nullopt;
  }
}

std::optional<llvm::APSInt> RecursionLowering::binary_value(const clang::BinaryOperator* b) const {
  const clang::BinaryOperatorKind op = b->getOpcode();
  const std::optional<llvm::APSInt> l = value_of(b->getLHS());
  if (op == clang::BO_LAnd || op == clang::BO_LOr) {  // decided on the left where C++ stops there
    if (l && l->isZero() == (op == clang::BO_LAnd)) return of_type(llvm::APInt(1, op == clang::BO_LOr), b->getType());
    const std::optional<llvm::APSInt> r = value_of(b->getRHS());
    if (!l || !r) return std::nullopt;
    return of_type(llvm::APInt(1, r->isZero() ? 0 : 1), b->getType());
  }
  const std::optional<llvm::APSInt> r = value_of(b->getRHS());
  if (!l || !r) return std::nullopt;
  const auto truth = [&](bool v) { return std::optional<llvm::APSInt>(of_type(llvm::APInt(1, v ? 1 : 0), b->getType())); };
  bool overflow = false;
  llvm::APInt out;
  const bool s = l->isSigned();
  const bool alike = l->getBitWidth() == r->getBitWidth() && l->isSigned() == r->isSigned();
  switch (op) {
    case clang::BO_LT: return alike ? truth(*l < *r) : std::nullopt;
    case clang::BO_GT: return alike ? truth(*l > *r) : std::nullopt;
    case clang::BO_LE: return alike ? truth(*l <= *r) : std::nullopt;
    case clang::BO_GE: return alike ? truth(*l >= *r) : std::nullopt;
    case clang::BO_EQ: return alike ? truth(*l == *r) : std::nullopt;
    case clang::BO_NE: return alike ? truth(*l != *r) : std::nullopt;
    case clang::BO_Shl:
    case clang::BO_Shr: {
      if (r->isNegative() || r->getZExtValue() >= l->getBitWidth()) return std::nullopt;
      const unsigned by = static_cast<unsigned>(r->getZExtValue());
      if (op == clang::BO_Shr) return llvm::APSInt(*l >> by);
      if (s && l->isNegative()) return std::nullopt;
      out = s ? l->sshl_ov(llvm::APInt(l->getBitWidth(), by), overflow) : l->shl(by);
      break;
    }
    default: {
      if (!alike) return std::nullopt;
      switch (op) {
        case clang::BO_Add: out = s ? l->sadd_ov(*r, overflow) : *l + *r; break;
        case clang::BO_Sub: out = s ? l->ssub_ov(*r, overflow) : *l - *r; break;
        case clang::BO_Mul: out = s ? l->smul_ov(*r, overflow) : *l * *r; break;
        case clang::BO_Div:
        case clang::BO_Rem:
          if (r->isZero()) return std::nullopt;
          if (op == clang::BO_Div) out = s ? l->sdiv_ov(*r, overflow) : l->udiv(*r);
          else if (s && l->isMinSignedValue() && r->isAllOnes()) return std::nullopt;
          else out = s ? l->srem(*r) : l->urem(*r);
          break;
        case clang::BO_And: out = *l & *r; break;
        case clang::BO_Or: out = *l | *r; break;
        case clang::BO_Xor: out = *l ^ *r; break;
        default: return std::nullopt;
      }
    }
  }
  if (overflow) return std::nullopt;
  return llvm::APSInt(out, !s);
}

}  // namespace funcgen::lower
