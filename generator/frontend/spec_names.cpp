// Whether a spec may name its generated function `name`: the name is declared in the generated
// code, next to the annotated function, so it must be a C++ identifier no one else owns.
#include "frontend/spec_names.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/Basic/SourceManager.h>
#include <llvm/Support/Path.h>

#include <cctype>
#include <set>

namespace funcgen {

namespace {

bool is_keyword(const std::string& name) {
  // Every C++20 keyword and alternative token: the generated code may be compiled as C++20.
  static const std::set<std::string> keywords = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
      "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  return keywords.count(name) != 0;
}

// What kind of thing `d` is, in the words of the C++ it was written in.
std::string kind_of(const clang::NamedDecl* d) {
  if (llvm::isa<clang::NamespaceDecl>(d) || llvm::isa<clang::NamespaceAliasDecl>(d)) return "a namespace";
  if (llvm::isa<clang::FunctionDecl>(d) || llvm::isa<clang::FunctionTemplateDecl>(d)) return "a function";
  if (llvm::isa<clang::TypeDecl>(d) || llvm::isa<clang::ClassTemplateDecl>(d) ||
      llvm::isa<clang::TypeAliasTemplateDecl>(d))
    return "a type";
  if (llvm::isa<clang::VarDecl>(d) || llvm::isa<clang::VarTemplateDecl>(d)) return "a variable";
  if (llvm::isa<clang::EnumConstantDecl>(d)) return "an enumerator";
  return "a declaration";
}

// A declaration without a body in the annotated file: the user declaring the generated function
// (to call it before including the generated header), not a clash.
bool declares_generated(const clang::NamedDecl* d) {
  const auto* f = llvm::dyn_cast<clang::FunctionDecl>(d);
  const auto& sm = d->getASTContext().getSourceManager();
  return f != nullptr && !f->isDefined() && sm.isInMainFile(sm.getExpansionLoc(f->getLocation()));
}

// The first declaration named `name` that code next to `fn` sees: in fn's namespace or one around
// it (the file, the headers it includes, what using-directives bring in).
const clang::NamedDecl* visible_declaration(const std::string& name, const clang::FunctionDecl* fn) {
  clang::ASTContext& context = fn->getASTContext();
  const clang::DeclarationName id(&context.Idents.get(name));
  for (const clang::DeclContext* dc = fn->getDeclContext(); dc != nullptr; dc = dc->getParent()) {
    if (!dc->isFileContext()) continue;
    for (const clang::NamedDecl* d : dc->lookup(id))
      if (d != fn && !declares_generated(d)) return d;
    for (const clang::UsingDirectiveDecl* u : dc->using_directives())
      for (const clang::NamedDecl* d : u->getNominatedNamespace()->lookup(id)) return d;
  }
  return nullptr;
}

// Where the macro `name` that `pp` knows is defined, for a message: "this file", a header, or "".
std::optional<std::string> macro_home(const std::string& name, const clang::Preprocessor& pp) {
  const clang::MacroInfo* macro = pp.getMacroInfo(pp.getIdentifierInfo(name));
  if (macro == nullptr) return std::nullopt;
  const auto& sm = pp.getSourceManager();
  const clang::SourceLocation at = macro->getDefinitionLoc();
  if (at.isInvalid() || sm.getFilename(sm.getSpellingLoc(at)).empty()) return std::string("the compiler predefines it");
  if (sm.isInMainFile(sm.getSpellingLoc(at))) return std::string("this file defines it");
  return "<" + llvm::sys::path::filename(sm.getFilename(sm.getSpellingLoc(at))).str() + "> defines it";
}

}  // namespace

std::optional<std::string> generated_name_problem(const std::string& name, const clang::FunctionDecl* fn,
                                                  const clang::Preprocessor* pp) {
  const std::string pick = "; pick another name for the generated function";
  if (name.size() > kMaxNameLength)
    return "the name is " + std::to_string(name.size()) + " characters long, more than the " +
           std::to_string(kMaxNameLength) + " funcgen takes" + pick;
  // The generated files are compiled after the annotated one, with its macros: the name would be
  // replaced where the generated code declares and calls it.
  if (pp != nullptr)
    if (std::optional<std::string> home = macro_home(name, *pp))
      return "'" + name + "' is a macro (" + *home + "), which would replace the generated function's name" + pick;
  if (is_keyword(name)) return "'" + name + "' is a C++ keyword and cannot name a function" + pick;
  if (name == "main") return "'main' is the program's entry point and cannot name a generated function" + pick;
  if (name.find("__") != std::string::npos || (name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1]))))
    return "'" + name + "' is reserved in C++ (a name with '__' or '_' and a capital letter); funcgen's own helpers use such names" + pick;
  if (const clang::NamedDecl* d = visible_declaration(name, fn)) {
    const auto& sm = fn->getASTContext().getSourceManager();
    const std::string where = sm.isInMainFile(sm.getExpansionLoc(d->getLocation())) ? "in this file" : "by a header this file includes";
    return "'" + name + "' is already declared " + where + " (" + kind_of(d) + ")" + pick;
  }
  return std::nullopt;
}

}  // namespace funcgen
