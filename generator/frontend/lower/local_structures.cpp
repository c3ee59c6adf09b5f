#include "frontend/lower/local_structures.h"

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

bool reads_var(const ir::Expr& e, int var) {
  if ((e.kind == ExprKind::VarRef && e.var == var) || std::find(e.reads.begin(), e.reads.end(), var) != e.reads.end())
    return true;
  return std::any_of(e.args.begin(), e.args.end(), [&](const ExprPtr& a) { return a && reads_var(*a, var); });
}

}  // namespace

// ------------------------------------------------------------------ local structures
// A local struct, pair, array or nested tuple of tensors (`State s{h0, c0};`, the result of a
// helper that returns one) is held as one variable per leaf, as a structured parameter is: `s.h`
// reads `s_h`, `s = cell(p, x, s);` and `s.h = ...` assign them, passing `s` to a helper passes
// them, `auto [h, c] = s;` names them.

// The tree of such a structure (not a flat std::tuple of tensors, a variable of its own; nor a
// vector, map or optional, whose elements are known only at run time).
std::optional<pytree::Tree> LocalStructureLowering::local_tree(clang::QualType type) const {
  std::optional<pytree::Tree> t = pytree::tree_of(type, context_);
  std::function<bool(const pytree::Tree&)> fixed = [&](const pytree::Tree& n) {
    return n.kind != pytree::Tree::Kind::Vector && n.kind != pytree::Tree::Kind::Map &&
           n.kind != pytree::Tree::Kind::Optional && std::all_of(n.children.begin(), n.children.end(), fixed);
  };
  return t && fixed(*t) ? t : std::nullopt;
}

// Whether `node` is (a part of) a local structure rather than of a parameter.
bool LocalStructureLowering::is_local(const pytree::Tree& node) const {
  std::vector<const pytree::Tree*> leaves;
  node.leaves(leaves);
  return !leaves.empty() && leaves[0]->var >= 0 && local_trees_.count(f_.var(leaves[0]->var).decl) != 0;
}

// How a leaf of a structured parameter may be assigned: nullopt where it may not (the parameter is
// const); else whether the caller sees the assignment (a non-const reference parameter, `void
// step(State& s)`, or the object of a non-const member function) or not (taken by value).
std::optional<bool> LocalStructureLowering::mutable_param(const pytree::Tree& leaf) const {
  const clang::ValueDecl* of = leaf.var >= 0 ? f_.var(leaf.var).decl : nullptr;
  if (const auto* method = llvm::dyn_cast_or_null<clang::FunctionDecl>(of); method != nullptr && ir::changes_object(*method))
    return true;
  const auto* p = llvm::dyn_cast_or_null<clang::ParmVarDecl>(of);
  if (p == nullptr || p->getType().getNonReferenceType().isConstQualified()) return std::nullopt;
  return p->getType()->isReferenceType();
}

// Whether the leaves of `node` may be assigned (`at`): a local structure's, or those of a parameter
// that is not const, whose flat function then takes them by value or by reference as the
// parameter is. A number in a structure passed by reference is reported: it is passed by value.
// `passed_on`: passed whole to a helper's reference parameter (which reports the numbers it assigns).
bool LocalStructureLowering::writable(const pytree::Tree& node, const clang::Stmt* at, bool passed_on) {
  if (is_local(node)) return true;
  std::vector<const pytree::Tree*> leaves;
  node.leaves(leaves);
  for (const pytree::Tree* leaf : leaves) {
    const std::optional<bool> by_reference = mutable_param(*leaf);
    if (!by_reference) return false;
    if (leaf->kind != pytree::Tree::Kind::Tensor && *by_reference && !passed_on) {
      const std::string& written = f_.var(leaf->var).written;
      if (llvm::isa_and_nonnull<clang::FunctionDecl>(f_.var(leaf->var).decl))  // (`self.count`: the user's `count`)
        unsupported(at, "'" + written.substr(written.find('.') + 1) + "', a number of the object of '" + f_.qualified_name +
                        "', cannot be assigned yet: funcgen passes the object's numbers by value; return the new "
                        "value instead");
      else
        unsupported(at, "'" + written + "', a number in a structure passed by reference, cannot be assigned yet; "
                        "return the new value instead");
      return false;
    }
  }
  for (const pytree::Tree* leaf : leaves) {
    const bool by_reference = *mutable_param(*leaf);
    f_.vars[static_cast<size_t>(leaf->var)].cxx_type =
        leaf->kind == pytree::Tree::Kind::Tensor ? (by_reference ? "fg::Tensor&" : "fg::Tensor") : leaf->cxx_type;  // a copy
  }
  return !leaves.empty();
}

