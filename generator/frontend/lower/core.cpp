#include "frontend/lower/core.h"

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

namespace funcgen::lower {

// An identifier made of `path` that no other name of the function has.
std::string LowererCore::fresh_name(const std::string& path) {
  std::string name = cxx::identifier_of(path);
  while (names_.count(name) != 0) name += "_";
  names_.insert(name);
  return name;
}

// "nn::" for a declaration of namespace nn (or of an unscoped enum in it); "" for a global or a
// local. Anonymous and inline namespaces are not written.
std::string LowererCore::enclosing_scope(const clang::NamedDecl* d) {
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

int LowererCore::add_var(const clang::ValueDecl* d, clang::QualType type) {
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
void LowererCore::bind_template_arguments(const clang::FunctionDecl* decl) {
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
void LowererCore::reject_variable(const clang::VarDecl* vd, const clang::Stmt* at, const std::string& why) {
  unsupported(at, why);
  rejected_.insert(vd);
}

bool LowererCore::uses_rejected(const clang::Stmt* s) const {
  if (rejected_.empty() || s == nullptr) return false;
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(s); ref != nullptr && rejected_.count(ref->getDecl()) != 0)
    return true;
  for (const clang::Stmt* child : s->children())
    if (uses_rejected(child)) return true;
  return false;
}

void LowererCore::unsupported_at(clang::SourceLocation at, const std::string& what) {
  ok_ = false;
  reporter_.report("unsupported", at, what);
}

void LowererCore::unsupported(const clang::Stmt* s, const std::string& what) {
  ok_ = false;
  if (uses_rejected(s)) return;
  reporter_.report("unsupported", s->getBeginLoc(), what) << s->getSourceRange();
}

const clang::Stmt* LowererCore::parent_of(const clang::Stmt* s) const {
  const auto parents = context_.getParentMapContext().getParents(*s);
  return parents.empty() ? nullptr : parents[0].get<clang::Stmt>();
}

// The C++ text of a node as written; inside a macro expansion, its spelling (the macro argument
// or body it came from), or else Clang's printing of it.
std::string LowererCore::text_of(const clang::Stmt* node) const {
  return cxx::replace_identifiers(written_text(node), template_values_);
}

std::string LowererCore::written_text(const clang::Stmt* node) const {
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

StmtPtr LowererCore::make(StmtKind kind, const clang::Stmt* s) {
  auto st = std::make_unique<ir::Stmt>();
  st->kind = kind;
  st->ast = s;
  st->range = s->getSourceRange();
  return st;
}

StmtPtr LowererCore::opaque_stmt(const clang::Stmt* s) {
  StmtPtr st = make(StmtKind::Opaque, s);
  record_uses(s, *st);
  st->text = with_leaves(s, text_of(s), st->reads);
  leaf_writes(s, st->writes);
  return st;
}

// `const <cxx> name = value;` of a variable the lowering makes, appended to `out`: its id.
int LowererCore::declare_made(std::vector<StmtPtr>& out, const clang::Stmt* at, const std::string& name, ir::Type type,
                              const std::string& cxx, ExprPtr value) {
  const int id = generated_var(name, type, cxx);
  StmtPtr d = make(StmtKind::Decl, at);
  d->var = id;
  d->expr = std::move(value);
  out.push_back(std::move(d));
  return id;
}

// var = from; for the code the lowering writes (`at`: where it stands for).
void LowererCore::assign_made(std::vector<StmtPtr>& out, const clang::Stmt* at, int var, int from) {
  StmtPtr st = make(StmtKind::Assign, at);
  st->var = var;
  st->text = "=";
  st->expr = ir::var_ref(f_, from);
  out.push_back(std::move(st));
}

// `const int64_t name = value;` (a generated local), appended to out; its variable.
int LowererCore::int_local(const std::string& name, ExprPtr value, const clang::Stmt* at, std::vector<StmtPtr>& out) {
  const int var = generated_var(name, ir::Type::Int, "const int64_t");
  StmtPtr d = make(StmtKind::Decl, at);
  d->var = var;
  d->expr = std::move(value);
  out.push_back(std::move(d));
  return var;
}

// fg::op(args) (a free function of the runtime), with the overload that takes as many arguments.
ExprPtr LowererCore::fg_call(const std::string& op, ir::Type type, std::vector<ExprPtr> args, std::vector<std::string> params) {
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

const clang::NamespaceDecl* LowererCore::fg_namespace() const {
  for (const clang::NamedDecl* d : context_.getTranslationUnitDecl()->lookup(&context_.Idents.get("fg")))
    if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(d)) return ns;
  return nullptr;
}

// `base` + `suffix`, numbered after `base` where the function has a variable of that name already.
std::string LowererCore::numbered(const std::string& base, const std::string& suffix) const {
  std::string name = base;
  for (int n = 2; std::any_of(f_.vars.begin(), f_.vars.end(), [&](const ir::Var& v) { return v.name == name + suffix; }); ++n)
    name = base + std::to_string(n);
  return name;
}

int LowererCore::generated_var(const std::string& name, ir::Type type, const std::string& cxx_type) {
  return ir::add_var(f_, name, type, cxx_type);
}

// self.op(args...) on fg::Tensor (`record`), with the overload that takes as many arguments.
ExprPtr LowererCore::method_call(const clang::CXXRecordDecl* record, const std::string& op, ir::Type type,
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

// ------------------------------------------------------------------ expressions

ExprPtr LowererCore::make_expr(ExprKind kind, const clang::Expr* e) {
  auto x = std::make_unique<ir::Expr>();
  x->kind = kind;
  x->ast = e;
  x->range = e->getSourceRange();
  x->type = ir_type_of(e->getType());
  return x;
}

// `e` as text, where an error was reported: its parts are not reported again.
ExprPtr LowererCore::reported(const clang::Expr* e) {
  ExprPtr x = make_expr(ExprKind::Opaque, e);
  x->text = text_of(e);
  return x;
}

ExprPtr LowererCore::opaque(const clang::Expr* e) {
  ExprPtr x = make_expr(ExprKind::Opaque, e);
  record_uses(e, *x);
  x->text = with_leaves(e, text_of(e), x->reads);
  leaf_writes(e, x->writes);
  // strip() took off its parentheses; a comma expression needs them wherever it is printed
  // (`int k = (i++, j);` is not `int k = i++, j;`).
  if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e); b != nullptr && b->isCommaOp()) x->text = "(" + x->text + ")";
  return x;
}

}  // namespace funcgen::lower
