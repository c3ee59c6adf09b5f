#include "frontend/lower/lambdas.h"

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

// A lambda's call operator: of a generic lambda, the instance the program calls (the pattern
// where it calls several, which is reported where it is transformed).
const clang::FunctionDecl* call_operator(const clang::CXXRecordDecl* closure) {
  const clang::CXXMethodDecl* op = closure->getLambdaCallOperator();
  if (const clang::FunctionTemplateDecl* t = op->getDescribedFunctionTemplate()) {
    const auto instances = t->specializations();
    if (std::distance(instances.begin(), instances.end()) == 1) return *instances.begin();
  }
  return op;
}

// Why a variable a lambda captures is not one funcgen follows.
std::string unfollowed_capture(const clang::ValueDecl* v) {
  const auto* vd = llvm::dyn_cast<clang::VarDecl>(v);
  if (vd != nullptr && vd->isInitCapture())
    return "the lambda's init-capture '" + v->getNameAsString() + "' cannot be transformed yet; declare it as a "
           "variable before the lambda and capture that";
  return "'" + v->getNameAsString() + "', which this lambda captures, is not a variable funcgen follows; pass it to "
         "the lambda as a parameter";
}

// A read in a lambda's body of a local of the function around it that the lambda does not capture
// (a constant may be read so), which the lambda's helper would not see.
const clang::DeclRefExpr* uncaptured_local(const clang::Stmt* s, const clang::FunctionDecl* op) {
  if (s == nullptr) return nullptr;
  if (const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(s)) {
    const auto* vd = llvm::dyn_cast<clang::VarDecl>(r->getDecl());
    if (vd != nullptr && vd->isLocalVarDeclOrParm() && vd->getParentFunctionOrMethod() != op &&
        !op->Encloses(vd->getDeclContext()) && !r->refersToEnclosingVariableOrCapture())  // (a nested lambda's own)
      return r;
  }
  for (const clang::Stmt* c : s->children())
    if (const clang::DeclRefExpr* r = uncaptured_local(c, op)) return r;
  return nullptr;
}

}  // namespace

// A lambda defined in the body is a helper named `lambda` whose first parameters are the
// variables it captures (by value: one that it assigns is reported).
bool LambdaLowering::capture_parameters(const clang::FunctionDecl* decl) {
  f_.name = f_.qualified_name = "lambda";
  for (const clang::LambdaCapture& c : llvm::cast<clang::CXXMethodDecl>(decl)->getParent()->captures())
    if (c.capturesThis()) {
      unsupported_at(c.getLocation(), "a lambda that captures 'this' cannot be transformed; bind the members it "
                                             "reads to references before it (const auto& fc1 = this->fc1;) and "
                                             "capture those");
      return false;
    }
  if (const clang::DeclRefExpr* r = uncaptured_local(decl->getBody(), decl)) {
    unsupported(r, "the lambda reads '" + r->getDecl()->getNameAsString() + "' of the function around it without "
                   "capturing it, which cannot be transformed; capture it ([&] or [" +
                   r->getDecl()->getNameAsString() + "])");
    return false;
  }
  const auto* closure = llvm::cast<clang::CXXMethodDecl>(decl)->getParent();
  for (const clang::LambdaCapture& c : closure->captures()) {
    if (!c.capturesVariable()) continue;
    if (const std::string why = uncapturable(c); !why.empty()) {
      unsupported_at(c.getLocation(), why);
      return false;
    }
    if (c.getCaptureKind() != clang::LCK_ByCopy) continue;
    const clang::ValueDecl* copied = copied_variable(c);
    // A copy holds the value where the lambda is defined: the helper is given the value at the
    // call, the same only while nothing assigns the variable after the definition.
    const clang::Stmt* around = llvm::cast<clang::FunctionDecl>(closure->getDeclContext())->getBody();
    if (const clang::Stmt* w = copied != nullptr ? assignment_after(around, copied, closure->getEndLoc()) : nullptr) {
      unsupported(w, "'" + copied->getNameAsString() + "' is assigned after a lambda captured a copy of "
                     "it, which cannot be transformed; capture it by reference or pass it as a parameter");
      return false;
    }
  }
  for (const clang::ValueDecl* v : captured(decl)) {
    if (const clang::Stmt* w = assignment_to(decl->getBody(), v)) {
      unsupported(w, "a lambda that assigns the variable '" + v->getNameAsString() + "' it captures cannot be "
                     "transformed; return the new value from the lambda instead");
      return false;
    }
    if (const clang::CXXRecordDecl* closure = closure_of(v->getType())) {  // a lambda it calls
      if (!closure_parameter(v, closure)) return false;
      continue;
    }
    sig_.params.emplace_back();
    // A captured structure is passed leaf by leaf (flatten_parameters); a vector of tensors is a list.
    if (std::optional<pytree::Tree> tree = is_tensor_vector(v->getType()) ? std::nullopt : pytree::tree_of(v->getType(), context_)) {
      trees_[v] = std::move(*tree);
      continue;
    }
    const int id = add_var(v, captured_type(v));
    f_.vars[static_cast<size_t>(id)].param_index = static_cast<int>(f_.params.size());
    f_.params.push_back(id);
  }
  return true;
}

