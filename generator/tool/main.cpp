// funcgen [options] <source>... [-- <compiler flags>] | -p <build dir>
//
// Reads the FUNCGEN annotations of each source through Clang, reports the specs and function bodies
// that cannot be transformed as Clang diagnostics, and writes <stem>.funcgen.h / .funcgen.cpp with
// the generated functions. Nothing is written when any error was reported.
#include <clang/AST/ASTConsumer.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Tooling/ArgumentsAdjusters.h>
#include <clang/Tooling/CommonOptionsParser.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <optional>
#include <set>

#include "checks/checks.h"
#include "emitter/output.h"
#include "pipeline/translation_unit.h"
#include "tool/fixes.h"
#include "tool/report_formats.h"

#ifndef FUNCGEN_VERSION
#define FUNCGEN_VERSION "0.0.0"
#endif
#ifndef FUNCGEN_CLANG_RESOURCE_DIR
#define FUNCGEN_CLANG_RESOURCE_DIR ""
#endif

namespace {

llvm::cl::OptionCategory category("funcgen options");
llvm::cl::opt<std::string> resource_dir(
    "resource-dir", llvm::cl::desc("Clang resource directory (default: the one found at build time)"),
    llvm::cl::init(FUNCGEN_CLANG_RESOURCE_DIR), llvm::cl::cat(category));
llvm::cl::opt<std::string> output_dir("o", llvm::cl::desc("Directory for <stem>.funcgen.h and <stem>.funcgen.cpp "
                                                          "(default: beside each source)"),
                                      llvm::cl::value_desc("dir"), llvm::cl::cat(category));
llvm::cl::opt<std::string> depfile("depfile", llvm::cl::desc("Write a make-style dependency file for the outputs"),
                                   llvm::cl::value_desc("file"), llvm::cl::cat(category));
llvm::cl::opt<std::string> checks("checks", llvm::cl::desc("Enable or disable checks by glob, as clang-tidy: "
                                                           "'-*,funcgen-item', '-funcgen-side-effect'"),
                                  llvm::cl::init(""), llvm::cl::cat(category));
llvm::cl::list<std::string> autograd_apis(
    "autograd-api", llvm::cl::desc("More eager autograd functions for funcgen-autograd-api (qualified names, or ::method)"),
    llvm::cl::CommaSeparated, llvm::cl::value_desc("names"), llvm::cl::cat(category));
llvm::cl::opt<std::string> warnings_as_errors(
    "warnings-as-errors", llvm::cl::desc("Report the warnings of the checks these globs match as errors ('*' for all)"),
    llvm::cl::init(""), llvm::cl::cat(category));
llvm::cl::opt<bool> list_checks("list-checks", llvm::cl::desc("List the checks and exit"), llvm::cl::cat(category));
llvm::cl::opt<std::string> explain("explain", llvm::cl::desc("Explain a check (funcgen-<id>) and exit"),
                                   llvm::cl::value_desc("id"), llvm::cl::cat(category));

llvm::cl::opt<bool> no_optimize(
    "no-optimize",
    llvm::cl::desc("Generate the transforms as derived, without the optimizations (structured bases, common "
                   "subexpressions, dead code): for comparing against the optimized code"),
    llvm::cl::cat(category));

llvm::cl::opt<bool> fix("fix", llvm::cl::desc("Apply the fix-its of the diagnostics to the sources"),
                        llvm::cl::cat(category));
llvm::cl::opt<std::string> export_fixes_file("export-fixes",
                                             llvm::cl::desc("Write the fix-its as YAML for clang-apply-replacements"),
                                             llvm::cl::value_desc("file"), llvm::cl::cat(category));

enum class Format { Clang, Json };
llvm::cl::opt<Format> output_format(
    "format", llvm::cl::desc("How the diagnostics are reported"),
    llvm::cl::values(clEnumValN(Format::Clang, "clang", "Clang's text on stderr (default)"),
                     clEnumValN(Format::Json, "json", "one JSON document on stdout, instead of Clang's text")),
    llvm::cl::init(Format::Clang), llvm::cl::cat(category));
llvm::cl::opt<std::string> sarif_file("sarif", llvm::cl::desc("Also write the diagnostics as SARIF 2.1.0"),
                                      llvm::cl::value_desc("file"), llvm::cl::cat(category));

std::vector<clang::tooling::Diagnostic> recorded;
std::vector<funcgen::LogDiagnostic> logged;  // every diagnostic, for --format=json and --sarif

std::map<std::string, funcgen::TranslationUnitResult> results;

// Where Clang reported the errors recorded from `first` on (this file's; all Clang's: funcgen's
// checks run after them).
std::vector<clang::SourceLocation> clang_errors(const clang::SourceManager& sm, size_t first) {
  std::vector<clang::SourceLocation> out;
  for (size_t k = first; k < recorded.size(); ++k) {
    const clang::tooling::Diagnostic& d = recorded[k];
    if (d.DiagLevel != clang::tooling::Diagnostic::Error || d.Message.FilePath.empty()) continue;
    llvm::Expected<clang::FileEntryRef> file = sm.getFileManager().getFileRef(d.Message.FilePath);
    if (!file) {
      llvm::consumeError(file.takeError());
      continue;
    }
    const clang::FileID id = sm.translateFile(*file);
    if (id.isValid()) out.push_back(sm.getLocForStartOfFile(id).getLocWithOffset(static_cast<int>(d.Message.FileOffset)));
  }
  return out;
}

class Consumer : public clang::ASTConsumer {
 public:
  explicit Consumer(const clang::Preprocessor& pp) : pp_(pp), first_recorded_(recorded.size()) {}
  void HandleTranslationUnit(clang::ASTContext& context) override {
    const clang::SourceManager& sm = context.getSourceManager();
    const funcgen::ToolOptions options{checks, warnings_as_errors, !no_optimize};
    funcgen::TranslationUnitResult result =
        funcgen::generate_translation_unit(context, pp_, clang_errors(sm, first_recorded_), options);
    const clang::FileEntry* main = sm.getFileEntryForID(sm.getMainFileID());
    llvm::SmallString<256> key(main != nullptr ? main->getName() : "");
    llvm::sys::fs::make_absolute(key);
    llvm::sys::path::remove_dots(key, true);
    results[key.str().str()] = std::move(result);
  }

