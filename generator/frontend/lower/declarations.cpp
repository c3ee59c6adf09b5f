#include "frontend/lower/declarations.h"

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

// The leaves of structures that C++ text assigns (`s.steps++`, `s.steps += 1` kept as text).
void DeclarationLowering::leaf_writes(const clang::Stmt* s, std::vector<int>& writes) {
  if (s == nullptr || trees_.empty()) return;
  std::vector<const clang::Expr*> targets;
  if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(s); u != nullptr && u->isIncrementDecrementOp())
    targets.push_back(u->getSubExpr());
  if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(s); b != nullptr && b->isAssignmentOp()) targets.push_back(b->getLHS());
  if (const auto* c = llvm::dyn_cast<clang::CallExpr>(s); c != nullptr && c->getDirectCallee() != nullptr) {
    const clang::FunctionDecl* fn = c->getDirectCallee();  // `bump(s.steps)` of a `void bump(int64_t&)`
    const unsigned shift = llvm::isa<clang::CXXOperatorCallExpr>(c) && llvm::isa<clang::CXXMethodDecl>(fn);
    for (unsigned i = shift; i < c->getNumArgs() && i - shift < fn->getNumParams(); ++i)
      if (non_const_reference(fn->getParamDecl(i - shift)->getType())) targets.push_back(c->getArg(i));
    if (const auto* m = llvm::dyn_cast<clang::CXXMemberCallExpr>(c); m != nullptr && m->getMethodDecl() != nullptr &&
                                                                    !m->getMethodDecl()->isConst())
      targets.push_back(m->getImplicitObjectArgument());  // `s.name.append("x")`
  }
  for (const clang::Expr* target : targets)
    if (const pytree::Tree* leaf = resolve(target, false);
        leaf != nullptr && leaf->kind == pytree::Tree::Kind::Scalar && writable(*leaf, s) &&
        std::find(writes.begin(), writes.end(), leaf->var) == writes.end())
      writes.push_back(leaf->var);
  for (const clang::Stmt* child : s->children()) leaf_writes(child, writes);
}

