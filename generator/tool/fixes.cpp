#include "tool/fixes.h"

#include <clang/Basic/SourceManager.h>
#include <clang/Tooling/DiagnosticsYaml.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <map>

#include "emitter/output.h"

namespace funcgen {

void FixRecorder::BeginSourceFile(const clang::LangOptions& lang, const clang::Preprocessor* pp) {
  next_->BeginSourceFile(lang, pp);
}

void FixRecorder::EndSourceFile() {
  close_group();
  next_->EndSourceFile();
}

void FixRecorder::finish() {
  close_group();
  next_->finish();
}

void FixRecorder::close_group() {
  if (!open_) return;
  open_ = false;
  if (note_fixes_.size() == 1 && !diagnostics_.empty()) {
    for (const auto& r : note_fixes_.front()) {
      auto& replacements = diagnostics_.back().Message.Fix[r.getFilePath()];
      llvm::consumeError(replacements.add(r));
    }
  }
  note_fixes_.clear();
}

void FixRecorder::HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) {
  clang::DiagnosticConsumer::HandleDiagnostic(level, info);  // counts errors and warnings
  next_->HandleDiagnostic(level, info);
  if (level == clang::DiagnosticsEngine::Ignored || !info.hasSourceManager() || info.getLocation().isInvalid()) return;
  const clang::SourceManager& sm = info.getSourceManager();
  std::vector<clang::tooling::Replacement> fixes;
  for (const clang::FixItHint& hint : info.getFixItHints())
    fixes.emplace_back(sm, hint.RemoveRange, hint.CodeToInsert);
  if (level == clang::DiagnosticsEngine::Note) {
    if (open_ && !fixes.empty()) note_fixes_.push_back(fixes);
    return;
  }
  close_group();
  llvm::SmallString<256> message;
  info.FormatDiagnostic(message);
  std::string text = message.str().str();
  std::string name = "funcgen";
  // "<message> [funcgen-id]": the id names the diagnostic, as clang-tidy's check names do.
  if (const size_t open = text.rfind(" [funcgen-"); open != std::string::npos && text.back() == ']') {
    name = text.substr(open + 2, text.size() - open - 3);
    text.erase(open);
  }
  clang::tooling::Diagnostic d(name,
                               clang::tooling::DiagnosticMessage(text, sm, info.getLocation()),
                               {},
                               level == clang::DiagnosticsEngine::Warning ? clang::tooling::Diagnostic::Warning
                                                                          : clang::tooling::Diagnostic::Error,
                               "");
  for (const auto& r : fixes) llvm::consumeError(d.Message.Fix[r.getFilePath()].add(r));
  diagnostics_.push_back(std::move(d));
  open_ = true;
}

bool export_fixes(const std::string& path, const std::string& main_file, const std::vector<clang::tooling::Diagnostic>& diags,
                  std::string& error) {
  clang::tooling::TranslationUnitDiagnostics tu;
  tu.MainSourceFile = main_file;
  for (const auto& d : diags)
    if (!d.Message.Fix.empty()) tu.Diagnostics.push_back(d);
  std::string yaml;
  llvm::raw_string_ostream os(yaml);
  llvm::yaml::Output out(os);
  out << tu;
  os.flush();
  return write_atomically(path, yaml, error);
}

bool apply_fixes(const std::vector<clang::tooling::Diagnostic>& diags, std::string& error) {
  std::map<std::string, clang::tooling::Replacements> by_file;
  for (const auto& d : diags)
    for (const auto& [file, replacements] : d.Message.Fix)
      for (const auto& r : replacements)
        if (llvm::Error e = by_file[file.str()].add(r)) {
          error = "conflicting fix-its in '" + file.str() + "': " + llvm::toString(std::move(e));
          return false;
        }
  for (const auto& [file, replacements] : by_file) {
    auto buffer = llvm::MemoryBuffer::getFile(file);
    if (!buffer) {
      error = "cannot read '" + file + "'";
      return false;
    }
    auto fixed = clang::tooling::applyAllReplacements((*buffer)->getBuffer(), replacements);
    if (!fixed) {
      error = "cannot apply the fix-its to '" + file + "': " + llvm::toString(fixed.takeError());
      return false;
    }
    if (!write_atomically(file, *fixed, error)) return false;
  }
  return true;
}

}  // namespace funcgen
