// Diagnostics of funcgen, through Clang's DiagnosticsEngine so that they print in Clang's format
// (`file:line:col: error: message [funcgen-id]`, notes, carets, fix-its) and IDEs read them.
#pragma once

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/SourceManager.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace funcgen {

// A check funcgen has, with what it means; `--list-checks` and `--explain` print these.
struct CheckInfo {
  const char* id;  // without the "funcgen-" prefix
  bool warning;    // severity when enabled
  const char* summary;
  const char* help;
};
// In API.md's order. The limitation checks add themselves (checks/checks.h's CheckRegistration).
const std::vector<CheckInfo>& all_checks();
const CheckInfo* find_check(const std::string& id);
void register_check_info(const CheckInfo& info);

class Reporter {
 public:
  explicit Reporter(clang::DiagnosticsEngine& diags, const clang::SourceManager& sm) : diags_(diags), sm_(sm) {}

  // Enables or disables checks by clang-tidy-style globs: "-*,funcgen-item", "-funcgen-side-effect".
  void set_check_globs(const std::string& globs);
  bool enabled(const std::string& id) const;
  // Warnings of the checks these globs match are reported as errors (clang-tidy's
  // --warnings-as-errors): "funcgen-side-effect", "*".
  void set_warnings_as_errors(const std::string& globs);

  // An error or warning of check `id` at `loc`; the message gets " [funcgen-id]" appended. The
  // returned builder takes fix-its and ranges; notes are reported with note() after it is gone.
  // Reports nothing (and returns an inert builder) when the check is disabled or the line says
  // NOLINT(funcgen-id).
  clang::DiagnosticBuilder report(const std::string& id, clang::SourceLocation loc, const std::string& message);
  clang::DiagnosticBuilder note(clang::SourceLocation loc, const std::string& message);

  // Whether the last report() was emitted (its notes should follow).
  bool last_reported() const { return last_reported_; }
  bool has_errors() const { return diags_.hasErrorOccurred(); }
  // Errors so far, counting those not printed again because the same check already reported the
  // same construct (for another spec): a spec that reaches a reported construct has failed too.
  unsigned errors() const { return errors_; }

  // Clang's errors in the file (reported before funcgen's checks run): a function with one has an
  // AST that lost the broken statement, so funcgen reports nothing of its own about it.
  void set_compile_errors(std::vector<clang::SourceLocation> at) { compile_errors_ = std::move(at); }
  bool has_compile_error_in(clang::SourceRange range) const;

  // While it lives, reports come with a note at `where` (after their own notes) saying which spec
  // reached the construct (unless `note` is empty), and a report at no location (code funcgen
  // wrote) is made at `where`.
  class Context {
   public:
    Context(Reporter& reporter, clang::SourceLocation where, std::string note);
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

   private:
    Reporter& reporter_;
    const Context* outer_;
    clang::SourceLocation where_;
    std::string note_;
    friend class Reporter;
  };

 private:
  bool suppressed_by_nolint(const std::string& id, clang::SourceLocation loc) const;
  void flush_context_note();

  clang::DiagnosticsEngine& diags_;
  const clang::SourceManager& sm_;
  std::vector<std::pair<std::string, bool>> globs_;  // pattern, enable
  std::vector<std::pair<std::string, bool>> werror_globs_;
  std::map<std::pair<std::string, int>, unsigned> ids_;
  bool last_reported_ = false;
  std::vector<clang::SourceLocation> compile_errors_;
  unsigned errors_ = 0;
  std::set<std::pair<std::string, unsigned>> reported_;  // check id, raw location
  const Context* context_ = nullptr;
  bool context_note_due_ = false;
};

}  // namespace funcgen