void DeclarationLowering::lower_decl(std::vector<StmtPtr>& out, const clang::Decl* d, const clang::DeclStmt* ds) {
  if (const auto* dd = llvm::dyn_cast<clang::DecompositionDecl>(d)) {
    if (declare_bindings(dd, ds, out)) return;
    if (const clang::BindingDecl* b = non_const_reference(dd->getType()) ? written_binding(dd) : nullptr) {
      unsupported_at(b->getLocation(), "'" + b->getNameAsString() + "' names an element of '" + text_of(dd->getInit()) + "' by "
                     "reference and is assigned, which cannot be transformed yet; hold the tensors in a struct, "
                     "std::pair or std::array, or bind copies (auto [...] = ...)");
      for (const clang::BindingDecl* each : dd->bindings()) rejected_.insert(each);  // (their uses are not reported again)
      return;
    }
    StmtPtr st = make(StmtKind::Bind, ds);
    for (const clang::BindingDecl* b : dd->bindings()) st->vars.push_back(add_var(b, b->getType()));
    st->text = dd->getType()->isReferenceType() ? "auto&" : "auto";
    st->expr = lower_expr(dd->getInit());
    out.push_back(std::move(st));
    return;
  }
  const auto* vd = llvm::dyn_cast<clang::VarDecl>(d);
  if (vd == nullptr) {
    if (involves_tensors(ds)) unsupported(ds, "this declaration cannot be transformed");
    else out.push_back(opaque_stmt(ds));
    return;
  }
  if (aliases_.count(vd) != 0 || alias(vd)) return;  // reads of it read the parameter's leaves
  if (auto it = stacked_.find(vd); it != stacked_.end()) {
    declare_stacked(it->second, vd, ds, out);
    return;
  }
  if (listed_.count(vd) != 0 && filled_list(vd, ds, out)) return;
  if (const auto* lambda = vd->getInit() != nullptr ? llvm::dyn_cast<clang::LambdaExpr>(strip(vd->getInit())) : nullptr) {
    // Its calls are helper calls (lower_lambda_call); the definition stays for the generated
    // code that calls it as it is (unbatched), which may not. One that calls a lambda this helper
    // was passed cannot be written there: its calls are always transformed.
    lambdas_.insert(vd);
    for (const clang::ValueDecl* v : lower::captured(lambda->getLambdaClass()))
      if (textless_.count(v) != 0) {
        textless_.insert(vd);
        return;
      }
    StmtPtr st = opaque_stmt(ds);
    st->text = "[[maybe_unused]] " + st->text;
    // (AD inlines the calls of one on tensors; one on numbers only is called as written.)
    st->lambda_definition = is_user_function(lambda->getCallOperator());
    out.push_back(std::move(st));
    return;
  }
  if (declare_structure(vd, ds, out)) return;
  if (record_name(vd->getType()) == "std::optional" && is_fg_tensor(template_arg(bare(vd->getType()), 0))) {
    reject_variable(vd, ds, "'" + vd->getNameAsString() + "' is a local std::optional<fg::Tensor>, which cannot be "
                                "transformed yet: funcgen specializes on the optionals a function is passed; test "
                                "the parameter itself (if (b)), or name it with 'const auto& " + vd->getNameAsString() +
                                " = b;'");
    return;
  }
  if (closure_of(vd->getType()) != nullptr && captures_tensors(vd->getType())) {  // `auto g = f;`
    reject_variable(vd, ds, "'" + vd->getNameAsString() + "' holds a lambda defined elsewhere, which cannot be "
                                "transformed; call that lambda by its own name");
    return;
  }
  if (user_record_holds_tensors(vd->getType())) {
    const auto* record = bare(vd->getType())->getAsCXXRecordDecl();
    reject_variable(vd, ds, "'" + vd->getNameAsString() + "' is a '" + record->getNameAsString() +
                                "' that holds tensors, which cannot be transformed; keep the tensors in fg::Tensor, "
                                "std::vector or std::tuple variables");
    return;
  }
  if (points_to_tensor(vd->getType())) {
    tensor_pointer(vd, ds);
    return;
  }
  if (const auto* array = context_.getAsConstantArrayType(vd->getType()); array != nullptr && is_tensor_type(array->getElementType())) {
    tensor_array(vd, ds, out);
    return;
  }
  if (vd->getType()->isReferenceType() && is_fg_tensor(vd->getType().getNonReferenceType()) && tensor_reference(vd, ds))
    return;
  std::string array_type;
  if (context_.getAsConstantArrayType(vd->getType()) != nullptr && !(array_type = local_array(vd, ds)).empty())
    if (array_type == "-") return;
  StmtPtr st = make(StmtKind::Decl, ds);
  st->range = vd->getSourceRange();
  st->var = add_var(vd, vd->getType());
  if (!array_type.empty()) f_.vars[static_cast<size_t>(st->var)].cxx_type = array_type;
  st->is_static_local = vd->isStaticLocal();
  if (const clang::Expr* init = vd->getInit()) {
    // `fg::Tensor y;` default-constructs through a CXXConstructExpr with no arguments.
    const auto* ctor = llvm::dyn_cast<clang::CXXConstructExpr>(init);
    if (!(ctor != nullptr && ctor->getNumArgs() == 0)) st->expr = lower_expr(init);
  }
  out.push_back(std::move(st));
}

// The names of `v` in the function's body, in order.
std::vector<const clang::DeclRefExpr*> DeclarationLowering::references_to(const clang::ValueDecl* v) const {
  struct Refs : clang::RecursiveASTVisitor<Refs> {
    const clang::ValueDecl* v = nullptr;
    std::vector<const clang::DeclRefExpr*> found;
    bool VisitDeclRefExpr(clang::DeclRefExpr* r) {
      if (r->getDecl() == v) found.push_back(r);
      return true;
    }
  } refs;
  refs.v = v;
  refs.TraverseStmt(const_cast<clang::Stmt*>(f_.decl->getBody()));
  return refs.found;
}

// A binding of `auto& [a, b] = t;` that the function assigns or changes in place (`a = ...`).
const clang::BindingDecl* DeclarationLowering::written_binding(const clang::DecompositionDecl* dd) const {
  for (const clang::BindingDecl* b : dd->bindings())
    for (const clang::DeclRefExpr* r : references_to(b))
      if (written_through(r)) return b;
  return nullptr;
}

