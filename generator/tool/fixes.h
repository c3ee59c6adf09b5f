// Fix-its as clang-tidy handles them: recorded from the diagnostics as they are reported, exported
// in clang-tidy's YAML format (--export-fixes, read by clang-apply-replacements) or applied in
// place (--fix).
#pragma once

#include <clang/Basic/Diagnostic.h>
#include <clang/Tooling/Core/Diagnostic.h>

#include <memory>
#include <string>
#include <vector>

namespace funcgen {

// Forwards every diagnostic to `next` (the usual printer) and keeps each error or warning with
// its fix-its. A note's fix-it counts when it is the only note of its diagnostic that has one (so
// that alternatives, like randomness='different' or 'same', are never applied together).
class FixRecorder : public clang::DiagnosticConsumer {
 public:
  // Appends to `out` (which outlives the recorder, owned by the compiler's DiagnosticsEngine).
  FixRecorder(std::unique_ptr<clang::DiagnosticConsumer> next, std::vector<clang::tooling::Diagnostic>& out)
      : next_(std::move(next)), diagnostics_(out) {}

  void BeginSourceFile(const clang::LangOptions& lang, const clang::Preprocessor* pp) override;
  void EndSourceFile() override;
  void finish() override;
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override;

 private:
  void close_group();

  std::unique_ptr<clang::DiagnosticConsumer> next_;
  std::vector<clang::tooling::Diagnostic>& diagnostics_;
  // The diagnostic being collected and its notes' fix-its.
  bool open_ = false;
  std::vector<std::vector<clang::tooling::Replacement>> note_fixes_;
};

// Writes the diagnostics with fixes as clang-tidy's --export-fixes YAML.
bool export_fixes(const std::string& path, const std::string& main_file, const std::vector<clang::tooling::Diagnostic>& diags,
                  std::string& error);

// Applies every diagnostic's fixes to the files, each file written atomically; false on conflicts.
bool apply_fixes(const std::vector<clang::tooling::Diagnostic>& diags, std::string& error);

}  // namespace funcgen
