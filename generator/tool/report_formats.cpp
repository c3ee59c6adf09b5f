#include "tool/report_formats.h"

#include <clang/Basic/DiagnosticIDs.h>
#include <clang/Basic/LangOptions.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "diag/reporter.h"
#include "emitter/output.h"

#ifndef FUNCGEN_VERSION
#define FUNCGEN_VERSION "0.0.0"
#endif

namespace funcgen {

namespace {

using json = nlohmann::ordered_json;  // keys in the order written, for readable and stable output

// The column of `offset` in its line, counted in Unicode code points (UTF-8 continuation bytes do
// not start a character).
unsigned char_column(const clang::SourceManager& sm, clang::FileID fid, unsigned offset, unsigned byte_column) {
  bool invalid = false;
  const llvm::StringRef buffer = sm.getBufferData(fid, &invalid);
  if (invalid || byte_column == 0 || offset > buffer.size() || offset < byte_column - 1) return byte_column;
  unsigned column = 1;
  for (size_t i = offset - (byte_column - 1); i < offset; ++i)
    if ((static_cast<unsigned char>(buffer[i]) & 0xC0) != 0x80) ++column;
  return column;
}

// A file location as Clang's text printer shows it: the presumed file/line/column.
bool resolve(const clang::SourceManager& sm, clang::SourceLocation loc, std::string& file, LogPosition& position) {
  if (loc.isInvalid()) return false;
  if (loc.isMacroID()) loc = sm.getFileLoc(loc);
  const clang::PresumedLoc p = sm.getPresumedLoc(loc);
  if (p.isInvalid()) return false;
  file = p.getFilename();
  position.line = p.getLine();
  position.column = p.getColumn();
  const auto [fid, offset] = sm.getDecomposedLoc(loc);
  position.char_column = char_column(sm, fid, offset, sm.getColumnNumber(fid, offset));
  return true;
}

// The highlighted ranges that fall in one file, with exclusive ends.
std::vector<LogRange> resolve_ranges(const clang::SourceManager& sm, const clang::LangOptions& lang,
                                     llvm::ArrayRef<clang::CharSourceRange> ranges) {
  std::vector<LogRange> out;
  for (const clang::CharSourceRange& r : ranges) {
    if (r.isInvalid()) continue;
    const clang::CharSourceRange file_range = clang::Lexer::makeFileCharRange(r, sm, lang);
    if (file_range.isInvalid()) continue;
    if (sm.getFileID(file_range.getBegin()) != sm.getFileID(file_range.getEnd())) continue;
    LogRange range;
    std::string end_file;
    if (!resolve(sm, file_range.getBegin(), range.file, range.begin) ||
        !resolve(sm, file_range.getEnd(), end_file, range.end))
      continue;
    out.push_back(std::move(range));
  }
  return out;
}

// The fix-its as -fdiagnostics-parseable-fixits prints them: none when one is in a macro.
std::vector<LogFixIt> resolve_fixits(const clang::SourceManager& sm, const clang::LangOptions& lang,
                                     llvm::ArrayRef<clang::FixItHint> hints) {
  std::vector<LogFixIt> out;
  for (const clang::FixItHint& hint : hints) {
    clang::SourceLocation begin = hint.RemoveRange.getBegin(), end = hint.RemoveRange.getEnd();
    if (begin.isInvalid() || end.isInvalid() || begin.isMacroID() || end.isMacroID()) return {};
    if (hint.RemoveRange.isTokenRange()) end = end.getLocWithOffset(clang::Lexer::MeasureTokenLength(end, sm, lang));
    LogFixIt fixit;
    std::string end_file;
    if (!resolve(sm, begin, fixit.range.file, fixit.range.begin) || !resolve(sm, end, end_file, fixit.range.end))
      return {};
    fixit.text = hint.CodeToInsert;
    out.push_back(std::move(fixit));
  }
  return out;
}

// The end of the token at `loc` (`at` itself when there is none or it would leave the line).
LogPosition token_end(const clang::SourceManager& sm, const clang::LangOptions& lang, clang::SourceLocation loc,
                      const LogPosition& at) {
  if (loc.isMacroID()) loc = sm.getFileLoc(loc);
  const unsigned length = clang::Lexer::MeasureTokenLength(loc, sm, lang);
  std::string file;
  LogPosition end;
  if (length == 0 || !resolve(sm, loc.getLocWithOffset(length), file, end) || end.line != at.line) return at;
  return end;
}

const clang::LangOptions& default_lang() {
  static const clang::LangOptions lang;
  return lang;
}

}  // namespace

void DiagnosticLog::BeginSourceFile(const clang::LangOptions& lang, const clang::Preprocessor* pp) {
  lang_ = &lang;
  if (next_) next_->BeginSourceFile(lang, pp);
}

void DiagnosticLog::EndSourceFile() {
  open_ = false;
  lang_ = nullptr;
  if (next_) next_->EndSourceFile();
}

void DiagnosticLog::finish() {
  open_ = false;
  if (next_) next_->finish();
}

void DiagnosticLog::HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) {
  clang::DiagnosticConsumer::HandleDiagnostic(level, info);
  if (next_) next_->HandleDiagnostic(level, info);
  if (level == clang::DiagnosticsEngine::Ignored) return;

  llvm::SmallString<256> formatted;
  info.FormatDiagnostic(formatted);
  std::string message = formatted.str().str();
  std::string file;
  LogPosition position, caret_end;
  std::vector<LogRange> ranges;
  std::vector<LogFixIt> fixits;
  if (info.hasSourceManager() && resolve(info.getSourceManager(), info.getLocation(), file, position)) {
    const clang::LangOptions& lang = lang_ != nullptr ? *lang_ : default_lang();
    caret_end = token_end(info.getSourceManager(), lang, info.getLocation(), position);
    ranges = resolve_ranges(info.getSourceManager(), lang, info.getRanges());
    fixits = resolve_fixits(info.getSourceManager(), lang, info.getFixItHints());
  }

  if (level == clang::DiagnosticsEngine::Note && open_ && !diagnostics_.empty()) {
    diagnostics_.back().notes.push_back(
        LogNote{file, position, caret_end, message, std::move(ranges), std::move(fixits)});
    return;
  }

  LogDiagnostic d;
  switch (level) {
    case clang::DiagnosticsEngine::Note:
      d.severity = "note";
      break;
    case clang::DiagnosticsEngine::Remark:
      d.severity = "remark";
      break;
    case clang::DiagnosticsEngine::Warning:
      d.severity = "warning";
      break;
    default:
      d.severity = "error";
      break;
  }
  // "<message> [funcgen-id]": the id names the check, as clang-tidy's check names do.
  if (const size_t open = message.rfind(" [funcgen-"); open != std::string::npos && message.back() == ']') {
    d.check = message.substr(open + 2, message.size() - open - 3);
    message.erase(open);
  } else {
    // Clang's own diagnostics are named as clang-tidy names them.
    const llvm::StringRef flag = clang::DiagnosticIDs::getWarningOptionForDiag(info.getID());
    d.check = "clang-diagnostic-" + (flag.empty() ? d.severity : flag.str());
  }
  d.message = std::move(message);
  d.file = std::move(file);
  d.position = position;
  d.caret_end = caret_end;
  d.ranges = std::move(ranges);
  d.fixits = std::move(fixits);
  diagnostics_.push_back(std::move(d));
  open_ = level != clang::DiagnosticsEngine::Note;
}