// A lambda a helper template is passed (`template <class F> fg::Tensor twice(F f, x)`), or one a
// lambda captures: the variables it captures are the helper's parameters in its place (the caller
// passes them: pass_captures), and its calls are calls of the lambda's own helper
// (lower_lambda_call).
bool LambdaLowering::closure_parameter(const clang::ValueDecl* p, const clang::CXXRecordDecl* closure) {
  if (!names_collected_) collect_names(f_.decl);
  names_collected_ = true;
  sig_.params.emplace_back();
  lambdas_.insert(p);
  textless_.insert(p);
  std::vector<int> held;
  if (!hold_captures(p->getNameAsString(), closure, held)) return false;
  closure_vars_[p] = held;
  return true;
}

// Parameters for what `closure` captures, named after `prefix` (a structure leaf by leaf, as the
// lambda reads it; a lambda by what it captures), in the order pass_captures passes them.
bool LambdaLowering::hold_captures(const std::string& prefix, const clang::CXXRecordDecl* closure, std::vector<int>& held) {
  size_t k = 0;
  for (const clang::ValueDecl* v : lower::captured(closure)) {  // ('this' is reported where the lambda is transformed)
    const size_t index = k++;
    const std::string name = prefix + "_" + v->getNameAsString();
    if (const clang::CXXRecordDecl* inner = closure_of(v->getType())) {
      const size_t first = held.size();
      if (!hold_captures(name, inner, held)) return false;
      closure_vars_[v] = std::vector<int>(held.begin() + static_cast<std::ptrdiff_t>(first), held.end());
      lambdas_.insert(v);
      textless_.insert(v);
      continue;
    }
    if (is_structured_type(v->getType()) && !is_tensor_vector(v->getType())) {
      const pytree::Tree* read = signature_tree(call_operator(closure), index, {});
      if (read == nullptr) return false;
      pytree::Tree tree = *read;
      std::vector<pytree::Tree*> leaves;
      tree.leaves(leaves);
      const std::vector<std::string> written = pytree::leaf_accesses(tree, v->getNameAsString());
      std::vector<std::string> names;
      leaf_names(tree, name, names);
      std::vector<int>& ids = captured_leaves_[v] = {};
      for (size_t i = 0; i < leaves.size(); ++i) ids.push_back(leaf_parameter(*leaves[i], names[i], written[i], v));
      held.insert(held.end(), ids.begin(), ids.end());
      continue;
    }
    const int id = add_var(v, captured_type(v));
    f_.vars[static_cast<size_t>(id)].name = fresh_name(name);
    f_.vars[static_cast<size_t>(id)].param_index = static_cast<int>(f_.params.size());
    f_.params.push_back(id);
    held.push_back(id);
  }
  return true;
}

