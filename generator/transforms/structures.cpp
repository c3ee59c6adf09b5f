#include "transforms/structures.h"

#include <llvm/Support/FileSystem.h>

#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/Basic/SourceManager.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "ir/cxx_text.h"
#include "ir/types.h"

namespace funcgen::structures {

using pytree::Tree;
using Kind = pytree::Tree::Kind;

namespace {

struct Refused {
  size_t offset;
  std::string message;
  const char* category = "unsupported";
};

// What a header must see to declare functions taking or returning given types: the standard
// headers of their containers, a forward declaration of each user struct and enum, and the header
// that defines a type it cannot declare (a class template, an enum without a fixed type, a type
// inside a class). A function declaration needs no more: its types may be incomplete.
class HeaderDeclarations {
 public:
  HeaderDeclarations(Signature& sig, const clang::ASTContext& context) : sig_(sig), context_(context) {}

  void declare(clang::QualType type) {
    const clang::QualType t = bare(type);
    if (const auto* e = t->getAs<clang::EnumType>()) return enumeration(e->getDecl());
    const auto* record = t->getAsCXXRecordDecl();
    if (record == nullptr || !seen_.insert(record).second) return;
    const std::string name = record_name(t);
    if (name.rfind("std::", 0) == 0 || name.rfind("fg::", 0) == 0) return standard(record, name);
    if (record->getDescribedClassTemplate() != nullptr || llvm::isa<clang::ClassTemplateSpecializationDecl>(record))
      return include_definition(record, "is a class template", "");
    if (record->getName().empty()) return include_definition(record, "has no name of its own (typedef struct {...})", "");
    const char* tag = record->isUnion() ? "union " : record->isClass() ? "class " : "struct ";
    in_scope(record, tag + record->getNameAsString() + ";");
  }

 private:
  // A standard (or fg) type: the header of its container, and what its template arguments need.
  void standard(const clang::CXXRecordDecl* record, const std::string& name) {
    static const std::pair<const char*, const char*> headers[] = {
        {"std::map", "<map>"},         {"std::vector", "<vector>"},        {"std::array", "<array>"},
        {"std::pair", "<utility>"},    {"std::basic_string", "<string>"},  {"std::optional", "<optional>"},
        {"std::function", "<functional>"}, {"std::set", "<set>"},          {"std::unordered_map", "<unordered_map>"},
        {"std::unordered_set", "<unordered_set>"}, {"std::basic_string_view", "<string_view>"},
        {"std::shared_ptr", "<memory>"}, {"std::unique_ptr", "<memory>"},  {"std::variant", "<variant>"}};
    for (const auto& [n, h] : headers)
      if (name == n) sig_.header_lines.push_back(std::string("#include ") + h);
    if (name == "std::map") sig_.header_lines.push_back("#include <string>");
    if (const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(record))
      for (const clang::TemplateArgument& a : spec->getTemplateArgs().asArray()) {
        if (a.getKind() == clang::TemplateArgument::Type) declare(a.getAsType());
        if (a.getKind() == clang::TemplateArgument::Pack)
          for (const clang::TemplateArgument& p : a.pack_elements())
            if (p.getKind() == clang::TemplateArgument::Type) declare(p.getAsType());
      }
  }

  // An enum as a header may declare it without its enumerators (`enum class Mode : int;`).
  void enumeration(const clang::EnumDecl* e) {
    if (!seen_.insert(e).second) return;
    if (!e->isScoped() && !e->isFixed())
      return include_definition(e, "is an enum without a fixed underlying type",
                                "make it an enum class, give it one (enum " + e->getNameAsString() + " : int), or ");
    in_scope(e, std::string(e->isScoped() ? "enum class " : "enum ") + e->getNameAsString() + " : " +
                    e->getIntegerType().getCanonicalType().getAsString(context_.getPrintingPolicy()) + ";");
  }

  // `namespace a { inline namespace b { <what> } }` around `decl`; a type inside a class, a
  // function or an anonymous namespace cannot be declared there: its header is included.
  void in_scope(const clang::NamedDecl* decl, const std::string& what) {
    std::string open, close;
    for (const clang::DeclContext* dc = decl->getDeclContext(); !dc->isTranslationUnit(); dc = dc->getParent()) {
      if (llvm::isa<clang::LinkageSpecDecl>(dc)) continue;
      const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(dc);
      if (ns == nullptr || ns->isAnonymousNamespace())
        return include_definition(decl, ns == nullptr ? "is declared inside a class or function"
                                                      : "is declared in an anonymous namespace", "");
      open = std::string(ns->isInline() ? "inline " : "") + "namespace " + ns->getNameAsString() + " { " + open;
      close += " }";
    }
    sig_.header_lines.push_back(open + what + close);
  }