 private:
  const clang::Preprocessor& pp_;  // its macros, as they stand at the end of the file
  size_t first_recorded_;          // the first of `recorded` that this file's parse reported
};

class Action : public clang::ASTFrontendAction {
 protected:
  bool BeginSourceFileAction(clang::CompilerInstance& ci) override {
    // Record the fix-its and the diagnostics on the way to the usual printer.
    clang::DiagnosticsEngine& diags = ci.getDiagnostics();
    if (std::unique_ptr<clang::DiagnosticConsumer> printer = diags.takeClient()) {
      if (output_format == Format::Json) {  // no text: neither the printer nor "N errors generated."
        printer.reset();
        ci.getDiagnosticOpts().ShowCarets = false;
      }
      auto log = std::make_unique<funcgen::DiagnosticLog>(std::move(printer), logged);
      diags.setClient(new funcgen::FixRecorder(std::move(log), recorded), /*ShouldOwnClient=*/true);
    }
    return true;
  }
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& ci, llvm::StringRef) override {
    return std::make_unique<Consumer>(ci.getPreprocessor());
  }
};

int print_checks() {
  for (const auto& c : funcgen::all_checks())
    llvm::outs() << "funcgen-" << c.id << (c.warning ? " (warning)" : "") << ": " << c.summary << "\n";
  return 0;
}

int print_explanation(const std::string& id) {
  const funcgen::CheckInfo* c = funcgen::find_check(id);
  if (c == nullptr) {
    llvm::errs() << "funcgen: unknown check '" << id << "'; --list-checks lists them\n";
    return 2;
  }
  llvm::outs() << "funcgen-" << c->id << " (" << (c->warning ? "warning" : "error") << "): " << c->summary << "\n\n"
               << c->help << "\n";
  return 0;
}

using Outputs = std::vector<std::pair<std::string, std::string>>;  // path, content

