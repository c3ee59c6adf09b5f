// Fuzz target 2: the whole tool on an annotated source, in process. Every input ends in an error
// diagnostic, or in generated files that compile: the generated .cpp (which includes the input
// and the generated header) goes through Clang's semantic analysis (-fsyntax-only, templates
// instantiated), and any error there is a finding, reported with the input and the generated code.
// A spec that generates nothing without an error, a crash or a hang (libFuzzer's -timeout) are
// findings too. The seeds are annotated functions of the samples and tests (tests/fuzz/corpus/tool).
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/FileManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/VirtualFileSystem.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "emitter/output.h"
#include "pipeline/translation_unit.h"

#ifndef FUNCGEN_FUZZ_RUNTIME_INCLUDE
#error "FUNCGEN_FUZZ_RUNTIME_INCLUDE names the runtime's include directory"
#endif

namespace {

const char* const kDir = "/fuzz";
const char* const kSource = "/fuzz/input.cpp";

// Counts errors and keeps their text, printing nothing (a fuzzer's log would drown in them).
class Collector : public clang::DiagnosticConsumer {
 public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Error) return;
    if (info.getLocation().isValid()) locations.push_back(info.getLocation());
    llvm::SmallString<256> message;
    info.FormatDiagnostic(message);
    std::string where;
    if (info.hasSourceManager() && info.getLocation().isValid())
      where = info.getLocation().printToString(info.getSourceManager()) + ": ";
    text += where + message.str().str() + "\n";
  }
  std::string text;
  std::vector<clang::SourceLocation> locations;  // of the errors, for funcgen (as the tool's)
};

std::vector<std::string> compiler_args(const std::string& file) {
  return {"funcgen", "-fsyntax-only", "-fno-caret-diagnostics", "-std=c++17", "-I" FUNCGEN_FUZZ_RUNTIME_INCLUDE,
          "-resource-dir=" FUNCGEN_CLANG_RESOURCE_DIR, file};
}

// Files in memory over the real file system (the runtime headers and the standard library).
llvm::IntrusiveRefCntPtr<clang::FileManager> files_with(const std::vector<std::pair<std::string, std::string>>& contents) {
  llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> overlay(
      new llvm::vfs::OverlayFileSystem(llvm::vfs::getRealFileSystem()));
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> memory(new llvm::vfs::InMemoryFileSystem);
  for (const auto& [path, text] : contents) memory->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(text, path));
  overlay->pushOverlay(memory);
  return llvm::IntrusiveRefCntPtr<clang::FileManager>(new clang::FileManager(clang::FileSystemOptions(), overlay));
}

// funcgen's front end action, keeping what the translation unit generated.
class Generate : public clang::ASTFrontendAction {
 public:
  Generate(funcgen::TranslationUnitResult& result, const Collector& errors) : result_(result), errors_(errors) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& ci, llvm::StringRef) override {
    return std::make_unique<Consumer>(result_, errors_, ci.getPreprocessor());
  }

 private:
  class Consumer : public clang::ASTConsumer {
   public:
    Consumer(funcgen::TranslationUnitResult& result, const Collector& errors, const clang::Preprocessor& pp)
        : result_(result), errors_(errors), pp_(pp) {}
    void HandleTranslationUnit(clang::ASTContext& context) override {
      result_ = funcgen::generate_translation_unit(context, pp_, errors_.locations, funcgen::ToolOptions{});
    }

   private:
    funcgen::TranslationUnitResult& result_;
    const Collector& errors_;
    const clang::Preprocessor& pp_;
  };
  funcgen::TranslationUnitResult& result_;
  const Collector& errors_;
};

// Runs `action` on `main` among `contents`, its diagnostics into `collector`; false when an error
// was reported.
bool run(std::unique_ptr<clang::FrontendAction> action, const std::string& main,
         const std::vector<std::pair<std::string, std::string>>& contents, Collector& collector) {
  llvm::IntrusiveRefCntPtr<clang::FileManager> files = files_with(contents);
  clang::tooling::ToolInvocation invocation(compiler_args(main), std::move(action), files.get());
  invocation.setDiagnosticConsumer(&collector);
  return invocation.run() && collector.getNumErrors() == 0;
}

[[noreturn]] void finding(const std::string& what, const std::string& input, const std::string& detail) {
  std::fprintf(stderr, "fuzz_tool: %s\n==== input\n%s\n==== %s\n", what.c_str(), input.c_str(), detail.c_str());
  std::abort();
}

void fuzz(const std::string& input) {
  funcgen::TranslationUnitResult result;
  Collector tool;
  if (!run(std::make_unique<Generate>(result, tool), kSource, {{kSource, input}}, tool)) {
    if (tool.text.empty()) finding("exit 1 without an error diagnostic", input, "no errors");
    return;  // an error at the construct: the promise holds
  }
  const size_t specs = result.specs;
  if (result.functions.size() != specs)
    finding("a spec generated nothing and reported no error", input,
            std::to_string(result.functions.size()) + " of " + std::to_string(specs) + " generated");
  if (result.functions.empty()) return;
  const funcgen::OutputFiles out = funcgen::assemble(kSource, kDir, result.functions);
  Collector compiler;
  if (!run(std::make_unique<clang::SyntaxOnlyAction>(), out.source_path,
           {{kSource, input}, {out.header_path, out.header}, {out.source_path, out.source}}, compiler))
    finding("exit 0, and the generated code does not compile", input,
            "errors\n" + compiler.text + "==== generated header\n" + out.header + "\n==== generated source\n" +
                out.source);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