  // The header that defines `decl` (by absolute path; the emitter makes it relative to the output),
  // or, when the annotated file defines it, sig.problem says what to do.
  void include_definition(const clang::NamedDecl* decl, const std::string& why, const std::string& advice) {
    const clang::SourceManager& sm = context_.getSourceManager();
    const clang::SourceLocation at = sm.getExpansionLoc(decl->getLocation());
    llvm::SmallString<256> path;
    const bool in_main = sm.isWrittenInMainFile(at);
    if (!in_main && !llvm::sys::fs::real_path(sm.getFilename(at), path)) {
      sig_.header_lines.push_back("#include \"" + path.str().str() + "\"");
      return;
    }
    const std::string name = decl->getName().empty() ? "an unnamed type" : "'" + decl->getNameAsString() + "'";
    sig_.problem = name + " " + why + (in_main ? " and is defined in the annotated file" : "") +
                   ", so the generated header cannot declare functions that take it; " + advice +
                   "define it in a header that the file includes";
  }

  Signature& sig_;
  const clang::ASTContext& context_;
  std::set<const clang::Decl*> seen_;
};

Tree leaf(Kind kind, const std::string& cxx_type) {
  Tree t;
  t.kind = kind;
  t.cxx_type = cxx_type;
  return t;
}

size_t passed_count(const Tree& t) { return pytree::leaf_accesses(t, "", true).size(); }

// The leaves the flat function returns: all but the scalars copied from an argument.
size_t returned_count(const Tree& t) {
  if (t.is_leaf()) return t.kind == Kind::Scalar && !t.source.empty() ? 0 : 1;
  size_t n = 0;
  for (const Tree& c : t.children) n += returned_count(c);
  return n;
}

size_t param_index(int64_t a, size_t n) { return static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(n) : a); }

// What grad, jacrev and hessian differentiate with respect to: one argument's structure, or a tuple.
Tree argument_tree(const spec::Transform& t, const Signature& s) {
  std::vector<Tree> items;
  for (int64_t a : t.argnums.argnums) items.push_back(s.params.at(param_index(a, s.params.size())).tree);
  return t.argnums.is_tuple ? pytree::tuple_of(std::move(items)) : items.at(0);
}

// `t` with each tensor leaf replaced by `by` (a jacobian: one block per output element).
Tree replace_tensors(const Tree& t, const Tree& by, const spec::Transform& at) {
  if (t.kind == Kind::Tensor) return by;
  if (t.is_leaf() || by.kind == Kind::Tensor) return t;
  if (t.kind == Kind::Tuple && !t.is_pair()) {
    std::vector<Tree> items;
    for (const Tree& c : t.children) items.push_back(replace_tensors(c, by, at));
    return pytree::tuple_of(std::move(items));
  }
  throw Refused{at.offset, std::string(spec::name_of(at.kind)) + " of a function that returns '" + t.cxx_type +
                               "' with respect to a structure would put a structure in each of its tensors' places; "
                               "return std::tuple, or differentiate with respect to tensors"};
}

// has_aux=True: the function returns (output, aux), one tensor and then a tensor or any structure
// of tensors (torch.func's aux pytree). The flat function returns the output and then the aux's
// leaves, which the flat transforms return as one value, or a tuple of them (`flat`).
Tree aux_of(const spec::Transform& t, const Signature& s, bool flat) {
  const Tree& r = s.result;
  if (r.kind != Kind::Tuple || r.children.size() < 2 || r.children[0].kind != Kind::Tensor ||
      (!flat && r.children.size() != 2))
    throw Refused{t.offset, "has_aux=True needs a function that returns std::tuple<fg::Tensor, Aux> (its output and "
                            "its aux values, a tensor or a structure of them), but it returns '" + r.cxx_type + "'"};
  // (a returned structure holds only tensors: the lowering reports the others at the function)
  if (!flat || r.children.size() == 2) return r.children[1];
  return pytree::tuple_of(std::vector<Tree>(r.children.begin() + 1, r.children.end()));
}

// grad and jacobians with has_aux: (what they return, the aux).
Tree with_aux(const spec::Transform& t, const Tree& result, const Signature& s, bool flat) {
  if (!t.has_aux) return result;
  return pytree::tuple_of({result, aux_of(t, s, flat)});
}

// The output a transform differentiates: the result, or its first element with has_aux.
Tree output_of(const spec::Transform& t, const Signature& s) { return t.has_aux ? s.result.children.at(0) : s.result; }

// `s` (the user's signature, or with `flat` the flat function's) after the transform `t`.
Signature apply(const spec::Transform& t, const Signature& s, bool flat) {
  Signature r = s;
  switch (t.kind) {
    case spec::TransformKind::Function:
    case spec::TransformKind::Vmap: break;
    case spec::TransformKind::Grad: r.result = with_aux(t, argument_tree(t, s), s, flat); break;
    case spec::TransformKind::GradAndValue:  // (gradient, (output, aux)): the value is the result
      if (!t.has_aux) {
        r.result = pytree::tuple_of({argument_tree(t, s), s.result});
        break;
      }
      r.result = pytree::tuple_of({argument_tree(t, s), [&] {
                                     Tree aux = aux_of(t, s, flat);  // checks the result's shape first
                                     return pytree::tuple_of({s.result.children.at(0), std::move(aux)});
                                   }()});
      break;
    case spec::TransformKind::Jacrev:
    case spec::TransformKind::Jacfwd:
      if (t.has_aux) aux_of(t, s, flat);  // checked before the output is taken from it
      r.result = with_aux(t, replace_tensors(output_of(t, s), argument_tree(t, s), t), s, flat);
      break;
    case spec::TransformKind::Hessian: {
      const Tree a = argument_tree(t, s);
      r.result = replace_tensors(s.result, replace_tensors(a, a, t), t);
      break;
    }
    case spec::TransformKind::Jvp: {
      for (const Param& p : s.params) {
        if (p.tree.tensors() == 0 && pytree::optional_paths(p.tree, p.name).empty()) continue;
        Param tangent = p;
        tangent.name = "tangent_" + p.name;
        tangent.cxx_decl = "const " + p.tree.cxx_type + "& " + tangent.name;
        std::vector<Tree*> leaves;
        tangent.tree.leaves(leaves);
        for (Tree* l : leaves)
          if (l->kind == Kind::Scalar) l->passed = false;
        r.params.push_back(std::move(tangent));
      }
      // (output, its tangent) or, with has_aux, (output, its tangent, aux)
      if (!t.has_aux) {
        r.result = pytree::tuple_of({s.result, s.result});
        break;
      }
      Tree aux = aux_of(t, s, flat);  // checks the result's shape first
      r.result = pytree::tuple_of({s.result.children.at(0), s.result.children.at(0), std::move(aux)});
      break;
    }
    case spec::TransformKind::Vjp:
    case spec::TransformKind::Linearize:  // the result's structure; callable_wrapper adds the function
      if (t.has_aux) aux_of(t, s, flat);  // (output, aux): the pullback differentiates the output
      for (const Param& p : s.params) {  // the function object keeps the numbers of the structures
        std::vector<const Tree*> leaves;
        p.tree.leaves(leaves);
        const std::vector<std::string> at = pytree::leaf_accesses(p.tree, p.name);
        for (size_t i = 0; i < leaves.size(); ++i)
          if (p.tree.tensors() != 0 && leaves[i]->kind == Kind::Scalar && !ir::is_scalar(leaves[i]->scalar_type))
            throw Refused{t.offset, std::string(spec::name_of(t.kind)) + " of a function whose argument '" + p.name +
                                        "' holds '" + at[i] + "', neither a tensor nor a number, cannot be generated "
                                        "yet; keep only tensors and numbers in it"};
      }
      break;
  }
  return r;
}

// An in_dims entry over the leaves of the structure `t` (`what` names it for messages): an int or
// None maps every tensor leaf; a tuple gives one entry per field or element, as torch.func matches
// an in_dims pytree to its argument's.
void spread_dims(const Tree& t, const spec::DimTree& d, const std::string& what, spec::DimsOption& out) {
  if (!d.is_tuple) {
    std::vector<const Tree*> leaves;
    t.leaves(leaves);
    for (const Tree* l : leaves) {
      if (!l->passed) continue;
      out.dims.push_back(l->kind == Kind::Tensor ? d.dim : spec::Dim());
      out.item_offsets.push_back(d.offset);
    }
    return;
  }
  const bool has_fields = t.kind == Kind::Record || t.kind == Kind::Tuple || t.kind == Kind::Array;
  if (!has_fields)
    throw Refused{d.offset,
                  "in_dims gives a tuple for '" + what + "' (" + t.cxx_type + "), which " +
                      (t.kind == Kind::Tensor     ? std::string("is one tensor")
                       : t.kind == Kind::Optional ? std::string("holds one tensor or none")
                       : t.is_leaf() ? std::string("is not a structure")
                                     : "holds as many elements as the caller passes") +
                      "; give one int or None for it",
                  "spec"};
  if (d.items.size() != t.children.size())
    throw Refused{d.offset,
                  "in_dims gives " + std::to_string(d.items.size()) + " entr" + (d.items.size() == 1 ? "y" : "ies") +
                      " for '" + what + "' (" + t.cxx_type + "), which has " + std::to_string(t.children.size()) +
                      "; give one int or None per " + (t.kind == Kind::Record ? "field" : "element") +
                      ", or one for the whole structure",
                  "spec"};
  for (size_t k = 0; k < d.items.size(); ++k)
    spread_dims(t.children[k], d.items[k], pytree::access(t, k, what), out);
}

// The transform's options over the flat function's parameters, given the user's signature that
// it applies to.
std::shared_ptr<spec::Transform> spread(const spec::Transform& t, const Signature& user) {
  auto c = std::make_shared<spec::Transform>(t);
  if (t.kind == spec::TransformKind::Vmap) {
    if (t.in_dims.per_item) {
      c->in_dims.dims.clear();
      c->in_dims.item_offsets.clear();
      for (size_t i = 0; i < user.params.size(); ++i)
        spread_dims(user.params[i].tree, t.in_dims.trees.at(i), user.params[i].name, c->in_dims);
    }
    if (t.out_dims.per_item) {
      for (const spec::Dim& d : t.out_dims.dims)
        if (d != t.out_dims.dims[0])
          throw Refused{t.out_dims.offset, "out_dims with different dims per output cannot be spread over a structured "
                                           "result yet; give one out_dims for all outputs"};
      c->out_dims.per_item = false;
      c->out_dims.dims = {t.out_dims.dims[0]};
    }
  }
  if (t.kind == spec::TransformKind::Grad || t.kind == spec::TransformKind::GradAndValue ||
      t.kind == spec::TransformKind::Jacrev || t.kind == spec::TransformKind::Jacfwd ||
      t.kind == spec::TransformKind::Hessian) {
    std::vector<size_t> first;  // each user parameter's first flat parameter
    size_t n = 0;
    for (const Param& p : user.params) {
      first.push_back(n);
      n += passed_count(p.tree);
    }
    c->argnums.argnums.clear();
    c->argnums.item_offsets.clear();
    for (size_t k = 0; k < t.argnums.argnums.size(); ++k) {
      const size_t a = param_index(t.argnums.argnums[k], user.params.size());
      const Tree& tree = user.params[a].tree;
      c->argnums.is_tuple = c->argnums.is_tuple || !tree.is_leaf();
      std::vector<const Tree*> leaves;
      tree.leaves(leaves);
      size_t at = first[a];
      for (const Tree* l : leaves) {
        if (!l->passed) continue;
        if (l->kind == Kind::Tensor) {
          c->argnums.argnums.push_back(static_cast<int64_t>(at));
          c->argnums.item_offsets.push_back(t.argnums.item_offsets.empty() ? t.offset : t.argnums.item_offsets[k]);
        }
        ++at;
      }
    }
  }
  return c;
}

std::string bare_spelling(const clang::QualType t, const clang::ASTContext& context) {
  return cxx_spelling(without_user_aliases(t.getNonReferenceType().getUnqualifiedType(), context), context);
}

}  // namespace

