#include "diag/reporter.h"

#include <clang/Lex/Lexer.h>

#include <algorithm>
#include <iterator>
#include <sstream>

namespace funcgen {

namespace {

std::vector<CheckInfo>& registry() {
  // The checks about funcgen's own input and its fallback; the limitation checks add themselves.
  static std::vector<CheckInfo> checks = {
      {"spec", false, "a FUNCGEN spec that does not parse or does not fit the function",
       "The spec is torch.func's Python call syntax: `name = transform(f, option=value, ...)`. The error points at the "
       "byte that is wrong; fix the transform name, the option, or the in_dims/argnums so that they match the "
       "annotated function's parameters."},
      {"vmap-fallback", true, "an op without a batching rule runs once per example",
       "funcgen has no batching rule for this op, so the generated code loops over the batch and stacks the "
       "results (functorch's slow fallback): correct but slower."},
      {"unsupported", false, "a construct funcgen cannot transform",
       "The construct (shown at the location) cannot be lowered to funcgen's IR. Rewrite it with the fg runtime ops "
       "and plain C++ control flow."},
  };
  return checks;
}


// The order of API.md's table of checks (--list-checks, SARIF's rules); checks it does not list
// yet come before the last two, by id.
size_t rank(const std::string& id) {
  static const char* const order[] = {"spec",        "global-assignment",           "autograd-api", "side-effect",
                                      "inplace-batched", "out-variant", "data-dependent-control-flow", "item",
                                      "dynamic-shape", "randomness"};
  static const char* const last[] = {"vmap-fallback", "unsupported"};
  for (size_t i = 0; i < std::size(order); ++i)
    if (id == order[i]) return i;
  for (size_t i = 0; i < std::size(last); ++i)
    if (id == last[i]) return 1000 + i;
  return std::size(order);
}

bool before(const CheckInfo& a, const CheckInfo& b) {
  const size_t ra = rank(a.id), rb = rank(b.id);
  return ra != rb ? ra < rb : std::string(a.id) < b.id;
}

}  // namespace

void register_check_info(const CheckInfo& info) {
  std::vector<CheckInfo>& checks = registry();
  checks.insert(std::lower_bound(checks.begin(), checks.end(), info, before), info);
}

const std::vector<CheckInfo>& all_checks() {
  std::vector<CheckInfo>& checks = registry();
  std::sort(checks.begin(), checks.end(), before);  // the built-in ones were listed first
  return checks;
}

const CheckInfo* find_check(const std::string& id) {
  std::string bare = id.rfind("funcgen-", 0) == 0 ? id.substr(8) : id;
  for (const auto& c : all_checks())
    if (bare == c.id) return &c;
  return nullptr;
}

namespace {

bool glob_match(const char* pattern, const char* text) {
  if (*pattern == '\0') return *text == '\0';
  if (*pattern == '*') return glob_match(pattern + 1, text) || (*text != '\0' && glob_match(pattern, text + 1));
  return *text == *pattern && glob_match(pattern + 1, text + 1);
}

}  // namespace

namespace {

// "a,-b,c*" as (pattern, positive) pairs, in order.
std::vector<std::pair<std::string, bool>> parse_globs(const std::string& globs) {
  std::vector<std::pair<std::string, bool>> out;
  std::stringstream in(globs);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(std::remove_if(item.begin(), item.end(), ::isspace), item.end());
    if (item.empty()) continue;
    const bool positive = item[0] != '-';
    out.emplace_back(positive ? item : item.substr(1), positive);
  }
  return out;
}

// The last glob that matches decides; `initial` when none does.
bool matches(const std::vector<std::pair<std::string, bool>>& globs, const std::string& id, bool initial) {
  bool on = initial;
  const std::string full = "funcgen-" + id;
  for (const auto& [pattern, positive] : globs)
    if (glob_match(pattern.c_str(), full.c_str())) on = positive;
  return on;
}

}  // namespace

void Reporter::set_check_globs(const std::string& globs) { globs_ = parse_globs(globs); }
void Reporter::set_warnings_as_errors(const std::string& globs) { werror_globs_ = parse_globs(globs); }

bool Reporter::enabled(const std::string& id) const {
  if (id == "spec" || id == "unsupported") return true;  // errors about funcgen's own input
  return matches(globs_, id, true);
}