// `fg::Tensor& r = y;` (or const): another name for the variable y, as C++ binds it; what is
// assigned to either is assigned to both, so both are y's variable. A non-const reference to
// anything else (an element, a member) is reported; a const one to an element is its value
// there, as before (true: nothing more to declare).
bool DeclarationLowering::tensor_reference(const clang::VarDecl* vd, const clang::DeclStmt* ds) {
  const clang::Expr* init = vd->getInit() != nullptr ? vd->getInit()->IgnoreParens() : nullptr;
  if (init == nullptr || llvm::isa<clang::MaterializeTemporaryExpr>(init) || llvm::isa<clang::ExprWithCleanups>(init))
    return false;  // a temporary, bound for its lifetime: a value
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(init->IgnoreParenImpCasts());
  if (ref != nullptr && vars_.count(ref->getDecl()) != 0 && f_.var(vars_.at(ref->getDecl())).type == ir::Type::Tensor) {
    vars_[vd] = vars_.at(ref->getDecl());
    return true;
  }
  if (!non_const_reference(vd->getType()) || resolve(vd->getInit(), false) != nullptr) return false;
  reject_variable(vd, ds, "'" + vd->getNameAsString() + "' is a non-const reference to '" + text_of(vd->getInit()) +
                              "', which cannot be transformed yet; assign the element itself (" +
                              text_of(vd->getInit()) + " = ...), or bind a reference to a variable");
  return true;
}

// `fg::Tensor* p = &y;`: where p points at a tensor variable for its whole life and is used only
// as *p and p->, it is another name for y, as a reference is (tensor_reference). A pointer set
// again, compared, passed on or pointing elsewhere is reported, at that use.
void DeclarationLowering::tensor_pointer(const clang::VarDecl* vd, const clang::DeclStmt* ds) {
  const std::string name = vd->getNameAsString();
  const clang::Expr* init = vd->getInit() != nullptr ? vd->getInit()->IgnoreParenImpCasts() : nullptr;
  const auto* address = llvm::dyn_cast_or_null<clang::UnaryOperator>(init);
  const auto* target = address != nullptr && address->getOpcode() == clang::UO_AddrOf
                           ? llvm::dyn_cast<clang::DeclRefExpr>(address->getSubExpr()->IgnoreParenImpCasts())
                           : nullptr;
  auto it = target != nullptr ? vars_.find(target->getDecl()) : vars_.end();
  if (it == vars_.end() || f_.var(it->second).type != ir::Type::Tensor) {
    reject_variable(vd, ds, "'" + name + "' is a pointer to a tensor that does not point at a tensor variable (" +
                                (init != nullptr ? text_of(init) : std::string("no value")) +
                                "), which cannot be transformed; use the tensor itself (fg::Tensor is a handle: "
                                "copies share its storage) or a reference");
    return;
  }
  for (const clang::DeclRefExpr* r : references_to(vd)) {
    const clang::CallExpr* call = nullptr;
    const PointerUse use = pointer_use(r, call);
    if (use == PointerUse::Read || use == PointerUse::Passed) continue;
    if (const clang::DeclRefExpr* to = use == PointerUse::Retargeted ? retarget_of(call, vd, ds) : nullptr) {
      retargets_[call] = {vd, to->getDecl()};
      continue;
    }
    if (use == PointerUse::Retargeted) {  // `retarget(p, y)` of a `void retarget(const fg::Tensor*& p, ...)`
      const std::string helper = call->getDirectCallee()->getNameAsString();
      reject_variable(vd, r, "'" + helper + "' takes the pointer '" + name + "' by reference and may point it at "
                                 "another tensor, which funcgen follows only where the call is a statement of the "
                                 "block that declares '" + name + "' (not in a branch or a loop of its own), no lambda "
                                 "captures '" + name + "', and '" + helper + "' only points it at a tensor parameter "
                                 "passed a variable ({ " + name + " = &q; }); otherwise have '" + helper + "' return "
                                 "the tensor (const fg::Tensor& " + helper + "(...)) and name the result "
                                 "(const fg::Tensor& t = " + helper + "(...);)");
      return;
    }
    reject_variable(vd, r, "the pointer '" + name + "' is used here other than as *" + name + " or " + name +
                               "->, which cannot be transformed; funcgen follows a pointer that points at one tensor "
                               "variable for its whole life; use that tensor (" + text_of(target) +
                               ") or a reference to it");
    return;
  }
  vars_[vd] = it->second;
}