HeaderNeeds header_needs(const clang::FunctionDecl& fn, const clang::ASTContext& context) {
  Signature s;
  HeaderDeclarations header(s, context);
  if (const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(&fn); method != nullptr && !method->isStatic())
    header.declare(method->getThisType()->getPointeeType());
  for (const clang::ParmVarDecl* p : fn.parameters()) header.declare(p->getType());
  header.declare(fn.getReturnType());
  return HeaderNeeds{std::move(s.header_lines), std::move(s.problem)};
}

Signature user_signature(const clang::FunctionDecl& fn, const std::vector<std::optional<pytree::Tree>>& params,
                         const std::optional<pytree::Tree>& result, const clang::ASTContext& context) {
  Signature s;
  HeaderNeeds needs = header_needs(fn, context);
  s.header_lines = std::move(needs.lines);
  s.problem = std::move(needs.problem);
  size_t first = 0;  // params' index of the first declared parameter
  if (const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(&fn); method != nullptr && !method->isStatic()) {
    Param self;  // the object, the first parameter of the generated free functions (lower.h)
    self.name = "self";
    self.tree = *params.at(0);
    self.cxx_decl = "const " + self.tree.cxx_type + "& self";
    s.params.push_back(std::move(self));
    first = 1;
  }
  for (unsigned i = 0; i < fn.getNumParams(); ++i) {
    const clang::ParmVarDecl* p = fn.getParamDecl(i);
    Param param;
    param.name = p->getNameAsString();
    if (first + i < params.size() && params[first + i]) {
      param.tree = *params[first + i];
      // (a structure the user takes by non-const reference stays one: the flat function may take
      // its leaves as fg::Tensor&, which a const structure's leaves cannot bind to)
      const clang::QualType type = p->getType();
      const bool writable = type->isLValueReferenceType() && !type.getNonReferenceType().isConstQualified();
      param.cxx_decl = (writable ? "" : "const ") + param.tree.cxx_type + "& " + param.name;
    } else if (ir::is_tensor_like(ir_type_of(p->getType()))) {
      param.tree = leaf(Kind::Tensor, bare_spelling(p->getType(), context));
      param.cxx_decl = "const " + param.tree.cxx_type + "& " + param.name;
    } else {
      param.tree = leaf(Kind::Scalar, bare_spelling(p->getType(), context));
      param.tree.source = param.name;
      param.cxx_decl = cxx_spelling(without_user_aliases(p->getType(), context), context) + " " + param.name;
    }
    s.params.push_back(std::move(param));
  }
  const clang::QualType ret = fn.getReturnType();
  if (result) {
    s.result = *result;
  } else if (record_name(ret) == "std::tuple") {
    std::vector<Tree> items;
    for (const clang::TemplateArgument& a : llvm::cast<clang::ClassTemplateSpecializationDecl>(bare(ret)->getAsCXXRecordDecl())
                                                ->getTemplateArgs()[0]
                                                .pack_elements())
      items.push_back(is_fg_tensor(a.getAsType()) ? leaf(Kind::Tensor, "fg::Tensor")
                                                   : leaf(Kind::Scalar, bare_spelling(a.getAsType(), context)));
    s.result = pytree::tuple_of(std::move(items));
  } else {
    s.result = leaf(Kind::Tensor, bare_spelling(ret, context));
  }
  return s;
}

