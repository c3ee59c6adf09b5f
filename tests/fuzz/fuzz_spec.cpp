// Fuzz target 1: the spec language. Any text either parses, builds and checks into a transform,
// or raises a ParseError whose diagnostic lies inside the text; nothing crashes, hangs or throws
// anything else. An accepted spec's nesting (spec::nesting_of) parses again to the same nesting.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "frontend/spec.h"

namespace {

using namespace funcgen::spec;

[[noreturn]] void fail(const std::string& text, const char* what) {
  std::fprintf(stderr, "fuzz_spec: %s for spec \"%s\"\n", what, text.c_str());
  std::abort();
}

// Diagnostics point into the spec (the front end maps the offset into the string literal).
void check_diagnostic(const std::string& text, const Diagnostic& d) {
  if (d.offset > text.size()) fail(text, "diagnostic offset past the end");
  if (d.message.empty()) fail(text, "empty diagnostic");
  for (const auto& [offset, note] : d.notes)
    if (offset > text.size() || note.empty()) fail(text, "note outside the spec or empty");
  if (d.fixit && d.fixit->offset + d.fixit->length > text.size()) fail(text, "fix-it outside the spec");
}

// The signatures the checked specs resolve against: every parameter kind the checker tells apart.
const FunctionInfo* lookup(const std::string& name) {
  static const FunctionInfo f{"f", {{"x", true, "", false}, {"y", true, "", false}}, 1, false, false};
  static const FunctionInfo g{"g", {{"x", true, "", false}, {"k", false, "int", false}, {"s", true, "", true}}, 2, true, false};
  static const FunctionInfo h{"h", {}, 1, false, false};
  if (name == "f") return &f;
  if (name == "g") return &g;
  if (name == "h") return &h;
  return nullptr;
}

void run(const std::string& text) {
  try {
    const Annotation a = parse(text);
    if (a.name_offset > text.size()) fail(text, "name offset past the end");
    if (a.name.empty()) return;  // a derivative rule: custom_vjp(f)
    const std::shared_ptr<const Transform> t = build_transform(a.value);
    if (t == nullptr) fail(text, "no transform and no diagnostic");
    const std::string nesting = nesting_of(*t);
    const std::shared_ptr<const Transform> again = build_transform(parse("n = " + nesting).value);
    if (nesting_of(*again) != nesting) fail(text, "the nesting does not parse back to itself");
    check_transform(*t, lookup);
  } catch (const ParseError& e) {
    check_diagnostic(text, e.diagnostic());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  run(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