// `retarget(p, y)` of a `void retarget(const fg::Tensor*& p, const fg::Tensor& q) { p = &q; }`: a
// helper whose body only points its pointer parameter at a reference parameter, called in a
// statement of the block that declares p (so that every use of p before it, in every run, sees
// the old target, and every use after it the new one), passed a tensor variable for q: the
// variable it points p at (null where any of that does not hold).
const clang::DeclRefExpr* DeclarationLowering::retarget_of(const clang::CallExpr* call, const clang::VarDecl* vd,
                                                           const clang::DeclStmt* ds) const {
  const clang::FunctionDecl* fn = call->getDirectCallee()->getDefinition();
  const auto* body = fn != nullptr ? llvm::dyn_cast_or_null<clang::CompoundStmt>(fn->getBody()) : nullptr;
  if (body == nullptr || body->size() != 1 || parent_of(call) != parent_of(ds) ||
      !llvm::isa_and_nonnull<clang::CompoundStmt>(parent_of(ds)))
    return nullptr;
  const auto* assign = llvm::dyn_cast<clang::BinaryOperator>(body->body_front());
  const auto* lhs = assign != nullptr && assign->getOpcode() == clang::BO_Assign
                        ? llvm::dyn_cast<clang::DeclRefExpr>(assign->getLHS()->IgnoreParenImpCasts()) : nullptr;
  const auto* address = assign != nullptr ? llvm::dyn_cast<clang::UnaryOperator>(assign->getRHS()->IgnoreParenImpCasts()) : nullptr;
  const auto* rhs = address != nullptr && address->getOpcode() == clang::UO_AddrOf
                        ? llvm::dyn_cast<clang::DeclRefExpr>(address->getSubExpr()->IgnoreParenImpCasts()) : nullptr;
  if (lhs == nullptr || rhs == nullptr) return nullptr;
  struct Captures : clang::RecursiveASTVisitor<Captures> {  // (a lambda may read p before or after the call)
    const clang::VarDecl* vd = nullptr;
    bool found = false;
    bool VisitLambdaExpr(clang::LambdaExpr* l) {
      for (const clang::LambdaCapture& c : l->captures()) found |= c.capturesVariable() && c.getCapturedVar() == vd;
      return !found;
    }
  } captures;
  captures.vd = vd;
  captures.TraverseStmt(const_cast<clang::Stmt*>(f_.decl->getBody()));
  if (captures.found) return nullptr;
  const clang::DeclRefExpr* to = nullptr;
  bool points_vd = false;
  for (unsigned i = 0; i < call->getNumArgs() && i < fn->getNumParams(); ++i) {
    const clang::ParmVarDecl* p = fn->getParamDecl(i);
    const auto* arg = llvm::dyn_cast<clang::DeclRefExpr>(call->getArg(i)->IgnoreParenImpCasts());
    if (p == lhs->getDecl()) points_vd = arg != nullptr && arg->getDecl() == vd;
    if (p == rhs->getDecl() && p->getType()->isLValueReferenceType() && is_fg_tensor(p->getType()) && arg != nullptr &&
        vars_.count(arg->getDecl()) != 0 && f_.var(vars_.at(arg->getDecl())).type == ir::Type::Tensor)
      to = arg;
  }
  return points_vd ? to : nullptr;
}

// The call `e` retargets a pointer (retarget_of): from here on it names the variable it points at.
bool DeclarationLowering::retargets(const clang::Expr* e) {
  auto it = retargets_.find(llvm::dyn_cast<clang::CallExpr>(e->IgnoreParenImpCasts()));
  if (it == retargets_.end()) return false;
  vars_[it->second.first] = vars_.at(it->second.second);
  return true;
}

// How the pointer to a tensor that `r` names is used: read (*p, p->), passed to a helper's
// `fg::Tensor*` parameter (`call`: which takes it as a reference to its tensor), passed to a
// `fg::Tensor*&` one (which may point it elsewhere), or otherwise.
DeclarationLowering::PointerUse DeclarationLowering::pointer_use(const clang::DeclRefExpr* r,
                                                                 const clang::CallExpr*& call) const {
  const clang::Stmt* arg = r;
  const clang::Stmt* use = parent_of(r);
  while (const auto* cast = llvm::dyn_cast_or_null<clang::ImplicitCastExpr>(use))  // (to const fg::Tensor* for p->size())
    if (cast->getCastKind() == clang::CK_LValueToRValue || cast->getCastKind() == clang::CK_NoOp) use = parent_of(arg = cast);
    else break;
  const auto* deref = llvm::dyn_cast_or_null<clang::UnaryOperator>(use);
  const auto* member = llvm::dyn_cast_or_null<clang::MemberExpr>(use);
  if ((deref != nullptr && deref->getOpcode() == clang::UO_Deref) || (member != nullptr && member->isArrow()))
    return PointerUse::Read;
  call = llvm::dyn_cast_or_null<clang::CallExpr>(use);
  const clang::FunctionDecl* fn = call != nullptr && !llvm::isa<clang::CXXOperatorCallExpr>(call) ? call->getDirectCallee() : nullptr;
  if (fn == nullptr || !is_user_function(fn)) return PointerUse::Other;
  for (unsigned i = 0; i < call->getNumArgs() && i < fn->getNumParams(); ++i) {
    if (call->getArg(i) != arg) continue;
    const clang::QualType t = fn->getParamDecl(i)->getType();
    if (points_to_tensor(t)) return PointerUse::Passed;
    if (t->isReferenceType() && points_to_tensor(t.getNonReferenceType())) return PointerUse::Retargeted;
  }
  return PointerUse::Other;
}

