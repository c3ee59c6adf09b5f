#include "checks/reporter.h"

#include <clang/Lex/Lexer.h>

#include <algorithm>
#include <sstream>

namespace funcgen {

const std::vector<CheckInfo>& all_checks() {
  static const std::vector<CheckInfo> checks = {
      {"spec", false, "a FUNCGEN spec that does not parse or does not fit the function",
       "The spec is torch.func's Python call syntax: `name = transform(f, option=value, ...)`. The error points at the "
       "byte that is wrong; fix the transform name, the option, or the in_dims/argnums so that they match the "
       "annotated function's parameters."},
      {"global-assignment", false, "a transformed function assigns to a variable outside it",
       "Transforms see only what a function returns: a value stored in a global or static variable is the value "
       "of one call of the transformed function, not of each example. Return it as an extra output instead "
       "(has_aux=True for grad, an extra tuple element for vmap)."},
      {"autograd-api", false, "a transformed function calls an eager autograd API",
       "torch.autograd.grad / Tensor.backward inside a transformed function do not compose with the transforms. "
       "Use the functional transform instead: torch.autograd.grad -> grad, vjp; autograd.functional.jacobian -> "
       "jacrev/jacfwd; autograd.functional.hessian -> hessian; jvp/vjp -> jvp/vjp."},
      {"side-effect", true, "vmap runs a side effect once for the whole batch",
       "Under vmap the function body runs once on the whole batch, so I/O and writes to state outside the function "
       "(reference or pointer parameters, containers, statics) happen once, not once per example. Return the "
       "values instead, or move the side effect outside the transformed function."},
      {"inplace-batched", false, "an in-place op writes batched data into an unbatched tensor",
       "An in-place op cannot make its destination batched: `x.add_(y)` with x unbatched and y batched has no "
       "per-example result to write. Use the out-of-place op (`x = x + y`), or create the destination from a "
       "batched tensor (`y.new_zeros(...)` instead of `fg::zeros(...)`)."},
      {"out-variant", false, "an `_out` op under vmap",
       "vmap does not support out= operations: the destination has no batch dimension. Use the functional form "
       "(`fg::add(a, b)` instead of `fg::add_out(out, a, b)`)."},
      {"data-dependent-control-flow", false, "control flow on the values of a batched tensor",
       "Under vmap each example could take a different branch, but the body runs once for the whole batch. Use "
       "fg::where for if/else on values, or vmap(..., control_flow='select') to let funcgen compute both branches "
       "and select per example. Control flow on shapes (x.dim(), x.size(0)) or unbatched values is fine."},
      {"item", false, "a batched tensor converted to a C++ scalar",
       "`.item()`, `data_ptr()` and conversions to bool or numbers need one value, but a batched tensor has one per "
       "example. Keep the value a tensor and use tensor ops (fg::where, fg::maximum, ...)."},
      {"dynamic-shape", false, "an op whose output shape depends on a batched tensor's values",
       "nonzero, masked_select, unique and is_nonzero give shapes that differ per example, which one batched tensor "
       "cannot hold. Use a mask and fg::where, or a fixed-size alternative."},
      {"randomness", false, "a random op under vmap with randomness='error'",
       "vmap must know whether random values should differ per example. Add randomness='different' (independent "
       "per example) or randomness='same' (one draw shared by the batch) to the vmap."},
      {"vmap-fallback", true, "an op without a batching rule runs once per example",
       "funcgen has no batching rule for this op, so the generated code loops over the batch and stacks the "
       "results (functorch's slow fallback): correct but slower."},
      {"unsupported", false, "a construct funcgen cannot transform",
       "The construct (shown at the location) cannot be lowered to funcgen's IR. Rewrite it with the fg runtime ops "
       "and plain C++ control flow."},
  };
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

clang::DiagnosticBuilder Reporter::report(const std::string& id, clang::SourceLocation loc, const std::string& message) {
  const CheckInfo* info = find_check(id);
  const bool warning = info != nullptr && info->warning && !matches(werror_globs_, id, false);
  last_reported_ = enabled(id) && !suppressed_by_nolint(id, loc);
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