// The variable a copy captures: itself, or what an init-capture of a structure copies (`[l = m]`,
// `[l = m.layer]`; passed leaf by leaf where the lambda is called). nullptr for other init-captures
// (declared where the lambda is: hoist_init_captures).
const clang::ValueDecl* LambdaLowering::copied_variable(const clang::LambdaCapture& c) {
  const clang::VarDecl* v = init_capture(c);
  if (v == nullptr) return c.getCapturedVar();
  return is_structured_type(v->getType()) && v->getInit() != nullptr ? root_decl(v->getInit()) : nullptr;
}

// Why a lambda's capture cannot be transformed yet ("" where it can).
std::string LambdaLowering::uncapturable(const clang::LambdaCapture& c) const {
  if (const clang::VarDecl* v = init_capture(c); v != nullptr && c.getCaptureKind() == clang::LCK_ByRef)
    return "the lambda's init-capture '&" + v->getNameAsString() + "' is a reference, which cannot be transformed "
           "yet; declare the reference before the lambda (const auto& " + v->getNameAsString() + " = ...;) and "
           "capture that";
  std::function<bool(const pytree::Tree&)> optional = [&](const pytree::Tree& t) {
    return t.kind == pytree::Tree::Kind::Optional || std::any_of(t.children.begin(), t.children.end(), optional);
  };
  if (const std::optional<pytree::Tree> tree = pytree::tree_of(c.getCapturedVar()->getType(), context_); tree && optional(*tree))
    return "the lambda captures '" + c.getCapturedVar()->getNameAsString() + "', which holds a std::optional, and "
           "cannot be transformed yet; read the tensors it needs into variables before the lambda and capture those";
  return "";
}

// The type of a lambda's parameter for a variable it captures (an init-capture's as deduced).
clang::QualType LambdaLowering::captured_type(const clang::ValueDecl* v) const {
  const clang::QualType t = v->getType().getNonReferenceType();
  const auto* vd = llvm::dyn_cast<clang::VarDecl>(v);
  return vd != nullptr && vd->isInitCapture() ? t.getDesugaredType(context_) : t;
}

// What a lambda is passed on as: `f`, `std::forward<F>(f)`, `std::move(f)`.
const clang::Expr* LambdaLowering::forwarded(const clang::Expr* e) {
  e = strip(e);
  if (const auto* call = llvm::dyn_cast<clang::CallExpr>(e); call != nullptr && call->getNumArgs() == 1)
    if (const clang::FunctionDecl* fn = call->getDirectCallee();
        fn != nullptr && (fn->getQualifiedNameAsString() == "std::forward" || fn->getQualifiedNameAsString() == "std::move"))
      return strip(call->getArg(0));
  return e;
}

// An assignment of `v` in `s` that stands after `after`.
const clang::Stmt* LambdaLowering::assignment_after(const clang::Stmt* s, const clang::ValueDecl* v, clang::SourceLocation after) const {
  if (s == nullptr) return nullptr;
  if (const clang::Stmt* w = assignment_to(s, v); w != nullptr && w == s && sm_.isBeforeInTranslationUnit(after, s->getBeginLoc()))
    return w;
  for (const clang::Stmt* c : s->children())
    if (const clang::Stmt* w = assignment_after(c, v, after)) return w;
  return nullptr;
}

// An assignment (or increment) of `v` in `s`.
// (Of a part of a structure `v`, too: `m.weight = w`, `h[1] = y` of a vector.)
const clang::Stmt* LambdaLowering::assignment_to(const clang::Stmt* s, const clang::ValueDecl* v) const {
  if (s == nullptr) return nullptr;
  const auto names = [&](const clang::Expr* e) {
    e = e->IgnoreParenImpCasts();
    for (const clang::Expr* base = base_of_part(e); base != nullptr && is_structured_type(base->getType());
         base = base_of_part(e))
      e = base->IgnoreParenImpCasts();
    const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e);
    return r != nullptr && r->getDecl() == v;
  };
  if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(s); b != nullptr && b->isAssignmentOp() && names(b->getLHS()))
    return s;
  if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(s); u != nullptr && u->isIncrementDecrementOp() && names(u->getSubExpr()))
    return s;
  if (const auto* o = llvm::dyn_cast<clang::CXXOperatorCallExpr>(s);
      o != nullptr && o->isAssignmentOp() && o->getNumArgs() > 0 && names(o->getArg(0)))
    return s;
  if (const auto* call = llvm::dyn_cast<clang::CallExpr>(s); call != nullptr && !llvm::isa<clang::CXXOperatorCallExpr>(s))
    if (const clang::FunctionDecl* f = call->getDirectCallee())  // `advance(state, x)` of a `State&`
      for (unsigned i = 0; i < call->getNumArgs() && i < f->getNumParams(); ++i)
        if (non_const_reference(f->getParamDecl(i)->getType()) && names(call->getArg(i))) return s;
  for (const clang::Stmt* c : s->children())
    if (const clang::Stmt* w = assignment_to(c, v)) return w;
  return nullptr;
}