Signature flat_signature(const ir::Function& fn, const Signature& user) {
  Signature s;
  for (int id : fn.params) {
    const ir::Var& v = fn.var(id);
    Param p;
    p.name = v.name;
    p.tree = leaf(ir::is_tensor_like(v.type) ? Kind::Tensor : Kind::Scalar, v.cxx_type);
    p.cxx_decl = v.cxx_type + " " + v.name;
    s.params.push_back(std::move(p));
  }
  std::vector<const Tree*> leaves;
  user.result.leaves(leaves);
  std::vector<Tree> items;
  for (const Tree* l : leaves) items.push_back(*l);
  s.result = items.size() == 1 ? items[0] : pytree::tuple_of(std::move(items));
  return s;
}

std::optional<Flat> flatten(const std::vector<SpecLink>& chain, const Signature& user, const Signature& flat,
                            Refusal& refusal) {
  Flat out;
  out.user = user;
  out.flat = flat;
  out.chain = chain;
  for (size_t k = chain.size(); k-- > 0;) {
    const spec::Transform& t = *chain[k].t;
    if (t.kind == spec::TransformKind::Function) continue;
    try {
      std::shared_ptr<spec::Transform> c = spread(t, out.user);
      Signature next_user = apply(t, out.user, false);
      out.flat = apply(*c, out.flat, true);
      out.user = std::move(next_user);
      out.chain[k].t = c.get();
      out.owned.push_back(std::move(c));
    } catch (const Refused& r) {
      refusal = Refusal{chain[k], r.offset, r.message, r.category};
      return std::nullopt;
    }
  }
  std::vector<const Tree*> flat_leaves;
  out.flat.result.leaves(flat_leaves);
  if (returned_count(out.user.result) != flat_leaves.size()) {
    refusal = Refusal{chain[0], chain[0].t->offset,
                      "funcgen cannot rebuild the structures of this spec's result (" + out.user.result.cxx_type +
                          "); differentiate with respect to fewer structures"};
    return std::nullopt;
  }
  return out;
}

