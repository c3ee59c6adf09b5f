#include "frontend/lower/calls.h"

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

// The text that rebuilds a helper's structured parameter from its leaves (ir::kPackedLeaf each).
std::string packing_of(pytree::Tree tree) {
  std::vector<pytree::Tree*> leaves;
  tree.leaves(leaves);
  for (pytree::Tree* l : leaves) l->source.clear();
  size_t next = 0;
  return pytree::build(tree, std::vector<std::string>(leaves.size(), std::string(1, ir::kPackedLeaf)), next);
}

// Whether the helper is lowered for the length of the vector of structures that its parameter `p`
// is passed (StructureLowering::absent_at).
bool by_length(const std::vector<std::string>& absent, const clang::ParmVarDecl* p) {
  const std::string key = p->getNameAsString() + "#";
  return std::any_of(absent.begin(), absent.end(), [&](const std::string& a) { return a.rfind(key, 0) == 0; });
}

std::string template_args_of(const clang::FunctionDecl* fn, const clang::ASTContext& ctx) {
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

}  // namespace

// `fill_defaults`: a helper of the file is called with every argument, defaults written out (its
// generated versions have no defaults); an fg op's defaults are left to it.
// `packing`: that of the arguments already passed (a member function's object).
void CallLowering::add_args(ir::Expr& x, const clang::FunctionDecl* callee, llvm::ArrayRef<const clang::Expr*> args,
                            bool fill_defaults, std::vector<std::string> packing) {
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
        (pytree::parameter_tree_of(callee->getParamDecl(i)->getType(), context_).has_value() ||
         by_length(x.absent, callee->getParamDecl(i))) &&
        !list_parameter(callee->getParamDecl(i), callee->getBody())) {
      structured = true;
      const pytree::Tree* wanted = callee_tree(callee, i, x.absent, x.constants);
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
    if (x.form == ir::CallForm::User && i < callee->getNumParams() && points_to_tensor(callee->getParamDecl(i)->getType())) {
      pass_pointer(x, callee->getParamDecl(i), args[i]);
      continue;
    }
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

// `scale(&y, 3.0)` of a `void scale(fg::Tensor* p, double s)`: the helper takes p as a reference to
// y (DeclarationLowering::pointer_parameter), so it is passed y, or the tensor variable a pointer
// passed on points at; the address of anything else (an element, nullptr) is reported.
void CallLowering::pass_pointer(ir::Expr& x, const clang::ParmVarDecl* p, const clang::Expr* arg) {
  const clang::Expr* e = arg->IgnoreParenImpCasts();
  const auto* address = llvm::dyn_cast<clang::UnaryOperator>(e);
  if (address != nullptr && address->getOpcode() == clang::UO_AddrOf) e = address->getSubExpr()->IgnoreParenImpCasts();
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e);
  auto it = ref != nullptr ? vars_.find(ref->getDecl()) : vars_.end();
  const bool pointer = ref != nullptr && points_to_tensor(ref->getType());
  if (it == vars_.end() || f_.var(it->second).type != ir::Type::Tensor || (address != nullptr) == pointer) {
    const std::string helper = llvm::cast<clang::FunctionDecl>(p->getDeclContext())->getNameAsString();
    unsupported(arg, "'" + helper + "' takes a pointer to a tensor ('" + p->getNameAsString() + "'), which funcgen "
                     "follows where it is given the address of a tensor variable (&y) or a pointer that points at "
                     "one; copy it into a variable, pass that variable's address and assign it back");
    x.args.push_back(ir::opaque(text_of(arg), ir::Type::Tensor));
  } else {
    x.args.push_back(ir::var_ref(f_, it->second));
    x.args.back()->range = arg->getSourceRange();
  }
  x.params.push_back(p->getNameAsString());
  x.param_types.push_back(ir::Type::Tensor);
}

bool CallLowering::is_structured_type(clang::QualType t) const { return pytree::tree_of(t, context_).has_value(); }