// A lambda passed to a helper (closure_parameter): the variables it captures are passed in its
// place; the call printed as written passes the lambda (ir::kLambdaArg).
std::string LambdaLowering::pass_lambda(const clang::Expr* arg, const clang::CXXRecordDecl* closure,
                                        const clang::FunctionDecl* callee, ir::Expr& call) {
  const clang::Expr* given = forwarded(arg);
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(given);
  if (!llvm::isa<clang::LambdaExpr>(given) && (ref == nullptr || lambdas_.count(ref->getDecl()) == 0)) {
    unsupported(arg, "a lambda passed to '" + callee->getNameAsString() + "' must be written there or be a variable "
                     "of this function ('auto name = [...](...) { ... };') to be transformed");
    return "";
  }
  const std::optional<size_t> held = pass_captures(call_operator(closure), lambda_expr_of(given), arg, call);
  if (!held) return "";
  return std::string(1, ir::kLambdaArg) + text_of(arg) + std::string(*held, ir::kHeldLeaf);
}

// The variables a lambda captures, passed to its helper `op` in its place (a structure leaf by
// leaf, as `op` reads it). `lambda` is its definition: nullptr in a helper the lambda was passed
// to, whose parameters hold them (closure_parameter). How many arguments were added; nullopt
// where a capture cannot be passed (reported at `at`).
std::optional<size_t> LambdaLowering::pass_captures(const clang::FunctionDecl* op, const clang::LambdaExpr* lambda,
                                                    const clang::Expr* at, ir::Expr& call) {
  const size_t before = call.args.size();
  size_t k = 0;
  for (const clang::ValueDecl* v : captured(op)) {
    const size_t index = k++;
    std::vector<int> ids;
    bool held = true;
    if (auto lambda_held = closure_vars_.find(v); lambda_held != closure_vars_.end()) ids = lambda_held->second;
    else if (auto leaves = captured_leaves_.find(v); leaves != captured_leaves_.end()) ids = leaves->second;
    else if (auto it = vars_.find(v); it != vars_.end()) ids = {it->second};
    else held = false;
    for (int id : ids) {
      call.args.push_back(ir::var_ref(f_, id));
      call.params.push_back(v->getNameAsString());
      call.param_types.push_back(f_.var(id).type);
    }
    if (held) continue;
    if (const clang::CXXRecordDecl* inner = closure_of(v->getType())) {  // a lambda it calls: what that captures
      const auto* vd = llvm::dyn_cast<clang::VarDecl>(v);
      const clang::LambdaExpr* defined = vd != nullptr && vd->getInit() != nullptr ? lambda_expr_of(strip(vd->getInit())) : nullptr;
      if (!pass_captures(call_operator(inner), defined, at, call)) return std::nullopt;
      continue;
    }
    const clang::Expr* init = lambda != nullptr ? capture_init(*lambda, v) : nullptr;
    pytree::Tree* given = init != nullptr ? resolve(init, false) : nullptr;
    const pytree::Tree* wanted = given != nullptr ? signature_tree(op, index, {}) : nullptr;
    if (wanted == nullptr) {
      if (ok_) unsupported(at, unfollowed_capture(v));
      ok_ = false;
      return std::nullopt;
    }
    pass_leaves(*given, *wanted, init, call);
  }
  return call.args.size() - before;
}

