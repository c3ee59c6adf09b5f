#include "ir/types.h"

#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/Basic/SourceManager.h>

#include <set>

namespace funcgen {

std::string call_name(const clang::FunctionDecl* fn) {
  clang::PrintingPolicy policy(fn->getASTContext().getLangOpts());
  policy.SuppressUnwrittenScope = true;  // (anonymous namespace)::f is called as f's enclosing scope names it
  std::string name;
  llvm::raw_string_ostream out(name);
  fn->printQualifiedName(out, policy);
  return "::" + out.str();
}

clang::QualType bare(clang::QualType t) { return t.getNonReferenceType().getUnqualifiedType().getCanonicalType(); }

std::string record_name(clang::QualType t) {
  const auto* record = bare(t)->getAsCXXRecordDecl();
  return record == nullptr ? std::string() : record->getQualifiedNameAsString();
}

// The first template argument's type of a std::vector / std::initializer_list / std::tuple.
clang::QualType template_arg(clang::QualType t, unsigned i) {
  const auto* spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(bare(t)->getAsCXXRecordDecl());
  if (spec == nullptr || spec->getTemplateArgs().size() <= i) return {};
  const auto& arg = spec->getTemplateArgs()[i];
  return arg.getKind() == clang::TemplateArgument::Type ? arg.getAsType() : clang::QualType();
}

bool is_fg_tensor(clang::QualType type) { return !type.isNull() && record_name(type) == "fg::Tensor"; }

bool writable_parameter(const clang::ValueDecl* d) {
  const auto* p = llvm::dyn_cast_or_null<clang::ParmVarDecl>(d);
  if (p == nullptr) return false;
  const clang::QualType t = p->getType();
  if (t->isLValueReferenceType()) return !t.getNonReferenceType().isConstQualified();
  return t->isPointerType() && is_fg_tensor(t->getPointeeType()) && !t->getPointeeType().isConstQualified();
}

namespace {

// holds_tensors below, with the records already looked into: each is searched once, which also
// ends the search at a record that points to itself (a list node).
bool holds_tensors(clang::QualType t, std::set<const clang::CXXRecordDecl*>& seen) {
  t = t.getNonReferenceType().getCanonicalType();
  while (t->isPointerType() || t->isArrayType())
    t = t->isPointerType() ? t->getPointeeType() : clang::QualType(t->getArrayElementTypeNoTypeQual(), 0);
  if (is_fg_tensor(t)) return true;
  const auto* record = t->getAsCXXRecordDecl();
  if (record == nullptr || !seen.insert(record->getCanonicalDecl()).second) return false;
  const auto holds = [&](const clang::TemplateArgument& a) {
    return a.getKind() == clang::TemplateArgument::Type && holds_tensors(a.getAsType(), seen);
  };
  if (const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(record))
    for (const clang::TemplateArgument& a : spec->getTemplateArgs().asArray()) {
      if (holds(a)) return true;
      if (a.getKind() == clang::TemplateArgument::Pack)
        for (const clang::TemplateArgument& e : a.pack_elements())
          if (holds(e)) return true;
    }
  if (!record->hasDefinition()) return false;
  for (const clang::FieldDecl* f : record->getDefinition()->fields())
    if (holds_tensors(f->getType(), seen)) return true;
  return false;
}

}  // namespace

bool holds_tensors(clang::QualType type) {
  if (type.isNull()) return false;
  std::set<const clang::CXXRecordDecl*> seen;
  return holds_tensors(type, seen);
}

ir::Type ir_type_of(clang::QualType type) {
  if (type.isNull()) return ir::Type::Other;
  const clang::QualType t = bare(type);
  if (t->isVoidType()) return ir::Type::Void;
  if (t->isBooleanType()) return ir::Type::Bool;
  if (t->isEnumeralType()) return ir::Type::Other;
  if (t->isIntegerType()) return ir::Type::Int;
  if (t->isRealFloatingType()) return ir::Type::Float;
  // A braced list passed as IntArrayRef ({0, -1}) or std::vector<fg::Tensor> ({a, b}): once the
  // conversions are stripped, an array of its elements.
  if (const auto* array = llvm::dyn_cast<clang::ConstantArrayType>(t.getTypePtr())) {
    const clang::QualType elem = array->getElementType();
    if (is_fg_tensor(elem)) return ir::Type::TensorList;
    if (elem->isIntegerType() && !elem->isBooleanType()) return ir::Type::IntList;
    return ir::Type::Other;
  }
  const std::string name = record_name(t);
  if (name == "fg::Tensor") return ir::Type::Tensor;
  if (name == "fg::Scalar") return ir::Type::Float;
  if (name == "std::tuple" || name == "std::pair") {
    const auto* spec = llvm::cast<clang::ClassTemplateSpecializationDecl>(t->getAsCXXRecordDecl());
    for (const auto& pack : spec->getTemplateArgs().asArray())
      if (pack.getKind() == clang::TemplateArgument::Pack)
        for (const auto& a : pack.pack_elements())
          if (a.getKind() == clang::TemplateArgument::Type && is_fg_tensor(a.getAsType())) return ir::Type::TensorTuple;
    if (name == "std::pair" && (is_fg_tensor(template_arg(t, 0)) || is_fg_tensor(template_arg(t, 1))))
      return ir::Type::TensorTuple;
    return ir::Type::Other;
  }
  if (name == "std::vector" || name == "std::initializer_list" || name == "fg::ArrayRef" ||
      name == "std::optional") {
    const clang::QualType elem = template_arg(t);
    if (is_fg_tensor(elem)) return name == "std::optional" ? ir::Type::Tensor : ir::Type::TensorList;
    if (!elem.isNull() && bare(elem)->isIntegerType() && name != "std::optional") return ir::Type::IntList;
  }
  return ir::Type::Other;
}

clang::QualType without_user_aliases(clang::QualType type, const clang::ASTContext& context) {
  if (type.isNull()) return type;
  auto& ctx = const_cast<clang::ASTContext&>(context);  // the getters make the types they return
  const clang::Qualifiers quals = type.getLocalQualifiers();
  const clang::Type* t = type.getTypePtr();
  clang::QualType inner;
  if (const auto* r = llvm::dyn_cast<clang::LValueReferenceType>(t)) {
    inner = ctx.getLValueReferenceType(without_user_aliases(r->getPointeeTypeAsWritten(), context));
  } else if (const auto* r = llvm::dyn_cast<clang::RValueReferenceType>(t)) {
    inner = ctx.getRValueReferenceType(without_user_aliases(r->getPointeeTypeAsWritten(), context));
  } else if (const auto* p = llvm::dyn_cast<clang::PointerType>(t)) {
    inner = ctx.getPointerType(without_user_aliases(p->getPointeeType(), context));
  } else if (const auto* e = llvm::dyn_cast<clang::ElaboratedType>(t)) {
    inner = without_user_aliases(e->getNamedType(), context);  // printed qualified without it
  } else if (const auto* d = llvm::dyn_cast<clang::TypedefType>(t)) {
    const clang::TypedefNameDecl* alias = d->getDecl();
    const bool kept = context.getSourceManager().isInSystemHeader(alias->getLocation()) ||
                      alias->getQualifiedNameAsString().rfind("fg::", 0) == 0;
    if (kept) return type;
    inner = without_user_aliases(alias->getUnderlyingType(), context);
  } else if (const auto* s = llvm::dyn_cast<clang::TemplateSpecializationType>(t)) {
    inner = s->isTypeAlias() ? without_user_aliases(s->getAliasedType(), context) : s->desugar();
  } else {
    return type;
  }
  return ctx.getQualifiedType(inner, quals);
}

std::string cxx_spelling(clang::QualType type, const clang::ASTContext& context) {
  clang::PrintingPolicy policy(context.getLangOpts());
  policy.SuppressTagKeyword = true;
  policy.FullyQualifiedName = true;
  policy.SuppressScope = false;
  if (is_fg_tensor(type)) {
    std::string s = type.isLocalConstQualified() || type.getNonReferenceType().isConstQualified() ? "const " : "";
    s += "fg::Tensor";
    if (type->isLValueReferenceType()) s += "&";
    return s;
  }
  return type.getAsString(policy);
}

}  // namespace funcgen