namespace {

// The structured function's parameters, the flat function's arguments made of their leaves, and
// the checks that vectors and maps hold what the function reads.
struct Call {
  std::vector<std::string> params, args, checks;
};

Call call_of(const std::string& name, const Flat& flat) {
  const Signature& u = flat.user;
  Call c;
  std::vector<std::string>& params = c.params;
  std::vector<std::string>& args = c.args;
  std::vector<std::string>& checks = c.checks;
  for (const Param& p : u.params) {
    params.push_back(p.cxx_decl);
    for (std::string& a : pytree::leaf_accesses(p.tree, p.name, true)) args.push_back(std::move(a));
    // A vector or map must hold what the function reads, no more: the leaves are all of it.
    std::function<void(const Tree&, const std::string&)> check = [&](const Tree& t, const std::string& at) {
      if (t.kind == Kind::Vector)
        checks.push_back("fg::detail::expect_elements(" + at + ", " + std::to_string(t.children.size()) + ", " +
                         cxx::string_literal(name) + ", " + cxx::string_literal(at) + ");");
      if (t.kind == Kind::Map) {
        std::vector<std::string> keys;
        for (const std::string& k : t.keys) keys.push_back(cxx::string_literal(k));
        checks.push_back("fg::detail::expect_keys(" + at + ", {" + cxx::join(keys) + "}, " + cxx::string_literal(name) +
                         ", " + cxx::string_literal(at) + ");");
      }
      if (t.kind == Kind::Vector || t.kind == Kind::Map) return;
      for (size_t i = 0; i < t.children.size(); ++i) check(t.children[i], pytree::access(t, i, at));
    };
    check(p.tree, p.name);
  }
  return c;
}

// The tensor leaves of `t` (the list a vector read in loops is, too) from `root`.
std::vector<std::string> tensor_accesses(const Tree& t, const std::string& root) {
  std::vector<const Tree*> leaves;
  t.leaves(leaves);
  const std::vector<std::string> all = pytree::leaf_accesses(t, root);
  std::vector<std::string> out;
  for (size_t i = 0; i < leaves.size(); ++i)
    if (leaves[i]->kind == Kind::Tensor) out.push_back(all[i]);
  return out;
}

// `flat`'s outputs (the flat function's, from `root`) in the structure of the user's result.
std::string structured_result(const Flat& flat, const std::string& root) {
  if (!pytree::is_structured(flat.user.result)) return root;
  size_t next = 0;
  return pytree::build(flat.user.result, pytree::leaf_accesses(flat.flat.result, root), next);
}

// The aux `t` from the flat function's aux values at `root`: one value, or a tuple of them.
std::string aux_result(const Tree& t, const std::string& root) {
  std::vector<std::string> leaves;
  const size_t n = t.tensors();
  for (size_t k = 0; k < n; ++k) leaves.push_back(n == 1 ? root : "std::get<" + std::to_string(k) + ">(" + root + ")");
  size_t next = 0;
  return pytree::build(t, leaves, next);
}

bool takes_tensors(const Tree& t) { return t.tensors() != 0 || !pytree::optional_paths(t, "").empty(); }

// `b.has_value()`, `!p.bias.has_value()`: the tests that the optionals of `params` (rooted at their
// names plus `suffix`) hold tensors as they do in this case (with `differ`, that each does not).
std::vector<std::string> presence_tests(const std::vector<Param>& params, const std::string& suffix, bool differ = false) {
  std::vector<std::string> tests;
  for (const Param& p : params)
    for (const auto& [at, present] : pytree::optionals(p.tree, p.name + suffix))
      tests.push_back((present != differ ? "" : "!") + at + ".has_value()");
  return tests;
}

// vjp and linearize: the structured function returns its outputs and a function object that wraps
// the flat one's: the pullback takes cotangents structured as the outputs and returns a gradient
// structured as each primal that holds tensors (keeping a copy of those with other fields, whose
// values the gradients carry); jvp_fn takes tangents structured as the primals. With optionals,
// each case has a flat function (and function object) of its own; the structured one holds the
// case's in a std::variant.
Wrapper callable_wrapper(const std::string& name, const std::vector<Specialization>& cases, bool vjp) {
  const Signature& u = cases.at(0).flat.user;
  // vjp with has_aux: (output, pullback, aux); the pullback takes the output's cotangent only.
  const bool has_aux = vjp && cases.at(0).flat.chain.front().t->has_aux;
  const Tree& output = has_aux ? u.result.children.at(0) : u.result;
  const std::string kind = vjp ? "pullback" : "jvp_fn";
  const std::string type = name + "_" + kind;
  std::vector<std::string> flat_types;  // of the cases that run (the others raise their error)
  std::vector<size_t> alternative(cases.size(), 0);
  for (size_t k = 0; k < cases.size(); ++k) {
    alternative[k] = flat_types.size();
    if (cases[k].error.empty()) flat_types.push_back(cases[k].flat_name + "_" + kind);
  }
  const bool one = cases.size() == 1;
  std::vector<std::string> members = {(one ? flat_types[0] : "std::variant<" + cxx::join(flat_types) + ">") + " flat;"};
  std::vector<std::string> member_values = {"std::move(std::get<1>(flat__))"};
  std::map<std::string, std::string> kept;  // a number of a structure -> the member that keeps it
  std::vector<std::string> call_params, cotangents;
  std::string ret;
  if (vjp) {
    if (pytree::is_structured(output) || output.kind == Kind::Tensor) {
      call_params.push_back("const " + output.cxx_type + "& ct");
      cotangents = tensor_accesses(output, "ct");
    } else {  // a tuple of tensors: one cotangent each, as the flat pullback takes them
      for (size_t k = 0; k < output.children.size(); ++k) {
        call_params.push_back("const fg::Tensor& ct" + std::to_string(k));
        cotangents.push_back("ct" + std::to_string(k));
      }
    }
    std::vector<std::string> types;
    for (const Param& p : u.params) {
      if (!takes_tensors(p.tree)) continue;
      types.push_back(p.tree.cxx_type);
      std::vector<const Tree*> leaves;
      p.tree.leaves(leaves);
      for (const Tree* l : leaves) {  // its numbers are copied into its gradient: the function object keeps them
        if (l->kind != Kind::Scalar || l->source.empty() || kept.count(l->source) != 0) continue;
        std::string member = cxx::identifier_of(l->source) + "__";
        while (std::any_of(kept.begin(), kept.end(), [&](const auto& k) { return k.second == member; })) member += "_";
        kept[l->source] = member;
        members.push_back(l->cxx_type + " " + member + ";");
        member_values.push_back(l->source);
      }
    }
    ret = "std::tuple<" + cxx::join(types) + ">";
  } else {
    for (const Param& p : u.params)
      if (takes_tensors(p.tree)) call_params.push_back("const " + p.tree.cxx_type + "& " + p.name + "_tangent");
    ret = u.result.cxx_type;
  }
  // What one case's function object (`f`) does with the arguments.
  const auto apply = [&](const Specialization& c, const std::string& f, const std::string& indent) {
    if (vjp) {
      std::vector<std::string> grads, results;  // the flat pullback's: one per tensor (or list) parameter
      size_t n = 0, next = 0;
      for (const Param& p : c.flat.user.params) n += tensor_accesses(p.tree, p.name).size();
      for (size_t k = 0; k < n; ++k) grads.push_back("std::get<" + std::to_string(k) + ">(grads__)");
      for (const Param& p : c.flat.user.params) {
        if (!takes_tensors(p.tree)) continue;
        Tree tree = p.tree;
        std::vector<Tree*> leaves;
        tree.leaves(leaves);
        for (Tree* l : leaves)
          if (l->kind == Kind::Scalar && kept.count(l->source) != 0) l->source = kept.at(l->source);
        results.push_back(pytree::build(tree, grads, next));
      }
      return indent + "const auto grads__ = " + f + "(" + cxx::join(cotangents) + ");\n" + indent + "return " + ret +
             "{" + cxx::join(results) + "};\n";
    }
    std::vector<std::string> args;
    for (const Param& p : c.flat.user.params)
      for (std::string& a : tensor_accesses(p.tree, p.name + "_tangent")) args.push_back(std::move(a));
    std::string body;
    if (!one) {
      std::vector<std::string> tests = presence_tests(c.flat.user.params, "_tangent", true);
      if (!tests.empty())
        body += indent + "if (" + cxx::join(tests, " || ") + ")\n" + indent + "  throw fg::Error(" +
                cxx::string_literal(type + ": each tangent must hold a tensor where its primal holds one, and none "
                                           "where it holds none") + ");\n";
    }
    return body + indent + "const auto tangent__ = " + f + "(" + cxx::join(args) + ");\n" + indent + "return " +
           structured_result(c.flat, "tangent__") + ";\n";
  };
  std::string call_body;
  if (one) {
    call_body = apply(cases[0], "flat", "  ");
  } else {
    for (size_t k = 0; k < cases.size(); ++k)
      if (cases[k].error.empty())
        call_body += "  if (const auto* f = std::get_if<" + std::to_string(alternative[k]) + ">(&flat)) {\n" +
                     apply(cases[k], "(*f)", "    ") + "  }\n";
    call_body += "  throw fg::Error(" + cxx::string_literal(type + ": holds no function") + ");  // (a variant is never empty)\n";
  }
  const std::string signature = "std::tuple<" + output.cxx_type + ", " + type +
                                (has_aux ? ", " + u.result.children.at(1).cxx_type : "") + "> " + name + "(" +
                                cxx::join(call_of(name, cases[0].flat).params) + ")";
  Wrapper w;
  w.declaration = "// The " + kind + " that " + name + " returns, on the structures of its arguments.\nstruct " + type + " {\n";
  for (const std::string& m : members) w.declaration += "  " + m + "\n";
  w.declaration += "  " + ret + " operator()(" + cxx::join(call_params) + ") const;\n};\n" + signature + ";\n";
  w.definition = ret + " " + type + "::operator()(" + cxx::join(call_params) + ") const {\n" + call_body + "}\n\n";
  w.definition += "// " + name + " on the structures of its arguments: funcgen transforms the flat function above.\n" +
                  signature + " {\n";
  for (size_t k = 0; k < cases.size(); ++k) {
    const Specialization& c = cases[k];
    const bool last = k + 1 == cases.size();
    const std::string indent = last ? "  " : "    ";
    if (!last) w.definition += "  if (" + cxx::join(presence_tests(c.flat.user.params, ""), " && ") + ") {\n";
    if (!c.error.empty()) {
      w.definition += indent + "throw fg::Error(" + cxx::string_literal(c.error) + ");\n";
    } else {
      for (const std::string& check : call_of(name, c.flat).checks) w.definition += indent + check + "\n";
      w.definition += indent + "auto flat__ = " + c.flat_name + "(" + cxx::join(call_of(name, c.flat).args) + ");\n";
      // (has_aux: the output is one tensor; the aux's leaves are one value, or a tuple of them)
      w.definition += indent + "return {" +
                      (has_aux ? "std::get<0>(flat__)" : structured_result(c.flat, "std::get<0>(flat__)")) + ", " +
                      type + "{" + cxx::join(member_values) + "}" +
                      (has_aux ? ", " + aux_result(u.result.children.at(1), "std::get<2>(flat__)") : "") + "};\n";
    }
    if (!last) w.definition += "  }\n";
  }
  w.definition += "}\n";
  return w;
}

}  // namespace

