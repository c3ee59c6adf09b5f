#include "frontend/lower/results.h"

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

bool has_open_node(const pytree::Tree& t) {
  if (t.kind == pytree::Tree::Kind::Map || t.kind == pytree::Tree::Kind::Vector) return true;
  return std::any_of(t.children.begin(), t.children.end(), [](const pytree::Tree& c) { return has_open_node(c); });
}

bool returnable(const pytree::Tree& t, std::string& why) {
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

}  // namespace

// A structured result: returned as the flat tuple of its tensors.
bool ResultLowering::structured_result(const clang::FunctionDecl* decl) {
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
bool ResultLowering::returns_list(const clang::FunctionDecl* decl) {
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
const clang::FunctionDecl* ResultLowering::list_maker(const clang::Expr* e) {
  const auto* call = e != nullptr ? llvm::dyn_cast<clang::CallExpr>(e) : nullptr;
  const clang::FunctionDecl* f = call != nullptr ? call->getDirectCallee() : nullptr;
  return f != nullptr && is_user_function(f) && returns_list(f) ? f : nullptr;
}

// The braced items of a map or vector built in place (`{{"loss", l}, {"acc", a}}`, `{a, b}`), or
// false where `e` is not built so.
bool ResultLowering::items_of(const clang::Expr* e, std::vector<const clang::Expr*>& items) {
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
std::pair<std::string, const clang::Expr*> ResultLowering::map_item(const clang::Expr* item) {
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
bool ResultLowering::shape_result(pytree::Tree& t, const clang::Expr* e, bool first) {
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
void ResultLowering::flatten_value(const clang::Expr* e, const pytree::Tree& t, std::vector<ExprPtr>& out) {
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
    if (t.kind == pytree::Tree::Kind::Array && !t.fixed && il->getNumInits() == 1 &&
        llvm::isa<clang::InitListExpr>(strip(il->getInit(0))))
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

ExprPtr ResultLowering::lower_result(const clang::Expr* e) {
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

}  // namespace funcgen::lower