bool Reporter::suppressed_by_nolint(const std::string& id, clang::SourceLocation loc) const {
  if (loc.isInvalid()) return false;
  const clang::SourceLocation at = sm_.getExpansionLoc(loc);
  bool invalid = false;
  const llvm::StringRef buffer = sm_.getBufferData(sm_.getFileID(at), &invalid);
  if (invalid) return false;
  const size_t offset = sm_.getFileOffset(at);
  const size_t end = buffer.find('\n', offset);
  const llvm::StringRef rest = buffer.slice(offset, end == llvm::StringRef::npos ? buffer.size() : end);
  const size_t nolint = rest.find("NOLINT");
  if (nolint == llvm::StringRef::npos) return false;
  const llvm::StringRef after = rest.substr(nolint + 6);
  if (!after.startswith("(")) return true;  // a bare NOLINT silences everything on the line
  const llvm::StringRef list = after.substr(1, after.find(')') - 1);
  llvm::SmallVector<llvm::StringRef, 4> names;
  list.split(names, ',');
  for (llvm::StringRef name : names) {
    const std::string n = name.trim().str();
    if (glob_match(n.c_str(), ("funcgen-" + id).c_str())) return true;
  }
  return false;
}

Reporter::Context::Context(Reporter& reporter, clang::SourceLocation where, std::string note)
    : reporter_(reporter), outer_(reporter.context_), where_(where), note_(std::move(note)) {
  reporter_.flush_context_note();
  reporter_.context_ = this;
}

Reporter::Context::~Context() {
  reporter_.flush_context_note();
  reporter_.context_ = outer_;
}

void Reporter::flush_context_note() {
  if (!context_note_due_ || context_ == nullptr) return;
  context_note_due_ = false;
  if (context_->note_.empty()) return;
  diags_.Report(context_->where_, diags_.getCustomDiagID(clang::DiagnosticsEngine::Note, "%0")) << context_->note_;
}

bool Reporter::has_compile_error_in(clang::SourceRange range) const {
  const clang::SourceLocation begin = sm_.getExpansionLoc(range.getBegin()), end = sm_.getExpansionLoc(range.getEnd());
  for (const clang::SourceLocation& at : compile_errors_) {
    const clang::SourceLocation e = sm_.getExpansionLoc(at);
    if (sm_.getFileID(e) == sm_.getFileID(begin) && !sm_.isBeforeInTranslationUnit(e, begin) &&
        !sm_.isBeforeInTranslationUnit(end, e))
      return true;
  }
  return false;
}

clang::DiagnosticBuilder Reporter::report(const std::string& id, clang::SourceLocation loc,
                                          const std::string& message) {
  flush_context_note();
  if (loc.isInvalid() && context_ != nullptr) loc = context_->where_;
  const CheckInfo* info = find_check(id);
  const bool warning = info != nullptr && info->warning && !matches(werror_globs_, id, false);
  last_reported_ = enabled(id) && !suppressed_by_nolint(id, loc);
  // Once per construct: another spec (or another vmap of the same code) reaching it again.
  const bool again =
      last_reported_ && loc.isValid() && !reported_.emplace(id, sm_.getExpansionLoc(loc).getRawEncoding()).second;
  if (last_reported_ && !warning) ++errors_;
  if (again) last_reported_ = false;
  context_note_due_ = last_reported_ && context_ != nullptr;
  if (!last_reported_) {
    // An ignored custom diagnostic: Clang drops it and whatever is streamed into it.
    const unsigned ignored = diags_.getCustomDiagID(clang::DiagnosticsEngine::Ignored, "%0");
    return diags_.Report(loc, ignored);
  }
  auto key = std::make_pair(id, warning ? 1 : 0);
  auto it = ids_.find(key);
  if (it == ids_.end()) {
    const auto level = warning ? clang::DiagnosticIDs::Warning : clang::DiagnosticIDs::Error;
    it = ids_.emplace(key, diags_.getDiagnosticIDs()->getCustomDiagID(level, "%0 [funcgen-" + id + "]")).first;
  }
  auto builder = diags_.Report(loc, it->second);
  builder << message;
  return builder;
}

clang::DiagnosticBuilder Reporter::note(clang::SourceLocation loc, const std::string& message) {
  const unsigned id = last_reported_ ? diags_.getCustomDiagID(clang::DiagnosticsEngine::Note, "%0")
                                     : diags_.getCustomDiagID(clang::DiagnosticsEngine::Ignored, "%0");
  auto builder = diags_.Report(loc, id);
  builder << message;
  return builder;
}

}  // namespace funcgen