std::string callable_flat_name(const std::string& name) { return name + "__flat"; }

std::string flat_name(const std::string& name, const Flat& flat) {
  const spec::TransformKind outer = flat.chain.front().t->kind;
  const bool callable = outer == spec::TransformKind::Vjp || outer == spec::TransformKind::Linearize;
  const bool same_params =
      std::all_of(flat.user.params.begin(), flat.user.params.end(), [](const Param& p) { return p.tree.is_leaf(); });
  return callable || same_params ? callable_flat_name(name) : name;
}

namespace {

std::string signature_of(const std::string& name, const Flat& flat) {
  return flat.user.result.cxx_type + " " + name + "(" + cxx::join(call_of(name, flat).params) + ")";
}

// The statements that check the structures, call `flat_name` with their leaves and return its
// result in the user's structure (`indent` before each).
std::string call_body(const std::string& name, const std::string& flat_name, const Flat& flat, const std::string& indent) {
  const Call c = call_of(name, flat);
  std::string body;
  for (const std::string& check : c.checks) body += indent + check + "\n";
  const std::string call = flat_name + "(" + cxx::join(c.args) + ")";
  if (!pytree::is_structured(flat.user.result)) return body + indent + "return " + call + ";\n";  // the same result
  body += indent + "const auto flat = " + call + ";\n";
  const std::vector<std::string> leaves = pytree::leaf_accesses(flat.flat.result, "flat");
  size_t next = 0;
  return body + indent + "return " + pytree::build(flat.user.result, leaves, next) + ";\n";
}

}  // namespace