// A helper's `fg::Tensor* p` (or `const fg::Tensor*`), which its callers pass the address of a tensor
// variable (&y, checked where they call it: CallLowering::add_args), is a reference to that tensor:
// *p and p-> are the tensor, and p may be passed on to another such parameter. Any other use (a
// test for null, arithmetic, an assignment) is reported there. (A transformed function's own
// pointer parameters are reported as its other parameters are.)
bool DeclarationLowering::pointer_parameter(const clang::ParmVarDecl* p) {
  const std::string name = p->getNameAsString();
  for (const clang::DeclRefExpr* r : references_to(p)) {
    const clang::CallExpr* call = nullptr;
    const PointerUse use = pointer_use(r, call);
    if (use == PointerUse::Read || use == PointerUse::Passed) continue;
    reject_variable(p, r, "the pointer parameter '" + name + "' is used here other than as *" + name + ", " + name +
                              "-> or passed to another pointer parameter, which cannot be transformed: funcgen takes '" +
                              name + "' as the tensor variable its callers pass the address of; test for null or "
                              "choose the tensor in the caller, or take the tensor by reference (fg::Tensor& " + name + ")");
    return false;
  }
  sig_.params.emplace_back();
  const int id = add_var(p, p->getType());
  ir::Var& v = f_.vars[static_cast<size_t>(id)];
  v.type = ir::Type::Tensor;
  v.cxx_type = p->getType()->getPointeeType().isConstQualified() ? "const fg::Tensor&" : "fg::Tensor&";
  v.param_index = static_cast<int>(f_.params.size());
  f_.params.push_back(id);
  return true;
}

// `fg::Tensor a[3] = {x, y, z};` that the function reads (a[i], a range-for by value or const
// reference, std::size(a)) and assigns elements of (a[i] = v) is the braced std::vector<fg::Tensor>
// it stands for: a list, read at run-time indices, its elements set (ir::kListSet). Where an
// element is changed otherwise (a[i].add_(v), bound to a non-const reference), it decays to a
// pointer, is not given all its elements, or has more dimensions, it is reported.
void DeclarationLowering::tensor_array(const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) {
  const std::string name = vd->getNameAsString();
  const uint64_t n = context_.getAsConstantArrayType(vd->getType())->getSize().getZExtValue();
  const auto* init = vd->getInit() != nullptr ? llvm::dyn_cast<clang::InitListExpr>(vd->getInit()->IgnoreImplicit()) : nullptr;
  const std::string advice = "; declare it as a std::vector<fg::Tensor> (std::vector<fg::Tensor> " + name + "{...})";
  if (init == nullptr || init->getNumInits() != n || init->hasArrayFiller()) {
    reject_variable(vd, ds, "'" + name + "' is a C array of tensors not given all its " + std::to_string(n) +
                                " elements, which cannot be transformed" + advice);
    return;
  }
  bool written = false;
  std::set<const clang::Expr*> looped;  // the ranges of range-fors over it that do not write it
  struct Loops : clang::RecursiveASTVisitor<Loops> {
    const clang::VarDecl* vd;
    std::set<const clang::Expr*>* looped;
    bool VisitCXXForRangeStmt(clang::CXXForRangeStmt* rs) {
      const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(rs->getRangeInit()->IgnoreParenImpCasts());
      if (r != nullptr && r->getDecl() == vd && !non_const_reference(rs->getLoopVariable()->getType())) looped->insert(r);
      return true;
    }
  } loops;
  loops.vd = vd;
  loops.looped = &looped;
  loops.TraverseStmt(const_cast<clang::Stmt*>(f_.decl->getBody()));
  for (const clang::DeclRefExpr* r : references_to(vd)) {
    if (looped.count(r) != 0) continue;
    const clang::Stmt* use = parent_of(r);
    const auto* decay = llvm::dyn_cast_or_null<clang::ImplicitCastExpr>(use);
    const auto* subscript =
        decay != nullptr && decay->getCastKind() == clang::CK_ArrayToPointerDecay ? llvm::dyn_cast_or_null<clang::ArraySubscriptExpr>(parent_of(decay)) : nullptr;
    if (subscript != nullptr && subscript->getBase()->IgnoreParens() == decay && !written_through(subscript)) continue;
    if (subscript != nullptr && subscript->getBase()->IgnoreParens() == decay && element_assigned(subscript)) {
      written = true;  // `a[i] = y;`: a list operation (assign_listed), as on the vector it stands for
      continue;
    }
    const auto* call = llvm::dyn_cast_or_null<clang::CallExpr>(use);
    if (call != nullptr && call->getDirectCallee() != nullptr && call->getDirectCallee()->getQualifiedNameAsString() == "std::size")
      continue;
    reject_variable(vd, r, subscript != nullptr ? "an element of the C array of tensors '" + name + "' is changed here, which cannot be transformed" + advice
                                                : "the C array of tensors '" + name + "' is used here other than as " + name +
                                                      "[i], in a range-for or in std::size, which cannot be transformed" + advice);
    return;
  }
  StmtPtr st = make(StmtKind::Decl, ds);
  st->range = vd->getSourceRange();
  st->var = add_var(vd, vd->getType());
  f_.vars[static_cast<size_t>(st->var)].cxx_type = "std::vector<fg::Tensor>";
  if (written) listed_.insert(vd);
  st->expr = lower_expr(init);
  out.push_back(std::move(st));
}