ExprPtr CallLowering::lower_member_call(const clang::CXXMemberCallExpr* mc) {
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

ExprPtr CallLowering::lower_member_call_on(const clang::CXXMemberCallExpr* mc, const clang::CXXMethodDecl* method,
                                           const clang::Expr* object) {
  if (method != nullptr && object != nullptr &&
      (method->getName() == "reset" || method->getName() == "emplace" || method->getName() == "swap"))
    assigns_optional(mc, object);
  if (method != nullptr && object != nullptr && method->getName() == "value_or" && mc->getNumArgs() == 1)
    if (const pytree::Tree* t = resolve(object, false); t != nullptr && t->kind == pytree::Tree::Kind::Optional)
      return t->children.empty() ? lower_expr(mc->getArg(0)) : node_value(t->children[0], mc);
  if (method != nullptr && object != nullptr && method->isVirtual() && !qualified_call(mc))
    return lower_virtual_call(mc, method, object);
  if (method != nullptr && object != nullptr && !method->isStatic() && is_user_function(method))
    if (pytree::Tree* given = resolve(object, false)) return lower_method_call(mc, method, given);
  if (method != nullptr && object != nullptr && of_numbers_only(method, object, method->isVirtual() && qualified_call(mc)))
    return lower_method_call(mc, method, nullptr);
  if (method != nullptr && object != nullptr && (method->getName() == "size" || method->getName() == "empty") && !fixed_.empty())
    if (const pytree::Tree* t = resolve(object, false); t != nullptr && t->fixed) return opaque(mc);  // its length
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
bool CallLowering::structured_result_of(ir::Expr& x, const clang::FunctionDecl* callee, const clang::Expr* call) {
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
ExprPtr CallLowering::call_part(const clang::Expr* e) {
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
// `object` null: an object of only numbers (pass_constants).
ExprPtr CallLowering::lower_method_call(const clang::CallExpr* mc, const clang::FunctionDecl* method, pytree::Tree* object,
                                        const clang::Expr* object_expr) {
  const clang::FunctionDecl* callee = method->getDefinition();
  const std::vector<std::string> absent = object != nullptr ? absent_at(mc, callee, false) : std::vector<std::string>{};
  const pytree::Tree* wanted = object_tree(callee, absent);
  if (wanted == nullptr) return opaque(mc);  // reported by the callee's lowering
  ExprPtr x = make_expr(ExprKind::Call, mc);
  if (returns_its_object(callee)) {  // `a += y;`: its flat function returns nothing
    if (!statement_of_its_own(mc)) {
      unsupported(mc, "the reference to '" + text_of(parts_of(mc, callee).object) + "' that '" + callee->getNameAsString() +
                          "' returns cannot be used yet; call it in a statement of its own and use '" +
                          text_of(parts_of(mc, callee).object) + "' after it");
      return reported(mc);
    }
    x->type = ir::Type::Void;
  } else if (!structured_result_of(*x, callee, mc)) {
    return reported(mc);
  }
  x->form = ir::CallForm::User;
  x->callee = callee;
  x->absent = absent;
  x->op = callee->getNameAsString();
  x->template_args = template_args_of(callee, context_);
  CallParts parts = parts_of(mc, callee);
  if (object_expr != nullptr) parts.object = object_expr;  // (a virtual call's: the object of the override's class)
  if (object != nullptr && ir::changes_object(*callee) && !writable(*object, mc, true)) {  // (passed on: reports nothing)
    unsupported(mc, "'" + text_of(parts.object) + "', which the non-const member function '" + callee->getNameAsString() +
                        "' changes, is not a variable whose changes funcgen follows here; call it on a local "
                        "structure, or on a parameter taken by non-const reference");
    return reported(mc);
  }
  if (object != nullptr)
    pass_leaves(*object, *wanted, parts.object, *x);
  else
    pass_constants(*wanted, parts.object, *x);
  add_args(*x, callee, parts.args, true, {packing_of(*wanted)});
  return x;
}

// Whether the value of `e` is unused: an expression statement, a for loop's step, or cast to void.
bool CallLowering::statement_of_its_own(const clang::Expr* e) const {
  const clang::Stmt* at = e;
  const clang::Stmt* parent = parent_of(at);
  while (parent != nullptr && (llvm::isa<clang::ExprWithCleanups>(parent) || llvm::isa<clang::ParenExpr>(parent) ||
                               llvm::isa<clang::MaterializeTemporaryExpr>(parent))) {
    at = parent;
    parent = parent_of(at);
  }
  if (const auto* cast = llvm::dyn_cast_or_null<clang::CStyleCastExpr>(parent)) return cast->getType()->isVoidType();
  if (const auto* f = llvm::dyn_cast_or_null<clang::ForStmt>(parent)) return f->getInc() == at || f->getBody() == at;
  return parent != nullptr && !llvm::isa<clang::Expr>(parent) && !llvm::isa<clang::ReturnStmt>(parent) &&
         !llvm::isa<clang::IfStmt>(parent) && !llvm::isa<clang::WhileStmt>(parent) && !llvm::isa<clang::DoStmt>(parent) &&
         !llvm::isa<clang::SwitchStmt>(parent);
}

// Whether `method` of this file is called on an object whose class holds only numbers.
// (`devirtualized`: `method` is the override the object's class calls, lower_virtual_call)
bool CallLowering::of_numbers_only(const clang::FunctionDecl* method, const clang::Expr* object, bool devirtualized) const {
  return is_instance_method(method) && is_user_function(method) && !is_lambda(method) &&
         (devirtualized || !llvm::cast<clang::CXXMethodDecl>(method)->isVirtual()) && !holds_tensors(object->getType()) &&
         object->getType()->getAsCXXRecordDecl() != nullptr;
}

// `b.f(x)` spelled `b.Base::f(x)`: a call of that function, not of an override.
bool CallLowering::qualified_call(const clang::CXXMemberCallExpr* mc) {
  const auto* m = llvm::dyn_cast<clang::MemberExpr>(mc->getCallee()->IgnoreParens());
  return m != nullptr && m->hasQualifier();
}

// The expression of the object that `object` refers to, where its class at run time is known
// where it is called: a variable of a class (not a reference: its class is its type), a
// temporary, or a reference bound to one (`const Base& b = s;`); null where it is not known.
const clang::Expr* CallLowering::dynamic_object(const clang::Expr* object) const {
  const clang::Expr* e = object->IgnoreParenImpCasts();
  for (int depth = 0; depth < 16; ++depth) {
    if (const auto* t = llvm::dyn_cast<clang::MaterializeTemporaryExpr>(e)) {
      e = t->getSubExpr()->IgnoreParenImpCasts();
      continue;
    }
    if (const auto* t = llvm::dyn_cast<clang::CXXBindTemporaryExpr>(e)) {
      e = t->getSubExpr()->IgnoreParenImpCasts();
      continue;
    }
    if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u != nullptr && u->getOpcode() == clang::UO_AddrOf) {
      e = u->getSubExpr()->IgnoreParenImpCasts();  // `&s` a pointer was initialized with
      const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e);
      const auto* vd = r != nullptr ? llvm::dyn_cast<clang::VarDecl>(r->getDecl()) : nullptr;
      return vd != nullptr && !vd->getType()->isReferenceType() ? e : nullptr;
    }
    if (llvm::isa<clang::CXXConstructExpr>(e) || llvm::isa<clang::InitListExpr>(e)) return e;
    const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e);
    const auto* vd = ref != nullptr ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
    if (vd == nullptr) return nullptr;
    const bool pointer = vd->getType()->isPointerType();
    if (!vd->getType()->isReferenceType() && !pointer) return e;
    if (llvm::isa<clang::ParmVarDecl>(vd) || vd->getInit() == nullptr) return nullptr;  // (bound by the caller)
    if (pointer && !only_read(vd)) return nullptr;  // (it may point at another object here)
    e = vd->getInit()->IgnoreParenImpCasts();
  }
  return nullptr;
}

// Whether the function only reads the variable `vd` (never assigns it, takes its address or binds
// a reference to it).
bool CallLowering::only_read(const clang::VarDecl* vd) const {
  struct Uses : clang::RecursiveASTVisitor<Uses> {
    const clang::VarDecl* vd;
    const CallLowering* self;
    bool read_only = true;
    bool VisitDeclRefExpr(clang::DeclRefExpr* r) {
      if (r->getDecl() != vd) return true;
      const auto* cast = llvm::dyn_cast_or_null<clang::ImplicitCastExpr>(self->parent_of(r));
      read_only = read_only && cast != nullptr && cast->getCastKind() == clang::CK_LValueToRValue;
      return read_only;
    }
  } uses;
  uses.vd = vd;
  uses.self = this;
  uses.TraverseStmt(const_cast<clang::Stmt*>(f_.decl->getBody()));
  return uses.read_only;
}

// `b.f(x)` of a virtual `f`: a call of the override of the class of the object `b` refers to, where
// that is known here (dynamic_object, or a class or function declared final); reported elsewhere.
ExprPtr CallLowering::lower_virtual_call(const clang::CXXMemberCallExpr* mc, const clang::CXXMethodDecl* method,
                                         const clang::Expr* object) {
  const clang::Expr* target = dynamic_object(object);
  const clang::CXXRecordDecl* cls = (target != nullptr ? target : object)->getType()->getAsCXXRecordDecl();
  if (target == nullptr && cls != nullptr && !cls->hasAttr<clang::FinalAttr>() && !method->hasAttr<clang::FinalAttr>())
    cls = nullptr;
  const clang::CXXMethodDecl* override = cls != nullptr ? method->getCorrespondingMethodInClass(cls, true) : nullptr;
  if (override == nullptr) {
    const bool self = llvm::isa<clang::CXXThisExpr>(object->IgnoreParenImpCasts());  // (`f(x)` in a method)
    unsupported(mc, "'" + method->getNameAsString() + "' is a virtual function, and the class of the object '" +
                        (self ? std::string("*this") : text_of(object)) + "' is not known where it is called, so "
                        "funcgen cannot tell which override runs; call it on a variable of its class (or a reference "
                        "bound to one), or declare the class final");
    return opaque(mc);
  }
  if (target == nullptr) target = object;
  if (override->isPure() || !is_user_function(override)) {
    unsupported(mc, "'" + method->getNameAsString() + "' on '" + text_of(object) + "' calls '" +
                        override->getQualifiedNameAsString() + "', which funcgen cannot transform: it transforms the "
                        "functions of this file whose bodies it sees");
    return opaque(mc);
  }
  if (pytree::Tree* given = resolve(target, false)) return lower_method_call(mc, override, given, target);
  if (of_numbers_only(override, target, true)) return lower_method_call(mc, override, nullptr, target);
  unsupported(mc, "'" + method->getNameAsString() + "' on '" + text_of(object) + "' calls '" +
                      override->getQualifiedNameAsString() + "', whose object funcgen cannot pass: a class with "
                      "virtual functions is passed only where it holds no data members");
  return opaque(mc);
}

// `s.apply(x)`, `f(x)` on an object of only numbers (`Scaler s{2.0}`): its constants, read off the
// object where it is called and passed leaf by leaf (not differentiated).
void CallLowering::pass_constants(const pytree::Tree& wanted, const clang::Expr* object, ir::Expr& x) {
  std::vector<const pytree::Tree*> leaves;
  wanted.leaves(leaves);
  std::vector<std::string> names;
  leaf_names(wanted, "self", names);
  const std::vector<std::string> reads = pytree::leaf_accesses(wanted, "(" + text_of(object) + ")");
  for (size_t i = 0; i < leaves.size(); ++i) {
    x.args.push_back(ir::opaque(reads[i], leaves[i]->scalar_type));
    x.params.push_back(names[i]);
    x.param_types.push_back(leaves[i]->scalar_type);
  }
}

// `x[i] = v`, `x.narrow(0, 1, 2) = 0.0`: an assignment to a temporary tensor (fg::Tensor's
// rvalue operator=, as libtorch's) copies into its memory: the in-place `copy_(v)` (a number:
// `fill_(v)`) of what the left side makes, so that AD functionalizes the write into the view and
// vmap batches it as those ops. Null for other operator calls.
ExprPtr CallLowering::assignment_into(const clang::CXXOperatorCallExpr* oc, const clang::FunctionDecl* callee) {
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

ExprPtr CallLowering::lower_operator_call(const clang::CXXOperatorCallExpr* oc) {
  const auto* callee = llvm::dyn_cast_or_null<clang::FunctionDecl>(oc->getCalleeDecl());
  if (callee != nullptr && is_lambda(callee) && (is_user_function(callee) || names_textless(oc->getArg(0))))
    return lower_lambda_call(oc, callee);  // (one that holds no tensors where it cannot be named too)
  if (oc->getOperator() == clang::OO_Equal) assigns_optional(oc, oc->getArg(0));
  if (ExprPtr x = assignment_into(oc, callee)) return x;
  // `layer(x)` on a structured parameter (or part) whose class has an operator(), `a += y` on a
  // local structure whose class has an operator+=: a member function call.
  if (callee != nullptr && is_instance_method(callee) && is_user_function(callee))
    if (pytree::Tree* given = resolve(oc->getArg(0), false)) return lower_method_call(oc, callee, given);
  if (callee != nullptr && oc->getOperator() == clang::OO_Call && of_numbers_only(callee, oc->getArg(0)))
    return lower_method_call(oc, callee, nullptr);  // a functor of constants: `Affine f{2.0, 1.0}; f(x)`
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

ExprPtr CallLowering::lower_call(const clang::CallExpr* call) {
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
    x->constants = constants_at(call, x->callee);
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
bool CallLowering::writes_no_tensor_argument(const clang::CallExpr* call, const clang::FunctionDecl* callee, const std::string& qname) {
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
StmtPtr CallLowering::lower_swap(const clang::Expr* e) {
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

}  // namespace funcgen::lower