namespace {

json position_json(const LogPosition& p) { return json{{"line", p.line}, {"column", p.column}}; }

json range_json(const LogRange& r) {
  return json{{"file", r.file}, {"start", position_json(r.begin)}, {"end", position_json(r.end)}};
}

json ranges_json(const std::vector<LogRange>& ranges) {
  json out = json::array();
  for (const LogRange& r : ranges) out.push_back(range_json(r));
  return out;
}

json fixits_json(const std::vector<LogFixIt>& fixits) {
  json out = json::array();
  for (const LogFixIt& f : fixits)
    out.push_back(json{{"file", f.range.file},
                       {"start", position_json(f.range.begin)},
                       {"end", position_json(f.range.end)},
                       {"replacement", f.text}});
  return out;
}

// "file", "line", "column" of a location; null when there is none.
void put_location(json& j, const std::string& file, const LogPosition& p) {
  if (file.empty()) {
    j["file"] = nullptr;
    j["line"] = nullptr;
    j["column"] = nullptr;
  } else {
    j["file"] = file;
    j["line"] = p.line;
    j["column"] = p.column;
  }
}

std::string dump(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

}  // namespace

std::string diagnostics_json(const std::vector<LogDiagnostic>& diags) {
  json list = json::array();
  for (const LogDiagnostic& d : diags) {
    json j;
    j["check"] = d.check;
    j["severity"] = d.severity;
    j["message"] = d.message;
    put_location(j, d.file, d.position);
    j["ranges"] = ranges_json(d.ranges);
    json notes = json::array();
    for (const LogNote& n : d.notes) {
      json note;
      put_location(note, n.file, n.position);
      note["message"] = n.message;
      note["ranges"] = ranges_json(n.ranges);
      note["fixits"] = fixits_json(n.fixits);
      notes.push_back(std::move(note));
    }
    j["notes"] = std::move(notes);
    j["fixits"] = fixits_json(d.fixits);
    list.push_back(std::move(j));
  }
  return dump(json{{"diagnostics", std::move(list)}});
}

std::string file_uri(const std::string& path) {
  llvm::SmallString<256> absolute(path);
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  llvm::sys::path::native(absolute, llvm::sys::path::Style::posix);
  std::string uri = "file://";
  if (absolute.empty() || absolute[0] != '/') uri += '/';  // "C:/x" -> "file:///C:/x"
  static const char hex[] = "0123456789ABCDEF";
  for (const char ch : absolute) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      uri += ch;
    } else {
      uri += '%';
      uri += hex[c >> 4];
      uri += hex[c & 15];
    }
  }
  return uri;
}