// A local C array of numbers (`const double w[] = {0.5, 1.5};`) is declared as the std::array it
// stands for: the transforms keep locals in tuples and pass them to functions, which a C array
// cannot be. Its reads (w[i], a range-for, std::size) are the same; where it decays to a pointer
// (passed to a `const double*`), or has more dimensions, it is reported. The type, or "-" after
// a report.
std::string DeclarationLowering::local_array(const clang::VarDecl* vd, const clang::DeclStmt* ds) {
  const clang::ConstantArrayType* array = context_.getAsConstantArrayType(vd->getType());
  const clang::QualType element = array->getElementType();
  const std::string name = vd->getNameAsString();
  const clang::Expr* init = vd->getInit() != nullptr ? strip(vd->getInit()) : nullptr;
  const std::function<std::string(clang::QualType)> std_array = [&](clang::QualType t) {
    if (const clang::ConstantArrayType* a = context_.getAsConstantArrayType(t))
      return "std::array<" + std_array(a->getElementType()) + ", " + std::to_string(a->getSize().getZExtValue()) + ">";
    return cxx_spelling(t.getUnqualifiedType(), context_);
  };
  const std::string as_std = std::string(context_.getBaseElementType(vd->getType()).isConstQualified() ? "const " : "") + std_array(vd->getType());
  if (!element->isArithmeticType() || (init != nullptr && !llvm::isa<clang::InitListExpr>(init))) {
    reject_variable(vd, ds, "'" + name + "' is a C array of " + (element->isArrayType() ? "arrays" : "this type") +
                                ", which cannot be transformed yet; declare it as a std::array (" + as_std + " " +
                                name + ") or a std::vector");
    return "-";
  }
  // (`w[i]` decays `w` too, as the base of the subscript)
  const clang::Expr* decay = nullptr;
  for (const clang::DeclRefExpr* r : references_to(vd)) {
    const auto* cast = llvm::dyn_cast_or_null<clang::ImplicitCastExpr>(parent_of(r));
    if (cast == nullptr || cast->getCastKind() != clang::CK_ArrayToPointerDecay) continue;
    const auto* subscript = llvm::dyn_cast_or_null<clang::ArraySubscriptExpr>(parent_of(cast));
    if (subscript == nullptr || subscript->getBase()->IgnoreParens() != cast) {
      decay = cast;
      break;
    }
  }
  if (decay != nullptr) {
    reject_variable(vd, decay, "the C array '" + name + "' is used as a pointer here, which cannot be "
                                      "transformed; declare it as a std::array (" + as_std + " " + name +
                                      ") and pass " + name + ".data() or the array itself");
    return "-";
  }
  return as_std;
}

}  // namespace funcgen::lower
