// Machine-readable diagnostics: `--format=json` (one JSON document on stdout instead of Clang's
// text) and `--sarif=FILE` (SARIF 2.1.0, for code-scanning UIs and IDEs). A DiagnosticLog sits in
// the compiler's chain of diagnostic consumers, like the FixRecorder, and keeps every diagnostic
// with its notes, highlighted ranges and fix-its, resolved to file/line/column as Clang prints them.
#pragma once

#include <clang/Basic/Diagnostic.h>

#include <memory>
#include <string>
#include <vector>

namespace funcgen {

// A position as Clang prints it: 1-based line, 1-based column in bytes. `char_column` is the same
// column counted in Unicode code points (SARIF's "unicodeCodePoints" column kind).
struct LogPosition {
  unsigned line = 0;
  unsigned column = 0;
  unsigned char_column = 0;
};

// [begin, end) in one file; the end is exclusive, as in Clang's -fdiagnostics-print-source-range-info
// and -fdiagnostics-parseable-fixits.
struct LogRange {
  std::string file;
  LogPosition begin, end;
};

struct LogFixIt {
  LogRange range;  // empty for an insertion
  std::string text;
};

struct LogNote {
  std::string file;  // empty when the note has no location
  LogPosition position;
  LogPosition caret_end;  // the end of the token at `position` (SARIF's region)
  std::string message;
  std::vector<LogRange> ranges;
  std::vector<LogFixIt> fixits;
};

struct LogDiagnostic {
  std::string check;     // "funcgen-<id>", or "clang-diagnostic-<flag|error|warning>" for Clang's own
  std::string severity;  // "error", "warning", "note" (a note without a diagnostic), "remark"
  std::string message;   // without the " [funcgen-<id>]" suffix
  std::string file;      // empty when the diagnostic has no location
  LogPosition position;
  LogPosition caret_end;  // the end of the token at `position` (SARIF's region)
  std::vector<LogRange> ranges;
  std::vector<LogNote> notes;
  std::vector<LogFixIt> fixits;
};

// Keeps every diagnostic (with its notes) in `out`, then forwards it to `next` when there is one
// (the usual printer; none with --format=json, so that nothing is printed).
class DiagnosticLog : public clang::DiagnosticConsumer {
 public:
  DiagnosticLog(std::unique_ptr<clang::DiagnosticConsumer> next, std::vector<LogDiagnostic>& out)
      : next_(std::move(next)), diagnostics_(out) {}

  void BeginSourceFile(const clang::LangOptions& lang, const clang::Preprocessor* pp) override;
  void EndSourceFile() override;
  void finish() override;
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override;

 private:
  std::unique_ptr<clang::DiagnosticConsumer> next_;
  std::vector<LogDiagnostic>& diagnostics_;
  const clang::LangOptions* lang_ = nullptr;
  bool open_ = false;  // whether diagnostics_.back() takes the notes that follow
};

// The --format=json document (indented, ending with a newline).
std::string diagnostics_json(const std::vector<LogDiagnostic>& diags);

// The SARIF 2.1.0 log of the diagnostics, one run whose driver lists every check of all_checks().
std::string diagnostics_sarif(const std::vector<LogDiagnostic>& diags);

// Writes diagnostics_sarif() to `path` atomically.
bool write_sarif(const std::string& path, const std::vector<LogDiagnostic>& diags, std::string& error);

// "file:///..." for a path (made absolute), percent-encoded as RFC 3986 requires.
std::string file_uri(const std::string& path);

}  // namespace funcgen
