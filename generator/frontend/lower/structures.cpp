#include "frontend/lower/structures.h"

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

pytree::Tree& child_for(pytree::Tree& given, const pytree::Tree& wanted, size_t i, bool add);
pytree::Tree& map_child(pytree::Tree& t, const std::string& key, bool add);
pytree::Tree& vector_child(pytree::Tree& t, size_t i, bool add);

void absent_in(const pytree::Tree& wanted, const pytree::Tree& given, const std::string& at, std::set<std::string>& out) {
  if (wanted.kind == pytree::Tree::Kind::Optional) {
    if (given.kind == pytree::Tree::Kind::Optional && given.children.empty()) out.insert(at);
    return;
  }
  if (wanted.kind == pytree::Tree::Kind::Vector || wanted.kind == pytree::Tree::Kind::Map) return;
  for (size_t i = 0; i < wanted.children.size() && i < given.children.size(); ++i)
    absent_in(wanted.children[i], given.children[i], pytree::access(wanted, i, at), out);
}

// Gives `into` (a caller's structure) the elements `from` (a helper's) reads.
void merge(pytree::Tree& into, const pytree::Tree& from) {
  if (from.kind == pytree::Tree::Kind::Optional) return;  // (a tensor passed for it, or an optional: no elements)
  for (size_t i = 0; i < from.children.size(); ++i) merge(child_for(into, from, i, true), from.children[i]);
}

// The node of `given` (a caller's structure) that child `i` of `wanted` (the same structure as a
// helper reads it) stands for: by key in a map, by index elsewhere.
pytree::Tree& child_for(pytree::Tree& given, const pytree::Tree& wanted, size_t i, bool add) {
  if (given.kind == pytree::Tree::Kind::Map) return map_child(given, wanted.keys[i], add);
  if (given.kind == pytree::Tree::Kind::Vector) return vector_child(given, i, add);
  return given.children.at(i);
}

pytree::Tree& map_child(pytree::Tree& t, const std::string& key, bool add) {
  auto at = std::lower_bound(t.keys.begin(), t.keys.end(), key);
  const auto i = static_cast<size_t>(at - t.keys.begin());
  if (at == t.keys.end() || *at != key) {
    if (!add) throw std::logic_error("pytree: key '" + key + "' was not found before lowering");
    t.keys.insert(at, key);
    t.children.insert(t.children.begin() + static_cast<long>(i), pytree::Tree{});
  }
  return t.children[i];
}

pytree::Tree& vector_child(pytree::Tree& t, size_t i, bool add) {
  if (i >= t.children.size()) {
    if (!add) throw std::logic_error("pytree: element " + std::to_string(i) + " was not found before lowering");
    t.children.resize(i + 1);
  }
  return t.children[i];
}

}  // namespace