// A variable for each leaf of `t`, a part of the local structure `decl` that the user writes `root`.
void LocalStructureLowering::declare_leaves(pytree::Tree& t, const clang::ValueDecl* decl, const std::string& root, bool exact_name) {
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
bool LocalStructureLowering::needs_ir(const clang::Stmt* s) const { return involves_tensors(s) || names_textless(s); }

bool LocalStructureLowering::names_textless(const clang::Stmt* s) const {
  if (textless_.empty() || s == nullptr) return false;
  if (const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(s); r != nullptr && textless_.count(r->getDecl()) != 0) return true;
  return std::any_of(s->child_begin(), s->child_end(), [&](const clang::Stmt* c) { return names_textless(c); });
}

bool LocalStructureLowering::helper_call(const clang::Expr* e) const {
  const auto* call = llvm::dyn_cast<clang::CallExpr>(e->IgnoreImplicit());
  return call != nullptr && is_user_function(llvm::dyn_cast_or_null<clang::FunctionDecl>(call->getCalleeDecl()));
}

// A call of a function of this file that returns such a structure (`cell(p, x, s)`): lowered, it
// returns the flat tuple of the structure's tensors (one tensor: that tensor).
const clang::FunctionDecl* LocalStructureLowering::structured_callee(const clang::Expr* e) const {
  const auto* call = llvm::dyn_cast<clang::CallExpr>(e);
  const auto* callee = call != nullptr ? llvm::dyn_cast_or_null<clang::FunctionDecl>(call->getCalleeDecl()) : nullptr;
  if (callee == nullptr || !is_user_function(callee) || !is_structured_type(callee->getReturnType())) return nullptr;
  return callee;
}

// The variable or parameter whose part `e` names (`s` of `s.state.h`), through references to parts.
const clang::ValueDecl* LocalStructureLowering::root_decl(const clang::Expr* e) {
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
const clang::FunctionDecl* LocalStructureLowering::call_root(const clang::Expr* e) {
  for (e = strip(e); e != nullptr; e = strip(e)) {
    if (const clang::FunctionDecl* callee = structured_callee(e)) return callee;
    if ((e = base_of_part(e)) == nullptr) return nullptr;
  }
  return nullptr;
}

// Gives the leaves of the local structure `t` their values from `init` (null: default-initialized),
// declaring them where `declare`, else assigning them (all values computed before the first
// assignment where a later one reads an earlier leaf: `s = State{s.c, s.h};`).
void LocalStructureLowering::init_leaves(const pytree::Tree& t, clang::QualType type, const clang::Expr* init,
                                         bool declare, const clang::Stmt* at, std::vector<StmtPtr>& out) {
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
void LocalStructureLowering::default_values(clang::QualType type, const pytree::Tree& t, std::vector<ExprPtr>& out) {
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
bool LocalStructureLowering::declare_structure(const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) {
  const auto fixed = fixed_.find(vd);
  std::optional<pytree::Tree> tree = fixed != fixed_.end() ? pytree::fixed_vector_tree(vd->getType(), fixed->second, context_)
                                                           : local_tree(vd->getType());
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
bool LocalStructureLowering::declare_bindings(const clang::DecompositionDecl* dd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) {
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
std::string LocalStructureLowering::with_leaves(const clang::Stmt* node, std::string text, std::vector<int>& reads) {
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
void LocalStructureLowering::find_init_captures(const clang::Stmt* s,
                                                std::vector<std::pair<clang::SourceRange, std::string>>& edits,
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

void LocalStructureLowering::find_leaves(const clang::Stmt* s,
                                         std::vector<std::pair<clang::SourceRange, std::string>>& edits,
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
          t != nullptr && (t->kind == pytree::Tree::Kind::Vector || t->kind == pytree::Tree::Kind::Map || t->fixed)) {
        edits.emplace_back(e->getSourceRange(), "size_t{" + std::to_string(t->children.size()) + "}");
        return;
      }
    }
    if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(strip(e));
        mc != nullptr && mc->getMethodDecl() != nullptr && mc->getMethodDecl()->getName() == "empty" && !fixed_.empty())
      if (const pytree::Tree* t = resolve(mc->getImplicitObjectArgument(), false); t != nullptr && t->fixed) {
        edits.emplace_back(e->getSourceRange(), t->children.empty() ? "true" : "false");
        return;
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
void LocalStructureLowering::find_unqualified(const clang::Stmt* s, std::vector<std::pair<clang::SourceRange, std::string>>& edits) {
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

// ------------------------------------------------------------------ vectors of a fixed length
// A local std::vector that is assigned whole (`state = new_state;`, `state = {a, b};`: the LSTM
// idiom) or holds structures of tensors (`std::vector<Layer> ls{{w0, b0}, {w1, b1}};`), whose
// braces give it its length and nothing changes that length, is held as its elements, as a
// std::array is (a tree that is `fixed`): assigning it whole assigns them (a new version of each
// under AD, carried through loops as any local), `v[1]` reads one, `v[i]` at an index known only at
// run time chooses one (fixed_element), v.size() is its length, a range-for is unrolled. A vector
// that is changed otherwise (push_back, resize, ...) stays a list (lists.cpp).

// std::vector of tensors, or of structures of tensors a local can hold leaf by leaf.
bool LocalStructureLowering::fixed_type(clang::QualType t) const {
  if (record_name(bare(t)) != "std::vector") return false;
  const clang::QualType element = template_arg(bare(t), 0);
  return is_fg_tensor(element) || local_tree(element).has_value();
}

namespace {

// The number of items of braces that make a vector (`{a, b}`, `std::vector<T>{a, b}`), 0 for others.
size_t braced_items(const clang::Expr* stripped) {
  if (const auto* f = llvm::dyn_cast_or_null<clang::CXXFunctionalCastExpr>(stripped)) stripped = f->getSubExpr()->IgnoreImplicit();
  const auto* il = llvm::dyn_cast_or_null<clang::InitListExpr>(stripped);
  return il != nullptr ? il->getNumInits() : 0;
}

}  // namespace

// Finds the vectors of the body that are held as their elements (fixed_), and reports an
// assignment that would change the length of one.
void LocalStructureLowering::find_fixed(const clang::Stmt* body) {
  struct Uses : clang::RecursiveASTVisitor<Uses> {
    LocalStructureLowering* self;
    std::map<const clang::VarDecl*, int> refs, allowed;
    std::map<const clang::VarDecl*, const clang::VarDecl*> copies;  // declared as a copy of another
    std::vector<const clang::VarDecl*> order;
    std::vector<std::pair<const clang::VarDecl*, const clang::CXXOperatorCallExpr*>> assigned;
    const clang::VarDecl* local(const clang::Expr* e) {
      const auto* r = e != nullptr ? llvm::dyn_cast<clang::DeclRefExpr>(self->unmoved(e)) : nullptr;
      const auto* vd = r != nullptr ? llvm::dyn_cast<clang::VarDecl>(r->getDecl()) : nullptr;
      return vd != nullptr && refs.count(vd) != 0 ? vd : nullptr;
    }
    bool VisitVarDecl(clang::VarDecl* vd) {
      if (!vd->isLocalVarDecl() || vd->isStaticLocal() || vd->getType()->isReferenceType() || !self->fixed_type(vd->getType()))
        return true;
      if (const clang::VarDecl* from = local(vd->getInit())) ++allowed[from], copies[vd] = from;
      refs[vd] = 0;
      order.push_back(vd);
      return true;
    }
    bool VisitDeclRefExpr(clang::DeclRefExpr* r) {
      if (const auto* vd = llvm::dyn_cast<clang::VarDecl>(r->getDecl()); vd != nullptr && refs.count(vd) != 0) ++refs[vd];
      return true;
    }
    bool VisitCXXMemberCallExpr(clang::CXXMemberCallExpr* mc) {
      const clang::VarDecl* vd = mc->getMethodDecl() != nullptr ? local(mc->getImplicitObjectArgument()) : nullptr;
      const std::string m = vd != nullptr ? mc->getMethodDecl()->getNameAsString() : "";
      if (m == "size" || m == "empty" || m == "at" || m == "front" || m == "back") ++allowed[vd];
      return true;
    }
    bool VisitCXXOperatorCallExpr(clang::CXXOperatorCallExpr* oc) {
      const clang::VarDecl* vd = oc->getNumArgs() == 2 ? local(oc->getArg(0)) : nullptr;
      if (vd != nullptr && oc->getOperator() == clang::OO_Subscript) ++allowed[vd];
      if (vd != nullptr && oc->getOperator() == clang::OO_Equal) {
        ++allowed[vd];
        assigned.emplace_back(vd, oc);
        if (const clang::VarDecl* from = local(oc->getArg(1))) ++allowed[from];
      }
      return true;
    }
    bool VisitCallExpr(clang::CallExpr* call) {
      const clang::FunctionDecl* f = call->getDirectCallee();
      const std::string name = f != nullptr ? f->getQualifiedNameAsString() : "";
      if (f != nullptr && self->is_user_function(f))  // passed to a helper that reads it: its leaves (not a list)
        for (unsigned i = 0; i < call->getNumArgs() && i < f->getNumParams(); ++i)
          if (const clang::VarDecl* vd = local(call->getArg(i));
              vd != nullptr && !non_const_reference(f->getParamDecl(i)->getType()) &&
              !list_parameter(f->getParamDecl(i), f->getBody()))
            ++allowed[vd];
      if ((name == "fg::stack" || name == "fg::cat") && call->getNumArgs() != 0)
        if (const clang::VarDecl* vd = local(call->getArg(0))) ++allowed[vd];
      return true;
    }
    bool VisitCXXForRangeStmt(clang::CXXForRangeStmt* rs) {
      if (const clang::VarDecl* vd = local(rs->getRangeInit())) ++allowed[vd];
      return true;
    }
  } uses;
  uses.self = this;
  uses.TraverseStmt(const_cast<clang::Stmt*>(body));
  // A vector of tensors is held so only where it is assigned whole or assigned from (elsewhere it
  // is a list, as it always was); one of structures always.
  std::set<const clang::VarDecl*> whole;
  for (const auto& [vd, oc] : uses.assigned) {
    whole.insert(vd);
    if (const clang::VarDecl* from = uses.local(oc->getArg(1))) whole.insert(from);
  }
  for (const clang::VarDecl* vd : uses.order) {
    if (is_fg_tensor(template_arg(bare(vd->getType()), 0)) && whole.count(vd) == 0) continue;
    if (uses.refs[vd] != uses.allowed[vd]) continue;
    const clang::Expr* init = vd->getInit() != nullptr ? strip(vd->getInit()) : nullptr;
    if (const size_t n = braced_items(init)) fixed_[vd] = n;
    else if (auto c = uses.copies.find(vd); c != uses.copies.end() && fixed_.count(c->second) != 0) fixed_[vd] = fixed_[c->second];
  }
  std::vector<std::pair<const clang::CXXOperatorCallExpr*, const clang::VarDecl*>> assignments;  // and the vector given
  for (const auto& [vd, oc] : uses.assigned) assignments.emplace_back(oc, uses.local(oc->getArg(1)));
  keep_lengths(assignments);
}

// Every value a whole assignment gives a vector held as its elements has its length, or the
// vector is a list again (until nothing changes: one assigned a vector that is not held so is not
// either); another length is reported at the assignment.
void LocalStructureLowering::keep_lengths(
    const std::vector<std::pair<const clang::CXXOperatorCallExpr*, const clang::VarDecl*>>& assignments) {
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [oc, from] : assignments) {
      const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(unmoved(oc->getArg(0)));
      auto held = r != nullptr ? fixed_.find(llvm::dyn_cast<clang::VarDecl>(r->getDecl())) : fixed_.end();
      if (held == fixed_.end()) continue;
      const size_t n = from != nullptr ? (fixed_.count(from) != 0 ? fixed_[from] : 0) : braced_items(strip(oc->getArg(1)));
      if (n == held->second) continue;
      if (n != 0 && reported_indices_.insert(oc).second)
        unsupported(oc, "this assignment gives '" + held->first->getNameAsString() + "' " + std::to_string(n) +
                            " elements where its declaration gives it " + std::to_string(held->second) + ", which "
                            "cannot be transformed: funcgen holds a vector that is assigned whole as its elements, "
                            "so its length must stay the one it is declared with; keep the length, or build a "
                            "vector of another length with push_back");
      fixed_.erase(held);  // (a list again, which reports nothing more)
      changed = true;
      break;
    }
  }
}

// `v[i]` or `v[i].w` of a vector held as its elements, at an index known only at run time (`i`):
// the element chosen among them, `i == 0 ? v_0 : i == 1 ? v_1 : v_2` (C++ leaves any other index
// undefined), which every transform goes through as it goes through a choice. Null for others.
ExprPtr LocalStructureLowering::fixed_element(const clang::Expr* e) {
  if (fixed_.empty()) return nullptr;
  e = strip(e);
  const auto* field = llvm::dyn_cast<clang::MemberExpr>(e);
  const clang::Expr* element = field != nullptr ? strip(field->getBase()) : e;
  const clang::Expr* object = nullptr;
  const clang::Expr* index = nullptr;
  if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(element); oc != nullptr && oc->getOperator() == clang::OO_Subscript) {
    object = oc->getArg(0);
    index = oc->getArg(1);
  } else if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(element);
             mc != nullptr && mc->getMethodDecl() != nullptr && mc->getMethodDecl()->getName() == "at" && mc->getNumArgs() == 1) {
    object = mc->getImplicitObjectArgument();
    index = mc->getArg(0);
  }
  const pytree::Tree* base = object != nullptr ? resolve(object, false) : nullptr;
  if (base == nullptr || !base->fixed || base->children.empty() || index->getIntegerConstantExpr(context_)) return nullptr;
  std::vector<const pytree::Tree*> choices;
  for (const pytree::Tree& c : base->children) {
    const pytree::Tree* node = &c;
    if (field != nullptr) {
      const auto key = std::find(c.keys.begin(), c.keys.end(), field->getMemberDecl()->getNameAsString());
      if (c.kind != pytree::Tree::Kind::Record || key == c.keys.end()) return nullptr;
      node = &c.children[static_cast<size_t>(key - c.keys.begin())];
    }
    if (!node->is_leaf()) return nullptr;  // a structure used whole (resolve reports it)
    choices.push_back(node);
  }
  if (index->HasSideEffects(context_)) {
    unsupported(index, "an index that changes variables cannot choose an element of a vector held as its elements; "
                       "change them in a statement of its own");
    return opaque(e);
  }
  ExprPtr at = lower_expr(index);
  ExprPtr chosen = node_value(*choices.back(), e);
  for (size_t k = choices.size() - 1; k-- > 0;) {
    ExprPtr x = make_expr(ExprKind::Conditional, e);
    x->type = chosen->type;
    x->args.push_back(ir::binary("==", ir::clone(*at), ir::opaque(std::to_string(k), ir::Type::Int), ir::Type::Bool));
    x->args.push_back(node_value(*choices[k], e));
    x->args.push_back(std::move(chosen));
    chosen = std::move(x);
  }
  return chosen;
}

}  // namespace funcgen::lower
