#include "frontend/lower.h"

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

namespace funcgen {

namespace {

bool is_tensor_type(clang::QualType t) { return ir::is_tensor_like(ir_type_of(t)); }

// A struct or class of the user's that holds tensors (at any depth): its tensors cannot be followed
// through the object. The runtime's and the standard library's types are not: fg::Tensor and
// std::vector or std::tuple of tensors are lowered as such.
bool user_record_holds_tensors(clang::QualType type) {
  const auto* record = bare(type)->getAsCXXRecordDecl();
  if (record == nullptr) return false;
  const std::string name = record->getQualifiedNameAsString();
  if (name.rfind("fg::", 0) == 0 || name.rfind("std::", 0) == 0) return false;
  return holds_tensors(type);
}

using ir::ExprKind;
using ir::ExprPtr;
using ir::StmtKind;
using ir::StmtPtr;

// The class of a lambda, where `t` is one (a helper template's `F f`, `const F&`, `F&&`).
const clang::CXXRecordDecl* closure_of(clang::QualType t) {
  const clang::CXXRecordDecl* r = t.isNull() ? nullptr : t.getNonReferenceType()->getAsCXXRecordDecl();
  return r != nullptr && r->isLambda() ? r : nullptr;
}

// The variables a lambda captures, in order (its helper's first parameters: lower_lambda_call,
// closure_parameter).
std::vector<const clang::ValueDecl*> captured(const clang::CXXRecordDecl* closure) {
  std::vector<const clang::ValueDecl*> out;
  for (const clang::LambdaCapture& c : closure->captures())
    if (c.capturesVariable()) out.push_back(c.getCapturedVar());
  return out;
}

// Whether a value of type `t` holds tensors: a tensor, a container or structure of them.
bool holds_tensors(clang::QualType t, int depth = 0) {
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
    if (ir::is_tensor_like(ir_type_of(e->getType())) || captures_tensors(e->getType())) found = true;
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

class FunctionLowerer {
 public:
  FunctionLowerer(ir::Function& fn, StructuredSignature& sig, Lowering& lowering, clang::ASTContext& context,
                  Reporter& reporter, std::set<std::string> absent)
      : f_(fn), sig_(sig), lowering_(lowering), context_(context), sm_(context.getSourceManager()), reporter_(reporter),
        absent_(std::move(absent)) {}

  bool run(const clang::FunctionDecl* decl) {
    f_.decl = decl;
    f_.name = decl->getNameAsString();
    f_.qualified_name = decl->getQualifiedNameAsString();
    // The generated code is free functions: a template's parameters and a member function's
    // members would be undeclared there.
    if (decl->isDependentContext() && is_lambda(decl)) {
      unsupported_at(decl->getLocation(), "a generic lambda ('auto' parameters) that is passed to a helper or "
                                          "captured, and called with arguments of different types, cannot be "
                                          "transformed yet; give its parameters types (const fg::Tensor& z)");
      return false;
    }
    if (decl->isDependentContext()) {
      unsupported_at(decl->getLocation(), "'" + f_.name + "' is a template, which cannot be transformed; annotate a "
                                          "function that calls the instance it needs (" + f_.name + "<...>(x))");
      return false;
    }
    if (!user_names_free_of_generated_form(decl)) return false;
    if (is_lambda(decl)) {
      if (!capture_parameters(decl)) return false;
    } else if (!object_parameter(decl)) {
      return false;
    }
    for (const clang::DeclContext* dc = decl->getDeclContext(); dc != nullptr; dc = dc->getParent())
      if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(dc))
        f_.namespaces.insert(f_.namespaces.begin(), ns->isAnonymousNamespace() ? "" : ns->getNameAsString());
    for (const clang::ParmVarDecl* p : decl->parameters()) {
      if (const clang::CXXRecordDecl* closure = closure_of(p->getType())) {
        if (!closure_parameter(p, closure)) return false;
        continue;
      }
      std::string why;
      std::optional<pytree::Tree> tree =
          list_parameter(p, decl->getBody()) ? std::nullopt : pytree::parameter_tree_of(p->getType(), context_, &why);
      if (!why.empty()) {
        unsupported_at(p->getLocation(), "parameter '" + p->getNameAsString() + "' cannot be transformed: " + why);
        return false;
      }
      if (tree) {
        trees_[p] = std::move(*tree);
        sig_.params.emplace_back();  // filled once the leaves are known
        continue;
      }
      sig_.params.emplace_back();
      const int id = add_var(p, without_user_aliases(p->getType(), context_));  // spelled for the header
      f_.vars[static_cast<size_t>(id)].param_index = static_cast<int>(f_.params.size());
      f_.params.push_back(id);
    }
    if (!trees_.empty() && !flatten_parameters(decl)) return false;
    f_.return_type = ir_type_of(decl->getReturnType());
    // A deduced result (`auto`, a lambda's) as the type it is: std::make_tuple's spells the library's
    // internals.
    const clang::QualType result = decl->getReturnType()->getContainedDeducedType() != nullptr
                                       ? decl->getReturnType().getCanonicalType()
                                       : decl->getReturnType();
    f_.return_cxx_type = cxx_spelling(without_user_aliases(result, context_), context_);
    if (!structured_result(decl)) return false;
    if (result_) {
      sig_.result = result_;
    } else if (f_.return_type == ir::Type::TensorTuple) {
      const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(bare(decl->getReturnType())->getAsCXXRecordDecl());
      f_.outputs = spec->getTemplateArgs()[0].getKind() == clang::TemplateArgument::Pack ? spec->getTemplateArgs()[0].pack_size()
                                                                                       : spec->getTemplateArgs().size();
    }
    bind_template_arguments(decl);
    find_stacked(decl->getBody());
    if (const auto* body = llvm::dyn_cast_or_null<clang::CompoundStmt>(decl->getBody())) append_block(f_.body, body);
    if (result_ && open_result_) {  // a returned map's keys (a vector's length) are known from its returns
      set_outputs();
      sig_.result = result_;
    }
    return ok_;
  }

 private:
  // ------------------------------------------------------------------ structures (frontend/pytree.h)

  // A std::vector<fg::Tensor> parameter that the body reads at run-time indices, iterates, sizes or
  // passes on whole is a list of the flat function (its length is known only at run time); one
  // read only at constant indices is a structure whose leaves are the elements read.
  // Passed whole to a helper, it is what the helper's parameter is.
  static bool list_parameter(const clang::ParmVarDecl* p, const clang::Stmt* body, int depth = 0) {
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

  // A member function (`Net::forward`) takes its object as its first parameter, `self`, a structure
  // of the class's fields, as torch.func's functional_call takes the module's parameters.
  bool object_parameter(const clang::FunctionDecl* decl) {
    const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(decl);
    if (method == nullptr || method->isStatic()) return true;
    const std::string cls = method->getParent()->getNameAsString();
    for (const clang::ParmVarDecl* p : method->parameters())
      if (p->getName() == "self") {
        unsupported_at(p->getLocation(), "a parameter of a member function may not be named 'self': funcgen passes the "
                                         "object as 'self'; rename it");
        return false;
      }
    if (!method->isConst()) {
      unsupported_at(decl->getLocation(), "'" + cls + "::" + f_.name + "' must be a const member function to be "
                                          "transformed: its object's tensors are its inputs, which it cannot change; "
                                          "declare it 'const'");
      return false;
    }
    std::string why;
    std::optional<pytree::Tree> tree = pytree::tree_of(method->getThisType()->getPointeeType(), context_, &why);
    if (!tree) {
      unsupported_at(decl->getLocation(), "'" + cls + "::" + f_.name + "' cannot be transformed with its object: " +
                                          (why.empty() ? "'" + cls + "' has no tensor members" : why));
      return false;
    }
    trees_[decl] = std::move(*tree);
    sig_.params.emplace_back();
    return true;
  }

  static bool is_lambda(const clang::FunctionDecl* fn) {
    const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(fn);
    return m != nullptr && m->getParent()->isLambda();
  }

  // The variables the lambda whose call operator is `fn` captures.
  static std::vector<const clang::ValueDecl*> captured(const clang::FunctionDecl* fn) {
    return funcgen::captured(llvm::cast<clang::CXXMethodDecl>(fn)->getParent());
  }

  // A lambda defined in the body is a helper named `lambda` whose first parameters are the
  // variables it captures (by value: one that it assigns is reported).
  bool capture_parameters(const clang::FunctionDecl* decl) {
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
  bool closure_parameter(const clang::ValueDecl* p, const clang::CXXRecordDecl* closure) {
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
  bool hold_captures(const std::string& prefix, const clang::CXXRecordDecl* closure, std::vector<int>& held) {
    size_t k = 0;
    for (const clang::ValueDecl* v : funcgen::captured(closure)) {  // ('this' is reported where the lambda is transformed)
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
  const clang::ValueDecl* copied_variable(const clang::LambdaCapture& c) {
    const clang::VarDecl* v = init_capture(c);
    if (v == nullptr) return c.getCapturedVar();
    return is_structured_type(v->getType()) && v->getInit() != nullptr ? root_decl(v->getInit()) : nullptr;
  }

  // The variable an init-capture declares (`s` of `[s = w * 2]`), or nullptr for another capture.
  static const clang::VarDecl* init_capture(const clang::LambdaCapture& c) {
    const auto* v = c.capturesVariable() ? llvm::dyn_cast<clang::VarDecl>(c.getCapturedVar()) : nullptr;
    return v != nullptr && v->isInitCapture() ? v : nullptr;
  }

  // Why a lambda's capture cannot be transformed yet ("" where it can).
  std::string uncapturable(const clang::LambdaCapture& c) const {
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

  // A lambda's call operator: of a generic lambda, the instance the program calls (the pattern
  // where it calls several, which is reported where it is transformed).
  static const clang::FunctionDecl* call_operator(const clang::CXXRecordDecl* closure) {
    const clang::CXXMethodDecl* op = closure->getLambdaCallOperator();
    if (const clang::FunctionTemplateDecl* t = op->getDescribedFunctionTemplate()) {
      const auto instances = t->specializations();
      if (std::distance(instances.begin(), instances.end()) == 1) return *instances.begin();
    }
    return op;
  }

  // The type of a lambda's parameter for a variable it captures (an init-capture's as deduced).
  clang::QualType captured_type(const clang::ValueDecl* v) const {
    const clang::QualType t = v->getType().getNonReferenceType();
    const auto* vd = llvm::dyn_cast<clang::VarDecl>(v);
    return vd != nullptr && vd->isInitCapture() ? t.getDesugaredType(context_) : t;
  }

  // Why a variable a lambda captures is not one funcgen follows.
  static std::string unfollowed_capture(const clang::ValueDecl* v) {
    const auto* vd = llvm::dyn_cast<clang::VarDecl>(v);
    if (vd != nullptr && vd->isInitCapture())
      return "the lambda's init-capture '" + v->getNameAsString() + "' cannot be transformed yet; declare it as a "
             "variable before the lambda and capture that";
    return "'" + v->getNameAsString() + "', which this lambda captures, is not a variable funcgen follows; pass it to "
           "the lambda as a parameter";
  }

  // What a lambda is passed on as: `f`, `std::forward<F>(f)`, `std::move(f)`.
  const clang::Expr* forwarded(const clang::Expr* e) {
    e = strip(e);
    if (const auto* call = llvm::dyn_cast<clang::CallExpr>(e); call != nullptr && call->getNumArgs() == 1)
      if (const clang::FunctionDecl* fn = call->getDirectCallee();
          fn != nullptr && (fn->getQualifiedNameAsString() == "std::forward" || fn->getQualifiedNameAsString() == "std::move"))
        return strip(call->getArg(0));
    return e;
  }

  // A read in a lambda's body of a local of the function around it that the lambda does not capture
  // (a constant may be read so), which the lambda's helper would not see.
  static const clang::DeclRefExpr* uncaptured_local(const clang::Stmt* s, const clang::FunctionDecl* op) {
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

  // An assignment of `v` in `s` that stands after `after`.
  const clang::Stmt* assignment_after(const clang::Stmt* s, const clang::ValueDecl* v, clang::SourceLocation after) const {
    if (s == nullptr) return nullptr;
    if (const clang::Stmt* w = assignment_to(s, v); w != nullptr && w == s && sm_.isBeforeInTranslationUnit(after, s->getBeginLoc()))
      return w;
    for (const clang::Stmt* c : s->children())
      if (const clang::Stmt* w = assignment_after(c, v, after)) return w;
    return nullptr;
  }

  // An assignment (or increment) of `v` in `s`.
  // (Of a part of a structure `v`, too: `m.weight = w`, `h[1] = y` of a vector.)
  const clang::Stmt* assignment_to(const clang::Stmt* s, const clang::ValueDecl* v) const {
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

  // The structured parameters in order, with their names: the object of a member function first.
  std::vector<std::pair<const clang::ValueDecl*, std::string>> parameters(const clang::FunctionDecl* decl) const {
    std::vector<std::pair<const clang::ValueDecl*, std::string>> out;
    if (trees_.count(decl) != 0) out.emplace_back(decl, "self");
    if (is_lambda(decl))
      for (const clang::ValueDecl* v : captured(decl)) out.emplace_back(v, v->getNameAsString());
    for (const clang::ParmVarDecl* p : decl->parameters()) out.emplace_back(p, p->getNameAsString());
    return out;
  }

  // Every name the generated code introduces has "__" in it (vmap's batch_name): a form that C++
  // reserves, so that no user's variable can be hidden by one or hide one. A variable of that form
  // is reported at its declaration, once; any other name (`_`, `_1`, `d_x`) is fine.
  bool user_names_free_of_generated_form(const clang::FunctionDecl* decl) {
    struct Reserved : clang::RecursiveASTVisitor<Reserved> {
      std::vector<const clang::NamedDecl*> found;
      bool shouldVisitLambdaBody() const { return true; }
      bool VisitVarDecl(clang::VarDecl* d) { return check(d); }
      bool VisitBindingDecl(clang::BindingDecl* d) { return check(d); }
      bool check(const clang::NamedDecl* d) {
        if (d->getIdentifier() != nullptr && d->getName().contains("__")) found.push_back(d);
        return true;
      }
    } reserved;
    for (const clang::ParmVarDecl* p : decl->parameters()) reserved.check(p);
    reserved.TraverseStmt(decl->getBody());
    for (const clang::NamedDecl* d : reserved.found)
      unsupported_at(d->getLocation(), "the name '" + d->getNameAsString() + "' has '__' in it, which C++ reserves "
                                       "and funcgen's generated names use; rename the variable");
    return reserved.found.empty();
  }

  // The names the function's text declares: a leaf's variable must not hide one.
  void collect_names(const clang::FunctionDecl* decl) {
    for (const clang::ParmVarDecl* p : decl->parameters()) names_.insert(p->getNameAsString());
    struct Names : clang::RecursiveASTVisitor<Names> {
      std::set<std::string>* out;
      bool VisitNamedDecl(clang::NamedDecl* d) {
        out->insert(d->getNameAsString());
        return true;
      }
      bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
        out->insert(e->getDecl()->getNameAsString());
        return true;
      }
    } names;
    names.out = &names_;
    names.TraverseStmt(decl->getBody());
  }

  // `const Linear& layer = p.layer;` (or a const copy): another name for a part of a structured
  // parameter, resolved as the expression it was initialized with.
  bool alias(const clang::VarDecl* vd) {
    if (trees_.empty() || vd->getInit() == nullptr || !vd->getType().getNonReferenceType().isConstQualified() ||
        !pytree::tree_of(vd->getType(), context_).has_value())
      return false;
    const pytree::Tree* part = resolve(vd->getInit(), true);
    if (part == nullptr) return false;
    if (!vd->getType()->isReferenceType()) {  // a copy of what may change later is a structure of its own
      const auto* p = llvm::dyn_cast_or_null<clang::ParmVarDecl>(root_decl(vd->getInit()));
      const bool mutable_source = is_local(*part) || (p != nullptr && !p->getType().getNonReferenceType().isConstQualified());
      if (mutable_source && local_tree(vd->getType())) return false;  // (a vector, map or optional stays a name)
    }
    aliases_[vd] = vd->getInit();
    return true;
  }

  // The leaves of the structured parameters become the flat function's parameters, in order:
  // first the elements of vectors and maps that the body reads are found.
  bool flatten_parameters(const clang::FunctionDecl* decl) {
    collect_names(decl);
    specialise(decl);
    discover(decl->getBody());
    if (!ok_) return false;
    unsigned k = 0;
    for (const auto& [p, name] : parameters(decl)) {
      const size_t index = k++;
      if (auto held = closure_vars_.find(p); held != closure_vars_.end()) {  // a lambda's captures keep its place
        for (int id : held->second) {
          f_.params.erase(std::find(f_.params.begin(), f_.params.end(), id));
          f_.params.push_back(id);
        }
        continue;
      }
      auto it = trees_.find(p);
      if (it == trees_.end()) {
        // A plain parameter keeps its place among the leaves.
        const int id = vars_.at(p);
        f_.params.erase(std::find(f_.params.begin(), f_.params.end(), id));
        f_.params.push_back(id);
        continue;
      }
      std::vector<pytree::Tree*> leaves;
      it->second.leaves(leaves);
      const std::vector<std::string> written = pytree::leaf_accesses(it->second, name);
      std::vector<std::string> names;
      leaf_names(it->second, name, names);
      for (size_t i = 0; i < leaves.size(); ++i) leaf_parameter(*leaves[i], names[i], written[i], p);
      sig_.params[index] = it->second;
    }
    for (size_t i = 0; i < f_.params.size(); ++i) f_.vars[static_cast<size_t>(f_.params[i])].param_index = static_cast<int>(i);
    return true;
  }

  // A parameter of the flat function for a leaf of a structure (`written` is how the body reads it).
  int leaf_parameter(pytree::Tree& leaf, const std::string& name, const std::string& written, const clang::ValueDecl* of) {
    ir::Var v;
    v.id = static_cast<int>(f_.vars.size());
    v.name = fresh_name(name);
    v.written = written;
    v.decl = of;
    if (leaf.kind == pytree::Tree::Kind::Tensor) {
      v.type = ir::Type::Tensor;
      v.cxx_type = "const fg::Tensor&";
    } else {
      v.type = leaf.scalar_type;
      v.cxx_type = ir::is_scalar(leaf.scalar_type) ? leaf.cxx_type : "const " + leaf.cxx_type + "&";
      leaf.source = written;
    }
    v.param_index = static_cast<int>(f_.params.size());
    leaf.var = v.id;
    f_.vars.push_back(v);
    f_.params.push_back(v.id);
    return v.id;
  }

  // The optionals of the parameters that hold no tensor in this specialization lose their leaf.
  void specialise(const clang::FunctionDecl* decl) {
    for (const auto& [p, name] : parameters(decl)) {
      auto it = trees_.find(p);
      if (it == trees_.end()) continue;
      std::function<void(pytree::Tree&, const std::string&)> visit = [&](pytree::Tree& t, const std::string& at) {
        if (t.kind == pytree::Tree::Kind::Optional && absent_.count(at) != 0) t.children.clear();
        if (t.kind == pytree::Tree::Kind::Optional || t.kind == pytree::Tree::Kind::Vector || t.kind == pytree::Tree::Kind::Map)
          return;
        for (size_t i = 0; i < t.children.size(); ++i) visit(t.children[i], pytree::access(t, i, at));
      };
      visit(it->second, name);
    }
  }

  // A call's object (a member function's, a functor's whose operator() it calls) and arguments.
  struct CallParts {
    const clang::Expr* object = nullptr;
    std::vector<const clang::Expr*> args;
  };
  static CallParts parts_of(const clang::CallExpr* call, const clang::FunctionDecl* callee) {
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

  // The optionals of `callee`'s parameters (and object) that hold no tensor at `call`: the caller's
  // own optionals it passes on where they hold none, and std::nullopt.
  std::vector<std::string> absent_at(const clang::CallExpr* call, const clang::FunctionDecl* callee, bool discovering) {
    std::set<std::string> absent;
    if (callee == nullptr || is_lambda(callee)) return {};
    const auto visit = [&](clang::QualType type, const clang::Expr* arg, const std::string& root) {
      std::optional<pytree::Tree> wanted = pytree::tree_of(type, context_);
      if (!wanted || pytree::optional_paths(*wanted, root).empty()) return;
      if (const pytree::Tree* given = resolve(arg, discovering)) return absent_in(*wanted, *given, root, absent);
      if (wanted->kind == pytree::Tree::Kind::Optional && holds_no_tensor(arg)) absent.insert(root);
    };
    const CallParts parts = parts_of(call, callee);
    if (parts.object != nullptr && is_instance_method(callee))
      visit(llvm::cast<clang::CXXMethodDecl>(callee)->getThisType()->getPointeeType(), parts.object, "self");
    for (unsigned i = 0; i < parts.args.size() && i < callee->getNumParams(); ++i)
      visit(callee->getParamDecl(i)->getType(), parts.args[i], callee->getParamDecl(i)->getNameAsString());
    return std::vector<std::string>(absent.begin(), absent.end());
  }

  static void absent_in(const pytree::Tree& wanted, const pytree::Tree& given, const std::string& at, std::set<std::string>& out) {
    if (wanted.kind == pytree::Tree::Kind::Optional) {
      if (given.kind == pytree::Tree::Kind::Optional && given.children.empty()) out.insert(at);
      return;
    }
    if (wanted.kind == pytree::Tree::Kind::Vector || wanted.kind == pytree::Tree::Kind::Map) return;
    for (size_t i = 0; i < wanted.children.size() && i < given.children.size(); ++i)
      absent_in(wanted.children[i], given.children[i], pytree::access(wanted, i, at), out);
  }

  // std::nullopt, `{}` or an empty std::optional<fg::Tensor>() passed for an optional.
  bool holds_no_tensor(const clang::Expr* arg) {
    if (const auto* d = llvm::dyn_cast<clang::CXXDefaultArgExpr>(arg)) arg = d->getExpr();
    const clang::Expr* e = strip(arg);
    if (record_name(e->getType()) == "std::nullopt_t") return true;
    if (const auto* il = llvm::dyn_cast<clang::InitListExpr>(e)) return il->getNumInits() == 0;
    if (const auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(e)) return c->getNumArgs() == 0;
    return false;
  }

  // The optional that `e` tests, folded: `b`, `b.has_value()`, `!b`, `b == std::nullopt`, `b != std::nullopt`
  // and && / || of such tests are constants in a specialization (nullopt for anything else).
  std::optional<bool> presence_test(const clang::Expr* e) {
    if (trees_.empty() || e == nullptr) return std::nullopt;
    e = e->IgnoreParenImpCasts();
    if (const auto* rw = llvm::dyn_cast<clang::CXXRewrittenBinaryOperator>(e))  // C++20's `b != std::nullopt`
      e = rw->getSemanticForm()->IgnoreParenImpCasts();
    if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u != nullptr && u->getOpcode() == clang::UO_LNot) {
      std::optional<bool> inner = presence_test(u->getSubExpr());
      return inner ? std::optional<bool>(!*inner) : std::nullopt;
    }
    if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e); b != nullptr && b->isLogicalOp()) {
      const std::optional<bool> l = presence_test(b->getLHS()), r = presence_test(b->getRHS());
      const bool is_and = b->getOpcode() == clang::BO_LAnd;
      if (l && *l != is_and) return l;  // false && ..., true || ...: decided on the left
      if (l && r) return r;
      if (r && *r != is_and && !b->getLHS()->HasSideEffects(context_)) return r;  // flag && b: decided on the right
      return std::nullopt;
    }
    if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(e)) {
      const clang::CXXMethodDecl* m = mc->getMethodDecl();
      if (m != nullptr && (llvm::isa<clang::CXXConversionDecl>(m) || (m->getName() == "has_value" && mc->getNumArgs() == 0)))
        if (const pytree::Tree* t = resolve(mc->getImplicitObjectArgument(), false); t != nullptr && t->kind == pytree::Tree::Kind::Optional)
          return !t->children.empty();
      return std::nullopt;
    }
    if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e);
        oc != nullptr && oc->getNumArgs() == 2 && (oc->getOperator() == clang::OO_EqualEqual || oc->getOperator() == clang::OO_ExclaimEqual)) {
      for (unsigned k = 0; k < 2; ++k) {
        const pytree::Tree* t = resolve(oc->getArg(k), false);
        if (t == nullptr || t->kind != pytree::Tree::Kind::Optional ||
            record_name(oc->getArg(1 - k)->getType()) != "std::nullopt_t")
          continue;
        return t->children.empty() == (oc->getOperator() == clang::OO_EqualEqual);
      }
    }
    return std::nullopt;
  }

  // `b = x * 2`, `b.reset()`: an optional parameter changed, which its specialization cannot follow.
  void assigns_optional(const clang::Expr* e, const clang::Expr* object) {
    pytree::Tree* t = resolve(object, false);
    if (t == nullptr || t->kind != pytree::Tree::Kind::Optional || !assigned_optionals_.insert(t).second) return;
    unsupported(e, "changing the std::optional '" + text_of(object) + "' cannot be transformed: funcgen specializes "
                   "the function on which optionals hold a tensor when it is called; compute the tensor in a local "
                   "(fg::Tensor t = " + text_of(object) + " ? *" + text_of(object) + " : ...;)");
  }

  // `*b`, `b.value()`, `b->`: the tensor an optional holds (nullptr, reported, where it holds none).
  pytree::Tree* optional_value(const clang::Expr* e, const clang::Expr* object, bool discovering) {
    pytree::Tree* t = resolve(object, discovering);
    if (t == nullptr || t->kind != pytree::Tree::Kind::Optional) return nullptr;
    if (!t->children.empty()) return &t->children[0];
    if (!discovering && assigned_optionals_.count(t) == 0 && reported_indices_.insert(e).second)
      unsupported(e, "this reads the tensor of '" + text_of(object) + "' where it holds none (funcgen specializes the "
                     "function on which optionals hold tensors); read it only under 'if (" + text_of(object) + ")'");
    return nullptr;
  }

  // The leaves' names by their paths: p.w1 -> p_w1, std::get<0>(t) -> t_0, params.at("fc1.weight") ->
  // params_fc1.weight (made an identifier by fresh_name).
  static void leaf_names(const pytree::Tree& t, const std::string& at, std::vector<std::string>& out) {
    if (t.is_leaf()) {
      out.push_back(at);
      return;
    }
    for (size_t i = 0; i < t.children.size(); ++i)
      leaf_names(t.children[i],
                 t.kind == pytree::Tree::Kind::Optional ? at : at + "_" + (t.keys.empty() ? std::to_string(i) : t.keys[i]),
                 out);
  }

  // An identifier made of `path` that no other name of the function has.
  std::string fresh_name(const std::string& path) {
    std::string name = cxx::identifier_of(path);
    while (names_.count(name) != 0) name += "_";
    names_.insert(name);
    return name;
  }

  // Finds what the body reads of the structured parameters: vector elements and map keys (added to
  // their trees), and structures passed whole to functions of this file (which read what those read).
  void discover(const clang::Stmt* s) {
    if (s == nullptr) return;
    if (const auto* ds = llvm::dyn_cast<clang::DeclStmt>(s))
      for (const clang::Decl* d : ds->decls())
        if (const auto* vd = llvm::dyn_cast<clang::VarDecl>(d)) alias(vd);
    if (const auto* e = llvm::dyn_cast<clang::Expr>(s)) {
      if (resolve(e, true) != nullptr) return;
      const auto* call = llvm::dyn_cast<clang::CallExpr>(e);
      if (call != nullptr && is_user_function(call->getDirectCallee())) {
        const clang::FunctionDecl* callee = call->getDirectCallee()->getDefinition();
        const std::vector<std::string> absent = absent_at(call, callee, true);
        const CallParts parts = parts_of(call, callee);
        if (parts.object != nullptr) {
          pytree::Tree* object = resolve(parts.object, true);
          if (const pytree::Tree* wanted = object != nullptr ? object_tree(callee, absent) : nullptr) merge(*object, *wanted);
        }
        for (unsigned i = 0; i < parts.args.size() && i < callee->getNumParams(); ++i) {
          pytree::Tree* given = resolve(parts.args[i], true);
          if (given == nullptr) continue;
          if (const pytree::Tree* wanted = callee_tree(callee, i, absent)) merge(*given, *wanted);
        }
      }
    }
    // What a specialization on optionals does not run is not looked into (its helpers may read
    // an optional where it holds none).
    if (const auto* i = llvm::dyn_cast<clang::IfStmt>(s); i != nullptr && i->getInit() == nullptr &&
                                                          i->getConditionVariable() == nullptr)
      if (const std::optional<bool> taken = presence_test(i->getCond())) return discover(*taken ? i->getThen() : i->getElse());
    if (const auto* c = llvm::dyn_cast<clang::ConditionalOperator>(s))
      if (const std::optional<bool> taken = presence_test(c->getCond()))
        return discover(*taken ? c->getTrueExpr() : c->getFalseExpr());
    if (const auto* c = llvm::dyn_cast<clang::CompoundStmt>(s)) {
      for (auto it = c->body_begin(); it != c->body_end(); ++it) {
        discover(*it);
        if (!always_returns(*it)) continue;
        if (!case_after(it, c->body_end())) return;
        while (std::next(it) != c->body_end() && !has_case_label(*std::next(it))) ++it;  // dead up to the next case
      }
      return;
    }
    for (const clang::Stmt* child : s->children()) discover(child);
  }

  // The tree of a helper's parameter `i`, as the helper's lowering found it (a member function's
  // object comes before its parameters: object_tree).
  const pytree::Tree* callee_tree(const clang::FunctionDecl* callee, unsigned i, const std::vector<std::string>& absent) {
    if (is_lambda(callee)) return signature_tree(callee, i + captured(callee).size(), absent);  // (captures first)
    return signature_tree(callee, i + (is_instance_method(callee) ? 1 : 0), absent);
  }
  const pytree::Tree* object_tree(const clang::FunctionDecl* callee, const std::vector<std::string>& absent) {
    return is_instance_method(callee) && !is_lambda(callee) ? signature_tree(callee, 0, absent) : nullptr;
  }
  const pytree::Tree* signature_tree(const clang::FunctionDecl* callee, size_t k, const std::vector<std::string>& absent) {
    if (lowering_.lower(callee, absent) == nullptr) {
      ok_ = false;
      return nullptr;
    }
    const StructuredSignature& sig = lowering_.signature(callee, absent);
    return k < sig.params.size() && sig.params[k] ? &*sig.params[k] : nullptr;
  }
  static bool is_instance_method(const clang::FunctionDecl* fn) {
    const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(fn);
    return m != nullptr && !m->isStatic();
  }

  // Gives `into` (a caller's structure) the elements `from` (a helper's) reads.
  static void merge(pytree::Tree& into, const pytree::Tree& from) {
    if (from.kind == pytree::Tree::Kind::Optional) return;  // (a tensor passed for it, or an optional: no elements)
    for (size_t i = 0; i < from.children.size(); ++i) merge(child_for(into, from, i, true), from.children[i]);
  }

  // The node of `given` (a caller's structure) that child `i` of `wanted` (the same structure as a
  // helper reads it) stands for: by key in a map, by index elsewhere.
  static pytree::Tree& child_for(pytree::Tree& given, const pytree::Tree& wanted, size_t i, bool add) {
    if (given.kind == pytree::Tree::Kind::Map) return map_child(given, wanted.keys[i], add);
    if (given.kind == pytree::Tree::Kind::Vector) return vector_child(given, i, add);
    return given.children.at(i);
  }

  static pytree::Tree& map_child(pytree::Tree& t, const std::string& key, bool add) {
    auto at = std::lower_bound(t.keys.begin(), t.keys.end(), key);
    const auto i = static_cast<size_t>(at - t.keys.begin());
    if (at == t.keys.end() || *at != key) {
      if (!add) throw std::logic_error("pytree: key '" + key + "' was not found before lowering");
      t.keys.insert(at, key);
      t.children.insert(t.children.begin() + static_cast<long>(i), pytree::Tree{});
    }
    return t.children[i];
  }

  static pytree::Tree& vector_child(pytree::Tree& t, size_t i, bool add) {
    if (i >= t.children.size()) {
      if (!add) throw std::logic_error("pytree: element " + std::to_string(i) + " was not found before lowering");
      t.children.resize(i + 1);
    }
    return t.children[i];
  }

  // Whether a function computes with tensors: its parameters, its object or its result hold some.
  bool takes_tensors(const clang::FunctionDecl* fn) const {
    const auto holds = [&](clang::QualType t) {
      return ir::is_tensor_like(ir_type_of(t)) || is_structured_type(t) || captures_tensors(t);
    };
    if (holds(fn->getReturnType())) return true;
    for (const clang::ParmVarDecl* p : fn->parameters())
      if (holds(p->getType())) return true;
    const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(fn);
    if (m != nullptr && captures_tensors(context_.getRecordType(m->getParent()))) return true;  // a lambda's call operator
    return m != nullptr && !m->isStatic() && is_structured_type(m->getThisType()->getPointeeType());
  }

  // A function whose body funcgen sees (in this file or a header it includes, not a system header)
  // and transforms with its callers; not the runtime's fg:: ops.
  bool is_user_function(const clang::FunctionDecl* callee) const {
    if (callee == nullptr || callee->isImplicit() || callee->isDefaulted())
      return false;  // (a struct's own `m = p.l2`: copied leaf by leaf)
    const clang::NamespaceDecl* outermost = nullptr;
    for (const clang::DeclContext* dc = callee->getDeclContext(); dc != nullptr; dc = dc->getParent())
      if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(dc)) outermost = ns;
    if (outermost != nullptr && outermost->getName() == "fg") return false;
    return callee->hasBody() && !sm_.isInSystemHeader(callee->getLocation()) && takes_tensors(callee);
  }

  // The node of a structured parameter that `e` names (p, p.w1, p.first, std::get<0>(t), ws[2],
  // m.at("key"), m["key"]), or nullptr. While discovering, the elements read are added.
  pytree::Tree* resolve(const clang::Expr* e, bool discovering) {
    if (trees_.empty() || e == nullptr) return nullptr;
    e = strip(e);
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) return resolve_decl(ref->getDecl(), discovering);
    if (llvm::isa<clang::CXXThisExpr>(e)) {  // a member function's object
      auto it = trees_.find(f_.decl);
      return it != trees_.end() ? &it->second : nullptr;
    }
    if (const auto* m = llvm::dyn_cast<clang::MemberExpr>(e)) {
      if (m->isArrow() && !llvm::isa<clang::CXXThisExpr>(strip(m->getBase()))) return nullptr;
      pytree::Tree* base = resolve(m->getBase(), discovering);
      if (base == nullptr || !(base->kind == pytree::Tree::Kind::Record || base->is_pair())) return nullptr;
      const std::string field = m->getMemberDecl()->getNameAsString();
      for (size_t i = 0; i < base->keys.size(); ++i)
        if (base->keys[i] == field) return &base->children[i];
      return nullptr;
    }
    if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e);
        oc != nullptr && oc->getNumArgs() == 1 && (oc->getOperator() == clang::OO_Star || oc->getOperator() == clang::OO_Arrow))
      return optional_value(e, oc->getArg(0), discovering);
    if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(e); mc != nullptr && mc->getMethodDecl() != nullptr &&
                                                                      mc->getMethodDecl()->getName() == "value" && mc->getNumArgs() == 0)
      return optional_value(e, mc->getImplicitObjectArgument(), discovering);
    const clang::Expr* object = nullptr;
    const clang::Expr* index = nullptr;
    if (const auto* call = llvm::dyn_cast<clang::CallExpr>(e); call != nullptr && call->getDirectCallee() != nullptr &&
                                                                call->getDirectCallee()->getQualifiedNameAsString() == "std::get") {
      pytree::Tree* base = resolve(call->getArg(0), discovering);
      const clang::TemplateArgumentList* targs = call->getDirectCallee()->getTemplateSpecializationArgs();
      if (base == nullptr || targs == nullptr || targs->get(0).getKind() != clang::TemplateArgument::Integral) return nullptr;
      const uint64_t i = targs->get(0).getAsIntegral().getZExtValue();
      if (base->kind == pytree::Tree::Kind::Tuple || base->kind == pytree::Tree::Kind::Array)
        return i < base->children.size() ? &base->children[i] : nullptr;
      return nullptr;
    }
    if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e); oc != nullptr && oc->getOperator() == clang::OO_Subscript) {
      object = oc->getArg(0);
      index = oc->getArg(1);
    } else if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(e);
               mc != nullptr && mc->getMethodDecl() != nullptr && mc->getMethodDecl()->getName() == "at" && mc->getNumArgs() == 1) {
      object = mc->getImplicitObjectArgument();
      index = mc->getArg(0);
    }
    if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(e); object == nullptr && mc != nullptr &&
                                                                      mc->getMethodDecl() != nullptr && mc->getNumArgs() == 0 &&
                                                                      (mc->getMethodDecl()->getName() == "front" ||
                                                                       mc->getMethodDecl()->getName() == "back")) {
      // a.front() is a[0]; a.back() of a std::array its last element (of a vector, its length is
      // what the elements read make it: not known here)
      pytree::Tree* base = resolve(mc->getImplicitObjectArgument(), discovering);
      if (base == nullptr || (base->kind != pytree::Tree::Kind::Array && base->kind != pytree::Tree::Kind::Vector)) return nullptr;
      if (mc->getMethodDecl()->getName() == "front")
        return base->kind == pytree::Tree::Kind::Array ? (base->children.empty() ? nullptr : &base->children[0])
                                                       : &vector_child(*base, 0, discovering);
      return base->kind == pytree::Tree::Kind::Array && !base->children.empty() ? &base->children.back()
                                                                                : not_constant(e, *base);
    }
    if (object == nullptr) return nullptr;
    pytree::Tree* base = resolve(object, discovering);
    if (base == nullptr) return nullptr;
    if (base->kind == pytree::Tree::Kind::Map) {
      const auto* key = llvm::dyn_cast<clang::StringLiteral>(strip(index));
      if (key == nullptr) return not_constant(e, *base);
      return &map_child(*base, key->getString().str(), discovering);
    }
    if (base->kind != pytree::Tree::Kind::Array && base->kind != pytree::Tree::Kind::Vector) return nullptr;
    std::optional<llvm::APSInt> i = index->getIntegerConstantExpr(context_);
    if (!i || i->isNegative()) return not_constant(e, *base);
    const auto k = static_cast<size_t>(i->getZExtValue());
    if (base->kind == pytree::Tree::Kind::Array) return k < base->children.size() ? &base->children[k] : nullptr;
    return &vector_child(*base, k, discovering);
  }

  // The text that builds a structure of the flat function's leaves (`Linear{net_l1_weight,
  // net_l1_bias}`); none for one whose leaves the function does not hold all of (a vector, a map, an
  // optional).
  std::optional<std::string> rebuilt(const pytree::Tree& t, std::vector<int>& reads) const {
    std::function<bool(const pytree::Tree&)> closed = [&](const pytree::Tree& n) {
      if (n.kind == pytree::Tree::Kind::Map || n.kind == pytree::Tree::Kind::Vector || n.kind == pytree::Tree::Kind::Optional)
        return false;
      if (n.is_leaf()) return n.var >= 0;
      return std::all_of(n.children.begin(), n.children.end(), closed);
    };
    if (!closed(t)) return std::nullopt;
    pytree::Tree copy = t;
    std::vector<pytree::Tree*> leaves;
    copy.leaves(leaves);
    std::vector<std::string> names;
    for (pytree::Tree* l : leaves) {
      l->source.clear();
      names.push_back(f_.var(l->var).name);
      reads.push_back(l->var);
    }
    size_t next = 0;
    return pytree::build(copy, names, next);
  }

  // The structure the variable `d` is, or names (an alias of a part of one).
  pytree::Tree* resolve_decl(const clang::ValueDecl* d, bool discovering = false) {
    if (auto a = aliases_.find(d); a != aliases_.end()) return resolve(a->second, discovering);
    auto it = trees_.find(d);
    return it != trees_.end() ? &it->second : nullptr;
  }

  pytree::Tree* not_constant(const clang::Expr* e, const pytree::Tree& base) {
    using Kind = pytree::Tree::Kind;
    // What to write instead, in the words of the container the user wrote.
    const char* what = base.kind == Kind::Map ? "map" : base.kind == Kind::Array ? "std::array" : "vector";
    const char* instead = base.kind == Kind::Array
                              ? "take a std::vector<fg::Tensor> (read at run-time indices as a list), or write the "
                                "indices out"
                              : "use a std::array or a struct, or write the indices out";
    if (reported_indices_.insert(e).second)
      unsupported(e, std::string("funcgen passes a ") + what + " parameter as the tensors it holds, so it must be read at " +
                         (base.kind == Kind::Map ? "string-literal keys (params.at(\"fc1.weight\"))"
                                                 : "constant indices (ws[0], ws[1])") +
                         "; an index computed at run time cannot be transformed yet: " + instead);
    return nullptr;
  }

  // A structured node used where its leaves are needed: a leaf reads its variable; a vector or a
  // tuple of tensors becomes the list or tuple of its elements.
  ExprPtr node_value(const pytree::Tree& t, const clang::Expr* e) {
    if (t.kind == pytree::Tree::Kind::Optional) {  // passed on to an op that takes an optional (fg::linear's bias)
      if (!t.children.empty()) return node_value(t.children[0], e);
      ExprPtr x = ir::opaque("{}", ir::Type::Tensor);  // no tensor (std::nullopt, or vmap's undefined tensor): a constant
      x->range = e->getSourceRange();
      x->ast = e;
      return x;
    }
    if (t.is_leaf()) {
      ExprPtr x = make_expr(ExprKind::VarRef, e);
      x->var = t.var;
      x->type = f_.var(t.var).type;
      return x;
    }
    if (t.kind == pytree::Tree::Kind::Vector) {
      unsupported(e, "a std::vector parameter used as a whole cannot be transformed yet: its size is known only at run "
                     "time; read its elements at constant indices (ws[0]), or take a std::array");
      return opaque(e);
    }
    const bool list = t.kind == pytree::Tree::Kind::Array;
    if (list || t.kind == pytree::Tree::Kind::Tuple) {
      ExprPtr x = make_expr(list ? ExprKind::List : ExprKind::Tuple, e);
      x->type = list ? ir::Type::TensorList : ir::Type::TensorTuple;
      for (const pytree::Tree& c : t.children) {
        if (!c.is_leaf()) break;
        x->args.push_back(node_value(c, e));
      }
      if (x->args.size() == t.children.size()) return x;
    }
    unsupported(e, "a structure of tensors used as a whole can only be passed to a function of this file; read its "
                   "tensors (p.w1, std::get<0>(t), v[0]) here");
    return opaque(e);
  }

  // The leaves of `given` that the helper's parameter tree `wanted` takes, in its order.
  void pass_leaves(pytree::Tree& given, const pytree::Tree& wanted, const clang::Expr* e, ir::Expr& call) {
    if (wanted.is_leaf()) {
      call.args.push_back(node_value(given, e));
      call.params.push_back(f_.var(given.var).name);
      call.param_types.push_back(call.args.back()->type);
      return;
    }
    for (size_t i = 0; i < wanted.children.size(); ++i)
      pass_leaves(child_for(given, wanted, i, false), wanted.children[i], e, call);
  }

  // A structured result: returned as the flat tuple of its tensors.
  bool structured_result(const clang::FunctionDecl* decl) {
    if (returns_list(decl)) {  // a vector of tensors built in the body: a list of the flat function
      f_.return_type = ir::Type::TensorList;
      f_.return_cxx_type = "std::vector<fg::Tensor>";
      return true;
    }
    std::string why;
    std::optional<pytree::Tree> tree = pytree::tree_of(decl->getReturnType(), context_, &why);
    if (!why.empty() || (tree && !returnable(*tree, why))) {
      unsupported_at(decl->getReturnTypeSourceRange().getBegin(),
                     "the result of '" + f_.name + "' cannot be transformed: " + why);
      return false;
    }
    if (!tree) return true;
    result_ = std::move(tree);
    open_result_ = has_open_node(*result_);
    set_outputs();
    return true;
  }

  // Whether every return of `decl` returns a local std::vector of tensors by name (`return outs;`),
  // or another such function's call: its length is known only at run time, so it is returned as a
  // list, as a vector parameter is taken. Memoized: the lowering asks per expression.
  bool returns_list(const clang::FunctionDecl* decl) {
    if (!is_tensor_vector(decl->getReturnType()) || decl->getBody() == nullptr) return false;
    auto [known, fresh] = returns_list_.try_emplace(decl, false);  // (false while in progress: recursion)
    if (!fresh) return known->second;
    struct Returns : clang::RecursiveASTVisitor<Returns> {
      std::vector<const clang::ReturnStmt*> all;
      bool TraverseLambdaExpr(clang::LambdaExpr*) { return true; }  // a lambda's returns are its own
      bool VisitReturnStmt(clang::ReturnStmt* r) {
        all.push_back(r);
        return true;
      }
    } returns;
    returns.TraverseStmt(decl->getBody());
    const bool lists = !returns.all.empty() && std::all_of(returns.all.begin(), returns.all.end(), [&](const clang::ReturnStmt* r) {
      const clang::Expr* value = r->getRetValue() != nullptr ? unmoved(r->getRetValue()) : nullptr;
      if (value != nullptr && list_maker(value) != nullptr) return true;  // `return steps(x, n);`
      const auto* ref = llvm::dyn_cast_or_null<clang::DeclRefExpr>(value);
      const auto* vd = ref != nullptr ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
      return vd != nullptr && vd->isLocalVarDecl() && is_tensor_vector(vd->getType());
    });
    returns_list_[decl] = lists;
    return lists;
  }

  // The function `e` calls where it is a call of a function of the file that returns a list it
  // built (returns_list); null otherwise.
  const clang::FunctionDecl* list_maker(const clang::Expr* e) {
    const auto* call = e != nullptr ? llvm::dyn_cast<clang::CallExpr>(e) : nullptr;
    const clang::FunctionDecl* f = call != nullptr ? call->getDirectCallee() : nullptr;
    return f != nullptr && is_user_function(f) && returns_list(f) ? f : nullptr;
  }

  void set_outputs() {
    const size_t n = result_->tensors();
    f_.outputs = n;
    f_.return_type = n == 1 ? ir::Type::Tensor : ir::Type::TensorTuple;
    f_.return_cxx_type = "fg::Tensor";
    if (n != 1) {
      std::vector<std::string> items(n, "fg::Tensor");
      f_.return_cxx_type = cxx::tuple_type(items);
    }
  }

  static bool has_open_node(const pytree::Tree& t) {
    if (t.kind == pytree::Tree::Kind::Map || t.kind == pytree::Tree::Kind::Vector) return true;
    return std::any_of(t.children.begin(), t.children.end(), [](const pytree::Tree& c) { return has_open_node(c); });
  }

  static bool returnable(const pytree::Tree& t, std::string& why) {
    if (t.kind == pytree::Tree::Kind::Scalar) {
      why = "a returned structure may hold only tensors (and structures of them); return the other values separately";
      return false;
    }
    if (t.kind == pytree::Tree::Kind::Vector || t.kind == pytree::Tree::Kind::Map)
      return true;  // its keys (its length) are those every return builds in place (shape_result)
    if (t.kind == pytree::Tree::Kind::Optional) {
      why = "a returned std::optional cannot be transformed yet; return the tensor, and whether it holds one separately";
      return false;
    }
    for (const pytree::Tree& c : t.children)
      if (!returnable(c, why)) return false;
    return true;
  }

  static bool non_const_reference(clang::QualType t) {
    return t->isLValueReferenceType() && !t.getNonReferenceType().isConstQualified();
  }

  // The braced items of a map or vector built in place (`{{"loss", l}, {"acc", a}}`, `{a, b}`), or
  // false where `e` is not built so.
  bool items_of(const clang::Expr* e, std::vector<const clang::Expr*>& items) {
    const clang::Expr* s = strip(e);
    if (const auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(s); c != nullptr && c->getNumArgs() >= 1 &&
                                                                   !llvm::isa<clang::CXXDefaultArgExpr>(c->getArg(0)))
      s = strip(c->getArg(0));  // std::map<...>{...}: its initializer list
    const auto* il = llvm::dyn_cast<clang::InitListExpr>(s);
    if (il == nullptr) return false;
    items.assign(il->inits().begin(), il->inits().end());
    return true;
  }

  // A map's item `{"key", value}`: its key (empty where not a string literal) and value.
  std::pair<std::string, const clang::Expr*> map_item(const clang::Expr* item) {
    const clang::Expr* s = strip(item);
    std::vector<const clang::Expr*> parts;
    if (const auto* il = llvm::dyn_cast<clang::InitListExpr>(s)) parts.assign(il->inits().begin(), il->inits().end());
    if (const auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(s)) parts.assign(c->arg_begin(), c->arg_end());
    if (const auto* call = llvm::dyn_cast<clang::CallExpr>(s); call != nullptr && call->getDirectCallee() != nullptr &&
                                                               call->getDirectCallee()->getQualifiedNameAsString() == "std::make_pair")
      parts.assign(call->arg_begin(), call->arg_end());
    if (parts.size() != 2) return {"", nullptr};
    const auto* key = llvm::dyn_cast<clang::StringLiteral>(strip(parts[0]));
    return {key != nullptr ? key->getString().str() : "", parts[1]};
  }

  // The keys of the returned maps (the lengths of the returned vectors) in `t`, as `e` builds them:
  // set where `first`, else checked against the first return's.
  bool shape_result(pytree::Tree& t, const clang::Expr* e, bool first) {
    if (t.is_leaf()) return true;
    const bool map = t.kind == pytree::Tree::Kind::Map, vector = t.kind == pytree::Tree::Kind::Vector;
    std::vector<const clang::Expr*> items;
    if ((map || vector) && !items_of(e, items)) {
      unsupported(e, std::string("a returned ") + (map ? "std::map" : "std::vector") + " must be built where it is "
                     "returned (" + (map ? "return {{\"loss\", loss}, {\"acc\", acc}};" : "return {a, b};") +
                     "): funcgen returns its tensors one by one, so its " + (map ? "keys" : "length") +
                     " must be known when the code is generated");
      return false;
    }
    if (map || vector) {
      std::vector<std::string> keys;
      for (const clang::Expr* item : items) {
        if (!map) continue;
        auto [key, value] = map_item(item);
        if (value == nullptr || key.empty()) {
          unsupported(item, "a returned map's keys must be string literals ({\"loss\", loss})");
          return false;
        }
        keys.push_back(key);
      }
      std::sort(keys.begin(), keys.end());
      if (std::adjacent_find(keys.begin(), keys.end()) != keys.end()) {
        unsupported(e, "the returned map has the key '" + *std::adjacent_find(keys.begin(), keys.end()) +
                           "' twice; std::map keeps only the first");
        return false;
      }
      if (first) {
        pytree::Tree leaf;
        leaf.cxx_type = "fg::Tensor";
        t.keys = keys;
        t.children.assign(items.size(), leaf);
      } else if (t.keys != keys || t.children.size() != items.size()) {
        std::string keys_of_first;
        for (const std::string& k : t.keys) keys_of_first += (keys_of_first.empty() ? "'" : ", '") + k + "'";
        unsupported(e, std::string("every return must build the ") +
                           (map ? "map with the same keys as the first (" + keys_of_first + ")"
                                : "vector with as many tensors as the first (" + std::to_string(t.children.size()) + ")"));
        return false;
      }
      return true;
    }
    // A struct, tuple or array around them: the same, part by part, where it is built in place.
    if (!has_open_node(t)) return true;
    std::vector<const clang::Expr*> parts;
    const clang::Expr* s = strip(e);
    if (const auto* f = llvm::dyn_cast<clang::CXXFunctionalCastExpr>(s)) s = strip(f->getSubExpr());
    if (const auto* il = llvm::dyn_cast<clang::InitListExpr>(s)) {
      if (t.kind == pytree::Tree::Kind::Array && il->getNumInits() == 1 && llvm::isa<clang::InitListExpr>(strip(il->getInit(0))))
        il = llvm::cast<clang::InitListExpr>(strip(il->getInit(0)));  // std::array's inner braces
      parts.assign(il->inits().begin(), il->inits().end());
    } else if (const auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(s)) {
      parts.assign(c->arg_begin(), c->arg_end());
    } else if (const auto* call = llvm::dyn_cast<clang::CallExpr>(s); call != nullptr && call->getDirectCallee() != nullptr &&
                                                                     structured_callee(s) == nullptr) {
      parts.assign(call->arg_begin(), call->arg_end());  // std::make_tuple(loss, {...}) / std::make_pair
    }
    if (parts.size() != t.children.size()) {
      unsupported(e, "a returned structure that holds a std::map or std::vector must be built where it is returned "
                     "({loss, {{\"acc\", acc}}}): the map's keys or the vector's length must be known when the code "
                     "is generated");
      return false;
    }
    for (size_t i = 0; i < parts.size(); ++i)
      if (!shape_result(t.children[i], parts[i], first)) return false;
    return true;
  }

  // The leaves of a structured value as it is returned: built in place (Params{a, b}, {a, b},
  // std::make_tuple(a, b)) or a structured parameter (or a part of one).
  void flatten_value(const clang::Expr* e, const pytree::Tree& t, std::vector<ExprPtr>& out) {
    if (const auto* d = llvm::dyn_cast<clang::CXXDefaultInitExpr>(e)) e = d->getExpr();  // a field's default
    const auto* made = llvm::dyn_cast<clang::CXXConstructExpr>(e);
    if (llvm::isa<clang::ImplicitValueInitExpr>(e) || (made != nullptr && made->getNumArgs() == 0 && t.is_leaf())) {
      // a field the braces leave out (`State{h}`, `State s{};`): value-initialized
      out.push_back(ir::opaque(t.kind == pytree::Tree::Kind::Tensor ? "fg::Tensor()" : t.cxx_type + "{}",
                               t.kind == pytree::Tree::Kind::Tensor ? ir::Type::Tensor : t.scalar_type));
      return;
    }
    if (t.is_leaf()) {
      out.push_back(lower_expr(e));
      return;
    }
    if (const pytree::Tree* node = resolve(e, false)) {
      std::vector<const pytree::Tree*> leaves;
      node->leaves(leaves);
      for (const pytree::Tree* l : leaves) out.push_back(node_value(*l, e));
      return;
    }
    if (t.kind == pytree::Tree::Kind::Map || t.kind == pytree::Tree::Kind::Vector) {  // shaped by shape_result
      std::vector<const clang::Expr*> items;
      items_of(e, items);
      std::map<std::string, const clang::Expr*> by_key;
      for (const clang::Expr* item : items) by_key[map_item(item).first] = map_item(item).second;
      for (size_t i = 0; i < t.children.size() && i < items.size(); ++i)
        flatten_value(t.kind == pytree::Tree::Kind::Map ? by_key.at(t.keys[i]) : items[i], t.children[i], out);
      return;
    }
    const clang::Expr* s = strip(e);
    if (const auto* f = llvm::dyn_cast<clang::CXXFunctionalCastExpr>(s)) s = strip(f->getSubExpr());
    std::vector<const clang::Expr*> items;
    if (const auto* il = llvm::dyn_cast<clang::InitListExpr>(s)) {
      if (t.kind == pytree::Tree::Kind::Array && il->getNumInits() == 1 && llvm::isa<clang::InitListExpr>(strip(il->getInit(0))))
        il = llvm::cast<clang::InitListExpr>(strip(il->getInit(0)));
      items.assign(il->inits().begin(), il->inits().end());
    } else if (const auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(s)) {
      for (const clang::Expr* a : c->arguments())
        if (!llvm::isa<clang::CXXDefaultArgExpr>(a)) items.push_back(a);
    } else if (const auto* call = llvm::dyn_cast<clang::CallExpr>(s); call != nullptr && call->getDirectCallee() != nullptr) {
      const std::string q = call->getDirectCallee()->getQualifiedNameAsString();
      if (q == "std::make_tuple" || q == "std::make_pair") items.assign(call->arg_begin(), call->arg_end());
    }
    if (items.size() != t.children.size()) {
      if (const clang::FunctionDecl* callee = call_root(s))
        unsupported(e, "the structure '" + callee->getNameAsString() + "' returns cannot be taken apart here; store it "
                       "in a variable first (auto r = " + callee->getNameAsString() + "(...);)");
      else
        unsupported(e, "a structure of tensors must be built in place (" + t.cxx_type + "{...}), or be a variable or "
                       "parameter; funcgen passes its tensors one by one");
      return;
    }
    for (size_t i = 0; i < items.size(); ++i) flatten_value(items[i], t.children[i], out);
  }

  ExprPtr lower_result(const clang::Expr* e) {
    if (f_.return_type == ir::Type::TensorList) return lower_expr(unmoved(e));  // `return std::move(out);`: the list
    if (!result_ || structured_callee(strip(e)) != nullptr) return lower_expr(e);  // (a call: already flat)
    if (open_result_ && !shape_result(*result_, e, !result_shaped_)) return opaque(e);
    result_shaped_ = true;
    std::vector<ExprPtr> leaves;
    flatten_value(e, *result_, leaves);
    if (leaves.size() == 1) return std::move(leaves[0]);
    ExprPtr x = make_expr(ExprKind::Tuple, e);
    x->type = ir::Type::TensorTuple;
    x->args = std::move(leaves);
    return x;
  }

  // ------------------------------------------------------------------ local structures
  // A local struct, pair, array or nested tuple of tensors (`State s{h0, c0};`, the result of a
  // helper that returns one) is held as one variable per leaf, as a structured parameter is: `s.h`
  // reads `s_h`, `s = cell(p, x, s);` and `s.h = ...` assign them, passing `s` to a helper passes
  // them, `auto [h, c] = s;` names them.

  // The tree of such a structure (not a flat std::tuple of tensors, a variable of its own; nor a
  // vector, map or optional, whose elements are known only at run time).
  std::optional<pytree::Tree> local_tree(clang::QualType type) const {
    std::optional<pytree::Tree> t = pytree::tree_of(type, context_);
    std::function<bool(const pytree::Tree&)> fixed = [&](const pytree::Tree& n) {
      return n.kind != pytree::Tree::Kind::Vector && n.kind != pytree::Tree::Kind::Map &&
             n.kind != pytree::Tree::Kind::Optional && std::all_of(n.children.begin(), n.children.end(), fixed);
    };
    return t && fixed(*t) ? t : std::nullopt;
  }

  // Whether `node` is (a part of) a local structure rather than of a parameter.
  bool is_local(const pytree::Tree& node) const {
    std::vector<const pytree::Tree*> leaves;
    node.leaves(leaves);
    return !leaves.empty() && leaves[0]->var >= 0 && local_trees_.count(f_.var(leaves[0]->var).decl) != 0;
  }

  // The parameter a structure's leaf belongs to, where it is not const (taken by value, or by
  // non-const reference: `void step(State& s)`).
  const clang::ParmVarDecl* mutable_param(const pytree::Tree& leaf) const {
    const auto* p = leaf.var >= 0 ? llvm::dyn_cast_or_null<clang::ParmVarDecl>(f_.var(leaf.var).decl) : nullptr;
    return p != nullptr && !p->getType().getNonReferenceType().isConstQualified() ? p : nullptr;
  }

  // Whether the leaves of `node` may be assigned (`at`): a local structure's, or those of a parameter
  // that is not const, whose flat function then takes them by value or by reference as the
  // parameter is. A number in a structure passed by reference is reported: it is passed by value.
  // `passed_on`: passed whole to a helper's reference parameter (which reports the numbers it assigns).
  bool writable(const pytree::Tree& node, const clang::Stmt* at, bool passed_on = false) {
    if (is_local(node)) return true;
    std::vector<const pytree::Tree*> leaves;
    node.leaves(leaves);
    for (const pytree::Tree* leaf : leaves) {
      const clang::ParmVarDecl* p = mutable_param(*leaf);
      if (p == nullptr) return false;
      if (leaf->kind != pytree::Tree::Kind::Tensor && p->getType()->isReferenceType() && !passed_on) {
        unsupported(at, "'" + f_.var(leaf->var).written + "', a number in a structure passed by reference, cannot be "
                        "assigned yet; return the new value instead");
        return false;
      }
    }
    for (const pytree::Tree* leaf : leaves) {
      const bool by_reference = mutable_param(*leaf)->getType()->isReferenceType();
      f_.vars[static_cast<size_t>(leaf->var)].cxx_type =
          leaf->kind == pytree::Tree::Kind::Tensor ? (by_reference ? "fg::Tensor&" : "fg::Tensor") : leaf->cxx_type;  // a copy
    }
    return !leaves.empty();
  }

  // A variable for each leaf of `t`, a part of the local structure `decl` that the user writes `root`.
  void declare_leaves(pytree::Tree& t, const clang::ValueDecl* decl, const std::string& root, bool exact_name = false) {
    if (!names_collected_) collect_names(f_.decl);
    names_collected_ = true;
    std::vector<pytree::Tree*> leaves;
    t.leaves(leaves);
    std::vector<std::string> paths;
    leaf_names(t, root, paths);
    const std::vector<std::string> written = pytree::leaf_accesses(t, root);
    for (size_t i = 0; i < leaves.size(); ++i) {
      const bool tensor = leaves[i]->kind == pytree::Tree::Kind::Tensor;
      ir::Var v;
      v.id = static_cast<int>(f_.vars.size());
      v.name = exact_name ? root : fresh_name(paths[i]);  // a structured binding's own name
      v.written = written[i];
      v.decl = decl;
      v.type = tensor ? ir::Type::Tensor : leaves[i]->scalar_type;
      v.cxx_type = tensor ? "fg::Tensor" : leaves[i]->cxx_type;
      leaves[i]->var = v.id;
      f_.vars.push_back(v);
    }
    local_trees_.insert(decl);
  }

  // A call of a function of this file (which takes structures of tensors, maybe only those).
  // Whether `s` must be lowered op by op: it involves tensors, or names a lambda that the generated
  // code cannot name (textless_: its calls are calls of its helper).
  bool needs_ir(const clang::Stmt* s) const { return involves_tensors(s) || names_textless(s); }
  bool names_textless(const clang::Stmt* s) const {
    if (textless_.empty() || s == nullptr) return false;
    if (const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(s); r != nullptr && textless_.count(r->getDecl()) != 0) return true;
    return std::any_of(s->child_begin(), s->child_end(), [&](const clang::Stmt* c) { return names_textless(c); });
  }

  bool helper_call(const clang::Expr* e) const {
    const auto* call = llvm::dyn_cast<clang::CallExpr>(e->IgnoreImplicit());
    return call != nullptr && is_user_function(llvm::dyn_cast_or_null<clang::FunctionDecl>(call->getCalleeDecl()));
  }

  // A call of a function of this file that returns such a structure (`cell(p, x, s)`): lowered, it
  // returns the flat tuple of the structure's tensors (one tensor: that tensor).
  const clang::FunctionDecl* structured_callee(const clang::Expr* e) const {
    const auto* call = llvm::dyn_cast<clang::CallExpr>(e);
    const auto* callee = call != nullptr ? llvm::dyn_cast_or_null<clang::FunctionDecl>(call->getCalleeDecl()) : nullptr;
    if (callee == nullptr || !is_user_function(callee) || !is_structured_type(callee->getReturnType())) return nullptr;
    return callee;
  }

  // The object whose part `e` reads (`s.state.h`, `std::get<0>(t)`, `a[1]`: `s`, `t`, `a`), or nullptr.
  static const clang::Expr* base_of_part(const clang::Expr* e) {
    if (const auto* m = llvm::dyn_cast<clang::MemberExpr>(e)) return m->getBase();
    if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e); oc != nullptr && oc->getOperator() == clang::OO_Subscript)
      return oc->getArg(0);
    if (const auto* c = llvm::dyn_cast<clang::CallExpr>(e);
        c != nullptr && c->getDirectCallee() != nullptr && c->getDirectCallee()->getQualifiedNameAsString() == "std::get")
      return c->getArg(0);
    return nullptr;
  }

  // The variable or parameter whose part `e` names (`s` of `s.state.h`), through references to parts.
  const clang::ValueDecl* root_decl(const clang::Expr* e) {
    for (e = strip(e); e != nullptr; e = strip(e)) {
      if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
        auto a = aliases_.find(ref->getDecl());
        if (a == aliases_.end()) return ref->getDecl();
        e = a->second;
      } else if ((e = base_of_part(e)) == nullptr) {
        return nullptr;
      }
    }
    return nullptr;
  }

  // The helper returning a structure whose call `e` reads a part of (`carry(x).state`), or is.
  const clang::FunctionDecl* call_root(const clang::Expr* e) {
    for (e = strip(e); e != nullptr; e = strip(e)) {
      if (const clang::FunctionDecl* callee = structured_callee(e)) return callee;
      if ((e = base_of_part(e)) == nullptr) return nullptr;
    }
    return nullptr;
  }

  static bool reads_var(const ir::Expr& e, int var) {
    if ((e.kind == ExprKind::VarRef && e.var == var) || std::find(e.reads.begin(), e.reads.end(), var) != e.reads.end())
      return true;
    return std::any_of(e.args.begin(), e.args.end(), [&](const ExprPtr& a) { return a && reads_var(*a, var); });
  }

  // Gives the leaves of the local structure `t` their values from `init` (null: default-initialized),
  // declaring them where `declare`, else assigning them (all values computed before the first
  // assignment where a later one reads an earlier leaf: `s = State{s.c, s.h};`).
  void init_leaves(const pytree::Tree& t, clang::QualType type, const clang::Expr* init, bool declare,
                   const clang::Stmt* at, std::vector<StmtPtr>& out) {
    std::vector<const pytree::Tree*> leaves;
    t.leaves(leaves);
    std::vector<ExprPtr> values;
    const auto* ctor = init != nullptr ? llvm::dyn_cast<clang::CXXConstructExpr>(strip(init)) : nullptr;
    if (init == nullptr || (ctor != nullptr && ctor->getNumArgs() == 0)) {
      default_values(type, t, values);  // `State s;`, `s = State();`
    } else if (structured_callee(strip(init)) != nullptr) {
      ExprPtr call = lower_expr(init);
      if (leaves.size() == 1) {
        values.push_back(std::move(call));
      } else {
        const int result = generated_var(fresh_name(f_.var(leaves[0]->var).name + "_result"), ir::Type::TensorTuple, "auto");
        StmtPtr d = make(StmtKind::Decl, at);
        d->var = result;
        d->expr = std::move(call);
        out.push_back(std::move(d));
        for (size_t i = 0; i < leaves.size(); ++i) values.push_back(ir::get(ir::var_ref(f_, result), static_cast<int>(i)));
      }
    } else {
      flatten_value(init, t, values);
      if (values.size() != leaves.size()) return;  // reported
      bool hazard = false;
      for (size_t i = 0; i < leaves.size() && !declare; ++i)
        for (size_t j = i + 1; j < leaves.size(); ++j) hazard = hazard || reads_var(*values[j], leaves[i]->var);
      for (size_t i = 0; hazard && i < values.size(); ++i) {
        const ir::Var& leaf = f_.var(leaves[i]->var);
        const int tmp = generated_var(fresh_name(leaf.name + "_new"), leaf.type, leaf.cxx_type);
        StmtPtr d = make(StmtKind::Decl, at);
        d->var = tmp;
        d->expr = std::move(values[i]);
        out.push_back(std::move(d));
        values[i] = ir::var_ref(f_, tmp);
      }
    }
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (!declare && values[i] == nullptr) values[i] = ir::opaque("fg::Tensor()", ir::Type::Tensor);
      if (declare && values[i] != nullptr && values[i]->kind == ExprKind::Opaque && values[i]->text == "fg::Tensor()")
        values[i] = nullptr;  // `fg::Tensor s_h;`
      StmtPtr st = make(declare ? StmtKind::Decl : StmtKind::Assign, at);
      st->var = leaves[i]->var;
      if (!declare) st->text = "=";
      st->expr = std::move(values[i]);
      out.push_back(std::move(st));
    }
  }

  // The leaves of a default-initialized structure of type `type`: a field's default member
  // initializer where it has one, else a tensor default-constructed (null: none is written) and a
  // number value-initialized.
  void default_values(clang::QualType type, const pytree::Tree& t, std::vector<ExprPtr>& out) {
    if (t.is_leaf()) {
      out.push_back(t.kind == pytree::Tree::Kind::Tensor ? nullptr : ir::opaque(t.cxx_type + "{}", t.scalar_type));
      return;
    }
    const clang::CXXRecordDecl* record = type.isNull() ? nullptr : bare(type)->getAsCXXRecordDecl();
    if (t.kind == pytree::Tree::Kind::Record && record != nullptr) {
      size_t i = 0;
      for (const clang::FieldDecl* f : record->fields()) {
        if (i >= t.children.size()) break;
        if (const clang::Expr* init = f->getInClassInitializer()) flatten_value(init, t.children[i], out);
        else default_values(f->getType(), t.children[i], out);
        ++i;
      }
      return;
    }
    const auto* spec = record != nullptr ? llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(record) : nullptr;
    std::vector<clang::QualType> elements;  // a tuple's or pair's element types, an array's element type
    for (const clang::TemplateArgument& a : spec != nullptr ? spec->getTemplateArgs().asArray() : llvm::ArrayRef<clang::TemplateArgument>{}) {
      if (a.getKind() == clang::TemplateArgument::Pack)
        for (const clang::TemplateArgument& p : a.pack_elements()) elements.push_back(p.getAsType());
      else if (a.getKind() == clang::TemplateArgument::Type)
        elements.push_back(a.getAsType());
    }
    for (size_t i = 0; i < t.children.size(); ++i)
      default_values(t.kind == pytree::Tree::Kind::Array ? (elements.empty() ? clang::QualType() : elements[0])
                                                         : (i < elements.size() ? elements[i] : clang::QualType()),
                     t.children[i], out);
  }

  // `State s = ...;` (or a default-initialized one) held leaf by leaf; a reference to a structure
  // is another name for it.
  bool declare_structure(const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) {
    std::optional<pytree::Tree> tree = local_tree(vd->getType());
    if (!tree || vd->isStaticLocal()) return false;
    const clang::Expr* init = vd->getInit();
    if (vd->getType()->isReferenceType() && init != nullptr && resolve(init, false) != nullptr) {
      aliases_[vd] = init;
      return true;
    }
    if (vd->getType()->isReferenceType() && (init == nullptr || structured_callee(strip(init)) == nullptr)) return false;
    declare_leaves(*tree, vd, vd->getNameAsString());
    pytree::Tree& t = trees_[vd] = std::move(*tree);
    init_leaves(t, vd->getType(), init, true, ds, out);
    return true;
  }

  // `auto [h, c] = s;` of such a structure: by value, a new structure whose top-level parts take the
  // bound names; by reference, names of the parts of `s` itself.
  bool declare_bindings(const clang::DecompositionDecl* dd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) {
    const clang::Expr* init = dd->getInit();
    if (init == nullptr) return false;
    std::optional<pytree::Tree> tree = local_tree(dd->getType());
    if (dd->getType()->isReferenceType() && resolve(init, false) != nullptr) {
      aliases_[dd] = init;  // (a std::tuple parameter's parts included, whose type alone is no structure)
    } else {
      if (!tree) return false;
      if (resolve(init, false) == nullptr && structured_callee(strip(init)) == nullptr && !llvm::isa<clang::InitListExpr>(strip(init)))
        return false;
      const auto bindings = dd->bindings();
      for (size_t i = 0; i < bindings.size() && i < tree->children.size(); ++i)
        declare_leaves(tree->children[i], dd, bindings[i]->getNameAsString(), tree->children[i].is_leaf());
      local_trees_.insert(dd);
      init_leaves(trees_[dd] = std::move(*tree), dd->getType(), init, true, ds, out);
    }
    for (const clang::BindingDecl* b : dd->bindings()) {
      aliases_[b] = b->getBinding();
      if (const clang::VarDecl* holding = b->getHoldingVar()) aliases_[holding] = holding->getInit();  // get<i>(pair)
    }
    return true;
  }

  // Opaque text with the structured parameters' leaves it reads replaced by their variables
  // (`p.n_layers * 2` -> `p_n_layers * 2`) and a vector's size() by the number of its elements.
  // `text` (node's text_of) with the edits made on the source as written: leaves of structures read
  // as their variables, names qualified (find_unqualified); template parameters replaced after.
  std::string with_leaves(const clang::Stmt* node, std::string text, std::vector<int>& reads) {
    std::vector<std::pair<clang::SourceRange, std::string>> edits;
    if (!trees_.empty()) find_leaves(node, edits, reads);
    const size_t leaf_edits = edits.size();
    find_init_captures(node, edits, reads);
    find_unqualified(node, edits);
    if (edits.empty()) return text;
    const clang::LangOptions& lo = context_.getLangOpts();
    const clang::CharSourceRange whole =
        clang::Lexer::makeFileCharRange(clang::CharSourceRange::getTokenRange(node->getSourceRange()), sm_, lo);
    if (whole.isInvalid()) {
      if (leaf_edits != 0)
        unsupported(node, "a structure's field read inside a macro cannot be transformed; read it into a variable first");
      return text;  // (names in a macro stay as the macro spells them)
    }
    text = written_text(node);
    const unsigned base = sm_.getFileOffset(whole.getBegin());
    std::sort(edits.begin(), edits.end(), [&](const auto& a, const auto& b) {
      return sm_.isBeforeInTranslationUnit(b.first.getBegin(), a.first.getBegin());
    });
    for (const auto& [range, replacement] : edits) {
      const clang::CharSourceRange r = clang::Lexer::makeFileCharRange(clang::CharSourceRange::getTokenRange(range), sm_, lo);
      if (r.isInvalid()) continue;
      const unsigned b = sm_.getFileOffset(r.getBegin()) - base, n = sm_.getFileOffset(r.getEnd()) - base - b;
      if (b + n <= text.size()) text.replace(b, n, replacement);
    }
    return cxx::replace_identifiers(text, template_values_);
  }

  // A lambda's init-captures that hoist_init_captures declared: their variables.
  void find_init_captures(const clang::Stmt* s, std::vector<std::pair<clang::SourceRange, std::string>>& edits,
                          std::vector<int>& reads) {
    if (s == nullptr) return;
    if (const auto* l = llvm::dyn_cast<clang::LambdaExpr>(s))
      for (const clang::LambdaCapture& c : l->captures())
        if (const clang::VarDecl* v = init_capture(c); v != nullptr && vars_.count(v) != 0) {
          const bool braced = llvm::isa<clang::InitListExpr>(v->getInit()->IgnoreImplicit());  // `[k{0.5}]`
          const std::string& name = f_.var(vars_.at(v)).name;
          edits.emplace_back(v->getInit()->getSourceRange(), braced ? "{" + name + "}" : name);
          reads.push_back(vars_.at(v));
        }
    for (const clang::Stmt* child : s->children()) find_init_captures(child, edits, reads);
  }

  void find_leaves(const clang::Stmt* s, std::vector<std::pair<clang::SourceRange, std::string>>& edits,
                   std::vector<int>& reads) {
    if (s == nullptr) return;
    if (const auto* l = llvm::dyn_cast<clang::LambdaExpr>(s)) {
      // It captures the leaves its body reads: a structure named in its captures is not there. (A
      // copy may be a reference: what it copies is not assigned after it, capture_parameters.)
      for (const clang::LambdaCapture& c : l->captures())  // (reported before what its body reads)
        if (const std::string why = c.capturesVariable() ? uncapturable(c) : ""; !why.empty()) {
          unsupported_at(c.getLocation(), why);
          return;
        }
      const bool initialized = std::any_of(l->capture_begin(), l->capture_end(), init_capture);
      for (const clang::LambdaCapture& c : l->explicit_captures())
        if (c.capturesVariable() && resolve_decl(c.getCapturedVar()) != nullptr) {
          if (initialized) {
            unsupported_at(c.getLocation(), "a lambda that names the structure '" + c.getCapturedVar()->getNameAsString() +
                                                 "' in its captures beside an init-capture cannot be transformed yet; "
                                                 "capture it with [&] or [=]");
            break;
          }
          edits.emplace_back(l->getIntroducerRange(), "[&]");
          break;
        }
      for (const clang::LambdaCapture& c : l->captures())  // `[l = p.layer]`: the leaves
        if (const clang::VarDecl* v = init_capture(c); v != nullptr && vars_.count(v) == 0) find_leaves(v->getInit(), edits, reads);
      find_leaves(l->getBody(), edits, reads);
      return;
    }
    if (const auto* e = llvm::dyn_cast<clang::Expr>(s)) {
      if (const std::optional<bool> known = presence_test(e)) {  // `const bool has_bias = b.has_value();`
        edits.emplace_back(e->getSourceRange(), *known ? "true" : "false");
        return;
      }
      if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(strip(e));
          mc != nullptr && mc->getMethodDecl() != nullptr && mc->getMethodDecl()->getName() == "size") {
        if (const pytree::Tree* t = resolve(mc->getImplicitObjectArgument(), false);
            t != nullptr && (t->kind == pytree::Tree::Kind::Vector || t->kind == pytree::Tree::Kind::Map)) {
          edits.emplace_back(e->getSourceRange(), "size_t{" + std::to_string(t->children.size()) + "}");
          return;
        }
      }
      if (const pytree::Tree* t = resolve(e, false)) {
        if (t->is_leaf()) {
          edits.emplace_back(e->getSourceRange(), f_.var(t->var).name);
          reads.push_back(t->var);
        } else if (std::optional<std::string> whole = rebuilt(*t, reads)) {  // `dense(net.l1, z)` in a lambda kept as text
          edits.emplace_back(e->getSourceRange(), *whole);
        } else {
          unsupported(e, "a structure of tensors used as a whole can only be passed to a function of this file; read "
                         "its fields here");
        }
        return;
      }
    }
    for (const clang::Stmt* child : s->children()) find_leaves(child, edits, reads);
  }

  // Names of declarations in namespaces or classes written without them (`kAlpha` inside namespace
  // nn, a static member inside its class): the generated code that holds this text may be in
  // another namespace (a helper's body is inlined into its caller), so they are qualified.
  void find_unqualified(const clang::Stmt* s, std::vector<std::pair<clang::SourceRange, std::string>>& edits) {
    if (s == nullptr) return;
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(s); ref != nullptr && !ref->hasQualifier() &&
                                                                ref->getNameInfo().getName().isIdentifier()) {
      const std::string scope = enclosing_scope(ref->getDecl());
      // A class's own private or protected member: the generated free functions may not name it.
      if (llvm::isa<clang::CXXRecordDecl>(ref->getDecl()->getDeclContext()) && ref->getDecl()->getAccess() != clang::AS_public &&
          reported_indices_.insert(ref).second) {
        unsupported(ref, "'" + scope + ref->getDecl()->getNameAsString() + "' is not public, so the functions funcgen "
                         "generates (free functions) cannot read it; make it public or pass it as a parameter");
        return;
      }
      const clang::SourceLocation at = ref->getLocation();
      const auto inside = [&](const auto& edit) {  // a leaf read already replaced there
        return !sm_.isBeforeInTranslationUnit(at, edit.first.getBegin()) && !sm_.isBeforeInTranslationUnit(edit.first.getEnd(), at);
      };
      if (!scope.empty() && std::none_of(edits.begin(), edits.end(), inside))
        edits.emplace_back(clang::SourceRange(at), scope + ref->getDecl()->getNameAsString());
    }
    for (const clang::Stmt* child : s->children()) find_unqualified(child, edits);
  }

  // "nn::" for a declaration of namespace nn (or of an unscoped enum in it); "" for a global or a
  // local. Anonymous and inline namespaces are not written.
  static std::string enclosing_scope(const clang::NamedDecl* d) {
    const clang::DeclContext* dc = d->getDeclContext();
    if (const auto* e = llvm::dyn_cast<clang::EnumDecl>(dc); e != nullptr && !e->isScoped()) dc = dc->getParent();
    std::string scope;
    for (; dc != nullptr && !dc->isTranslationUnit(); dc = dc->getParent()) {
      if (dc->isFunctionOrMethod()) return "";  // a local (or a local class's member)
      if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(dc)) {
        if (!ns->isAnonymousNamespace() && !ns->isInline()) scope = ns->getNameAsString() + "::" + scope;
      } else if (const auto* r = llvm::dyn_cast<clang::CXXRecordDecl>(dc)) {
        if (r->getIdentifier() == nullptr || r->getDescribedClassTemplate() != nullptr ||
            llvm::isa<clang::ClassTemplateSpecializationDecl>(r))
          return "";  // spelled as written (an unnamed class, a template: its arguments are not known here)
        scope = r->getNameAsString() + "::" + scope;
      } else if (!llvm::isa<clang::LinkageSpecDecl>(dc) && !llvm::isa<clang::EnumDecl>(dc)) {
        return "";
      }
    }
    return scope;
  }

  int add_var(const clang::ValueDecl* d, clang::QualType type) {
    ir::Var v;
    v.id = static_cast<int>(f_.vars.size());
    v.name = d->getNameAsString();
    v.type = ir_type_of(type);
    v.cxx_type = cxx_spelling(type, context_);
    // `auto` stays `auto`: the deduced type may be spelled in a namespace the generated code is
    // not in (fg::max's std::tuple<Tensor, Tensor>), and auto reads as the user wrote it.
    const clang::QualType value = type.getNonReferenceType();
    if (llvm::isa<clang::VarDecl>(d) && llvm::isa<clang::AutoType>(value.getTypePtr()) && !is_fg_tensor(type))
      v.cxx_type = std::string(value.isLocalConstQualified() ? "const " : "") + "auto" +
                   (type->isLValueReferenceType() ? "&" : type->isRValueReferenceType() ? "&&" : "");
    v.decl = d;
    f_.vars.push_back(v);
    vars_[d] = v.id;
    return v.id;
  }

  // A function template's instance (pow_n<3>): its body's text names the template parameters,
  // which the generated (non-template) code does not have; their values stand in for them.
  void bind_template_arguments(const clang::FunctionDecl* decl) {
    const clang::FunctionTemplateDecl* primary = decl->getPrimaryTemplate();
    const clang::TemplateArgumentList* args = decl->getTemplateSpecializationArgs();
    if (primary == nullptr || args == nullptr) return;
    const clang::TemplateParameterList* params = primary->getTemplateParameters();
    for (unsigned i = 0; i < params->size() && i < args->size(); ++i) {
      const clang::TemplateArgument& a = args->get(i);
      const std::string name = params->getParam(i)->getNameAsString();
      if (a.getKind() == clang::TemplateArgument::Type) template_values_[name] = cxx_spelling(a.getAsType(), context_);
      else if (a.getKind() == clang::TemplateArgument::Integral)
        template_values_[name] = "(" + llvm::toString(a.getAsIntegral(), 10) + ")";
    }
  }

  // A variable whose tensors cannot be followed: reported once, at its declaration; the
  // expressions that use it are not reported again.
  void reject_variable(const clang::VarDecl* vd, const clang::Stmt* at, const std::string& why) {
    unsupported(at, why);
    rejected_.insert(vd);
  }

  bool uses_rejected(const clang::Stmt* s) const {
    if (rejected_.empty() || s == nullptr) return false;
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(s); ref != nullptr && rejected_.count(ref->getDecl()) != 0)
      return true;
    for (const clang::Stmt* child : s->children())
      if (uses_rejected(child)) return true;
    return false;
  }

  void unsupported_at(clang::SourceLocation at, const std::string& what) {
    ok_ = false;
    reporter_.report("unsupported", at, what);
  }

  void unsupported(const clang::Stmt* s, const std::string& what) {
    ok_ = false;
    if (uses_rejected(s)) return;
    reporter_.report("unsupported", s->getBeginLoc(), what) << s->getSourceRange();
  }

  // The C++ text of a node as written; inside a macro expansion, its spelling (the macro argument
  // or body it came from), or else Clang's printing of it.
  std::string text_of(const clang::Stmt* node) const {
    return cxx::replace_identifiers(written_text(node), template_values_);
  }
  std::string written_text(const clang::Stmt* node) const {
    const clang::SourceRange range = node->getSourceRange();
    const clang::LangOptions& lo = context_.getLangOpts();
    if (!range.getBegin().isMacroID() && !range.getEnd().isMacroID())
      return clang::Lexer::getSourceText(clang::CharSourceRange::getTokenRange(range), sm_, lo).str();
    const clang::CharSourceRange file =
        clang::Lexer::makeFileCharRange(clang::CharSourceRange::getTokenRange(range), sm_, lo);
    if (file.isValid()) return clang::Lexer::getSourceText(file, sm_, lo).str();
    const clang::SourceLocation b = sm_.getSpellingLoc(range.getBegin()), e = sm_.getSpellingLoc(range.getEnd());
    if (sm_.getFileID(b) == sm_.getFileID(e) && !sm_.isWrittenInScratchSpace(b) && !sm_.isBeforeInTranslationUnit(e, b))
      return clang::Lexer::getSourceText(clang::CharSourceRange::getTokenRange(b, e), sm_, lo).str();
    std::string text;
    llvm::raw_string_ostream os(text);
    node->printPretty(os, nullptr, context_.getPrintingPolicy());
    return os.str();
  }

  // ------------------------------------------------------------------ statements

  void append(std::vector<StmtPtr>& out, const clang::Stmt* s) {
    if (s == nullptr || llvm::isa<clang::NullStmt>(s)) return;
    // A label is only a goto's target (goto is reported); attributes ([[likely]]) are hints.
    if (const auto* l = llvm::dyn_cast<clang::LabelStmt>(s)) return append(out, l->getSubStmt());
    if (const auto* a = llvm::dyn_cast<clang::AttributedStmt>(s)) return append(out, a->getSubStmt());
    if (llvm::isa<clang::Expr>(s) || llvm::isa<clang::ReturnStmt>(s)) hoist_init_captures(out, s);
    if (llvm::isa<clang::Expr>(s) || llvm::isa<clang::ReturnStmt>(s)) join_lists(out, s);
    if (const auto* i = llvm::dyn_cast<clang::IfStmt>(s); i != nullptr && i->getInit() == nullptr)
      join_lists(out, i->getCond());  // (run once, before either branch)
    if (const auto* ds = llvm::dyn_cast<clang::DeclStmt>(s)) {
      for (const clang::Decl* d : ds->decls()) {
        if (const auto* vd = llvm::dyn_cast<clang::VarDecl>(d)) {  // (each in turn)
          hoist_init_captures(out, vd->getInit());
          join_lists(out, vd->getInit());
        }
        lower_decl(out, d, ds);
      }
      return;
    }
    if (const auto* e = llvm::dyn_cast<clang::Expr>(s); e != nullptr && (assign_structure(out, e) || fill_structure(out, e)))
      return;
    if (StmtPtr lowered = lower_stmt(s)) out.push_back(std::move(lowered));
  }

  // The two sides of `a = b` (a built-in or a class's operator=), or false.
  static bool assignment_sides(const clang::Expr* e, const clang::Expr*& lhs, const clang::Expr*& rhs, std::string& op) {
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

  // `s = cell(p, x, s);` or `o.state = s;`: a local structure (or a part of one) assigned leaf by leaf.
  bool assign_structure(std::vector<StmtPtr>& out, const clang::Expr* e) {
    const clang::Expr* lhs = nullptr;
    const clang::Expr* rhs = nullptr;
    std::string op;
    if (trees_.empty() || !assignment_sides(e, lhs, rhs, op) || op != "=") return false;
    pytree::Tree* node = resolve(lhs, false);
    if (node == nullptr || node->is_leaf() || !writable(*node, e)) return false;
    init_leaves(*node, lhs->getType(), rhs, false, e, out);
    return true;
  }

  // `a.fill(v);` on a std::array of tensors held leaf by leaf: each element assigned v (evaluated once).
  bool fill_structure(std::vector<StmtPtr>& out, const clang::Expr* e) {
    const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(strip(e));
    if (trees_.empty() || mc == nullptr || mc->getMethodDecl() == nullptr || mc->getMethodDecl()->getName() != "fill" ||
        mc->getNumArgs() != 1)
      return false;
    pytree::Tree* node = resolve(mc->getImplicitObjectArgument(), false);
    if (node == nullptr || node->kind != pytree::Tree::Kind::Array || node->children.empty() ||
        std::any_of(node->children.begin(), node->children.end(), [](const pytree::Tree& c) { return c.kind != pytree::Tree::Kind::Tensor; }) ||
        !writable(*node, e))
      return false;
    const int value = declare_made(out, e, fresh_name(f_.var(node->children.at(0).var).name + "_fill"), ir::Type::Tensor,
                                   "const fg::Tensor", lower_expr(mc->getArg(0)));
    for (const pytree::Tree& leaf : node->children) assign_made(out, e, leaf.var, value);
    return true;
  }

  // A block's statements, up to a return that always runs (`if (!b) return y;` folded in a
  // specialization where b holds no tensor): what follows it is dead there, and may read b.
  void append_block(std::vector<StmtPtr>& out, const clang::CompoundStmt* c) {
    for (auto it = c->body_begin(); it != c->body_end(); ++it) {
      append(out, *it);
      if (out.empty() || !always_returns(*out.back())) continue;
      if (!case_after(it, c->body_end())) return splice_last_block(out);
      while (std::next(it) != c->body_end() && !has_case_label(*std::next(it))) ++it;  // dead up to the next case
    }
  }

  // Whether a case label of a switch follows (control enters there however the code before ends).
  static bool case_after(clang::CompoundStmt::const_body_iterator it, clang::CompoundStmt::const_body_iterator end) {
    for (++it; it != end; ++it)
      if (has_case_label(*it)) return true;
    return false;
  }
  static bool has_case_label(const clang::Stmt* s) {
    if (s == nullptr || llvm::isa<clang::SwitchStmt>(s)) return false;  // (its labels are its own)
    if (llvm::isa<clang::SwitchCase>(s)) return true;
    for (const clang::Stmt* child : s->children())
      if (has_case_label(child)) return true;
    return false;
  }

  // Whether a case label of the switch whose body is `s` stands inside a block (or other statement)
  // of the body rather than in the body itself or after another label (`case 0: { ...; case 1: ... }`).
  static bool nested_label(const clang::Stmt* s, bool top) {
    if (const auto* label = llvm::dyn_cast_or_null<clang::SwitchCase>(s)) return nested_label(label->getSubStmt(), top);
    if (const auto* c = llvm::dyn_cast_or_null<clang::CompoundStmt>(s); c != nullptr && top)
      return std::any_of(c->body_begin(), c->body_end(), [](const clang::Stmt* x) { return nested_label(x, false); });
    return has_case_label(s);
  }

  // A switch body with labels inside its blocks, as one list of labels and statements: entering at
  // a label inside a block runs the rest of the block, then what follows it, which is what the list
  // does. A label inside an if or a loop (Duff's device) is reported.
  bool flat_switch_body(const clang::Stmt* s, std::vector<StmtPtr>& out) {
    if (s == nullptr || llvm::isa<clang::NullStmt>(s)) return true;
    if (const auto* label = llvm::dyn_cast<clang::SwitchCase>(s)) {
      StmtPtr st = make(StmtKind::Case, s);
      const auto* cs = llvm::dyn_cast<clang::CaseStmt>(label);
      st->text = cs != nullptr ? "case " + text_of(cs->getLHS()) : "default";
      out.push_back(std::move(st));
      return flat_switch_body(label->getSubStmt(), out);
    }
    if (const auto* c = llvm::dyn_cast<clang::CompoundStmt>(s); c != nullptr && has_case_label(c)) {
      for (const clang::Stmt* x : c->body())
        if (!flat_switch_body(x, out)) return false;
      return true;
    }
    if (has_case_label(s)) {
      const std::string what = llvm::isa<clang::IfStmt>(s) ? "an if" : llvm::isa<clang::CompoundStmt>(s) ? "a block" : "a loop";
      unsupported(s, what + " with a case label of its switch inside cannot be transformed; end the " +
                     what.substr(what.find(' ') + 1) + " before the label, or repeat its code under each label");
      return false;
    }
    append(out, s);
    return true;
  }

  // The same on the source, where discover() walks it: a statement after which nothing runs in
  // this specialization.
  bool always_returns(const clang::Stmt* s) {
    if (llvm::isa_and_nonnull<clang::ReturnStmt>(s)) return true;
    if (const auto* label = llvm::dyn_cast_or_null<clang::SwitchCase>(s)) return always_returns(label->getSubStmt());
    if (const auto* c = llvm::dyn_cast_or_null<clang::CompoundStmt>(s)) {
      for (auto it = c->body_begin(); it != c->body_end(); ++it)
        if (always_returns(*it) && !case_after(it, c->body_end())) return true;
      return false;
    }
    if (const auto* i = llvm::dyn_cast_or_null<clang::IfStmt>(s); i != nullptr && i->getInit() == nullptr &&
                                                                   i->getConditionVariable() == nullptr)
      if (const std::optional<bool> taken = presence_test(i->getCond())) return always_returns(*taken ? i->getThen() : i->getElse());
    return false;
  }

  // A block that ends in the return of the list it closes joins that list (the transforms find a
  // function's return last in its body), unless it declares a name the list declares too.
  void splice_last_block(std::vector<StmtPtr>& out) {
    if (out.back()->kind != StmtKind::Block || out.back()->text == "label") return;
    std::set<std::string> declared = ir::declared_names(f_, out);  // (the block itself declares none)
    for (int p : f_.params) declared.insert(f_.var(p).name);
    for (const std::string& n : ir::declared_names(f_, out.back()->body))
      if (declared.count(n) != 0) return;
    std::vector<StmtPtr> body = std::move(out.back()->body);
    out.pop_back();
    for (StmtPtr& st : body) out.push_back(std::move(st));
    if (!out.empty() && out.back()->kind == StmtKind::Block) splice_last_block(out);
  }

  // (a case's label block too: what follows it up to the next label is dead)
  static bool always_returns(const ir::Stmt& st) {
    if (st.kind == StmtKind::Return) return true;
    return st.kind == StmtKind::Block && !st.body.empty() && always_returns(*st.body.back());
  }

  std::vector<StmtPtr> lower_body(const clang::Stmt* s) {
    std::vector<StmtPtr> out;
    if (const auto* c = llvm::dyn_cast_or_null<clang::CompoundStmt>(s)) {
      append_block(out, c);
    } else {
      append(out, s);
    }
    return out;
  }

  StmtPtr make(StmtKind kind, const clang::Stmt* s) {
    auto st = std::make_unique<ir::Stmt>();
    st->kind = kind;
    st->ast = s;
    st->range = s->getSourceRange();
    return st;
  }

  // The locals that `s` reads and writes, for Opaque statements and expressions.
  template <typename Node>
  void record_uses(const clang::Stmt* s, Node& node) {
    VarUses uses(vars_);
    uses.TraverseStmt(const_cast<clang::Stmt*>(s));
    node.reads = uses.reads;
    node.writes = uses.writes;
  }

  StmtPtr opaque_stmt(const clang::Stmt* s) {
    StmtPtr st = make(StmtKind::Opaque, s);
    record_uses(s, *st);
    st->text = with_leaves(s, text_of(s), st->reads);
    leaf_writes(s, st->writes);
    return st;
  }

  // The leaves of structures that C++ text assigns (`s.steps++`, `s.steps += 1` kept as text).
  void leaf_writes(const clang::Stmt* s, std::vector<int>& writes) {
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

  void lower_decl(std::vector<StmtPtr>& out, const clang::Decl* d, const clang::DeclStmt* ds) {
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
      for (const clang::ValueDecl* v : funcgen::captured(lambda->getLambdaClass()))
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
    if (vd->getType()->isPointerType() && is_tensor_type(vd->getType()->getPointeeType())) {
      reject_variable(vd, ds, "'" + vd->getNameAsString() + "' is a pointer to a tensor, which cannot be transformed; "
                                  "use the tensor itself (fg::Tensor is a handle: copies share its storage) or a reference");
      return;
    }
    if (const auto* array = context_.getAsConstantArrayType(vd->getType()); array != nullptr && is_tensor_type(array->getElementType())) {
      reject_variable(vd, ds, "'" + vd->getNameAsString() + "' is a C array of tensors, which cannot be transformed; "
                                  "use a std::vector<fg::Tensor> or separate variables");
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
  std::vector<const clang::DeclRefExpr*> references_to(const clang::ValueDecl* v) const {
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
  const clang::BindingDecl* written_binding(const clang::DecompositionDecl* dd) const {
    for (const clang::BindingDecl* b : dd->bindings())
      for (const clang::DeclRefExpr* r : references_to(b))
        if (written_through(r)) return b;
    return nullptr;
  }

  // `fg::Tensor& r = y;` (or const): another name for the variable y, as C++ binds it; what is
  // assigned to either is assigned to both, so both are y's variable. A non-const reference to
  // anything else (an element, a member) is reported; a const one to an element is its value
  // there, as before (true: nothing more to declare).
  bool tensor_reference(const clang::VarDecl* vd, const clang::DeclStmt* ds) {
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

  // A local C array of numbers (`const double w[] = {0.5, 1.5};`) is declared as the std::array it
  // stands for: the transforms keep locals in tuples and pass them to functions, which a C array
  // cannot be. Its reads (w[i], a range-for, std::size) are the same; where it decays to a pointer
  // (passed to a `const double*`), or has more dimensions, it is reported. The type, or "-" after
  // a report.
  std::string local_array(const clang::VarDecl* vd, const clang::DeclStmt* ds) {
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
    const auto parent = [&](const clang::Expr* e) {
      const auto parents = context_.getParentMapContext().getParents(*e);
      return parents.empty() ? nullptr : parents[0].get<clang::Expr>();
    };
    const clang::Expr* decay = nullptr;
    for (const clang::DeclRefExpr* r : references_to(vd)) {
      const auto* cast = llvm::dyn_cast_or_null<clang::ImplicitCastExpr>(parent(r));
      if (cast == nullptr || cast->getCastKind() != clang::CK_ArrayToPointerDecay) continue;
      const auto* subscript = llvm::dyn_cast_or_null<clang::ArraySubscriptExpr>(parent(cast));
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

  StmtPtr lower_stmt(const clang::Stmt* s) {
    if (const auto* c = llvm::dyn_cast<clang::CompoundStmt>(s)) {
      StmtPtr st = make(StmtKind::Block, s);
      append_block(st->body, c);
      return st;
    }
    if (const auto* r = llvm::dyn_cast<clang::ReturnStmt>(s)) {
      StmtPtr st = make(StmtKind::Return, s);
      if (r->getRetValue() != nullptr) st->expr = lower_result(r->getRetValue());
      return st;
    }
    if (const auto* i = llvm::dyn_cast<clang::IfStmt>(s)) {
      if (i->getInit() != nullptr || i->getConditionVariable() != nullptr || i->isConstexpr()) {
        if (!needs_ir(s)) return opaque_stmt(s);
        if (i->isConstexpr()) return taken_branch(i);
        // if (init; T v = e) ...  ->  { init; T v = e; if (v) ... }: the names are the if's alone either way
        StmtPtr block = make(StmtKind::Block, s);
        if (i->getInit() != nullptr) append(block->body, i->getInit());
        if (i->getConditionVariableDeclStmt() != nullptr) append(block->body, i->getConditionVariableDeclStmt());
        block->body.push_back(lower_if(i));
        return block;
      }
      if (const std::optional<bool> taken = presence_test(i->getCond())) {  // `if (b)`: one branch in this specialization
        const clang::Stmt* branch = *taken ? i->getThen() : i->getElse();
        if (branch == nullptr) return nullptr;
        StmtPtr st = make(StmtKind::Block, branch);
        st->body = lower_body(branch);
        return st;
      }
      return lower_if(i);
    }
    if (const auto* fs = llvm::dyn_cast<clang::ForStmt>(s)) {
      StmtPtr st = make(StmtKind::For, s);
      if (fs->getInit() != nullptr) append(st->init, fs->getInit());
      if (fs->getCond() != nullptr) st->expr = lower_expr(fs->getCond());
      if (fs->getInc() != nullptr) st->step = lower_expr(fs->getInc());
      ++loops_;
      st->body = lower_body(fs->getBody());
      --loops_;
      return st;
    }
    if (const auto* w = llvm::dyn_cast<clang::WhileStmt>(s)) {
      StmtPtr st = make(StmtKind::While, s);
      ++loops_;
      if (w->getConditionVariable() != nullptr) {
        // while (T v = e) body  ->  while (true) { T v = e; if (!v) break; body }: a continue
        // evaluates the condition again, as C++ does
        st->expr = ir::opaque("true", ir::Type::Bool);
        append(st->body, w->getConditionVariableDeclStmt());
        st->body.push_back(exit_unless(w->getCond(), s));
        for (StmtPtr& b : lower_body(w->getBody())) st->body.push_back(std::move(b));
      } else {
        st->expr = lower_expr(w->getCond());
        st->body = lower_body(w->getBody());
      }
      --loops_;
      return st;
    }
    if (const auto* d = llvm::dyn_cast<clang::DoStmt>(s)) {
      StmtPtr st = make(StmtKind::DoWhile, s);
      st->expr = lower_expr(d->getCond());
      ++loops_;
      st->body = lower_body(d->getBody());
      --loops_;
      return st;
    }
    if (const auto* sw = llvm::dyn_cast<clang::SwitchStmt>(s)) {
      if (sw->getInit() != nullptr || sw->getConditionVariable() != nullptr) {
        // switch (init; T c = e) ...  ->  { init; T c = e; switch (c) ... }
        StmtPtr block = make(StmtKind::Block, s);
        if (sw->getInit() != nullptr) append(block->body, sw->getInit());
        if (sw->getConditionVariableDeclStmt() != nullptr) append(block->body, sw->getConditionVariableDeclStmt());
        if (StmtPtr inner = lower_switch(sw)) block->body.push_back(std::move(inner));
        return ok_ ? std::move(block) : nullptr;
      }
      return lower_switch(sw);
    }
    if (const auto* cs = llvm::dyn_cast<clang::CaseStmt>(s)) {
      // A case label owns the statement after it; flatten to label + statement in the block.
      StmtPtr st = make(StmtKind::Case, s);
      st->text = "case " + text_of(cs->getLHS());
      pending_after_label_ = cs->getSubStmt();
      return flatten_label(std::move(st));
    }
    if (const auto* ds = llvm::dyn_cast<clang::DefaultStmt>(s)) {
      StmtPtr st = make(StmtKind::Case, s);
      st->text = "default";
      pending_after_label_ = ds->getSubStmt();
      return flatten_label(std::move(st));
    }
    if (llvm::isa<clang::BreakStmt>(s)) return make(StmtKind::Break, s);
    if (llvm::isa<clang::ContinueStmt>(s)) return make(StmtKind::Continue, s);
    if (const auto* e = llvm::dyn_cast<clang::Expr>(s)) return lower_expr_stmt(e);
    // The generated code declares values between statements (temporaries, aligned operands), and
    // a jump may not skip declarations: goto is reported wherever it is.
    if (llvm::isa<clang::GotoStmt>(s) || llvm::isa<clang::IndirectGotoStmt>(s)) {
      unsupported(s, "goto cannot be transformed; use if, a loop with break or continue, or return instead");
      return nullptr;
    }
    if (!needs_ir(s)) return opaque_stmt(s);
    if (const auto* rs = llvm::dyn_cast<clang::CXXForRangeStmt>(s))
      if (StmtPtr st = lower_range_for(rs)) return st;
    if (!ok_) return nullptr;
    unsupported(s, statement_words(s) + " that uses tensors cannot be transformed; " + statement_advice(s));
    return nullptr;
  }

  StmtPtr lower_if(const clang::IfStmt* i) {
    StmtPtr st = make(StmtKind::If, i);
    st->expr = lower_expr(i->getCond());
    st->body = lower_body(i->getThen());
    if (i->getElse() != nullptr) {
      st->has_else = true;
      st->else_body = lower_body(i->getElse());
    }
    return st;
  }

  // `if constexpr`: the branch its condition takes (the other may not even compile here).
  StmtPtr taken_branch(const clang::IfStmt* i) {
    const std::optional<llvm::APSInt> taken = i->getCond()->getIntegerConstantExpr(context_);
    if (!taken) {
      unsupported(i, "an 'if constexpr' whose condition depends on a template parameter cannot be transformed; "
                     "annotate a function that calls the instance it needs");
      return nullptr;
    }
    StmtPtr block = make(StmtKind::Block, i);
    const clang::Stmt* branch = taken->getBoolValue() ? i->getThen() : i->getElse();
    if (i->getInit() != nullptr) append(block->body, i->getInit());
    if (branch != nullptr)
      for (StmtPtr& b : lower_body(branch)) block->body.push_back(std::move(b));
    return block;
  }

  // if (!(cond)) break;
  StmtPtr exit_unless(const clang::Expr* cond, const clang::Stmt* at) {
    StmtPtr exit = make(StmtKind::If, at);
    exit->expr = ir::unary("!", lower_expr(cond), ir::Type::Bool);
    exit->body.push_back(make(StmtKind::Break, at));
    return exit;
  }

  StmtPtr lower_switch(const clang::SwitchStmt* sw) {
    StmtPtr st = make(StmtKind::Switch, sw);
    st->expr = lower_expr(sw->getCond());
    if (nested_label(sw->getBody(), true)) {
      if (!flat_switch_body(sw->getBody(), st->body)) return nullptr;
      std::set<std::string> names;
      for (const StmtPtr& d : st->body)
        if (d->kind == StmtKind::Decl && !names.insert(f_.var(d->var).name).second) {
          unsupported(d->ast, "'" + f_.var(d->var).name + "' is declared twice in the blocks of this switch that "
                              "case labels enter, which cannot be transformed; rename one of them");
          return nullptr;
        }
    } else {
      st->body = lower_body(sw->getBody());
    }
    return st;
  }

  // ------------------------------------------------------------------ pieces of split and chunk
  // `x.split(n, dim)`, `x.split({sizes...}, dim)` and `x.chunk(n, dim)` (or fg::split, fg::chunk)
  // read by index: piece i is fg::ad::split_piece(x, n, dim, i), split_with_sizes_piece or
  // chunk_piece, an op of its own that AD differentiates as a narrow, and the count
  // fg::ad::split_count(x.size(dim), n), split_with_sizes_count(sizes) or chunk_count.
  struct Pieces {
    const clang::Expr* tensor = nullptr;
    const clang::Expr* n = nullptr;    // split_size, the split sizes, or chunks
    const clang::Expr* dim = nullptr;  // null: 0
    bool chunk = false;
    bool sizes = false;  // n is a list of sizes
  };

  // The pieces `e` makes, if it is a split by an integer size or a chunk.
  std::optional<Pieces> pieces_of(const clang::Expr* e) const {
    const auto* call = llvm::dyn_cast<clang::CallExpr>(e);
    const clang::FunctionDecl* f = call != nullptr ? call->getDirectCallee() : nullptr;
    if (f == nullptr || (f->getName() != "split" && f->getName() != "chunk") ||
        !compat::starts_with(f->getQualifiedNameAsString(), "fg::"))
      return std::nullopt;
    const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(call);
    const unsigned first = mc != nullptr ? 0 : 1;
    if (call->getNumArgs() <= first) return std::nullopt;
    Pieces p;
    p.sizes = !call->getArg(first)->getType()->isIntegerType();
    p.tensor = mc != nullptr ? mc->getImplicitObjectArgument() : call->getArg(0);
    p.n = call->getArg(first);
    if (call->getNumArgs() > first + 1 && !llvm::isa<clang::CXXDefaultArgExpr>(call->getArg(first + 1)))
      p.dim = call->getArg(first + 1);
    p.chunk = f->getName() == "chunk";
    return p;
  }

  ExprPtr piece_dim(const Pieces& p) { return p.dim != nullptr ? lower_expr(p.dim) : ir::opaque("0", ir::Type::Int); }

  // How many pieces the tensor `held` (lowered) makes, for n and dim (lowered).
  ExprPtr piece_count(const Pieces& p, ExprPtr held, ExprPtr n, ExprPtr dim, const clang::CXXRecordDecl* tensor) {
    std::vector<ExprPtr> size_args, args;
    if (p.sizes) {
      args.push_back(std::move(n));
      return fg_call("ad::split_with_sizes_count", ir::Type::Int, std::move(args), {"split_sizes"});
    }
    size_args.push_back(std::move(held));
    size_args.push_back(std::move(dim));
    args.push_back(method_call(tensor, "size", ir::Type::Int, std::move(size_args)));
    args.push_back(std::move(n));
    return fg_call(p.chunk ? "ad::chunk_count" : "ad::split_count", ir::Type::Int, std::move(args),
                   {"size", p.chunk ? "chunks" : "split_size"});
  }

  // Piece `index` of the tensor `held`, for n and dim (all lowered).
  ExprPtr piece_at(const Pieces& p, ExprPtr held, ExprPtr n, ExprPtr dim, ExprPtr index) {
    std::vector<ExprPtr> args;
    args.push_back(std::move(held));
    args.push_back(std::move(n));
    args.push_back(std::move(dim));
    args.push_back(std::move(index));
    return fg_call(p.chunk ? "ad::chunk_piece" : p.sizes ? "ad::split_with_sizes_piece" : "ad::split_piece",
                   ir::Type::Tensor, std::move(args),
                   {"self", p.chunk ? "chunks" : p.sizes ? "split_sizes" : "split_size", "dim", "index"});
  }

  // `x.chunk(n, d)[i]`, `.at(i)`, `.front()`, `.back()` of pieces not stored in a variable.
  ExprPtr piece_read(const clang::Expr* e) {
    const clang::Expr* object = nullptr;
    const clang::Expr* index = nullptr;
    std::string m;
    if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e); oc != nullptr && oc->getOperator() == clang::OO_Subscript) {
      object = strip(oc->getArg(0));
      index = oc->getArg(1);
    } else if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(e); mc != nullptr && mc->getMethodDecl() != nullptr) {
      m = mc->getMethodDecl()->getNameAsString();
      object = strip(mc->getImplicitObjectArgument());
      if (m == "at" && mc->getNumArgs() == 1) index = mc->getArg(0);
      else if (m != "front") object = nullptr;  // back() needs the count: store the pieces in a variable
    }
    const std::optional<Pieces> p = object != nullptr ? pieces_of(object) : std::nullopt;
    if (!p) return nullptr;
    ExprPtr x = piece_at(*p, lower_expr(p->tensor), lower_expr(p->n), piece_dim(*p),
                         index != nullptr ? lower_expr(index) : ir::opaque("0", ir::Type::Int));
    x->range = e->getSourceRange();
    return x;
  }

  // ------------------------------------------------------------------ vectors built with push_back
  // A local std::vector<fg::Tensor> that the body fills with push_back and stacks (fg::stack(v)) is
  // a list of same-shaped tensors: it is held stacked, as one tensor (its name) and a count
  // (`v_size__`), so that every transform goes through it with the ops it has: push_back is a cat
  // along dim 0 (the first an unsqueeze), v[i] a select, v.size() the count, fg::stack(v) the tensor.
  // One initialized with a tensor's slices (`x.unbind(d)`) is that tensor with dim d moved in front.
  struct Stacked {
    int var = -1, count = -1;
    bool pushed = false;  // a push_back was lowered: the count may be nonzero from here on
    size_t loops = 0;     // loops around the declaration (a push inside more is in a loop)
    const clang::Expr* slices_of = nullptr;  // x of `= x.unbind(dim)`, and its dim (null: 0)
    const clang::Expr* slice_dim = nullptr;
    std::optional<Pieces> pieces;  // `= x.split(n, dim)` or `x.chunk(n, dim)`: held as x itself,
    int piece_n = -1, piece_dim = -1;  // with n and dim in variables (read as at the declaration)
  };

  static bool is_tensor_vector(clang::QualType t) {
    const clang::QualType b = bare(t);
    if (record_name(b) != "std::vector") return false;
    const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(b->getAsCXXRecordDecl());
    return spec != nullptr && is_fg_tensor(spec->getTemplateArgs()[0].getAsType());
  }

  static bool is_push(const clang::CXXMemberCallExpr* mc) {
    const std::string m = mc->getMethodDecl()->getNameAsString();
    return (m == "push_back" || m == "emplace_back") && mc->getNumArgs() == 1;
  }

  // The vectors of the body that qualify: every use is one of the above (or reserve, empty, back,
  // front, at, a range-based for), one push_back at least, and a stack along dim 0 or 1.
  void find_stacked(const clang::Stmt* body) {
    struct Uses : clang::RecursiveASTVisitor<Uses> {
      FunctionLowerer* self;
      std::map<const clang::VarDecl*, int> refs, allowed, pushes, stacks, cats, passed, written, sets, odd_dims, returned;
      std::map<const clang::VarDecl*, const clang::Stmt*> first_push;
      std::vector<const clang::VarDecl*> order;
      const clang::VarDecl* local(const clang::Expr* e) {
        const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(self->strip(e));
        const auto* vd = r != nullptr ? llvm::dyn_cast<clang::VarDecl>(r->getDecl()) : nullptr;
        return vd != nullptr && vd->isLocalVarDecl() && is_tensor_vector(vd->getType()) ? vd : nullptr;
      }
      bool VisitVarDecl(clang::VarDecl* vd) {
        if (vd->isLocalVarDecl() && is_tensor_vector(vd->getType())) order.push_back(vd);
        return true;
      }
      bool VisitDeclRefExpr(clang::DeclRefExpr* r) {
        if (const auto* vd = local(r)) ++refs[vd];
        return true;
      }
      bool VisitCXXMemberCallExpr(clang::CXXMemberCallExpr* mc) {
        const clang::VarDecl* vd = mc->getMethodDecl() != nullptr ? local(mc->getImplicitObjectArgument()) : nullptr;
        if (vd == nullptr) return true;
        const std::string m = mc->getMethodDecl()->getNameAsString();
        if (is_push(mc) && pushes[vd]++ == 0) first_push[vd] = mc;
        if (is_push(mc) || m == "size" || m == "empty" || m == "back" || m == "front" || m == "at" || m == "reserve") ++allowed[vd];
        if ((m == "back" || m == "front" || m == "at") && self->written_through(mc))
          ++(self->element_assigned(mc) ? sets : written)[vd];
        return true;
      }
      bool VisitCXXOperatorCallExpr(clang::CXXOperatorCallExpr* oc) {
        if (oc->getOperator() == clang::OO_Subscript && local(oc->getArg(0)) != nullptr) {
          ++allowed[local(oc->getArg(0))];
          if (self->written_through(oc)) ++(self->element_assigned(oc) ? sets : written)[local(oc->getArg(0))];
        }
        return true;
      }
      bool VisitCallExpr(clang::CallExpr* call) {
        const clang::FunctionDecl* f = call->getDirectCallee();
        const std::string name = f != nullptr ? f->getQualifiedNameAsString() : "";
        if (f != nullptr && self->is_user_function(f))  // passed to a helper that reads it (const)
          for (unsigned i = 0; i < call->getNumArgs() && i < f->getNumParams(); ++i)
            if (const clang::VarDecl* vd = local(call->getArg(i))) {
              const clang::QualType t = f->getParamDecl(i)->getType();
              ++allowed[vd], ++passed[vd];
              // by non-const reference: the helper may assign its elements (a list operation, as v[i] = y)
              if (t->isReferenceType() && !t.getNonReferenceType().isConstQualified()) ++sets[vd];
            }
        if ((name != "fg::stack" && name != "fg::cat") || call->getNumArgs() == 0) return true;
        if (const clang::VarDecl* vd = local(call->getArg(0))) {
          ++allowed[vd];
          if (name == "fg::stack") ++stacks[vd];  // (a cat alone would take elements of different sizes)
          else ++cats[vd];
          if (call->getNumArgs() > 1 && !llvm::isa<clang::CXXDefaultArgExpr>(call->getArg(1))) {
            const std::optional<llvm::APSInt> d = call->getArg(1)->getIntegerConstantExpr(self->context_);
            if (!d || (*d != 0 && *d != 1)) ++odd_dims[vd];  // held stacked, only dims 0 and 1 are lowered
          }
        }
        return true;
      }
      bool VisitReturnStmt(clang::ReturnStmt* r) {
        if (const clang::VarDecl* vd = r->getRetValue() != nullptr ? local(self->unmoved(r->getRetValue())) : nullptr)
          ++allowed[vd], ++returned[vd];
        return true;
      }
      bool VisitCXXForRangeStmt(clang::CXXForRangeStmt* rs) {
        if (const clang::VarDecl* vd = local(rs->getRangeInit())) {
          ++allowed[vd];
          // `for (auto& r : v)` may assign the elements: each trip's element is written back (indexed())
          const clang::QualType t = rs->getLoopVariable()->getType();
          if (t->isReferenceType() && !t.getNonReferenceType().isConstQualified()) ++sets[vd];
        }
        return true;
      }
    } uses;
    uses.self = this;
    uses.TraverseStmt(const_cast<clang::Stmt*>(body));
    for (const clang::VarDecl* vd : uses.order) {
      const clang::Expr* init = vd->getInit() != nullptr ? strip(vd->getInit()) : nullptr;
      const clang::Expr* slice_dim = nullptr;
      if (const std::optional<Pieces> pieces = init != nullptr ? pieces_of(init) : std::nullopt) {
        // Pieces of different sizes: read, sized and looped over only.
        if (uses.allowed[vd] != uses.refs[vd] || uses.written[vd] + uses.sets[vd] + uses.returned[vd] != 0 ||
            uses.passed[vd] + uses.pushes[vd] + uses.stacks[vd] + uses.cats[vd] != 0) {
          const std::string name = vd->getNameAsString();
          reject_variable(vd, init,
                          "the pieces in '" + name + "' cannot be transformed: funcgen transforms a vector of a "
                          "tensor's pieces (split, chunk) when the function only reads its elements (" + name +
                          "[i]), sizes it or loops over it; to join them again, use the tensor they came from");
          continue;
        }
        Stacked v;
        v.pieces = pieces;
        stacked_[vd] = v;
        continue;
      }
      if (const clang::Expr* x = init != nullptr ? unbound(init, slice_dim) : nullptr) {
        // Its elements have one shape: it may be read, sized, looped over and stacked, and grown by
        // push_back only where it is stacked (pushing another shape is for the stack to refuse).
        if (uses.allowed[vd] != uses.refs[vd] || uses.written[vd] + uses.sets[vd] + uses.returned[vd] != 0 || uses.passed[vd] != 0 ||
            (uses.pushes[vd] != 0 && uses.stacks[vd] == 0)) {
          reject_variable(vd, init,
                          "the slices of a tensor in '" + vd->getNameAsString() + "' cannot be transformed: funcgen "
                          "transforms a vector of a tensor's slices when the function only reads its elements, sizes "
                          "it, loops over it or stacks it (fg::stack(" + vd->getNameAsString() + "))");
          continue;
        }
        Stacked v;
        v.slices_of = x;
        v.slice_dim = slice_dim;
        stacked_[vd] = v;
        continue;
      }
      const auto* braces = llvm::dyn_cast_or_null<clang::InitListExpr>(init);
      const bool braced = braces != nullptr && braces->getNumInits() > 0;
      const auto* ctor = llvm::dyn_cast_or_null<clang::CXXConstructExpr>(init);
      const bool made = list_maker(init) != nullptr;  // `hs = states(x, n)`: the list a helper built
      const bool starts = init == nullptr || llvm::isa<clang::InitListExpr>(init) || (ctor != nullptr && ctor->getNumArgs() == 0) || made;
      const bool filled = filled_with(ctor) != nullptr;
      const bool follows = uses.allowed[vd] == uses.refs[vd] && uses.written[vd] == 0;  // every use is one of the above
      // Held stacked where its elements have one shape: stacked, and otherwise only read, sized,
      // looped over or concatenated (along dim 0 or 1 where built with braces).
      const bool stackable = uses.stacks[vd] != 0 && follows && uses.sets[vd] == 0 && uses.passed[vd] + uses.returned[vd] == 0 && !made &&
                             starts && uses.odd_dims[vd] == 0 && (uses.pushes[vd] != 0 || braced);
      if (stackable) {
        stacked_[vd] = Stacked{};
        continue;
      }
      // Otherwise a list of tensors of any shapes, read at run-time indices (`skips[i]`), as JAX keeps
      // a Python list of activations: pushed to, its elements assigned (`h[l] = y;`), concatenated
      // or stacked (join_lists), passed to helpers. One built with braces and only read is a list
      // under AD (anf.cpp) and vmap batches it as it is.
      if (uses.pushes[vd] == 0) {
        if (follows && (filled || made || (braced && uses.sets[vd] + uses.cats[vd] + uses.stacks[vd] + uses.returned[vd] != 0)))
          listed_.insert(vd);
        continue;
      }
      if (follows && (starts || filled)) {
        listed_.insert(vd);
        continue;
      }
      const clang::Stmt* at = uses.first_push[vd] != nullptr ? uses.first_push[vd] : static_cast<const clang::Stmt*>(init);
      const std::string name = vd->getNameAsString();
      const std::string why = !(starts || filled) ? "it is not declared empty, with braces or as copies of one value"
                              : uses.written[vd] != 0
                                  ? "an element of it is changed in place or bound to a non-const reference; assign "
                                    "the new value (" + name + "[i] = y) instead"
                                  : "it is used in a way funcgen does not follow (iterators, assigned whole, passed by "
                                    "non-const reference, cleared or popped); index it (" + name + "[i]) or loop over "
                                    "it with a range-for";
      reject_variable(vd, at,
                      (uses.pushes[vd] != 0 ? "push_back into '" : "the vector '") + name +
                      "' cannot be transformed: funcgen transforms a vector of tensors declared empty or with braces "
                      "and filled with push_back when the function then only reads its elements (" + name +
                      "[i], back(), a range-for by const reference), assigns them (" + name + "[i] = y), sizes, "
                      "concatenates or stacks it, or passes it to a helper, but " + why);
    }
  }

  // Whether the element `e` names is assigned a new tensor by a statement of its own (`v[i] = y;`).
  bool element_assigned(const clang::Expr* e) const {
    const clang::Expr* at = e;
    while (true) {
      const auto parents = context_.getParentMapContext().getParents(*at);
      const auto* p = parents.empty() ? nullptr : parents[0].get<clang::Expr>();
      if (p == nullptr) return false;
      if (llvm::isa<clang::ImplicitCastExpr>(p) || llvm::isa<clang::ParenExpr>(p) || llvm::isa<clang::MaterializeTemporaryExpr>(p)) {
        at = p;
        continue;
      }
      const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(p);
      if (oc == nullptr || oc->getOperator() != clang::OO_Equal || oc->getArg(0)->IgnoreParenImpCasts() != at->IgnoreParenImpCasts())
        return false;
      const auto up = context_.getParentMapContext().getParents(*oc);
      const clang::Expr* above = up.empty() ? nullptr : up[0].get<clang::Expr>();
      if (above != nullptr && llvm::isa<clang::ExprWithCleanups>(above)) {
        const auto top = context_.getParentMapContext().getParents(*above);
        above = top.empty() ? nullptr : top[0].get<clang::Expr>();
      }
      return above == nullptr && !up.empty();  // the assignment is a statement
    }
  }

  // Whether the element `e` names is written: assigned to, changed in place (x.add_(y)), or bound
  // to a non-const reference.
  bool written_through(const clang::Expr* e) const {
    const clang::Expr* at = e;
    while (true) {
      const auto parents = context_.getParentMapContext().getParents(*at);
      if (parents.empty()) return false;
      const auto* p = parents[0].get<clang::Expr>();
      if (p == nullptr) {
        const auto* vd = parents[0].get<clang::VarDecl>();
        return vd != nullptr && vd->getType()->isReferenceType() && !vd->getType().getNonReferenceType().isConstQualified();
      }
      if (llvm::isa<clang::ImplicitCastExpr>(p) || llvm::isa<clang::ParenExpr>(p) || llvm::isa<clang::MaterializeTemporaryExpr>(p)) {
        at = p;
        continue;
      }
      if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(p)) return b->isAssignmentOp() && b->getLHS()->IgnoreParenImpCasts() == at->IgnoreParenImpCasts();
      if (const auto* o = llvm::dyn_cast<clang::CXXOperatorCallExpr>(p))
        return o->isAssignmentOp() && o->getNumArgs() > 0 && o->getArg(0)->IgnoreParenImpCasts() == at->IgnoreParenImpCasts();
      if (const auto* m = llvm::dyn_cast<clang::MemberExpr>(p)) {
        const std::string name = m->getMemberDecl()->getNameAsString();
        return !name.empty() && name.back() == '_';
      }
      return false;
    }
  }

  Stacked* stacked_object(const clang::CXXMemberCallExpr* mc) {
    if (mc->getMethodDecl() == nullptr || mc->getImplicitObjectArgument() == nullptr) return nullptr;
    const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(strip(mc->getImplicitObjectArgument()));
    auto it = r != nullptr ? stacked_.find(r->getDecl()) : stacked_.end();
    return it != stacked_.end() ? &it->second : nullptr;
  }

  const clang::VarDecl* listed_object(const clang::CXXMemberCallExpr* mc) {
    if (listed_.empty() || mc->getMethodDecl() == nullptr || mc->getImplicitObjectArgument() == nullptr) return nullptr;
    const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(strip(mc->getImplicitObjectArgument()));
    const auto* vd = r != nullptr ? llvm::dyn_cast<clang::VarDecl>(r->getDecl()) : nullptr;
    return vd != nullptr && listed_.count(vd) != 0 ? vd : nullptr;
  }

  // v.push_back(e) on a list  ->  { const fg::Tensor v_item__ = e; v.push_back(v_item__); }: the push
  // is a list operation (ir::kListPush) on the list and a value, which AD and vmap follow.
  StmtPtr push_listed(const clang::VarDecl* vd, const clang::CXXMemberCallExpr* mc) {
    auto it = vars_.find(vd);
    if (it == vars_.end()) {
      unsupported(mc, "internal error: push_back into '" + vd->getNameAsString() + "' before its declaration");
      return nullptr;
    }
    const auto push_of = [&](int item) {
      StmtPtr p = make(StmtKind::Eval, mc);
      p->expr = ir::tape_op(f_, ir::kListPush, {it->second, item}, ir::Type::Void);
      p->expr->range = mc->getSourceRange();
      return p;
    };
    const clang::Expr* pushed = unmoved(mc->getArg(0));
    if (const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(pushed))  // v.push_back(h)
      if (auto named = vars_.find(r->getDecl()); named != vars_.end() && f_.var(named->second).type == ir::Type::Tensor)
        return push_of(named->second);
    StmtPtr block = make(StmtKind::Block, mc);
    const int item = declare_made(block->body, mc, vd->getNameAsString() + "_item__", ir::Type::Tensor,
                                  "const fg::Tensor", lower_expr(pushed));
    block->body.push_back(push_of(item));
    return block;
  }

  // fg::cat({items...}, dim), for the code the lowering writes (`at`: where it stands for).
  ExprPtr cat_of(const clang::Expr* at, std::vector<ExprPtr> items, ExprPtr dim) {
    ExprPtr list = make_expr(ExprKind::List, at);
    list->type = ir::Type::TensorList;
    list->args = std::move(items);
    return fg_call("cat", ir::Type::Tensor, exprs_of(std::move(list), std::move(dim)), {"tensors", "dim"});
  }
  template <class... E>
  static std::vector<ExprPtr> exprs_of(E... e) {
    std::vector<ExprPtr> out;
    (out.push_back(std::move(e)), ...);
    return out;
  }

  // h of std::move(h) (what a list stores, a handle, is the same), else e; stripped.
  const clang::Expr* unmoved(const clang::Expr* e) {
    e = strip(e);
    const auto* move = llvm::dyn_cast<clang::CallExpr>(e);
    if (move != nullptr && move->getNumArgs() == 1 && move->getDirectCallee() != nullptr &&
        move->getDirectCallee()->getQualifiedNameAsString() == "std::move")
      return strip(move->getArg(0));
    return e;
  }

  // `const <cxx> name = value;` of a variable the lowering makes, appended to `out`: its id.
  int declare_made(std::vector<StmtPtr>& out, const clang::Stmt* at, const std::string& name, ir::Type type,
                   const std::string& cxx, ExprPtr value) {
    const int id = generated_var(name, type, cxx);
    StmtPtr d = make(StmtKind::Decl, at);
    d->var = id;
    d->expr = std::move(value);
    out.push_back(std::move(d));
    return id;
  }

  // var = from; for the code the lowering writes (`at`: where it stands for).
  void assign_made(std::vector<StmtPtr>& out, const clang::Stmt* at, int var, int from) {
    StmtPtr st = make(StmtKind::Assign, at);
    st->var = var;
    st->text = "=";
    st->expr = ir::var_ref(f_, from);
    out.push_back(std::move(st));
  }

  // The construction of a vector of `n` copies of a tensor (`h(n, h0)`: h0) or of `n` empty ones
  // (`h(n)`: the ctor itself); null for other constructions.
  static const clang::Expr* filled_with(const clang::CXXConstructExpr* ctor) {
    if (ctor == nullptr || ctor->getNumArgs() == 0 || llvm::isa<clang::CXXDefaultArgExpr>(ctor->getArg(0)) ||
        !ctor->getArg(0)->getType()->isIntegerType())
      return nullptr;
    if (ctor->getNumArgs() >= 2 && is_fg_tensor(ctor->getArg(1)->getType())) return ctor->getArg(1);
    return ctor->getNumArgs() == 1 || llvm::isa<clang::CXXDefaultArgExpr>(ctor->getArg(1)) ? ctor : nullptr;
  }

  // std::vector<fg::Tensor> h(n, value);  ->  std::vector<fg::Tensor> h; { const fg::Tensor h_item__ =
  // value; for (int64_t h_index__ = 0; h_index__ < n; ++h_index__) h.push_back(h_item__); }
  // (the elements share value's memory, as the copies the constructor makes do; `h(n)` pushes an
  // empty tensor). False for other declarations.
  bool filled_list(const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) {
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
  const clang::VarDecl* joined_list(const clang::Expr* e) const {
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
  void hoist_init_captures(std::vector<StmtPtr>& out, const clang::Stmt* s) {
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
  void join_lists(std::vector<StmtPtr>& out, const clang::Stmt* s) {
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

  // v[i] = y; (also v.at(i), v.back(), v.front()) on a list  ->  { const fg::Tensor v_item__ = y;
  // const int64_t v_at__ = i; v[v_at__] = v_item__; } (ir::kListSet); null for other statements.
  StmtPtr assign_listed(const clang::Expr* e) {
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
  bool list_parameter_set(const clang::VarDecl* vd, const clang::Expr* e) {
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
  StmtPtr list_set(const clang::VarDecl* vd, const clang::Expr* e, ExprPtr index, ExprPtr value) {
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

  // std::vector<fg::Tensor> v;  ->  fg::Tensor v; int64_t v_size__ = 0;  (with {a, b}: fg::stack({a, b}) and 2)
  void declare_stacked(Stacked& v, const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) {
    v.var = generated_var(vd->getNameAsString(), ir::Type::Tensor, "fg::Tensor");
    f_.vars[static_cast<size_t>(v.var)].decl = vd;
    v.count = generated_var(vd->getNameAsString() + "_size__", ir::Type::Int, "int64_t");
    v.loops = loops_;
    StmtPtr d = make(StmtKind::Decl, ds);
    d->var = v.var;
    if (v.pieces) {  // = x.split(n, dim): x, n, dim and the count of pieces
      const clang::CXXRecordDecl* tensor = bare(v.pieces->tensor->getType())->getAsCXXRecordDecl();
      d->expr = lower_expr(v.pieces->tensor);
      out.push_back(std::move(d));
      if (!v.pieces->sizes) v.piece_n = int_local(vd->getNameAsString() + "_n__", lower_expr(v.pieces->n), ds, out);
      v.piece_dim = int_local(vd->getNameAsString() + "_dim__", piece_dim(*v.pieces), ds, out);
      StmtPtr c = make(StmtKind::Decl, ds);
      c->var = v.count;
      c->expr = piece_count(*v.pieces, ir::var_ref(f_, v.var), piece_n(v), ir::var_ref(f_, v.piece_dim), tensor);
      out.push_back(std::move(c));
      v.pushed = true;
      return;
    }
    if (v.slices_of != nullptr) {  // = x.unbind(dim): x.movedim(dim, 0), x.size(dim) slices
      const clang::CXXRecordDecl* tensor = bare(v.slices_of->getType())->getAsCXXRecordDecl();
      const auto dim = [&] { return v.slice_dim != nullptr ? lower_expr(v.slice_dim) : ir::opaque("0", ir::Type::Int); };
      std::vector<ExprPtr> moved, sized;
      moved.push_back(lower_expr(v.slices_of));
      moved.push_back(dim());
      moved.push_back(ir::opaque("0", ir::Type::Int));
      d->expr = method_call(tensor, "movedim", ir::Type::Tensor, std::move(moved));
      out.push_back(std::move(d));
      sized.push_back(ir::var_ref(f_, v.var));
      sized.push_back(ir::opaque("0", ir::Type::Int));
      StmtPtr c = make(StmtKind::Decl, ds);
      c->var = v.count;
      c->expr = method_call(tensor, "size", ir::Type::Int, std::move(sized));
      out.push_back(std::move(c));
      v.pushed = true;
      return;
    }
    size_t given = 0;
    if (const auto* list = llvm::dyn_cast_or_null<clang::InitListExpr>(vd->getInit() ? strip(vd->getInit()) : nullptr);
        list != nullptr && list->getNumInits() > 0) {
      ExprPtr items = make_expr(ExprKind::List, list);
      items->type = ir::Type::TensorList;
      for (const clang::Expr* item : list->inits()) items->args.push_back(lower_expr(item));
      given = list->getNumInits();
      std::vector<ExprPtr> args;
      args.push_back(std::move(items));
      args.push_back(ir::opaque("0", ir::Type::Int));
      d->expr = fg_call("stack", ir::Type::Tensor, std::move(args), {"tensors", "dim"});
      v.pushed = true;
    }
    out.push_back(std::move(d));
    StmtPtr c = make(StmtKind::Decl, ds);
    c->var = v.count;
    c->expr = ir::opaque(std::to_string(given), ir::Type::Int);
    out.push_back(std::move(c));
  }

  // v.push_back(e)  ->  { item = e.unsqueeze(0); v = v_size__ == 0 ? item : fg::cat({v, item}); v_size__ += 1; }
  // (as an if: the first push of a vector that none can precede is the plain assignment).
  StmtPtr push(Stacked& v, const clang::CXXMemberCallExpr* mc) {
    StmtPtr block = make(StmtKind::Block, mc);
    const clang::CXXRecordDecl* tensor = bare(mc->getArg(0)->getType())->getAsCXXRecordDecl();
    std::vector<ExprPtr> args;
    args.push_back(lower_expr(mc->getArg(0)));
    args.push_back(ir::opaque("0", ir::Type::Int));
    const int item = generated_var(f_.var(v.var).name + "_item__", ir::Type::Tensor, "fg::Tensor");
    StmtPtr d = make(StmtKind::Decl, mc);
    d->var = item;
    d->expr = tensor != nullptr ? method_call(tensor, "unsqueeze", ir::Type::Tensor, std::move(args)) : nullptr;
    block->body.push_back(std::move(d));
    const auto assign = [&](ExprPtr value) {
      StmtPtr a = make(StmtKind::Assign, mc);
      a->var = v.var;
      a->text = "=";
      a->expr = std::move(value);
      return a;
    };
    const auto appended = [&] {
      return cat_of(mc, exprs_of(ir::var_ref(f_, v.var), ir::var_ref(f_, item)), ir::opaque("0", ir::Type::Int));
    };
    if (!v.pushed && loops_ == v.loops) {
      block->body.push_back(assign(ir::var_ref(f_, item)));  // the first element
    } else {
      StmtPtr branch = make(StmtKind::If, mc);
      branch->expr = ir::binary("==", ir::var_ref(f_, v.count), ir::opaque("0", ir::Type::Int), ir::Type::Bool);
      branch->body.push_back(assign(ir::var_ref(f_, item)));
      branch->else_body.push_back(assign(appended()));
      branch->has_else = true;
      block->body.push_back(std::move(branch));
    }
    v.pushed = true;
    StmtPtr count = make(StmtKind::Assign, mc);
    count->var = v.count;
    count->text = "+=";
    count->expr = ir::opaque("1", ir::Type::Int);
    block->body.push_back(std::move(count));
    return block;
  }

  // `both(x)[0]`, `both(x).back()` of a helper that returns a list it built, a method of that
  // element (`both(x)[0].sum()`), or the list passed on (`fg::stack(both(x))`): reported (the list
  // must be a variable's).
  ExprPtr made_list_read(const clang::Expr* e) {
    const auto object_of = [&](const clang::Expr* x) -> const clang::Expr* {
      const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(x);
      const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(x);
      if (oc != nullptr && oc->getOperator() == clang::OO_Subscript) return strip(oc->getArg(0));
      return mc != nullptr ? strip(mc->getImplicitObjectArgument()) : nullptr;
    };
    const clang::Expr* object = object_of(e);
    const clang::FunctionDecl* f = list_maker(object);
    if (f == nullptr && object != nullptr) f = list_maker(object_of(object));
    if (const auto* call = llvm::dyn_cast<clang::CallExpr>(e); f == nullptr && call != nullptr && unmoved(call) == call)
      for (const clang::Expr* arg : call->arguments())  // `fg::stack(steps(x, n))`, `total(steps(x, n))`
        if ((f = list_maker(strip(arg))) != nullptr) break;
    if (f == nullptr) return nullptr;
    const std::string name = f->getNameAsString();
    unsupported(e, "the vector '" + name + "' returns is used where it is returned, which cannot be transformed yet; "
                   "store it in a variable first (auto v = " + name + "(...);)");
    return opaque(e);
  }

  // Reads of a stacked vector: v.size(), v.empty(), v[i], v.at(i), v.back(), v.front(), fg::stack(v[, 0 or 1]).
  ExprPtr stacked_read(const clang::Expr* e) {
    if (stacked_.empty()) return nullptr;
    const auto select = [&](const Stacked& v, ExprPtr index) {
      ExprPtr x = element_of(v, bare(e->getType())->getAsCXXRecordDecl(), std::move(index));
      x->range = e->getSourceRange();
      return x;
    };
    if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(e)) {
      Stacked* v = stacked_object(mc);
      if (v == nullptr) return nullptr;
      const std::string m = mc->getMethodDecl()->getNameAsString();
      if (m == "size") {  // size_t, as std::vector::size() (`i < v.size()` with a size_t i)
        ExprPtr x = make_expr(ExprKind::Cast, mc);
        x->text = "size_t";
        x->type = ir::Type::Int;
        x->args.push_back(ir::var_ref(f_, v->count));
        return x;
      }
      if (m == "empty") return ir::binary("==", ir::var_ref(f_, v->count), ir::opaque("0", ir::Type::Int), ir::Type::Bool);
      if (m == "front") return select(*v, ir::opaque("0", ir::Type::Int));
      if (m == "back")
        return select(*v, ir::binary("-", ir::var_ref(f_, v->count), ir::opaque("1", ir::Type::Int), ir::Type::Int));
      if (m == "at") return select(*v, lower_expr(mc->getArg(0)));
      unsupported(mc, "'" + m + "' on a vector funcgen holds stacked cannot be transformed");
      return opaque(mc);
    }
    if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e); oc != nullptr && oc->getOperator() == clang::OO_Subscript) {
      const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(strip(oc->getArg(0)));
      if (r == nullptr || stacked_.count(r->getDecl()) == 0) return nullptr;
      return select(stacked_.at(r->getDecl()), lower_expr(oc->getArg(1)));
    }
    const auto* call = llvm::dyn_cast<clang::CallExpr>(e);
    const std::string callee = call != nullptr && call->getDirectCallee() != nullptr
                                   ? call->getDirectCallee()->getQualifiedNameAsString() : "";
    if ((callee != "fg::stack" && callee != "fg::cat") || call->getNumArgs() == 0) return nullptr;
    const bool cat = callee == "fg::cat";
    const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(strip(call->getArg(0)));
    if (r == nullptr || stacked_.count(r->getDecl()) == 0) return nullptr;
    const Stacked& v = stacked_.at(r->getDecl());
    std::optional<llvm::APSInt> dim;
    if (call->getNumArgs() > 1 && !llvm::isa<clang::CXXDefaultArgExpr>(call->getArg(1)))
      dim = call->getArg(1)->getIntegerConstantExpr(context_);
    else
      dim = llvm::APSInt::get(0);
    if (!dim || (*dim != 0 && *dim != 1)) {
      unsupported(call, std::string(cat ? "concatenating" : "stacking") + " '" + r->getDecl()->getNameAsString() +
                            "' along a dim other than 0 or 1 cannot be transformed yet; " +
                            (cat ? "concatenate" : "stack") + " along 0 and move the dim with permute");
      return opaque(call);
    }
    const clang::CXXRecordDecl* tensor = bare(call->getType())->getAsCXXRecordDecl();
    if (cat) {  // the held [n, d0, d1, ...] with n merged into the dim: flatten(0, 1), or movedim(0, 1).flatten(1, 2)
      ExprPtr held = ir::var_ref(f_, v.var);
      if (*dim == 1) {
        std::vector<ExprPtr> moved;
        moved.push_back(std::move(held));
        moved.push_back(ir::opaque("0", ir::Type::Int));
        moved.push_back(ir::opaque("1", ir::Type::Int));
        held = method_call(tensor, "movedim", ir::Type::Tensor, std::move(moved));
      }
      std::vector<ExprPtr> args;
      args.push_back(std::move(held));
      args.push_back(ir::opaque(*dim == 0 ? "0" : "1", ir::Type::Int));
      args.push_back(ir::opaque(*dim == 0 ? "1" : "2", ir::Type::Int));
      return method_call(tensor, "flatten", ir::Type::Tensor, std::move(args));
    }
    if (*dim == 0) return ir::var_ref(f_, v.var);
    std::vector<ExprPtr> args;  // stacked along 1: the list's dim after the elements' first
    args.push_back(ir::var_ref(f_, v.var));
    args.push_back(ir::opaque("0", ir::Type::Int));
    args.push_back(ir::opaque("1", ir::Type::Int));
    return method_call(tensor, "transpose", ir::Type::Tensor, std::move(args));
  }

  // for (h : v) over a stacked vector: for (int64_t i = 0; i < v_size__; ++i) { h = v.select(0, i); body }
  StmtPtr indexed_stacked(const clang::CXXForRangeStmt* rs, const Stacked& v) {
    const clang::CXXRecordDecl* tensor = bare(rs->getLoopVariable()->getType())->getAsCXXRecordDecl();
    return index_loop(rs, "int64_t", ir::var_ref(f_, v.count),
                      [&](int index) { return element_of(v, tensor, ir::var_ref(f_, index)); });
  }

  // Element `index` of a vector held stacked: a slice of the held tensor, or a piece of it.
  ExprPtr element_of(const Stacked& v, const clang::CXXRecordDecl* tensor, ExprPtr index) {
    if (v.pieces)
      return piece_at(*v.pieces, ir::var_ref(f_, v.var), piece_n(v), ir::var_ref(f_, v.piece_dim), std::move(index));
    return select_of(tensor, v.var, ir::opaque("0", ir::Type::Int), std::move(index));
  }

  // The n of a vector of pieces: its variable, or a list of sizes as written (lowered again).
  ExprPtr piece_n(const Stacked& v) { return v.piece_n >= 0 ? ir::var_ref(f_, v.piece_n) : lower_expr(v.pieces->n); }

  // `const int64_t name = value;` (a generated local), appended to out; its variable.
  int int_local(const std::string& name, ExprPtr value, const clang::Stmt* at, std::vector<StmtPtr>& out) {
    const int var = generated_var(name, ir::Type::Int, "const int64_t");
    StmtPtr d = make(StmtKind::Decl, at);
    d->var = var;
    d->expr = std::move(value);
    out.push_back(std::move(d));
    return var;
  }

  // for (p : x.split(n, d)) body  ->  { const fg::Tensor held = x; for (int64_t i = 0; i < count; ++i) { p = piece i; body } }
  StmtPtr over_pieces(const clang::CXXForRangeStmt* rs, const Pieces& p) {
    const clang::VarDecl* var = rs->getLoopVariable();
    const clang::CXXRecordDecl* tensor = bare(p.tensor->getType())->getAsCXXRecordDecl();
    StmtPtr block = make(StmtKind::Block, rs);
    const int held = generated_var(var->getNameAsString() + "_pieces__", ir::Type::Tensor, "const fg::Tensor");
    StmtPtr src = make(StmtKind::Decl, rs->getRangeInit());
    src->var = held;
    src->expr = lower_expr(p.tensor);
    block->body.push_back(std::move(src));
    const int n = p.sizes ? -1 : int_local(var->getNameAsString() + "_n__", lower_expr(p.n), rs, block->body);
    const auto n_of = [&] { return n >= 0 ? ir::var_ref(f_, n) : lower_expr(p.n); };
    const int dim = int_local(var->getNameAsString() + "_dim__", piece_dim(p), rs, block->body);
    const int count = int_local(var->getNameAsString() + "_count__",
                                piece_count(p, ir::var_ref(f_, held), n_of(), ir::var_ref(f_, dim), tensor), rs,
                                block->body);
    block->body.push_back(index_loop(rs, "int64_t", ir::var_ref(f_, count), [&](int index) {
      return piece_at(p, ir::var_ref(f_, held), n_of(), ir::var_ref(f_, dim), ir::var_ref(f_, index));
    }));
    return block;
  }

  // tensor.select(dim, index) of the variable `tensor` (fg::Tensor is `record`).
  ExprPtr select_of(const clang::CXXRecordDecl* record, int tensor, ExprPtr dim, ExprPtr index) {
    std::vector<ExprPtr> args;
    args.push_back(ir::var_ref(f_, tensor));
    args.push_back(std::move(dim));
    args.push_back(std::move(index));
    return method_call(record, "select", ir::Type::Tensor, std::move(args));
  }

  // fg::op(args) (a free function of the runtime), with the overload that takes as many arguments.
  ExprPtr fg_call(const std::string& op, ir::Type type, std::vector<ExprPtr> args, std::vector<std::string> params) {
    auto x = std::make_unique<ir::Expr>();
    x->kind = ExprKind::Call;
    x->form = ir::CallForm::Free;
    x->op = op;
    x->type = type;
    x->range = args[0]->range;
    const bool ad = compat::starts_with(op, "ad::");
    const clang::DeclContext* scope = fg_namespace();
    if (ad)
      for (const clang::NamedDecl* d : fg_namespace()->lookup(&context_.Idents.get("ad")))
        if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(d)) scope = ns;
    for (const clang::NamedDecl* d : scope->lookup(&context_.Idents.get(ad ? op.substr(4) : op)))
      if (const auto* f = llvm::dyn_cast<clang::FunctionDecl>(d); f != nullptr && f->getNumParams() == args.size())
        x->callee = f;
    x->params = std::move(params);
    for (const auto& a : args) x->param_types.push_back(a->type);
    x->args = std::move(args);
    return x;
  }

  const clang::NamespaceDecl* fg_namespace() const {
    for (const clang::NamedDecl* d : context_.getTranslationUnitDecl()->lookup(&context_.Idents.get("fg")))
      if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(d)) return ns;
    return nullptr;
  }

  // ------------------------------------------------------------------ range-based for loops
  // `for (decl : range)` as the loop C++ defines it to be, over what funcgen can index: the slices
  // of a tensor (`x.unbind(0)`), a braced list (unrolled), or a named container of numbers.
  StmtPtr lower_range_for(const clang::CXXForRangeStmt* rs) {
    const clang::Expr* range = strip(rs->getRangeInit());
    if (const auto* list = llvm::dyn_cast<clang::InitListExpr>(range)) return unrolled(rs, list);
    const clang::Expr* dim = nullptr;
    if (const clang::Expr* tensor = unbound(range, dim)) return slices(rs, tensor, dim);
    if (const std::optional<Pieces> p = pieces_of(range)) return over_pieces(rs, *p);
    const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(range);
    if (ref != nullptr && resolve(ref, false) != nullptr) {
      unsupported(rs, "a range-based for loop over the parameter '" + ref->getDecl()->getNameAsString() +
                          "' cannot be transformed: funcgen passes its tensors one by one, so they must be read at "
                          "constant indices (" + ref->getDecl()->getNameAsString() + "[0], ...)");
      return nullptr;
    }
    if (ref != nullptr && stacked_.count(ref->getDecl()) != 0) return indexed_stacked(rs, stacked_.at(ref->getDecl()));
    if (list_maker(range) != nullptr) return over_made_list(rs, llvm::cast<clang::CallExpr>(range));
    const bool tensors = ref != nullptr && vars_.count(ref->getDecl()) != 0 &&
                         f_.var(vars_.at(ref->getDecl())).type == ir::Type::TensorList;
    if (ref != nullptr && (tensors || (!holds_tensors(ref->getType()) && random_access(ref->getType()))))
      return indexed(rs, ref, tensors);
    return nullptr;
  }

  // A container with size() and [] (std::vector, std::array; not a C array or a std::set).
  static bool random_access(clang::QualType t) {
    const clang::CXXRecordDecl* r = bare(t)->getAsCXXRecordDecl();
    if (r == nullptr || !r->hasDefinition()) return false;
    clang::ASTContext& ctx = r->getASTContext();
    return !r->lookup(&ctx.Idents.get("size")).empty() &&
           !r->lookup(ctx.DeclarationNames.getCXXOperatorName(clang::OO_Subscript)).empty();
  }

  // The tensor of `x.unbind(dim)` or `fg::unbind(x, dim)`, with its dim (null: 0).
  const clang::Expr* unbound(const clang::Expr* e, const clang::Expr*& dim) {
    const auto* call = llvm::dyn_cast<clang::CallExpr>(e);
    const clang::FunctionDecl* f = call != nullptr ? call->getDirectCallee() : nullptr;
    if (f == nullptr || f->getName() != "unbind" || !compat::starts_with(f->getQualifiedNameAsString(), "fg::")) return nullptr;
    const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(call);
    const unsigned first = mc != nullptr ? 0 : 1;
    if (call->getNumArgs() > first && !llvm::isa<clang::CXXDefaultArgExpr>(call->getArg(first))) dim = call->getArg(first);
    return mc != nullptr ? mc->getImplicitObjectArgument() : call->getArg(0);
  }

  // for (row : x.unbind(d)) body  ->  { const fg::Tensor rows = x; for (int64_t i = 0; i < rows.size(d); ++i) { row = rows.select(d, i); body } }
  StmtPtr slices(const clang::CXXForRangeStmt* rs, const clang::Expr* tensor, const clang::Expr* dim_expr) {
    const clang::VarDecl* var = rs->getLoopVariable();
    const auto dim = [&] { return dim_expr != nullptr ? lower_expr(dim_expr) : ir::opaque("0", ir::Type::Int); };
    StmtPtr block = make(StmtKind::Block, rs);
    const int source = generated_var(var->getNameAsString() + "_slices__", ir::Type::Tensor, "const fg::Tensor");
    StmtPtr src = make(StmtKind::Decl, rs->getRangeInit());
    src->var = source;
    src->expr = lower_expr(tensor);
    block->body.push_back(std::move(src));
    const clang::CXXRecordDecl* record = bare(tensor->getType())->getAsCXXRecordDecl();
    std::vector<ExprPtr> size_args;
    size_args.push_back(ir::var_ref(f_, source));
    size_args.push_back(dim());
    ExprPtr size = method_call(record, "size", ir::Type::Int, std::move(size_args));
    block->body.push_back(index_loop(rs, "int64_t", std::move(size),
                                     [&](int index) { return select_of(record, source, dim(), ir::var_ref(f_, index)); }));
    return block;
  }

  // for (int64_t i = 0; i < bound; ++i) { decl = item(i); body }: a range-based for over what can be
  // indexed (`item` makes the loop variable's value from the index).
  StmtPtr index_loop(const clang::CXXForRangeStmt* rs, const char* index_type, ExprPtr bound,
                     const std::function<ExprPtr(int)>& item) {
    const clang::VarDecl* var = rs->getLoopVariable();
    StmtPtr loop = make(StmtKind::For, rs);
    const int index = generated_var(var->getNameAsString() + "_index__", ir::Type::Int, index_type);
    StmtPtr init = make(StmtKind::Decl, rs);
    init->var = index;
    init->expr = ir::opaque("0", ir::Type::Int);
    loop->init.push_back(std::move(init));
    loop->expr = ir::binary("<", ir::var_ref(f_, index), std::move(bound), ir::Type::Bool);
    loop->step = ir::unary("++", ir::var_ref(f_, index), ir::Type::Int);
    StmtPtr decl = make(StmtKind::Decl, rs->getLoopVarStmt());
    decl->var = add_var(var, var->getType());
    decl->expr = item(index);
    loop->body.push_back(std::move(decl));
    ++loops_;
    for (StmtPtr& b : lower_body(rs->getBody())) loop->body.push_back(std::move(b));
    --loops_;
    return loop;
  }

  // for (w : {a, b, c}) body  ->  { w = a; body } { w = b; body } ... (a loop with break or continue
  // cannot be unrolled so).
  StmtPtr unrolled(const clang::CXXForRangeStmt* rs, const clang::InitListExpr* list) {
    if (has_jump(rs->getBody())) return nullptr;
    StmtPtr block = make(StmtKind::Block, rs);
    const clang::VarDecl* var = rs->getLoopVariable();
    // The list is made before the first trip: its items are evaluated first (literals need not be).
    std::vector<ExprPtr> items;
    for (const clang::Expr* item : list->inits()) {
      ExprPtr value = lower_expr(item);
      if (llvm::isa<clang::IntegerLiteral>(strip(item)) || llvm::isa<clang::FloatingLiteral>(strip(item)) ||
          (llvm::isa<clang::UnaryOperator>(strip(item)) && value->kind == ExprKind::Opaque && value->reads.empty())) {
        items.push_back(std::move(value));
        continue;
      }
      const ir::Type type = ir_type_of(item->getType());
      const int held = generated_var(var->getNameAsString() + "_item" + std::to_string(items.size()) + "__", type,
                                     type == ir::Type::Tensor ? "fg::Tensor" : "const auto");
      StmtPtr d = make(StmtKind::Decl, item);
      d->var = held;
      d->expr = std::move(value);
      block->body.push_back(std::move(d));
      items.push_back(ir::var_ref(f_, held));
    }
    for (ExprPtr& item : items) {
      StmtPtr trip = make(StmtKind::Block, rs);
      StmtPtr decl = make(StmtKind::Decl, rs->getLoopVarStmt());
      decl->var = add_var(var, var->getType());
      decl->expr = std::move(item);
      trip->body.push_back(std::move(decl));
      for (StmtPtr& b : lower_body(rs->getBody())) trip->body.push_back(std::move(b));
      block->body.push_back(std::move(trip));
    }
    return block;
  }

  // A break or continue of the loop whose body `s` is (not of a loop or switch inside it).
  static bool has_jump(const clang::Stmt* s) {
    if (s == nullptr) return false;
    if (llvm::isa<clang::BreakStmt>(s) || llvm::isa<clang::ContinueStmt>(s)) return true;
    if (llvm::isa<clang::ForStmt>(s) || llvm::isa<clang::WhileStmt>(s) || llvm::isa<clang::DoStmt>(s) ||
        llvm::isa<clang::CXXForRangeStmt>(s) || llvm::isa<clang::SwitchStmt>(s))
      return false;
    for (const clang::Stmt* c : s->children())
      if (has_jump(c)) return true;
    return false;
  }

  // for (w : weights) body over a named container of numbers or a local std::vector of tensors ->
  // for (size_t i = 0; i < weights.size(); ++i) { w = weights[i]; body }
  StmtPtr indexed(const clang::CXXForRangeStmt* rs, const clang::DeclRefExpr* range, bool tensors) {
    const clang::VarDecl* var = rs->getLoopVariable();
    std::vector<int> unused;
    const std::string container = with_leaves(range, text_of(range), unused);
    ExprPtr size = ir::opaque(container + ".size()", ir::Type::Int);
    size->range = range->getSourceRange();
    if (!tensors) record_uses(range, *size);  // a list's length is the same in every example
    StmtPtr loop = index_loop(rs, "size_t", std::move(size), [&](int index) {
      if (tensors) {  // the element, as the lowering makes `v[i]` of a vector of tensors
        ExprPtr x = ir::element(ir::var_ref(f_, vars_.at(range->getDecl())), ir::var_ref(f_, index));
        x->range = range->getSourceRange();
        x->ast = range;
        return x;
      }
      ExprPtr x = ir::opaque(container + "[" + f_.var(index).name + "]", ir_type_of(var->getType()));
      record_uses(range, *x);
      x->reads.push_back(index);
      return x;
    });
    if (tensors && non_const_reference(var->getType())) write_back_element(*loop, rs, range);
    return loop;
  }

  // `for (auto& t : v)` over a list of tensors binds `t` to each element in turn: the loop holds the
  // element in a variable, and each statement that writes it (an assignment, a write in place, a
  // helper's reference parameter) is followed by the element's assignment v[i] = t, a list
  // operation, so that AD and vmap see the element change where C++ does.
  void write_back_element(ir::Stmt& loop, const clang::CXXForRangeStmt* rs, const clang::DeclRefExpr* range) {
    const int list = vars_.at(range->getDecl()), index = loop.init[0]->var, item = vars_.at(rs->getLoopVariable());
    const auto set = [&] {
      StmtPtr st = make(StmtKind::Eval, rs->getLoopVarStmt());
      st->expr = ir::tape_op(f_, ir::kListSet, {list, index, item}, ir::Type::Void);
      st->expr->range = rs->getLoopVariable()->getSourceRange();
      return st;
    };
    const auto reads_item = [&](const ir::Expr& e) {
      bool found = false;
      ir::for_each_expr(e, [&](const ir::Expr& x) { found = found || (x.kind == ExprKind::VarRef && x.var == item); });
      return found;
    };
    // C++ binds `t` to the element itself: a write to the vector in the trip would change `t` too.
    const auto writes_list = [&](const ir::Stmt& st) {
      if (st.kind != StmtKind::Eval || !st.expr) return false;
      bool found = false;
      ir::for_each_expr(*st.expr, [&](const ir::Expr& x) {
        found = found || (x.op == ir::kListSet && ir::is_tape_op(x) && x.reads[0] == list) ||
                (x.kind == ExprKind::Call && x.form == ir::CallForm::User &&
                 std::any_of(x.args.begin(), x.args.end(), [&](const ExprPtr& a) { return a->kind == ExprKind::VarRef && a->var == list; }));
      });
      return found;
    };
    std::function<void(std::vector<StmtPtr>&)> after_writes = [&](std::vector<StmtPtr>& body) {
      for (size_t i = 0; i < body.size(); ++i) {
        ir::Stmt& st = *body[i];
        if (writes_list(st)) {
          const std::string v = range->getDecl()->getNameAsString();
          unsupported(st.ast, "'" + v + "' cannot be changed inside a range-based for loop that binds its elements "
                              "by reference ('" + rs->getLoopVariable()->getNameAsString() + "'); loop over an index "
                              "instead (for (size_t i = 0; i < " + v + ".size(); ++i))");
          return;
        }
        if (st.step && reads_item(*st.step)) {
          unsupported(st.ast, "a loop whose step uses '" + rs->getLoopVariable()->getNameAsString() + "', an element "
                              "of '" + range->getDecl()->getNameAsString() + "' bound by reference, cannot be "
                              "transformed; change it in the loop's body");
          return;
        }
        after_writes(st.body);
        after_writes(st.else_body);
        const bool writes = (st.kind == StmtKind::Assign && st.var == item) ||
                            (st.kind == StmtKind::Eval && st.expr && reads_item(*st.expr));
        if (writes) body.insert(body.begin() + static_cast<std::ptrdiff_t>(++i), set());
      }
    };
    after_writes(loop.body);
  }

  // for (p : pieces(n)) body  ->  { std::vector<fg::Tensor> p_items__ = pieces(n); for (size_t i = 0;
  // i < p_items__.size(); ++i) { p = p_items__[i]; body } }: the list a helper or lambda built.
  StmtPtr over_made_list(const clang::CXXForRangeStmt* rs, const clang::CallExpr* call) {
    const std::string name = numbered(rs->getLoopVariable()->getNameAsString(), "_items__") + "_items__";
    const int list = generated_var(name, ir::Type::TensorList, "std::vector<fg::Tensor>");
    StmtPtr block = make(StmtKind::Block, rs);
    StmtPtr d = make(StmtKind::Decl, call);
    d->var = list;
    d->expr = lower_expr(call);
    block->body.push_back(std::move(d));
    ExprPtr size = ir::opaque(name + ".size()", ir::Type::Int);
    size->range = call->getSourceRange();
    block->body.push_back(index_loop(rs, "size_t", std::move(size), [&](int index) {
      ExprPtr x = ir::element(ir::var_ref(f_, list), ir::var_ref(f_, index));
      x->range = call->getSourceRange();
      return x;
    }));
    return block;
  }

  // `base` + `suffix`, numbered after `base` where the function has a variable of that name already.
  std::string numbered(const std::string& base, const std::string& suffix) const {
    std::string name = base;
    for (int n = 2; std::any_of(f_.vars.begin(), f_.vars.end(), [&](const ir::Var& v) { return v.name == name + suffix; }); ++n)
      name = base + std::to_string(n);
    return name;
  }

  int generated_var(const std::string& name, ir::Type type, const std::string& cxx_type) {
    return ir::add_var(f_, name, type, cxx_type);
  }

  // self.op(args...) on fg::Tensor (`record`), with the overload that takes as many arguments.
  static ExprPtr method_call(const clang::CXXRecordDecl* record, const std::string& op, ir::Type type,
                             std::vector<ExprPtr> args) {
    auto x = std::make_unique<ir::Expr>();
    x->kind = ExprKind::Call;
    x->form = ir::CallForm::Method;
    x->op = op;
    x->type = type;
    x->range = args[0]->range;
    for (const clang::NamedDecl* d : record->lookup(&record->getASTContext().Idents.get(op)))
      if (const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(d); m != nullptr && m->getNumParams() == args.size() - 1) {
        x->callee = m;
        x->params.push_back("self");
        x->param_types.push_back(ir::Type::Tensor);
        for (const clang::ParmVarDecl* p : m->parameters()) {
          x->params.push_back(p->getNameAsString());
          x->param_types.push_back(ir_type_of(p->getType()));
        }
      }
    x->args = std::move(args);
    return x;
  }

  // A statement kind the lowering has no IR for, as a C++ user calls it.
  static std::string statement_words(const clang::Stmt* s) {
    if (llvm::isa<clang::CXXForRangeStmt>(s)) return "a range-based for loop";
    if (llvm::isa<clang::CXXTryStmt>(s)) return "a try block";
    if (llvm::isa<clang::AsmStmt>(s)) return "inline assembly";
    if (llvm::isa<clang::CoroutineBodyStmt>(s) || llvm::isa<clang::CoreturnStmt>(s)) return "a coroutine statement";
    return "this statement";
  }
  static std::string statement_advice(const clang::Stmt* s) {
    if (llvm::isa<clang::CXXForRangeStmt>(s))
      return "loop over an index instead (for (size_t i = 0; i < v.size(); ++i) ... v[i])";
    if (llvm::isa<clang::CXXTryStmt>(s)) return "handle errors outside the transformed function";
    return "write it with if, loops and fg ops";
  }

  // `case 1: stmt` becomes a Block holding the label and the statement, so that blocks stay flat.
  StmtPtr flatten_label(StmtPtr label) {
    const clang::Stmt* sub = pending_after_label_;
    pending_after_label_ = nullptr;
    StmtPtr block = std::make_unique<ir::Stmt>();
    block->kind = StmtKind::Block;
    block->range = label->range;
    block->text = "label";
    block->body.push_back(std::move(label));
    append(block->body, sub);
    return block;
  }

  // assert(cond): the condition is lowered (under vmap, x.dim() is each example's), and the
  // statement printed as assert(...) again, so that NDEBUG decides when the generated code is built.
  // (Its text as written would read the batched tensors if funcgen saw NDEBUG and the build not.)
  bool is_assert(const clang::Expr* e) const {
    for (clang::SourceLocation loc = e->getBeginLoc(); loc.isMacroID(); loc = sm_.getImmediateMacroCallerLoc(loc))
      if (clang::Lexer::getImmediateMacroName(loc, sm_, context_.getLangOpts()) == "assert") return true;
    return false;
  }

  StmtPtr lower_assert(const clang::Expr* e) {
    // With NDEBUG the macro expands to no condition: nothing to run.
    const auto* check = llvm::dyn_cast<clang::ConditionalOperator>(strip(e));
    if (check == nullptr) return nullptr;
    const clang::Expr* cond = check->getCond()->IgnoreImpCasts();
    if (const auto* cast = llvm::dyn_cast<clang::CXXStaticCastExpr>(cond)) cond = cast->getSubExpr();
    if (!sm_.isMacroArgExpansion(cond->getBeginLoc())) {
      unsupported(e, "this assert cannot be transformed; check the condition with an if before calling the function");
      return nullptr;
    }
    StmtPtr st = make(StmtKind::Eval, e);
    ExprPtr call = make_expr(ExprKind::Call, e);
    call->form = ir::CallForm::External;
    call->op = "assert";
    call->args.push_back(lower_expr(cond));
    call->params.push_back("");
    call->param_types.push_back(call->args.back()->type);
    st->expr = std::move(call);
    return st;
  }

  // std::tie(a, b) = e;  ->  { auto [a_tied__, b_tied__] = e; a = a_tied__; b = b_tied__; }
  // (std::ignore takes its element nowhere).
  StmtPtr lower_tie(const clang::Expr* e, const clang::CallExpr* tie, const clang::Expr* value) {
    StmtPtr block = make(StmtKind::Block, e);
    StmtPtr bind = make(StmtKind::Bind, e);
    bind->text = "auto";
    bind->expr = lower_expr(value);
    std::vector<StmtPtr> assigns;
    for (const clang::Expr* arg : tie->arguments()) {
      const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(strip(arg));
      auto it = ref != nullptr ? vars_.find(ref->getDecl()) : vars_.end();
      const bool ignored = ref != nullptr && ref->getDecl()->getQualifiedNameAsString() == "std::ignore";
      if (!ignored && it == vars_.end()) {
        unsupported(arg, "std::tie of something other than a local variable or std::ignore cannot be transformed; "
                         "bind the values with auto [a, b] = ... and assign them");
        return nullptr;
      }
      const std::string name = ignored ? "ignored" + std::to_string(bind->vars.size()) : f_.var(it->second).name;
      const ir::Type type = ignored ? element_type(value->getType(), bind->vars.size()) : f_.var(it->second).type;
      const int tied = generated_var(name + "_tied__", type, "auto");
      bind->vars.push_back(tied);
      if (ignored) continue;
      StmtPtr a = make(StmtKind::Assign, e);
      a->var = it->second;
      a->text = "=";
      a->expr = ir::var_ref(f_, tied);
      assigns.push_back(std::move(a));
    }
    block->body.push_back(std::move(bind));
    for (StmtPtr& a : assigns) block->body.push_back(std::move(a));
    return block;
  }

  // The IR type of element `i` of a std::tuple or std::pair type (Other where it is not one).
  static ir::Type element_type(clang::QualType t, size_t i) {
    const auto* spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(bare(t)->getAsCXXRecordDecl());
    if (spec == nullptr) return ir::Type::Other;
    std::vector<clang::QualType> items;
    for (const clang::TemplateArgument& a : spec->getTemplateArgs().asArray()) {
      if (a.getKind() == clang::TemplateArgument::Pack) {
        for (const clang::TemplateArgument& p : a.pack_elements()) items.push_back(p.getAsType());
      } else if (a.getKind() == clang::TemplateArgument::Type) {
        items.push_back(a.getAsType());
      }
    }
    return i < items.size() ? ir_type_of(items[i]) : ir::Type::Other;
  }

  StmtPtr lower_expr_stmt(const clang::Expr* e) {
    if (is_assert(e)) return lower_assert(e);
    if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(strip(e))) {
      if (Stacked* v = stacked_object(mc); v != nullptr && is_push(mc)) return push(*v, mc);
      if (Stacked* v = stacked_object(mc); v != nullptr && mc->getMethodDecl()->getName() == "reserve")
        return make(StmtKind::Block, e);  // no storage to reserve: an empty block
      if (const clang::VarDecl* v = listed_object(mc); v != nullptr && is_push(mc)) return push_listed(v, mc);
      if (listed_object(mc) != nullptr && mc->getMethodDecl()->getName() == "reserve")
        return opaque_stmt(e);  // kept: it only sizes the storage
    }
    if (StmtPtr st = assign_listed(e)) return st;
    if (StmtPtr st = lower_swap(e)) return st;
    // var = expr / var op= expr on a local: an assignment, whatever the type.
    const clang::Expr* lhs = nullptr;
    const clang::Expr* rhs = nullptr;
    std::string op;
    assignment_sides(e, lhs, rhs, op);
    if (lhs != nullptr && op == "=")
      if (const auto* tie = llvm::dyn_cast<clang::CallExpr>(strip(lhs));
          tie != nullptr && tie->getDirectCallee() != nullptr && tie->getDirectCallee()->getQualifiedNameAsString() == "std::tie")
        return lower_tie(e, tie, rhs);
    if (lhs != nullptr) {
      if (const pytree::Tree* leaf = resolve(lhs, false); leaf != nullptr && leaf->is_leaf() && writable(*leaf, e)) {
        StmtPtr st = make(StmtKind::Assign, e);  // `s.h = ...;`: its leaf's variable
        st->var = leaf->var;
        st->text = op;
        st->expr = lower_expr(rhs);
        return st;
      }
      if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(lhs->IgnoreParenImpCasts())) {
        if (auto it = vars_.find(ref->getDecl()); it != vars_.end()) {
          StmtPtr st = make(StmtKind::Assign, e);
          st->var = it->second;
          st->text = op;
          st->expr = lower_expr(rhs);
          return st;
        }
      }
    }
    if (lhs != nullptr && op == "=")
      if (const auto* get = llvm::dyn_cast<clang::CallExpr>(strip(lhs)); get != nullptr && get->getDirectCallee() != nullptr &&
                                                                      get->getDirectCallee()->getQualifiedNameAsString() == "std::get" &&
                                                                      ir_type_of(get->getArg(0)->getType()) == ir::Type::TensorTuple) {
        unsupported(e, "an element of the std::tuple '" + text_of(get->getArg(0)) + "' cannot be assigned yet; hold the "
                       "tensors in a struct, std::pair or std::array (funcgen keeps each in a variable of its own) or "
                       "in separate variables");
        return nullptr;
      }
    if (!helper_call(e) && !needs_ir(e)) return opaque_stmt(e);
    StmtPtr st = make(StmtKind::Eval, e);
    st->expr = lower_expr(e);
    return st;
  }

  // ------------------------------------------------------------------ expressions

  ExprPtr make_expr(ExprKind kind, const clang::Expr* e) {
    auto x = std::make_unique<ir::Expr>();
    x->kind = kind;
    x->ast = e;
    x->range = e->getSourceRange();
    x->type = ir_type_of(e->getType());
    return x;
  }

  // `e` as text, where an error was reported: its parts are not reported again.
  ExprPtr reported(const clang::Expr* e) {
    ExprPtr x = make_expr(ExprKind::Opaque, e);
    x->text = text_of(e);
    return x;
  }

  ExprPtr opaque(const clang::Expr* e) {
    ExprPtr x = make_expr(ExprKind::Opaque, e);
    record_uses(e, *x);
    x->text = with_leaves(e, text_of(e), x->reads);
    leaf_writes(e, x->writes);
    // strip() took off its parentheses; a comma expression needs them wherever it is printed
    // (`int k = (i++, j);` is not `int k = i++, j;`).
    if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e); b != nullptr && b->isCommaOp()) x->text = "(" + x->text + ")";
    return x;
  }

  // Removes what the source does not spell: implicit casts, temporaries, copies and conversions
  // into the runtime's parameter types (fg::Scalar, IntArrayRef, std::optional).
  const clang::Expr* strip(const clang::Expr* e) {
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
      if (const auto* f = llvm::dyn_cast<clang::CXXFunctionalCastExpr>(e);
          f != nullptr && (is_fg_tensor(f->getType()) || record_name(f->getType()) == "fg::Scalar")) {
        e = f->getSubExpr();
        continue;
      }
      return e;
    }
  }

  ExprPtr lower_expr(const clang::Expr* original) {
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

  // Why an expression on tensors has no IR, and what to write instead, in C++ words.
  static std::string expression_problem(const clang::Expr* e) {
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

  // `fill_defaults`: a helper of the file is called with every argument, defaults written out (its
  // generated versions have no defaults); an fg op's defaults are left to it.
  // `packing`: that of the arguments already passed (a member function's object).
  void add_args(ir::Expr& x, const clang::FunctionDecl* callee, llvm::ArrayRef<const clang::Expr*> args,
                bool fill_defaults = false, std::vector<std::string> packing = {}) {
    bool structured = !packing.empty();
    for (unsigned i = 0; i < args.size(); ++i) {
      const auto* given_default = llvm::dyn_cast<clang::CXXDefaultArgExpr>(args[i]);
      if (given_default != nullptr && !fill_defaults) break;
      packing.emplace_back();
      if (x.form == ir::CallForm::User && i < callee->getNumParams())
        if (const clang::CXXRecordDecl* closure = closure_of(callee->getParamDecl(i)->getType())) {
          structured = true;
          packing.back() = pass_lambda(args[i], closure, callee, x);
          continue;
        }
      if (x.form == ir::CallForm::User && i < callee->getNumParams() &&
          pytree::parameter_tree_of(callee->getParamDecl(i)->getType(), context_).has_value() &&
          !list_parameter(callee->getParamDecl(i), callee->getBody())) {
        structured = true;
        const pytree::Tree* wanted = callee_tree(callee, i, x.absent);
        pytree::Tree* given = resolve(args[i], false);
        if (wanted == nullptr) return;
        if ((given == nullptr || given->kind != pytree::Tree::Kind::Optional) &&
            wanted->kind == pytree::Tree::Kind::Optional) {  // std::nullopt, or a tensor
          if (!wanted->children.empty()) {
            x.args.push_back(lower_expr(given_default != nullptr ? given_default->getExpr() : args[i]));
            x.params.push_back(callee->getParamDecl(i)->getNameAsString());
            x.param_types.push_back(ir::Type::Tensor);
          }
          packing.back() = packing_of(*wanted);
          continue;
        }
        if (given == nullptr && pass_list(args[i], *wanted, x)) {
          packing.back() = packing_of(*wanted);
          continue;
        }
        const auto* list_ref = llvm::dyn_cast<clang::DeclRefExpr>(strip(args[i]));
        if (given == nullptr && list_ref != nullptr && vars_.count(list_ref->getDecl()) != 0 &&
            f_.var(vars_.at(list_ref->getDecl())).type == ir::Type::TensorList) {
          unsupported(args[i], "'" + callee->getNameAsString() + "' reads its vector parameter '" +
                                   callee->getParamDecl(i)->getNameAsString() + "' only at constant indices, so funcgen "
                                   "passes it element by element, but '" + list_ref->getDecl()->getNameAsString() +
                                   "' here is read at run-time indices; pass the elements it reads, or index the "
                                   "vector in '" + callee->getNameAsString() + "' in a loop too");
          continue;
        }
        if (given == nullptr && local_tree(callee->getParamDecl(i)->getType())) {  // `cell(p, x, State{h, c})`
          std::vector<ExprPtr> leaves;
          flatten_value(args[i], *wanted, leaves);
          for (ExprPtr& leaf : leaves) {
            x.params.push_back(callee->getParamDecl(i)->getNameAsString() + "_" + std::to_string(x.args.size()));
            x.param_types.push_back(leaf->type);
            x.args.push_back(std::move(leaf));
          }
          packing.back() = packing_of(*wanted);
          continue;
        }
        if (given == nullptr) {
          unsupported(args[i], "a structure passed to '" + callee->getNameAsString() +
                                   "' must be a variable or parameter of this function (or a part of one); funcgen "
                                   "passes its tensors one by one");
          continue;
        }
        if (non_const_reference(callee->getParamDecl(i)->getType())) writable(*given, args[i], true);  // passed on to be changed
        pass_leaves(*given, *wanted, args[i], x);
        packing.back() = packing_of(*wanted);
        continue;
      }
      if (x.form == ir::CallForm::User && i < callee->getNumParams() && non_const_reference(callee->getParamDecl(i)->getType()))
        if (const pytree::Tree* leaf = resolve(args[i], false); leaf != nullptr && leaf->is_leaf())
          writable(*leaf, args[i]);  // `accumulate(s.h, x)` of a `State& s`
      if (x.form != ir::CallForm::User && captures_tensors(args[i]->getType())) {  // std::count_if(b, e, pred)
        unsupported(args[i], "a lambda that captures tensors passed to '" + x.op + "' cannot be transformed: funcgen "
                             "transforms only the calls it sees, and under a transform the lambda would read the "
                             "tensors as they are not (the whole batch, or a value from before an assignment); call "
                             "the lambda in a loop of this function instead");
        continue;
      }
      x.args.push_back(lower_expr(given_default != nullptr ? given_default->getExpr() : args[i]));
      const clang::ParmVarDecl* p = callee != nullptr && i < callee->getNumParams() ? callee->getParamDecl(i) : nullptr;
      x.params.push_back(p != nullptr ? p->getNameAsString() : "");
      x.param_types.push_back(p != nullptr ? ir_type_of(p->getType()) : x.args.back()->type);
    }
    if (structured) x.packing = std::move(packing);
  }

  // A lambda passed to a helper (closure_parameter): the variables it captures are passed in its
  // place; the call printed as written passes the lambda (ir::kLambdaArg).
  std::string pass_lambda(const clang::Expr* arg, const clang::CXXRecordDecl* closure, const clang::FunctionDecl* callee,
                          ir::Expr& call) {
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
  std::optional<size_t> pass_captures(const clang::FunctionDecl* op, const clang::LambdaExpr* lambda, const clang::Expr* at,
                                      ir::Expr& call) {
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
  const clang::LambdaExpr* lambda_expr_of(const clang::Expr* e) {
    if (const auto* l = llvm::dyn_cast<clang::LambdaExpr>(e)) return l;
    const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e);
    const auto* vd = r != nullptr ? llvm::dyn_cast<clang::VarDecl>(r->getDecl()) : nullptr;
    return vd != nullptr && vd->getInit() != nullptr ? llvm::dyn_cast<clang::LambdaExpr>(strip(vd->getInit())) : nullptr;
  }

  // What `lambda` captures as `v` (the variable itself, or a copy of it).
  const clang::Expr* capture_init(const clang::LambdaExpr& lambda, const clang::ValueDecl* v) {
    auto init = lambda.capture_init_begin();
    for (auto c = lambda.capture_begin(); c != lambda.capture_end(); ++c, ++init) {
      if (c->capturesVariable() && c->getCapturedVar() == v && *init != nullptr) return strip(*init);  // (a copy stripped)
    }
    return nullptr;
  }

  // A braced list of tensors passed to a helper's vector parameter: its elements are the leaves
  // (as many as the helper reads).
  bool pass_list(const clang::Expr* arg, const pytree::Tree& wanted, ir::Expr& call) {
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

  // The text that rebuilds a helper's structured parameter from its leaves (ir::kPackedLeaf each).
  static std::string packing_of(pytree::Tree tree) {
    std::vector<pytree::Tree*> leaves;
    tree.leaves(leaves);
    for (pytree::Tree* l : leaves) l->source.clear();
    size_t next = 0;
    return pytree::build(tree, std::vector<std::string>(leaves.size(), std::string(1, ir::kPackedLeaf)), next);
  }

  bool is_structured_type(clang::QualType t) const { return pytree::tree_of(t, context_).has_value(); }

  static std::string template_args_of(const clang::FunctionDecl* fn, const clang::ASTContext& ctx) {
    const clang::TemplateArgumentList* targs = fn != nullptr ? fn->getTemplateSpecializationArgs() : nullptr;
    if (targs == nullptr) return "";
    std::string s = "<";
    for (unsigned i = 0; i < targs->size(); ++i) {
      if (i) s += ", ";
      if (targs->get(i).getKind() == clang::TemplateArgument::Type && closure_of(targs->get(i).getAsType()) != nullptr)
        return "";  // a lambda's type has no name: the arguments are deduced again
      if (targs->get(i).getKind() == clang::TemplateArgument::Type) s += cxx_spelling(targs->get(i).getAsType(), ctx);
      else if (targs->get(i).getKind() == clang::TemplateArgument::Integral)
        s += llvm::toString(targs->get(i).getAsIntegral(), 10);
    }
    return s + ">";
  }

  ExprPtr lower_member_call(const clang::CXXMemberCallExpr* mc) {
    const clang::CXXMethodDecl* method = mc->getMethodDecl();
    const clang::Expr* object = mc->getImplicitObjectArgument();
    if (const clang::FunctionDecl* callee = object != nullptr ? call_root(object) : nullptr) {
      if (!local_tree(callee->getReturnType())) {  // `named(x).at("a")` of a returned map
        ir::Expr call;
        structured_result_of(call, callee, object);
      } else if (structured_callee(strip(object)) != nullptr) {  // `ends(x).size()`
        unsupported(mc, "'" + method->getNameAsString() + "' of the structure '" + callee->getNameAsString() +
                            "' returns cannot be transformed; store it in a variable first");
      } else {
        return lower_member_call_on(mc, method, object);  // a method of a tensor read off the call
      }
      return reported(mc);
    }
    return lower_member_call_on(mc, method, object);
  }

  ExprPtr lower_member_call_on(const clang::CXXMemberCallExpr* mc, const clang::CXXMethodDecl* method,
                               const clang::Expr* object) {
    if (method != nullptr && object != nullptr &&
        (method->getName() == "reset" || method->getName() == "emplace" || method->getName() == "swap"))
      assigns_optional(mc, object);
    if (method != nullptr && object != nullptr && method->getName() == "value_or" && mc->getNumArgs() == 1)
      if (const pytree::Tree* t = resolve(object, false); t != nullptr && t->kind == pytree::Tree::Kind::Optional)
        return t->children.empty() ? lower_expr(mc->getArg(0)) : node_value(t->children[0], mc);
    if (method != nullptr && object != nullptr && !method->isStatic() && is_user_function(method))
      if (pytree::Tree* given = resolve(object, false)) return lower_method_call(mc, method, *given);
    if (method != nullptr && object != nullptr && ir_type_of(object->getType()) == ir::Type::TensorList &&
        (method->getName() == "size" || method->getName() == "empty"))
    {
      ExprPtr x = opaque(mc);  // a list's length is the same in every example (analyses/batching.cpp)
      x->op = ir::kListSize;
      return x;
    }
    if (method != nullptr && object != nullptr && ir_type_of(object->getType()) == ir::Type::TensorList &&
        (method->getName() == "front" || method->getName() == "back" || method->getName() == "at")) {
      // ws.front(), ws.back(), ws.at(i): the element ws[0], ws[ws.size() - 1], ws[i] (i checked)
      const std::string list = text_of(object);
      ExprPtr index;
      if (method->getName() == "at") {  // the index checked as at() checks it
        std::vector<ExprPtr> args;
        args.push_back(ir::opaque(list + ".size()", ir::Type::Int));
        args.push_back(lower_expr(mc->getArg(0)));
        index = ir::external_call("fg::ad::checked_index", std::move(args), ir::Type::Int);
      } else {
        index = ir::opaque(method->getName() == "front" ? "0" : list + ".size() - 1", ir::Type::Int);
      }
      ExprPtr x = ir::element(lower_expr(object), std::move(index));
      x->range = mc->getSourceRange();
      x->ast = mc;
      return x;
    }
    const bool through_optional = object != nullptr && object->getType()->isPointerType() &&
                                  is_fg_tensor(object->getType()->getPointeeType());  // b->sum() on an optional
    if (method == nullptr || object == nullptr || !(is_fg_tensor(object->getType()) || through_optional)) {
      const std::string name = method != nullptr ? "'" + method->getNameAsString() + "'" : "this member function";
      const std::string type = object != nullptr ? cxx_spelling(object->getType().getNonReferenceType().getUnqualifiedType(), context_) : "";
      const bool vector = type.rfind("std::vector", 0) == 0;
      unsupported(mc, name + " on a value of type '" + type + "' cannot be transformed; " +
                      (vector ? "build the vector of tensors with a braced list ({a, b}) and index it with []"
                              : "funcgen transforms fg::Tensor methods and calls of functions in this file"));
      return opaque(mc);
    }
    ExprPtr x = make_expr(ExprKind::Call, mc);
    x->form = ir::CallForm::Method;
    x->op = method->getNameAsString();
    x->callee = method;
    x->template_args = template_args_of(method, context_);
    x->args.push_back(lower_expr(object));
    x->params.push_back("self");
    x->param_types.push_back(ir::Type::Tensor);
    std::vector<const clang::Expr*> args(mc->arg_begin(), mc->arg_end());
    add_args(*x, method, args);
    return x;
  }

  // A helper that returns a struct, pair, array or nested tuple returns the flat tuple of its tensors
  // (its caller holds them leaf by leaf); one that returns a vector, map or optional is reported.
  bool structured_result_of(ir::Expr& x, const clang::FunctionDecl* callee, const clang::Expr* call) {
    if (!is_structured_type(callee->getReturnType())) return true;
    if (returns_list(callee)) {  // a vector it builds: a list, as its own lowering returns it
      x.type = ir::Type::TensorList;
      return true;
    }
    std::optional<pytree::Tree> t = local_tree(callee->getReturnType());
    if (!t && is_tensor_vector(callee->getReturnType())) {
      const std::string name = callee->getNameAsString();
      unsupported(call, "'" + name + "' returns a std::vector of tensors other than a local vector it fills, which "
                        "funcgen cannot take apart in its caller yet; declare the vector in '" + name + "' and return "
                        "it by name (std::vector<fg::Tensor> out{...}; return out;)");
      return false;
    }
    if (!t) {
      unsupported(call, "'" + callee->getNameAsString() + "' returns a std::map or std::optional of tensors, which "
                        "funcgen cannot take apart in its caller yet; return a struct, std::array or std::tuple of "
                        "tensors");
      return false;
    }
    x.type = t->tensors() == 1 ? ir::Type::Tensor : ir::Type::TensorTuple;
    if (!pytree::is_structured(*t)) return true;  // (a flat tuple of tensors is what the IR reads)
    std::vector<const pytree::Tree*> leaves;
    t->leaves(leaves);
    const std::vector<std::string> reads = pytree::leaf_accesses(*t, "result__");
    for (size_t i = 0; i < leaves.size() && i < reads.size(); ++i)
      if (leaves[i]->kind == pytree::Tree::Kind::Tensor) x.result_leaves.push_back(reads[i]);
    return true;
  }

  // `cell(p, x, s).h`, `std::get<1>(pair_of(x))`, `split(x)[0]`: a tensor of the structure a helper
  // returns, read off the flat tuple its call returns; nullptr where `e` reads no such part.
  ExprPtr call_part(const clang::Expr* e) {
    std::vector<std::variant<std::string, uint64_t>> path;  // outermost read first
    const clang::Expr* at = strip(e);
    const clang::FunctionDecl* callee = nullptr;
    while ((callee = structured_callee(at)) == nullptr) {
      if (const auto* m = llvm::dyn_cast<clang::MemberExpr>(at); m != nullptr && !m->isArrow()) {
        path.emplace_back(m->getMemberDecl()->getNameAsString());
        at = strip(m->getBase());
        continue;
      }
      const auto* call = llvm::dyn_cast<clang::CallExpr>(at);
      const clang::FunctionDecl* fn = call != nullptr ? call->getDirectCallee() : nullptr;
      const clang::TemplateArgumentList* targs = fn != nullptr ? fn->getTemplateSpecializationArgs() : nullptr;
      if (fn != nullptr && fn->getQualifiedNameAsString() == "std::get" && targs != nullptr &&
          targs->get(0).getKind() == clang::TemplateArgument::Integral) {
        path.emplace_back(targs->get(0).getAsIntegral().getZExtValue());
        at = strip(call->getArg(0));
        continue;
      }
      const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(at);
      std::optional<llvm::APSInt> i;
      if (oc != nullptr && oc->getOperator() == clang::OO_Subscript &&
          (i = oc->getArg(1)->getIntegerConstantExpr(context_)) && !i->isNegative()) {
        path.emplace_back(i->getZExtValue());
        at = strip(oc->getArg(0));
        continue;
      }
      if (const clang::FunctionDecl* c = oc != nullptr && oc->getOperator() == clang::OO_Subscript && !is_fg_tensor(oc->getArg(0)->getType())
                                             ? call_root(oc->getArg(0))
                                             : nullptr;
          c != nullptr && local_tree(c->getReturnType())) {
        unsupported(e, "the structure '" + c->getNameAsString() + "' returns is read at an index known only at run time; "
                       "read it at a constant index, or store it in a variable first");
        return reported(e);
      }
      return nullptr;
    }
    if (path.empty()) return nullptr;
    std::optional<pytree::Tree> tree = local_tree(callee->getReturnType());
    if (!tree) return nullptr;  // reported at the call
    const pytree::Tree* node = &*tree;
    size_t index = 0;  // the tensors before `node` in the flat tuple
    for (auto step = path.rbegin(); step != path.rend(); ++step) {
      if (node->is_leaf()) return nullptr;  // `pair_of(x).first[0]`: the tensor read here, indexed outside
      size_t k = node->children.size();
      if (const auto* key = std::get_if<std::string>(&*step))
        k = static_cast<size_t>(std::find(node->keys.begin(), node->keys.end(), *key) - node->keys.begin());
      else
        k = static_cast<size_t>(std::get<uint64_t>(*step));
      if (k >= node->children.size()) return nullptr;
      for (size_t j = 0; j < k; ++j) index += node->children[j].tensors();
      node = &node->children[k];
    }
    if (node->kind != pytree::Tree::Kind::Tensor) {
      unsupported(e, "a part of the structure '" + callee->getNameAsString() + "' returns that is not one tensor "
                     "cannot be read off its call; store the result in a variable first (auto r = " +
                     callee->getNameAsString() + "(...);)");
      return opaque(e);
    }
    ExprPtr call = lower_expr(at);
    if (tree->tensors() == 1) return call;
    ExprPtr x = ir::get(std::move(call), static_cast<int>(index));
    x->ast = e;
    x->range = e->getSourceRange();
    return x;
  }

  // `forward(x)` in another member function of the class (or `layer.forward(x)` on a structured
  // part): a helper whose first parameter is its object, passed leaf by leaf.
  // A functor's call `layer(x)` (its operator()) is the same.
  ExprPtr lower_method_call(const clang::CallExpr* mc, const clang::FunctionDecl* method, pytree::Tree& object) {
    const clang::FunctionDecl* callee = method->getDefinition();
    const std::vector<std::string> absent = absent_at(mc, callee, false);
    const pytree::Tree* wanted = object_tree(callee, absent);
    if (wanted == nullptr) return opaque(mc);  // reported by the callee's lowering
    ExprPtr x = make_expr(ExprKind::Call, mc);
    if (!structured_result_of(*x, callee, mc)) return reported(mc);
    x->form = ir::CallForm::User;
    x->callee = callee;
    x->absent = absent;
    x->op = callee->getNameAsString();
    x->template_args = template_args_of(callee, context_);
    const CallParts parts = parts_of(mc, callee);
    pass_leaves(object, *wanted, parts.object, *x);
    add_args(*x, callee, parts.args, true, {packing_of(*wanted)});
    return x;
  }

  // `square(x)` of a lambda variable of the body: a helper call, the captured variables passed first.
  ExprPtr lower_lambda_call(const clang::CXXOperatorCallExpr* oc, const clang::FunctionDecl* op) {
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

  // `x[i] = v`, `x.narrow(0, 1, 2) = 0.0`: an assignment to a temporary tensor (fg::Tensor's
  // rvalue operator=, as libtorch's) copies into its memory: the in-place `copy_(v)` (a number:
  // `fill_(v)`) of what the left side makes, so that AD functionalizes the write into the view and
  // vmap batches it as those ops. Null for other operator calls.
  ExprPtr assignment_into(const clang::CXXOperatorCallExpr* oc, const clang::FunctionDecl* callee) {
    const auto* assign = llvm::dyn_cast_or_null<clang::CXXMethodDecl>(callee);
    if (oc->getOperator() != clang::OO_Equal || oc->getNumArgs() != 2 || assign == nullptr ||
        assign->getRefQualifier() != clang::RQ_RValue || assign->getNumParams() != 1 ||
        !is_fg_tensor(context_.getRecordType(assign->getParent())))
      return nullptr;
    const bool number = !is_fg_tensor(assign->getParamDecl(0)->getType().getNonReferenceType());
    const std::string op = number ? "fill_" : "copy_";
    const clang::CXXMethodDecl* write = nullptr;
    for (const clang::NamedDecl* d : assign->getParent()->lookup(&context_.Idents.get(op)))
      if (const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(d); m != nullptr && m->getNumParams() == 1) write = m;
    if (write == nullptr) return nullptr;
    ExprPtr x = make_expr(ExprKind::Call, oc);
    x->form = ir::CallForm::Method;
    x->op = op;
    x->callee = write;
    x->type = ir::Type::Tensor;
    x->args.push_back(lower_expr(unmoved(oc->getArg(0))));  // (`std::move(y) = v` writes into y too)
    x->params.push_back("self");
    x->param_types.push_back(ir::Type::Tensor);
    std::vector<const clang::Expr*> value{unmoved(oc->getArg(1))};
    add_args(*x, write, value);
    return x;
  }

  ExprPtr lower_operator_call(const clang::CXXOperatorCallExpr* oc) {
    const auto* callee = llvm::dyn_cast_or_null<clang::FunctionDecl>(oc->getCalleeDecl());
    if (callee != nullptr && is_lambda(callee) && (is_user_function(callee) || names_textless(oc->getArg(0))))
      return lower_lambda_call(oc, callee);  // (one that holds no tensors where it cannot be named too)
    if (oc->getOperator() == clang::OO_Equal) assigns_optional(oc, oc->getArg(0));
    if (ExprPtr x = assignment_into(oc, callee)) return x;
    // `layer(x)` on a structured parameter (or part) whose class has an operator(): a member function call.
    if (callee != nullptr && oc->getOperator() == clang::OO_Call && is_instance_method(callee) && is_user_function(callee))
      if (pytree::Tree* given = resolve(oc->getArg(0), false)) return lower_method_call(oc, callee, *given);
    // A free operator function of this file (operator*(const Affine&, const fg::Tensor&)) is a
    // helper like any other: transformed with its caller.
    if (callee != nullptr && !llvm::isa<clang::CXXMethodDecl>(callee) && is_user_function(callee)) return lower_call(oc);
    const bool unary = oc->getNumArgs() == 1;
    const char* op = operator_op(oc->getOperator(), unary);
    const bool fg_operator = callee != nullptr && compat::starts_with(callee->getQualifiedNameAsString(), "fg::");
    if (op == nullptr || !fg_operator) {
      // An operator of other types (std::cout << x, v[i] on a std::vector of tensors, a functor's
      // call f(x)): an external call, printed as the operator (text) it is.
      const clang::OverloadedOperatorKind k = oc->getOperator();
      const auto* assigned = llvm::dyn_cast<clang::DeclRefExpr>(oc->getArg(0)->IgnoreParenImpCasts());
      const auto* global = assigned != nullptr ? llvm::dyn_cast<clang::VarDecl>(assigned->getDecl()) : nullptr;
      if (k == clang::OO_Equal && is_fg_tensor(oc->getArg(0)->getType()) &&
          (assigned == nullptr || vars_.count(assigned->getDecl()) == 0) &&
          !(global != nullptr && global->hasGlobalStorage())) {  // (funcgen-global-assignment's)
        // Every assignment funcgen follows was lowered before here (a structure's leaf, a list's
        // element, as a statement) or is of a variable (a loop's step `z = z * 0.5`, which AD
        // follows): this one would be printed as written and missed by the transforms.
        const std::string target = text_of(oc->getArg(0));
        unsupported(oc, element_assigned(oc->getArg(0)) ? "this assignment to '" + target + "' cannot be transformed; assign a local "
                                    "variable, an element of a local std::vector of tensors, or a member of a local "
                                    "struct"
                                  : "an assignment to '" + target + "' inside an expression cannot be transformed; "
                                    "assign it in a statement of its own");
        return opaque(oc);
      }
      if (k == clang::OO_Arrow || k == clang::OO_ArrowStar || ((k == clang::OO_PlusPlus || k == clang::OO_MinusMinus) && !unary)) {
        unsupported(oc, std::string("operator") + clang::getOperatorSpelling(k) +
                            " on an object that holds tensors cannot be transformed; index the tensors directly");
        return opaque(oc);
      }
      ExprPtr x = make_expr(ExprKind::Call, oc);
      x->form = ir::CallForm::External;
      x->callee = callee;
      x->text = clang::getOperatorSpelling(k);
      x->op = "operator" + x->text;
      std::vector<const clang::Expr*> args(oc->arg_begin(), oc->arg_end());
      add_args(*x, nullptr, args);
      return x;
    }
    if (*op == '\0') return lower_expr(oc->getArg(0));  // unary plus
    ExprPtr x = make_expr(ExprKind::Call, oc);
    x->form = ir::CallForm::Operator;
    x->op = op;
    x->callee = callee;
    x->text = clang::getOperatorSpelling(oc->getOperator());
    std::vector<const clang::Expr*> args(oc->arg_begin(), oc->arg_end());
    // Member operators (+=, []) take self implicitly; free ones name both parameters.
    if (llvm::isa<clang::CXXMethodDecl>(callee)) {
      x->args.push_back(lower_expr(args[0]));
      x->params.push_back("self");
      x->param_types.push_back(ir::Type::Tensor);
      add_args(*x, callee, llvm::ArrayRef<const clang::Expr*>(args).drop_front());
    } else {
      add_args(*x, callee, args);
    }
    return x;
  }

  ExprPtr lower_call(const clang::CallExpr* call) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    if (callee == nullptr) {
      unsupported(call, "calls through function pointers or lambdas cannot be transformed; call the function by its name");
      return opaque(call);
    }
    const std::string qname = callee->getQualifiedNameAsString();
    std::vector<const clang::Expr*> args(call->arg_begin(), call->arg_end());
    if (qname == "std::make_tuple" || qname == "std::tie" || qname == "std::make_pair" || qname == "std::forward_as_tuple") {
      ExprPtr x = make_expr(ExprKind::Tuple, call);
      for (const clang::Expr* a : args) x->args.push_back(lower_expr(a));
      return x;
    }
    if (qname == "std::get") {
      ExprPtr x = make_expr(ExprKind::Get, call);
      const clang::TemplateArgumentList* targs = callee->getTemplateSpecializationArgs();
      if (targs == nullptr || targs->size() == 0 || targs->get(0).getKind() != clang::TemplateArgument::Integral) {
        unsupported(call, "std::get by type cannot be transformed; use std::get<index>");
        return opaque(call);
      }
      x->index = static_cast<int>(targs->get(0).getAsIntegral().getExtValue());
      x->args.push_back(lower_expr(args[0]));
      return x;
    }
    ExprPtr x = make_expr(ExprKind::Call, call);
    x->callee = callee;
    x->op = callee->getNameAsString();
    x->template_args = template_args_of(callee, context_);
    const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(callee->getDeclContext());
    if (ns != nullptr && ns->getName() == "fg" && llvm::isa<clang::TranslationUnitDecl>(ns->getParent())) {
      x->form = ir::CallForm::Free;
      // An op's deduced template arguments stay deduced (fg::tensor({{1.0, 2.0}}) as written).
      const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(call->getCallee()->IgnoreParenImpCasts());
      if (ref != nullptr && !ref->hasExplicitTemplateArgs()) x->template_args.clear();
    } else if (is_user_function(callee)) {
      x->form = ir::CallForm::User;
      x->callee = callee->getDefinition();
      x->absent = absent_at(call, x->callee, false);
      if (!structured_result_of(*x, callee, call)) return reported(call);
    } else {
      x->form = ir::CallForm::External;
      x->op = qname;
      if (!writes_no_tensor_argument(call, callee, qname)) return reported(call);
    }
    add_args(*x, callee, args, x->form == ir::CallForm::User);
    return x;
  }

  // A function funcgen cannot see into that takes tensors by non-const reference may change them:
  // the transforms would miss it (std::swap of two variables is lowered as the assignments it makes).
  bool writes_no_tensor_argument(const clang::CallExpr* call, const clang::FunctionDecl* callee, const std::string& qname) {
    if (qname == "std::move" || qname == "std::forward" || qname == "std::tie" || qname == "std::as_const") return true;
    for (unsigned i = 0; i < call->getNumArgs() && i < callee->getNumParams(); ++i) {
      const clang::QualType t = callee->getParamDecl(i)->getType();
      if (!non_const_reference(t) || !holds_tensors(t.getNonReferenceType())) continue;
      unsupported(call->getArg(i), "'" + text_of(call->getCallee()) + "' takes '" + text_of(call->getArg(i)) + "' by non-const reference "
                                   "and may change it, which the transforms cannot follow (they see fg ops and the "
                                   "functions of this file); assign its result instead, or call it outside the "
                                   "transformed function");
      return false;
    }
    return true;
  }

  // std::swap(a, b) of two tensor variables  ->  { const fg::Tensor a_swap__ = a; a = b; b = a_swap__; }
  StmtPtr lower_swap(const clang::Expr* e) {
    const auto* call = llvm::dyn_cast<clang::CallExpr>(strip(e));
    const clang::FunctionDecl* f = call != nullptr ? call->getDirectCallee() : nullptr;
    if (f == nullptr || f->getQualifiedNameAsString() != "std::swap" || call->getNumArgs() != 2) return nullptr;
    int sides[2];
    for (unsigned i = 0; i < 2; ++i) {
      const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(call->getArg(i)->IgnoreParenImpCasts());
      auto it = r != nullptr ? vars_.find(r->getDecl()) : vars_.end();
      if (it == vars_.end() || f_.var(it->second).type != ir::Type::Tensor) return nullptr;
      sides[i] = it->second;
    }
    StmtPtr block = make(StmtKind::Block, e);
    const int held = declare_made(block->body, e, fresh_name(f_.var(sides[0]).name + "_swap"), ir::Type::Tensor,
                                  "const fg::Tensor", ir::var_ref(f_, sides[0]));
    assign_made(block->body, e, sides[0], sides[1]);
    assign_made(block->body, e, sides[1], held);
    return block;
  }

  ir::Function& f_;
  StructuredSignature& sig_;
  Lowering& lowering_;
  clang::ASTContext& context_;
  const clang::SourceManager& sm_;
  Reporter& reporter_;
  std::map<const clang::ValueDecl*, int> vars_;
  const clang::Stmt* pending_after_label_ = nullptr;
  std::map<std::string, std::string> template_values_;
  std::set<const clang::ValueDecl*> rejected_;  // reported where they are declared
  std::set<const clang::ValueDecl*> lambdas_;   // variables holding lambdas of the body, parameters passed one
  // Lambdas that no generated code can name: one a helper was passed or a lambda captures, and one
  // that captures such (ir::passes_lambda: their calls are always transformed).
  std::set<const clang::ValueDecl*> textless_;
  std::map<const clang::ValueDecl*, std::vector<int>> closure_vars_;  // a lambda parameter's captures (closure_parameter)
  std::map<const clang::ValueDecl*, Stacked> stacked_;  // vectors held stacked
  std::set<const clang::VarDecl*> listed_;  // vectors pushed to and read at run-time indices (ir::kListPush)
  std::map<const clang::FunctionDecl*, bool> returns_list_;  // returns_list's answers
  std::map<const clang::Expr*, int> joined_;  // fg::cat/fg::stack of a list -> the variable join_lists made
  size_t loops_ = 0;  // loops around the statement being lowered
  std::map<const clang::ValueDecl*, pytree::Tree> trees_;  // the structured parameters and locals
  std::set<const clang::ValueDecl*> local_trees_;          // those of trees_ that are locals (held leaf by leaf)
  // The leaves of a structure that a lambda this helper was passed captures (closure_parameter).
  std::map<const clang::ValueDecl*, std::vector<int>> captured_leaves_;
  bool names_collected_ = false;
  bool open_result_ = false;    // the result holds a map or vector: its keys or length come from the returns
  bool result_shaped_ = false;  // (by the first return lowered)
  std::optional<pytree::Tree> result_;                      // a structured result
  std::set<std::string> names_;                             // declared in the function
  std::set<const clang::Expr*> reported_indices_;
  std::set<const pytree::Tree*> assigned_optionals_;  // reported: their reads are not reported again
  const std::set<std::string> absent_;  // the optionals of the parameters that hold no tensor
  std::map<const clang::ValueDecl*, const clang::Expr*> aliases_;  // names of parts of structured parameters
  bool ok_ = true;
};

}  // namespace

namespace {

// Whether Clang found errors in the function (an undeclared name, a call that does not resolve):
// it has reported them, and the AST it kept for them (RecoveryExpr, bindings without types) is
// not code to transform.
bool has_compile_errors(const clang::FunctionDecl* fn) {
  if (fn->isInvalidDecl()) return true;
  struct Finder : clang::RecursiveASTVisitor<Finder> {
    bool found = false;
    bool VisitExpr(clang::Expr* e) {
      found |= e->containsErrors();
      return !found;
    }
    bool VisitDecl(clang::Decl* d) {
      found |= d->isInvalidDecl();
      if (const auto* dd = llvm::dyn_cast<clang::DecompositionDecl>(d)) {
        found |= dd->getInit() == nullptr;
        for (const clang::BindingDecl* b : dd->bindings()) found |= b->getType().isNull();
      }
      return !found;
    }
  } finder;
  finder.TraverseStmt(fn->getBody());
  return finder.found;
}

}  // namespace

bool StructuredSignature::structured() const {
  if (result) return true;
  for (const auto& p : params)
    if (p) return true;
  return false;
}

const ir::Function* Lowering::lower(const clang::FunctionDecl* fn, const std::vector<std::string>& absent) {
  fn = fn->getDefinition() != nullptr ? fn->getDefinition() : fn;
  const Key key{fn, fn == presence_.fn ? std::vector<std::string>(presence_.absent.begin(), presence_.absent.end()) : absent};
  if (auto it = done_.find(key); it != done_.end()) return it->second.get();
  if (failed_.count(key) != 0) return nullptr;
  if (lowering_.count(fn) != 0) {  // met again while it is lowered: its callers report nothing more
    const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(fn);
    reporter_.report("unsupported", fn->getLocation(),
                     (m != nullptr && m->getParent()->isLambda() ? std::string("a lambda")
                                                                 : "'" + fn->getNameAsString() + "'") +
                         " that calls itself (directly or through other functions) cannot be transformed; write the "
                         "recursion as a loop");
    return nullptr;
  }
  lowering_.insert(fn);
  auto f = std::make_unique<ir::Function>();
  StructuredSignature sig;
  const std::set<std::string> absent_set(key.second.begin(), key.second.end());
  const bool ok = !has_compile_errors(fn) && !reporter_.has_compile_error_in(fn->getSourceRange()) && FunctionLowerer(*f, sig, *this, context_, reporter_, absent_set).run(fn);
  lowering_.erase(fn);
  if (!ok) {
    failed_.insert(key);
    return nullptr;
  }
  signatures_[key] = std::move(sig);
  return done_.emplace(key, std::move(f)).first->second.get();
}

const StructuredSignature& Lowering::signature(const clang::FunctionDecl* fn, const std::vector<std::string>& absent) const {
  fn = fn->getDefinition() != nullptr ? fn->getDefinition() : fn;
  return signatures_.at(
      Key{fn, fn == presence_.fn ? std::vector<std::string>(presence_.absent.begin(), presence_.absent.end()) : absent});
}

}  // namespace funcgen
