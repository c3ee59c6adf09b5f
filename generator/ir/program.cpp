#include "ir/program.h"

#include <cctype>

#include <clang/AST/ASTContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>

#include "ir/cxx_text.h"

namespace funcgen::ir {

bool uses_name(const std::string& text, const std::string& word) {
  const auto is_name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_name_char(text[at - 1]);
    const bool ends = at + word.size() == text.size() || !is_name_char(text[at + word.size()]);
    if (starts && ends) return true;
  }
  return false;
}

std::string signature(const Function& fn, const std::string& name, const std::string* body) {
  std::vector<std::string> params;
  for (int id : fn.params) {
    const Var& v = fn.var(id);
    const std::string& type = v.cxx_type;
    // Unused (a structure's leaf the function does not read, a batch size): no name, no warning.
    const bool unnamed = body != nullptr && !uses_name(*body, v.name);
    const std::string shown = unnamed ? "/*" + v.name + "*/" : v.name;
    params.push_back(type + (type.back() == '&' ? "" : " ") + shown);
  }
  return fn.return_cxx_type + " " + name + "(" + cxx::join(params) + ")";
}

namespace {

// Whether `e` names only what every file that includes the generated header sees (which includes
// funcgen.h and the standard headers, not the user's): literals, and names of fg and std.
bool visible_from_header(const clang::Expr* e) {
  struct Finder : clang::RecursiveASTVisitor<Finder> {
    bool found = false;
    bool VisitDeclRefExpr(clang::DeclRefExpr* r) {
      const std::string name = r->getDecl()->getQualifiedNameAsString();
      found |= name.rfind("fg::", 0) != 0 && name.rfind("std::", 0) != 0;
      return true;
    }
  } finder;
  finder.TraverseStmt(const_cast<clang::Expr*>(e));
  return !finder.found;
}

// The default argument of the user's parameter that `v` is, as written, or "".
std::string default_argument(const Var& v) {
  const auto* p = llvm::dyn_cast_or_null<clang::ParmVarDecl>(v.decl);
  if (p == nullptr || v.param_index < 0 || p->getName() != v.name || !p->hasDefaultArg() || p->hasUnparsedDefaultArg() ||
      p->hasUninstantiatedDefaultArg())
    return "";
  const clang::ASTContext& ctx = p->getASTContext();
  const clang::SourceManager& sm = ctx.getSourceManager();
  if (!visible_from_header(p->getDefaultArg())) return "";
  const clang::CharSourceRange range = clang::Lexer::makeFileCharRange(
      clang::CharSourceRange::getTokenRange(p->getDefaultArgRange()), sm, ctx.getLangOpts());
  return range.isValid() ? clang::Lexer::getSourceText(range, sm, ctx.getLangOpts()).str() : "";
}

}  // namespace

std::string declaration(const Function& fn, const std::string& name) {
  std::vector<std::string> params;
  for (int id : fn.params) {
    const Var& v = fn.var(id);
    params.push_back(v.cxx_type + (v.cxx_type.back() == '&' ? "" : " ") + v.name);
  }
  // Only a run of parameters at the end can have defaults (jvp's tangents come after the primals).
  for (size_t i = fn.params.size(); i-- > 0;) {
    const std::string d = default_argument(fn.var(fn.params[i]));
    if (d.empty()) break;
    params[i] += " = " + d;
  }
  return fn.return_cxx_type + " " + name + "(" + cxx::join(params) + ")";
}

}  // namespace funcgen::ir