// The lambda `e` is: written there, or the variable defined as one.
const clang::LambdaExpr* LambdaLowering::lambda_expr_of(const clang::Expr* e) {
  if (const auto* l = llvm::dyn_cast<clang::LambdaExpr>(e)) return l;
  const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e);
  const auto* vd = r != nullptr ? llvm::dyn_cast<clang::VarDecl>(r->getDecl()) : nullptr;
  return vd != nullptr && vd->getInit() != nullptr ? llvm::dyn_cast<clang::LambdaExpr>(strip(vd->getInit())) : nullptr;
}

// What `lambda` captures as `v` (the variable itself, or a copy of it).
const clang::Expr* LambdaLowering::capture_init(const clang::LambdaExpr& lambda, const clang::ValueDecl* v) {
  auto init = lambda.capture_init_begin();
  for (auto c = lambda.capture_begin(); c != lambda.capture_end(); ++c, ++init) {
    if (c->capturesVariable() && c->getCapturedVar() == v && *init != nullptr) return strip(*init);  // (a copy stripped)
  }
  return nullptr;
}

// A braced list of tensors passed to a helper's vector parameter: its elements are the leaves
// (as many as the helper reads).
bool LambdaLowering::pass_list(const clang::Expr* arg, const pytree::Tree& wanted, ir::Expr& call) {
  if (wanted.kind != pytree::Tree::Kind::Vector) return false;
  const auto* list = llvm::dyn_cast<clang::InitListExpr>(strip(arg));
  if (list == nullptr || list->getNumInits() != wanted.children.size()) return false;
  for (const clang::Expr* item : list->inits()) {
    call.args.push_back(lower_expr(item));
    call.params.push_back("");
    call.param_types.push_back(call.args.back()->type);
  }
  return true;
}

// `square(x)` of a lambda variable of the body: a helper call, the captured variables passed first.
ExprPtr LambdaLowering::lower_lambda_call(const clang::CXXOperatorCallExpr* oc, const clang::FunctionDecl* op) {
  const auto* object = llvm::dyn_cast<clang::DeclRefExpr>(forwarded(oc->getArg(0)));
  if (object == nullptr || lambdas_.count(object->getDecl()) == 0) {
    unsupported(oc, "a lambda called where it is not a variable of this function cannot be transformed; define it "
                    "with 'auto name = [...](...) { ... };' and call it by its name");
    return opaque(oc);
  }
  const clang::FunctionDecl* callee = op->getDefinition() != nullptr ? op->getDefinition() : op;
  if (const clang::QualType r = callee->getReturnType();
      !r->isVoidType() && !r->isArithmeticType() && !ir::is_tensor_like(ir_type_of(r)) && !is_structured_type(r)) {
    unsupported(oc, "a lambda that uses tensors and returns neither tensors nor a number cannot be transformed "
                    "yet; make it return tensors or a number, and build the rest outside it");
    return opaque(oc);
  }
  if (lowering_.lower(callee) == nullptr) {  // reported there: the call is not looked into again
    ok_ = false;
    ExprPtr x = make_expr(ExprKind::Opaque, oc);
    x->text = text_of(oc);
    return x;
  }
  ExprPtr x = make_expr(ExprKind::Call, oc);
  if (!structured_result_of(*x, callee, oc)) return reported(oc);
  x->form = ir::CallForm::User;
  x->callee = callee;
  x->op = "lambda";
  // A lambda this helper was passed is not in scope where the call may be printed: no text
  // (ir::passes_lambda: the transforms never print it).
  x->text = textless_.count(object->getDecl()) != 0 ? "" : text_of(object);
  const std::optional<size_t> held = pass_captures(callee, lambda_expr_of(object), oc, *x);
  if (!held) return reported(oc);
  x->index = static_cast<int>(*held);  // the arguments that the lambda object holds
  std::vector<const clang::Expr*> args(oc->arg_begin() + 1, oc->arg_end());
  add_args(*x, callee, args, true);
  if (!x->packing.empty()) x->packing.insert(x->packing.begin(), *held, "");
  return x;
}

}  // namespace funcgen::lower