// The files of every source, and the depfile; none after an internal error (reported).
std::optional<Outputs> render_outputs(const std::vector<std::string>& sources) {
  Outputs writes;
  std::vector<std::string> targets, deps;
  for (const std::string& source : sources) {
    llvm::SmallString<256> absolute(source);
    llvm::sys::fs::make_absolute(absolute);
    llvm::sys::path::remove_dots(absolute, true);
    auto it = results.find(absolute.str().str());
    if (it == results.end()) {
      llvm::errs() << "funcgen: internal error: no result for '" << source << "'\n";
      return std::nullopt;
    }
    llvm::SmallString<256> dir(output_dir.empty() ? llvm::sys::path::parent_path(absolute) : llvm::StringRef(output_dir));
    llvm::sys::fs::make_absolute(dir);
    llvm::sys::path::remove_dots(dir, true);
    const funcgen::OutputFiles files = funcgen::assemble(absolute.str().str(), dir.str().str(), it->second.functions, !no_optimize);
    writes.emplace_back(files.header_path, files.header);
    writes.emplace_back(files.source_path, files.source);
    targets.push_back(files.header_path);
    targets.push_back(files.source_path);
    deps.insert(deps.end(), it->second.dependencies.begin(), it->second.dependencies.end());
  }
  if (!depfile.empty()) writes.emplace_back(depfile, funcgen::depfile_text(targets, deps));
  return writes;
}

// All outputs are replaced together or not at all: a header that no longer matches the old source
// beside it, or a depfile that names stale targets, would break the user's next build.
int write_outputs(const std::optional<Outputs>& writes) {
  if (!writes) return 1;  // render_outputs reported why
  funcgen::OutputTransaction transaction;
  std::string error;
  bool staged = true;
  for (const auto& [path, content] : *writes) staged = staged && transaction.stage(path, content, error);
  if (staged && transaction.commit(error)) return 0;
  llvm::errs() << "funcgen: " << error << "\n";
  return 1;
}

}  // namespace

int main(int argc, const char** argv) {
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream& os) { os << "funcgen " << FUNCGEN_VERSION << "\n"; });
  // --list-checks and --explain need no source.
  for (int i = 1; i < argc; ++i) {
    const llvm::StringRef a(argv[i]);
    if (a == "--list-checks" || a == "-list-checks") return print_checks();
    if ((a == "--explain" || a == "-explain") && i + 1 < argc) return print_explanation(argv[i + 1]);
    if (a.startswith("--explain=")) return print_explanation(a.substr(10).str());
  }
  auto parser = clang::tooling::CommonOptionsParser::create(argc, argv, category, llvm::cl::OneOrMore,
                                                            "funcgen: torch.func transforms for C++, at compile time\n");
  if (!parser) {
    llvm::errs() << "funcgen: " << llvm::toString(parser.takeError()) << "\n";
    return 2;
  }
  if (!depfile.empty() && parser->getSourcePathList().size() != 1) {
    llvm::errs() << "funcgen: --depfile needs exactly one source file\n";
    return 2;
  }
  funcgen::add_autograd_apis(std::vector<std::string>(autograd_apis.begin(), autograd_apis.end()));
  clang::tooling::ClangTool tool(parser->getCompilations(), parser->getSourcePathList());
  // LibTooling does not know where the Clang headers (<stddef.h>, ...) live unless told.
  if (!resource_dir.empty())
    tool.appendArgumentsAdjuster(clang::tooling::getInsertArgumentAdjuster(
        ("-resource-dir=" + resource_dir).c_str(), clang::tooling::ArgumentInsertPosition::BEGIN));
  // The annotations are [[clang::annotate]] only under Clang's own front-end, which this is.
  const int status = tool.run(clang::tooling::newFrontendActionFactory<Action>().get());
  if (output_format == Format::Json) llvm::outs() << funcgen::diagnostics_json(logged);
  if (!sarif_file.empty()) {  // written with errors too: that is when it matters
    std::string error;
    if (!funcgen::write_sarif(sarif_file, logged, error)) {
      llvm::errs() << "funcgen: " << error << "\n";
      return 1;
    }
  }
  if (!export_fixes_file.empty()) {
    std::string error;
    if (!funcgen::export_fixes(export_fixes_file, parser->getSourcePathList().front(), recorded, error)) {
      llvm::errs() << "funcgen: " << error << "\n";
      return 1;
    }
  }
  if (fix) {
    std::string error;
    if (!funcgen::apply_fixes(recorded, error)) {
      llvm::errs() << "funcgen: " << error << "\n";
      return 1;
    }
  }
  if (status != 0) return 1;  // errors were reported: write nothing, keep the old outputs

  return write_outputs(render_outputs(parser->getSourcePathList()));
}