Wrapper wrapper(const std::string& name, const Flat& flat) {
  const spec::TransformKind outer = flat.chain.front().t->kind;
  if (outer == spec::TransformKind::Vjp || outer == spec::TransformKind::Linearize)
    return callable_wrapper(name, {Specialization{flat, callable_flat_name(name), ""}}, outer == spec::TransformKind::Vjp);
  const std::string signature = signature_of(name, flat), flat_function = flat_name(name, flat);
  Wrapper w;
  w.declaration = signature + ";\n";
  w.definition = "// " + name + " on the structures of its arguments and results: funcgen transforms the flat " +
                 (flat_function == name ? std::string("overload") : "'" + flat_function + "'") + " above.\n" +
                 signature + " {\n" + call_body(name, flat_function, flat, "  ") + "}\n";
  return w;
}

std::vector<std::string> optional_paths(const clang::FunctionDecl& fn, const clang::ASTContext& context) {
  std::vector<std::string> out;
  const auto add = [&](clang::QualType type, const std::string& root) {
    if (std::optional<Tree> t = pytree::tree_of(type, context))
      for (std::string& p : pytree::optional_paths(*t, root)) out.push_back(std::move(p));
  };
  if (const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(&fn); method != nullptr && !method->isStatic())
    add(method->getThisType()->getPointeeType(), "self");
  for (const clang::ParmVarDecl* p : fn.parameters()) add(p->getType(), p->getNameAsString());
  return out;
}

