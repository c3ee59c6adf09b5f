#include "frontend/pytree.h"

#include <algorithm>

#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>

#include "ir/cxx_text.h"
#include "ir/types.h"

namespace funcgen::pytree {

size_t Tree::tensors() const {
  if (kind == Kind::Tensor) return 1;
  size_t n = 0;
  for (const Tree& c : children) n += c.tensors();
  return n;
}

void Tree::leaves(std::vector<const Tree*>& out) const {
  if (is_leaf()) out.push_back(this);
  for (const Tree& c : children) c.leaves(out);
}

void Tree::leaves(std::vector<Tree*>& out) {
  if (is_leaf()) out.push_back(this);
  for (Tree& c : children) c.leaves(out);
}

std::string access(const Tree& t, size_t i, const std::string& root) {
  switch (t.kind) {
    case Tree::Kind::Record: return root + "." + t.keys[i];
    case Tree::Kind::Tuple:
      return t.is_pair() ? root + "." + t.keys[i] : "std::get<" + std::to_string(i) + ">(" + root + ")";
    case Tree::Kind::Array:
    case Tree::Kind::Vector: return root + "[" + std::to_string(i) + "]";
    case Tree::Kind::Map: return root + ".at(" + cxx::string_literal(t.keys[i]) + ")";
    case Tree::Kind::Optional: return "(*" + root + ")";
    default: return root;
  }
}

namespace {
void collect(const Tree& t, const std::string& at, bool passed_only, std::vector<std::string>& out) {
  if (t.is_leaf()) {
    if (t.passed || !passed_only) out.push_back(at);
    return;
  }
  for (size_t i = 0; i < t.children.size(); ++i) collect(t.children[i], access(t, i, at), passed_only, out);
}
}  // namespace

std::vector<std::string> leaf_accesses(const Tree& t, const std::string& root, bool passed_only) {
  std::vector<std::string> out;
  collect(t, root, passed_only, out);
  return out;
}

std::string build(const Tree& t, const std::vector<std::string>& tensors, size_t& next) {
  if (t.kind == Tree::Kind::Scalar && !t.source.empty()) return t.source;
  if (t.is_leaf()) return tensors.at(next++);
  std::string items;
  for (size_t i = 0; i < t.children.size(); ++i) {
    if (i) items += ", ";
    const std::string item = build(t.children[i], tensors, next);
    items += t.kind == Tree::Kind::Map ? "{" + cxx::string_literal(t.keys[i]) + ", " + item + "}" : item;
  }
  return t.cxx_type + "{" + items + "}";
}

bool is_structured(const Tree& t) {
  if (t.kind == Tree::Kind::Tensor) return false;
  if (t.kind != Tree::Kind::Tuple || t.is_pair()) return true;
  for (const Tree& c : t.children)
    if (!c.is_leaf()) return true;
  return false;
}

Tree tuple_of(std::vector<Tree> items) {
  Tree t;
  t.kind = Tree::Kind::Tuple;
  t.cxx_type = "std::tuple<";
  for (size_t i = 0; i < items.size(); ++i) t.cxx_type += (i ? ", " : "") + items[i].cxx_type;
  t.cxx_type += ">";
  t.children = std::move(items);
  return t;
}

namespace {
void collect_optionals(const Tree& t, const std::string& at, std::vector<std::pair<std::string, bool>>& out) {
  if (t.kind == Tree::Kind::Optional) {
    out.emplace_back(at, !t.children.empty());
    return;
  }
  if (t.kind == Tree::Kind::Vector || t.kind == Tree::Kind::Map) return;
  for (size_t i = 0; i < t.children.size(); ++i) collect_optionals(t.children[i], access(t, i, at), out);
}
}  // namespace

std::vector<std::pair<std::string, bool>> optionals(const Tree& t, const std::string& root) {
  std::vector<std::pair<std::string, bool>> out;
  collect_optionals(t, root, out);
  return out;
}

std::vector<std::string> optional_paths(const Tree& t, const std::string& root) {
  std::vector<std::string> out;
  for (auto& [path, present] : optionals(t, root)) out.push_back(std::move(path));
  return out;
}

namespace {

std::optional<Tree> node_of(clang::QualType type, const clang::ASTContext& context, std::string* why, int depth);

// An element type inside a structure: a tree, or a scalar passed through.
std::optional<Tree> element_of(clang::QualType type, const clang::ASTContext& context, std::string* why, int depth) {
  if (!holds_tensors(type)) {
    Tree leaf;
    leaf.kind = Tree::Kind::Scalar;
    leaf.cxx_type = cxx_spelling(bare(type), context);
    leaf.scalar_type = ir_type_of(type);
    return leaf;
  }
  return node_of(type, context, why, depth + 1);
}

std::optional<Tree> fail(std::string* why, const std::string& text) {
  if (why != nullptr && why->empty()) *why = text;
  return std::nullopt;
}

std::optional<Tree> node_of(clang::QualType type, const clang::ASTContext& context, std::string* why, int depth) {
  const clang::QualType t = bare(type);
  if (depth > 16) return fail(why, "it nests too deeply");
  if (is_fg_tensor(t)) {
    Tree leaf;
    leaf.cxx_type = "fg::Tensor";
    return leaf;
  }
  const std::string spelled = cxx_spelling(t, context);
  const std::string name = record_name(t);
  const auto* record = t->getAsCXXRecordDecl();
  if (record == nullptr) return fail(why, "'" + spelled + "' holds tensors behind a pointer; pass the tensors by value or reference");
  Tree tree;
  tree.cxx_type = spelled;
  if (name == "std::tuple" || name == "std::pair") {
    tree.kind = Tree::Kind::Tuple;
    const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(record);
    std::vector<clang::QualType> args;
    for (const clang::TemplateArgument& a : spec->getTemplateArgs().asArray()) {
      if (a.getKind() == clang::TemplateArgument::Pack) {
        for (const clang::TemplateArgument& p : a.pack_elements()) args.push_back(p.getAsType());
      } else {
        args.push_back(a.getAsType());
      }
    }
    if (name == "std::pair") tree.keys = {"first", "second"};
    for (clang::QualType a : args) {
      std::optional<Tree> c = element_of(a, context, why, depth);
      if (!c) return std::nullopt;
      tree.children.push_back(std::move(*c));
    }
    return tree;
  }
  if (name == "std::array") {
    tree.kind = Tree::Kind::Array;
    const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(record);
    const uint64_t n = spec->getTemplateArgs()[1].getAsIntegral().getZExtValue();
    std::optional<Tree> c = element_of(spec->getTemplateArgs()[0].getAsType(), context, why, depth);
    if (!c) return std::nullopt;
    tree.children.assign(n, *c);
    return tree;
  }
  if (name == "std::optional") {
    if (!is_fg_tensor(template_arg(t, 0)))
      return fail(why, "'" + spelled + "' holds tensors in a std::optional of a structure; use std::optional<fg::Tensor> "
                       "for each optional tensor");
    tree.kind = Tree::Kind::Optional;
    tree.cxx_type = "std::optional<fg::Tensor>";
    Tree value;
    value.cxx_type = "fg::Tensor";
    tree.children.push_back(std::move(value));
    return tree;
  }
  if (name == "std::vector" || name == "std::map") {
    const bool map = name == "std::map";
    const clang::QualType element = template_arg(t, map ? 1 : 0);
    if (!is_fg_tensor(element) || (map && record_name(template_arg(t, 0)) != "std::basic_string"))
      return fail(why, "'" + spelled + "' holds tensors in a container funcgen cannot see into; use " +
                           (map ? "std::map<std::string, fg::Tensor>" : "std::vector<fg::Tensor>") + " or a struct" +
                           (map || !holds_tensors(element) ? ""
                                                           : " (a helper of this file may take a std::vector of "
                                                             "structures by const reference: funcgen transforms it "
                                                             "for the length of the local vector it is passed)"));
    tree.kind = map ? Tree::Kind::Map : Tree::Kind::Vector;
    tree.cxx_type = map ? "std::map<std::string, fg::Tensor>" : "std::vector<fg::Tensor>";
    return tree;
  }
  if (name.rfind("std::", 0) == 0 || name.rfind("fg::", 0) == 0)
    return fail(why, "'" + spelled + "' holds tensors in a type funcgen cannot see into; use a struct, std::tuple, "
                     "std::array, std::vector or std::map of fg::Tensor");
  if (!record->hasDefinition() || !record->isAggregate() || record->getNumBases() != 0)
    return fail(why, "'" + spelled + "' is not an aggregate (it has constructors, base classes or private members), so "
                     "funcgen cannot rebuild it; use a struct of public fields without constructors");
  tree.kind = Tree::Kind::Record;
  for (const clang::FieldDecl* f : record->fields()) {
    std::optional<Tree> c = element_of(f->getType(), context, why, depth);
    if (!c) return std::nullopt;
    tree.keys.push_back(f->getNameAsString());
    tree.children.push_back(std::move(*c));
  }
  return tree;
}

}  // namespace

std::optional<Tree> parameter_tree_of(clang::QualType type, const clang::ASTContext& context, std::string* why) {
  if (!holds_tensors(type) || is_fg_tensor(type)) return std::nullopt;
  std::optional<Tree> t = node_of(type, context, why, 0);
  if (!t || (!is_structured(*t) && t->kind != Tree::Kind::Tuple)) return std::nullopt;
  return t;
}

std::optional<Tree> tree_of(clang::QualType type, const clang::ASTContext& context, std::string* why) {
  std::optional<Tree> t = parameter_tree_of(type, context, why);
  return t && is_structured(*t) ? t : std::nullopt;  // (a flat std::tuple of tensors is a tuple of outputs)
}

std::optional<Tree> fixed_vector_tree(clang::QualType vector, size_t n, const clang::ASTContext& context) {
  if (record_name(bare(vector)) != "std::vector" || !holds_tensors(template_arg(bare(vector), 0))) return std::nullopt;
  std::string why;
  std::optional<Tree> element = node_of(template_arg(bare(vector), 0), context, &why, 1);
  if (!element) return std::nullopt;
  Tree t;
  t.kind = Tree::Kind::Array;
  t.fixed = true;
  t.cxx_type = cxx_spelling(bare(vector), context);
  t.children.assign(n, *element);
  return t;
}

namespace {

// A class without data members, its bases' included (a strategy of virtual functions): rebuilt
// as `Square{}`.
bool stateless(const clang::CXXRecordDecl* record) {
  if (record == nullptr || !record->hasDefinition() || !record->field_empty()) return false;
  return std::all_of(record->bases_begin(), record->bases_end(), [](const clang::CXXBaseSpecifier& b) {
    return !b.isVirtual() && stateless(b.getType()->getAsCXXRecordDecl());
  });
}

}  // namespace

std::optional<Tree> object_tree_of(clang::QualType type, const clang::ASTContext& context, std::string* why) {
  if (holds_tensors(type)) return tree_of(type, context, why);
  const auto* record = bare(type)->getAsCXXRecordDecl();
  if (stateless(record) && record->hasDefaultConstructor()) {
    Tree t;
    t.kind = Tree::Kind::Record;
    t.cxx_type = cxx_spelling(bare(type), context);
    return t;
  }
  if (record == nullptr || record->field_empty()) return fail(why, "");
  std::optional<Tree> t = node_of(type, context, why, 0);
  return t && t->kind == Tree::Kind::Record ? t : std::nullopt;
}

}  // namespace funcgen::pytree