// The optionals of `callee`'s parameters (and object) that hold no tensor at `call`: the caller's
// own optionals it passes on where they hold none, and std::nullopt.
std::vector<std::string> StructureLowering::absent_at(const clang::CallExpr* call, const clang::FunctionDecl* callee, bool discovering) {
  std::set<std::string> absent;
  if (callee == nullptr || is_lambda(callee)) return {};
  const auto visit = [&](clang::QualType type, const clang::Expr* arg, const std::string& root) {
    // A vector of structures held as its elements (find_fixed), passed to a const one: the helper
    // is lowered for its length, as for the optionals (FunctionLowerer::fixed_parameter).
    if (const pytree::Tree* given = fixed_.empty() ? nullptr : resolve(arg, discovering);
        given != nullptr && given->fixed && record_name(bare(type)) == "std::vector" &&
        !is_fg_tensor(template_arg(bare(type), 0)) && !non_const_reference(type)) {
      absent.insert(root + "#" + std::to_string(given->children.size()));
      return;
    }
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

// std::nullopt, `{}` or an empty std::optional<fg::Tensor>() passed for an optional.
bool StructureLowering::holds_no_tensor(const clang::Expr* arg) {
  if (const auto* d = llvm::dyn_cast<clang::CXXDefaultArgExpr>(arg)) arg = d->getExpr();
  const clang::Expr* e = strip(arg);
  if (record_name(e->getType()) == "std::nullopt_t") return true;
  if (const auto* il = llvm::dyn_cast<clang::InitListExpr>(e)) return il->getNumInits() == 0;
  if (const auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(e)) return c->getNumArgs() == 0;
  return false;
}

// The optional that `e` tests, folded: `b`, `b.has_value()`, `!b`, `b == std::nullopt`, `b != std::nullopt`
// and && / || of such tests are constants in a specialization (nullopt for anything else), as
// are conditions on the parameters known in a level of a recursion (recursion.h).
std::optional<bool> StructureLowering::presence_test(const clang::Expr* e) {
  if (const std::optional<bool> known = known_test(e)) return known;
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
void StructureLowering::assigns_optional(const clang::Expr* e, const clang::Expr* object) {
  pytree::Tree* t = resolve(object, false);
  if (t == nullptr || t->kind != pytree::Tree::Kind::Optional || !assigned_optionals_.insert(t).second) return;
  unsupported(e, "changing the std::optional '" + text_of(object) + "' cannot be transformed: funcgen specializes "
                 "the function on which optionals hold a tensor when it is called; compute the tensor in a local "
                 "(fg::Tensor t = " + text_of(object) + " ? *" + text_of(object) + " : ...;)");
}

// `*b`, `b.value()`, `b->`: the tensor an optional holds (nullptr, reported, where it holds none).
pytree::Tree* StructureLowering::optional_value(const clang::Expr* e, const clang::Expr* object, bool discovering) {
  pytree::Tree* t = resolve(object, discovering);
  if (t == nullptr || t->kind != pytree::Tree::Kind::Optional) return nullptr;
  if (!t->children.empty()) return &t->children[0];
  if (!discovering && assigned_optionals_.count(t) == 0 && reported_indices_.insert(e).second)
    unsupported(e, "this reads the tensor of '" + text_of(object) + "' where it holds none (funcgen specializes the "
                   "function on which optionals hold tensors); read it only under 'if (" + text_of(object) + ")'");
  return nullptr;
}

// Finds what the body reads of the structured parameters: vector elements and map keys (added to
// their trees), and structures passed whole to functions of this file (which read what those read).
void StructureLowering::discover(const clang::Stmt* s) {
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
      const ir::Constants constants = constants_at(call, callee);
      const CallParts parts = parts_of(call, callee);
      if (parts.object != nullptr) {
        pytree::Tree* object = resolve(parts.object, true);
        if (const pytree::Tree* wanted = object != nullptr ? object_tree(callee, absent) : nullptr) merge(*object, *wanted);
      }
      for (unsigned i = 0; i < parts.args.size() && i < callee->getNumParams(); ++i) {
        pytree::Tree* given = resolve(parts.args[i], true);
        if (given == nullptr) continue;
        if (const pytree::Tree* wanted = callee_tree(callee, i, absent, constants)) merge(*given, *wanted);
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
  if (const auto* sw = llvm::dyn_cast<clang::SwitchStmt>(s))
    if (const std::optional<std::vector<const clang::Stmt*>> taken = known_case(sw)) {  // (a level of a recursion)
      for (const clang::Stmt* x : *taken) {
        discover(x);
        if (always_returns(x)) return;
      }
      return;
    }
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
const pytree::Tree* StructureLowering::callee_tree(const clang::FunctionDecl* callee, unsigned i,
                                                  const std::vector<std::string>& absent, const ir::Constants& constants) {
  if (is_lambda(callee)) return signature_tree(callee, i + captured(callee).size(), absent);  // (captures first)
  return signature_tree(callee, i + (is_instance_method(callee) ? 1 : 0), absent, constants);
}

const pytree::Tree* StructureLowering::object_tree(const clang::FunctionDecl* callee, const std::vector<std::string>& absent) {
  return is_instance_method(callee) && !is_lambda(callee) ? signature_tree(callee, 0, absent) : nullptr;
}

const pytree::Tree* StructureLowering::signature_tree(const clang::FunctionDecl* callee, size_t k,
                                                     const std::vector<std::string>& absent,
                                                     const ir::Constants& constants) {
  if (lowering_.lower(callee, absent, constants) == nullptr) {
    ok_ = false;
    return nullptr;
  }
  const StructuredSignature& sig = lowering_.signature(callee, absent, constants);
  return k < sig.params.size() && sig.params[k] ? &*sig.params[k] : nullptr;
}

// Whether a function computes with tensors: its parameters, its object or its result hold some.
bool StructureLowering::takes_tensors(const clang::FunctionDecl* fn) const {
  const auto holds = [&](clang::QualType t) {
    return ir::is_tensor_like(ir_type_of(t)) || is_structured_type(t) || captures_tensors(t) || points_to_tensor(t);
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
bool StructureLowering::is_user_function(const clang::FunctionDecl* callee) const {
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
pytree::Tree* StructureLowering::resolve(const clang::Expr* e, bool discovering) {
  if (trees_.empty() || e == nullptr) return nullptr;
  e = strip(e);
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) return resolve_decl(ref->getDecl(), discovering);
  if (const auto* call = llvm::dyn_cast<clang::CallExpr>(e); call != nullptr && !fixed_.empty() && call->getNumArgs() == 1 &&
                                                              call->getDirectCallee() != nullptr &&
                                                              call->getDirectCallee()->getQualifiedNameAsString() == "std::move") {
    pytree::Tree* moved = resolve(call->getArg(0), discovering);  // `state = std::move(next);`
    return moved != nullptr && moved->fixed ? moved : nullptr;
  }
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
std::optional<std::string> StructureLowering::rebuilt(const pytree::Tree& t, std::vector<int>& reads) const {
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
pytree::Tree* StructureLowering::resolve_decl(const clang::ValueDecl* d, bool discovering) {
  if (auto a = aliases_.find(d); a != aliases_.end()) return resolve(a->second, discovering);
  auto it = trees_.find(d);
  return it != trees_.end() ? &it->second : nullptr;
}

pytree::Tree* StructureLowering::not_constant(const clang::Expr* e, const pytree::Tree& base) {
  using Kind = pytree::Tree::Kind;
  if (base.fixed) {  // a vector held as its elements: its tensors read at run-time indices (fixed_element) only
    const clang::Expr* read = e;  // the element, or the field of it that is read (`v[i].w`)
    for (const clang::Stmt* p = parent_of(e); p != nullptr; p = parent_of(p)) {
      if (llvm::isa<clang::ImplicitCastExpr>(p) || llvm::isa<clang::ParenExpr>(p)) continue;
      if (const auto* m = llvm::dyn_cast<clang::MemberExpr>(p); m != nullptr && llvm::isa<clang::FieldDecl>(m->getMemberDecl()))
        read = m;
      break;
    }
    if ((is_fg_tensor(read->getType()) || !holds_tensors(read->getType())) && !written_through(read)) return nullptr;
    if (reported_indices_.insert(e).second)
      unsupported(e, "this element of a vector that funcgen holds as its elements (it is assigned whole, or holds "
                     "structures) is named at an index known only at run time, where funcgen can read its tensors "
                     "but not assign it or use it whole yet; assign it at a constant index (v[0] = y), or read "
                     "its tensors (v[i].w)");
    return nullptr;
  }
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
ExprPtr StructureLowering::node_value(const pytree::Tree& t, const clang::Expr* e) {
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
void StructureLowering::pass_leaves(pytree::Tree& given, const pytree::Tree& wanted, const clang::Expr* e, ir::Expr& call) {
  if (wanted.is_leaf()) {
    call.args.push_back(node_value(given, e));
    call.params.push_back(f_.var(given.var).name);
    call.param_types.push_back(call.args.back()->type);
    return;
  }
  for (size_t i = 0; i < wanted.children.size(); ++i)
    pass_leaves(child_for(given, wanted, i, false), wanted.children[i], e, call);
}

}  // namespace funcgen::lower