namespace {

// A region in SARIF's terms: 1-based lines, 1-based columns in code points, exclusive end column.
json region_json(const LogPosition& begin, const LogPosition& end) {
  return json{{"startLine", begin.line},
              {"startColumn", begin.char_column},
              {"endLine", end.line},
              {"endColumn", end.char_column}};
}

// A diagnostic's or note's location: the highlighted range that starts at the caret, if any, else
// the token at the caret.
json physical_location(const std::string& file, const LogPosition& at, const LogPosition& caret_end,
                       const std::vector<LogRange>& ranges) {
  LogPosition end = caret_end.line != 0 ? caret_end : at;
  for (const LogRange& r : ranges)
    if (r.file == file && r.begin.line == at.line && r.begin.column == at.column) {
      end = r.end;
      break;
    }
  return json{{"artifactLocation", {{"uri", file_uri(file)}}}, {"region", region_json(at, end)}};
}

// Physical locations for names like "<built-in>" would not be files.
bool is_file(const std::string& file) { return !file.empty() && file[0] != '<'; }

// One SARIF fix: the fix-its grouped by file, in order.
json fix_json(const std::vector<LogFixIt>& fixits, const std::string* description) {
  json changes = json::array();
  std::vector<std::string> files;
  for (const LogFixIt& f : fixits)
    if (std::find(files.begin(), files.end(), f.range.file) == files.end()) files.push_back(f.range.file);
  for (const std::string& file : files) {
    json replacements = json::array();
    for (const LogFixIt& f : fixits)
      if (f.range.file == file)
        replacements.push_back(
            json{{"deletedRegion", region_json(f.range.begin, f.range.end)}, {"insertedContent", {{"text", f.text}}}});
    changes.push_back(json{{"artifactLocation", {{"uri", file_uri(file)}}}, {"replacements", std::move(replacements)}});
  }
  json fix;
  if (description != nullptr) fix["description"] = json{{"text", *description}};
  fix["artifactChanges"] = std::move(changes);
  return fix;
}

bool fixits_in_files(const std::vector<LogFixIt>& fixits) {
  if (fixits.empty()) return false;
  for (const LogFixIt& f : fixits)
    if (!is_file(f.range.file)) return false;
  return true;
}

}  // namespace

std::string diagnostics_sarif(const std::vector<LogDiagnostic>& diags) {
  const std::vector<CheckInfo>& checks = all_checks();
  json rules = json::array();
  for (const CheckInfo& c : checks)
    rules.push_back(json{{"id", std::string("funcgen-") + c.id},
                         {"shortDescription", {{"text", c.summary}}},
                         {"fullDescription", {{"text", c.help}}},
                         {"help", {{"text", c.help}, {"markdown", c.help}}},
                         {"defaultConfiguration", {{"level", c.warning ? "warning" : "error"}}}});

  json results = json::array();
  for (const LogDiagnostic& d : diags) {
    json r;
    for (size_t i = 0; i < checks.size(); ++i)
      if (d.check == std::string("funcgen-") + checks[i].id) {
        r["ruleId"] = d.check;
        r["ruleIndex"] = i;
      }
    r["level"] = d.severity == "error" || d.severity == "warning" ? d.severity : "note";
    r["message"] = json{{"text", d.message}};
    if (is_file(d.file))
      r["locations"] =
          json::array({json{{"physicalLocation", physical_location(d.file, d.position, d.caret_end, d.ranges)}}});
    if (!d.notes.empty()) {
      json related = json::array();
      for (size_t i = 0; i < d.notes.size(); ++i) {
        const LogNote& n = d.notes[i];
        json location{{"id", i}};
        if (is_file(n.file))
          location["physicalLocation"] = physical_location(n.file, n.position, n.caret_end, n.ranges);
        location["message"] = json{{"text", n.message}};
        related.push_back(std::move(location));
      }
      r["relatedLocations"] = std::move(related);
    }
    // Each fix is one proposal: the diagnostic's own fix-its, then each note's (alternatives, such
    // as randomness='different' or 'same', stay separate fixes).
    json fixes = json::array();
    if (fixits_in_files(d.fixits)) fixes.push_back(fix_json(d.fixits, nullptr));
    for (const LogNote& n : d.notes)
      if (fixits_in_files(n.fixits)) fixes.push_back(fix_json(n.fixits, &n.message));
    if (!fixes.empty()) r["fixes"] = std::move(fixes);
    results.push_back(std::move(r));
  }

  json driver{{"name", "funcgen"},
              {"version", FUNCGEN_VERSION},
              {"semanticVersion", FUNCGEN_VERSION},
              {"rules", std::move(rules)}};
  json run{
      {"tool", {{"driver", std::move(driver)}}}, {"columnKind", "unicodeCodePoints"}, {"results", std::move(results)}};
  json log{{"$schema", "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"},
           {"version", "2.1.0"},
           {"runs", json::array({std::move(run)})}};
  return dump(log);
}

bool write_sarif(const std::string& path, const std::vector<LogDiagnostic>& diags, std::string& error) {
  return write_atomically(path, diagnostics_sarif(diags), error);
}

}  // namespace funcgen
