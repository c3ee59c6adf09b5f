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
#include "frontend/lower/expressions.h"
#include "frontend/lower/calls.h"
#include "frontend/lower/statements.h"
#include "frontend/lower/declarations.h"
#include "frontend/lower/structures.h"
#include "frontend/lower/results.h"
#include "frontend/lower/local_structures.h"
#include "frontend/lower/lambdas.h"
#include "frontend/lower/stacked_lists.h"
#include "frontend/lower/lists.h"
#include "frontend/lower/range_for.h"
#include "frontend/lower/recursion.h"
#include "ir/module.h"

namespace funcgen {

namespace lower {
namespace {

// One function, lowered: the driver (signature, parameters, result) over the lowerings of each
// family of constructs (frontend/lower/*.h), which it derives from.
class FunctionLowerer final : public ExpressionLowering,
                              public CallLowering,
                              public StatementLowering,
                              public DeclarationLowering,
                              public StructureLowering,
                              public ResultLowering,
                              public LocalStructureLowering,
                              public LambdaLowering,
                              public StackedListLowering,
                              public ListLowering,
                              public RangeForLowering,
                              public RecursionLowering {
 public:
  FunctionLowerer(ir::Function& fn, StructuredSignature& sig, Lowering& lowering, clang::ASTContext& context,
                  Reporter& reporter, std::set<std::string> absent, const ir::Constants& constants)
      : LowererCore(fn, sig, lowering, context, reporter), absent_(std::move(absent)), constants_given_(constants) {}

  bool run(const clang::FunctionDecl* decl) {
    f_.decl = decl;
    known_parameters(decl, constants_given_);
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
      if (std::optional<pytree::Tree> fixed = fixed_parameter(p)) {
        trees_[p] = std::move(*fixed);
        sig_.params.emplace_back();  // filled once the leaves are known
        continue;
      }
      if (points_to_tensor(p->getType()) && !decl->hasAttr<clang::AnnotateAttr>()) {  // `scale(&y, 3.0)`
        if (!pointer_parameter(p)) return false;
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
    if (returns_its_object(decl)) {  // `return *this;`: the caller holds the object
      f_.return_type = ir::Type::Void;
      f_.return_cxx_type = "void";
    } else if (!structured_result(decl)) {
      return false;
    }
    if (result_) {
      sig_.result = result_;
    } else if (f_.return_type == ir::Type::TensorTuple) {
      const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(bare(decl->getReturnType())->getAsCXXRecordDecl());
      f_.outputs = spec->getTemplateArgs()[0].getKind() == clang::TemplateArgument::Pack ? spec->getTemplateArgs()[0].pack_size()
                                                                                       : spec->getTemplateArgs().size();
    }
    bind_template_arguments(decl);
    find_fixed(decl->getBody());
    find_stacked(decl->getBody());
    if (const auto* body = llvm::dyn_cast_or_null<clang::CompoundStmt>(decl->getBody())) append_block(f_.body, body);
    if (result_ && open_result_) {  // a returned map's keys (a vector's length) are known from its returns
      set_outputs();
      sig_.result = result_;
    }
    return ok_;
  }

 private:

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
    // A helper that changes its object takes the object's leaves by reference (ir::by_reference),
    // as `void step(State& s)` takes s's; a transformed function's inputs are values.
    if (!method->isConst() && method->hasAttr<clang::AnnotateAttr>()) {
      unsupported_at(decl->getLocation(), "'" + cls + "::" + f_.name + "' must be a const member function to be "
                                          "transformed: its object's tensors are its inputs, which it cannot change; "
                                          "declare it 'const'");
      return false;
    }
    std::string why;
    // (a class of only numbers is an object of helpers: a spec on its method has no check of its
    // own in the test tiers yet, so it stays refused)
    const clang::QualType object = method->getThisType()->getPointeeType();
    std::optional<pytree::Tree> tree = method->hasAttr<clang::AnnotateAttr>() ? pytree::tree_of(object, context_, &why)
                                                                              : pytree::object_tree_of(object, context_, &why);
    if (!tree) {
      unsupported_at(decl->getLocation(), "'" + cls + "::" + f_.name + "' cannot be transformed with its object: " +
                                          (why.empty() ? "'" + cls + "' has no tensor members" : why));
      return false;
    }
    trees_[decl] = std::move(*tree);
    sig_.params.emplace_back();
    return true;
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
  void collect_names(const clang::FunctionDecl* decl) override {
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
  bool alias(const clang::VarDecl* vd) override {
    if (trees_.empty() || vd->getInit() == nullptr || !vd->getType().getNonReferenceType().isConstQualified() ||
        !pytree::tree_of(vd->getType(), context_).has_value())
      return false;
    const pytree::Tree* part = resolve(vd->getInit(), true);
    if (part == nullptr || (part->fixed && !vd->getType()->isReferenceType())) return false;  // (a copy of what may change)
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
  int leaf_parameter(pytree::Tree& leaf, const std::string& name, const std::string& written,
                     const clang::ValueDecl* of) override {
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

  // A const std::vector of structures that this specialization is passed with a length (`ls#2`
  // among absent_: StructureLowering::absent_at): held as its elements, as the caller holds it.
  std::optional<pytree::Tree> fixed_parameter(const clang::ParmVarDecl* p) {
    const std::string key = p->getNameAsString() + "#";
    for (const std::string& a : absent_)
      if (a.rfind(key, 0) == 0) {
        std::optional<pytree::Tree> t = pytree::fixed_vector_tree(p->getType(), std::stoul(a.substr(key.size())), context_);
        if (t) fixed_[p] = t->children.size();
        return t;
      }
    return std::nullopt;
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

  void set_outputs() override {
    const size_t n = result_->tensors();
    f_.outputs = n;
    f_.return_type = n == 1 ? ir::Type::Tensor : ir::Type::TensorTuple;
    f_.return_cxx_type = "fg::Tensor";
    if (n != 1) {
      std::vector<std::string> items(n, "fg::Tensor");
      f_.return_cxx_type = cxx::tuple_type(items);
    }
  }

  const std::set<std::string> absent_;  // the optionals of the parameters that hold no tensor
  const ir::Constants constants_given_;  // the parameters known at the call (a level of a recursion)
};

}  // namespace
}  // namespace lower

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

bool Lowering::recursive(const clang::FunctionDecl* fn) {
  fn = fn->getDefinition() != nullptr ? fn->getDefinition() : fn;
  if (auto it = recursive_.find(fn); it != recursive_.end()) return it->second;
  // The functions of this file (not of the runtime or the system's headers) that each calls.
  const auto callees = [this](const clang::FunctionDecl* f) {
    struct Calls : clang::RecursiveASTVisitor<Calls> {
      std::vector<const clang::FunctionDecl*> found;
      bool VisitCallExpr(clang::CallExpr* c) {
        if (const clang::FunctionDecl* d = c->getDirectCallee()) found.push_back(d->getDefinition() != nullptr ? d->getDefinition() : d);
        return true;
      }
    } calls;
    calls.TraverseStmt(f->getBody());
    std::vector<const clang::FunctionDecl*> out;
    for (const clang::FunctionDecl* d : calls.found) {
      const std::string name = d->getQualifiedNameAsString();
      if (d->hasBody() && !context_.getSourceManager().isInSystemHeader(d->getLocation()) && name.rfind("fg::", 0) != 0)
        out.push_back(d);
    }
    return out;
  };
  // Depth first through the call graph from fn's callees: recursive if the walk comes back to fn.
  std::set<const clang::FunctionDecl*> seen;
  std::vector<const clang::FunctionDecl*> unvisited = callees(fn);
  bool found = false;
  while (!unvisited.empty() && !found) {
    const clang::FunctionDecl* f = unvisited.back();
    unvisited.pop_back();
    if (!seen.insert(f).second) continue;
    found = f == fn;
    for (const clang::FunctionDecl* g : callees(f)) unvisited.push_back(g);
  }
  return recursive_[fn] = found;
}

Lowering::Key Lowering::key(const clang::FunctionDecl* fn, const std::vector<std::string>& absent,
                            const ir::Constants& constants) const {
  return Key{fn, fn == presence_.fn ? std::vector<std::string>(presence_.absent.begin(), presence_.absent.end()) : absent,
             constants};
}

const ir::Function* Lowering::lower(const clang::FunctionDecl* fn, const std::vector<std::string>& absent,
                                    const ir::Constants& constants) {
  fn = fn->getDefinition() != nullptr ? fn->getDefinition() : fn;
  const Key key = this->key(fn, absent, constants);
  if (auto it = done_.find(key); it != done_.end()) return it->second.get();
  if (failed_.count(key) != 0) return nullptr;
  // Met again while it is lowered: its callers report nothing more. (A level of an unfolding
  // recursion is another function, up to the passes' limit.)
  if (lowering_.count(fn) != 0 && (constants.empty() || lowering_.count(fn) >= ir::CallChain::kMaxUnfolding)) {
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
  f->constants = constants;
  StructuredSignature sig;
  const std::set<std::string> absent_set(std::get<1>(key).begin(), std::get<1>(key).end());
  const bool ok = !has_compile_errors(fn) && !reporter_.has_compile_error_in(fn->getSourceRange()) &&
                  lower::FunctionLowerer(*f, sig, *this, context_, reporter_, absent_set, constants).run(fn);
  lowering_.erase(lowering_.find(fn));
  if (!ok) {
    failed_.insert(key);
    return nullptr;
  }
  signatures_[key] = std::move(sig);
  return done_.emplace(key, std::move(f)).first->second.get();
}

const StructuredSignature& Lowering::signature(const clang::FunctionDecl* fn, const std::vector<std::string>& absent,
                                               const ir::Constants& constants) const {
  fn = fn->getDefinition() != nullptr ? fn->getDefinition() : fn;
  return signatures_.at(key(fn, absent, constants));
}

}  // namespace funcgen
