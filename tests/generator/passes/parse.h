// The pass-level tests that need a Clang AST (the lowering, and the Reporter that AD reports
// through): a C++ snippet parsed in process, with the runtime's headers on the include path.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/Frontend/ASTUnit.h>
#include <clang/Tooling/Tooling.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

namespace funcgen::test {

// The AST of `code` (C++17, the runtime's headers on the include path); prints the time it took.
// Errors in the snippet fail the test.
inline std::unique_ptr<clang::ASTUnit> parse(const std::string& code, const char* what = "snippet") {
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<clang::ASTUnit> ast = clang::tooling::buildASTFromCodeWithArgs(
      code, {"-std=c++17", "-fsyntax-only", "-I" FUNCGEN_RUNTIME_INCLUDE, "-resource-dir=" FUNCGEN_CLANG_RESOURCE_DIR},
      "input.cpp", "funcgen-test");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ parse    ] %s: %.0f ms\n", what, ms);
  EXPECT_TRUE(ast != nullptr);
  if (ast) {
    EXPECT_FALSE(ast->getDiagnostics().hasErrorOccurred()) << "the snippet does not compile";
  }
  return ast;
}

// The definition of the function named `name` (unqualified, anywhere in the main file).
inline const clang::FunctionDecl* find_function(clang::ASTContext& context, const std::string& name) {
  struct Finder {
    static const clang::FunctionDecl* in(const clang::DeclContext* dc, const std::string& name) {
      for (const clang::Decl* d : dc->decls()) {
        if (const auto* fn = llvm::dyn_cast<clang::FunctionDecl>(d))
          if (fn->getNameAsString() == name && fn->doesThisDeclarationHaveABody()) return fn;
        if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(d))
          if (const clang::FunctionDecl* fn = in(ns, name)) return fn;
      }
      return nullptr;
    }
  };
  return Finder::in(context.getTranslationUnitDecl(), name);
}

}  // namespace funcgen::test