Wrapper specialized_wrapper(const std::string& name, const std::vector<Specialization>& cases) {
  const spec::TransformKind outer = cases.at(0).flat.chain.front().t->kind;
  if (outer == spec::TransformKind::Vjp || outer == spec::TransformKind::Linearize) {
    std::vector<Specialization> callables = cases;
    for (Specialization& c : callables) c.flat_name = callable_flat_name(c.flat_name);
    return callable_wrapper(name, callables, outer == spec::TransformKind::Vjp);
  }
  const std::string signature = signature_of(name, cases.at(0).flat);
  std::string body;
  for (size_t k = 0; k < cases.size(); ++k) {
    const Specialization& c = cases[k];
    // the primals' optionals and, under jvp, the tangents'
    const std::vector<std::string> tests = presence_tests(c.flat.user.params, "");
    // Without tangents, the cases are every combination: the last needs no test.
    const bool last = k + 1 == cases.size() && (size_t{1} << tests.size()) == cases.size();
    const std::string indent = last ? "  " : "    ";
    if (!last) body += "  if (" + cxx::join(tests, " && ") + ") {\n";
    body += c.error.empty() ? call_body(name, c.flat_name, c.flat, indent)
                            : indent + "throw fg::Error(" + cxx::string_literal(c.error) + ");\n";
    if (last) break;
    body += "  }\n";
    if (k + 1 == cases.size())
      body += "  throw fg::Error(" + cxx::string_literal(name + ": each tangent must hold a tensor where its primal "
                                                            "holds one, and none where it holds none") + ");\n";
  }
  Wrapper w;
  w.declaration = signature + ";\n";
  w.definition = "// " + name + " on the structures of its arguments: funcgen specializes it on which optionals hold\n"
                 "// tensors, and calls the flat function of that case above.\n" + signature + " {\n" + body + "}\n";
  return w;
}

}  // namespace funcgen::structures
