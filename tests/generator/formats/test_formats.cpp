// funcgen --format=json and --sarif=FILE.
//
// The JSON is compared with the `// CHECK:` lines of the limitations gallery (the same lines the
// FileCheck tests hold Clang's text to: line, column, full message, notes, fix-its), and one file
// with a complete expected document. The SARIF is held to what the SARIF 2.1.0 schema requires of
// every object funcgen writes (required properties, types, enums, minimums, no unknown properties),
// its rules to funcgen's checks (--list-checks, --explain), and its results to the JSON.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#ifndef FUNCGEN_EXE
#error "FUNCGEN_EXE: the funcgen executable"
#endif
#ifndef FUNCGEN_SOURCE_DIR
#error "FUNCGEN_SOURCE_DIR: the project's source directory"
#endif

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kGallery = std::string(FUNCGEN_SOURCE_DIR) + "/samples/limitations";
const std::string kToolInputs = std::string(FUNCGEN_SOURCE_DIR) + "/tests/generator/tool";
const std::string kInclude = std::string(FUNCGEN_SOURCE_DIR) + "/runtime/include";

// ---------------------------------------------------------------------------------------------
// Running funcgen.

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct RunResult {
  int status = -1;
  std::string out, err;
};

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "funcgen-formats-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// funcgen <args> -- -std=c++17 -I<runtime>; stdout and stderr kept apart.
RunResult funcgen(const std::vector<std::string>& args, const fs::path& scratch, const std::string& flags = "") {
  std::string command = quote(FUNCGEN_EXE);
  for (const auto& a : args) command += " " + quote(a);
  command += " -- -std=c++17 " + quote("-I" + kInclude) + (flags.empty() ? "" : " " + flags);
  const fs::path out = scratch / "stdout.txt", err = scratch / "stderr.txt";
  command += " >" + quote(out.string()) + " 2>" + quote(err.string());
  const int raw = std::system(command.c_str());
  RunResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

// A tool invocation that needs no source (--list-checks, --explain).
std::string funcgen_info(const std::string& args, const fs::path& scratch) {
  const fs::path out = scratch / "info.txt";
  const std::string command = quote(FUNCGEN_EXE) + " " + args + " >" + quote(out.string()) + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return read_file(out);
}

// ---------------------------------------------------------------------------------------------
// The inputs' `// CHECK:` and `// EXIT:` lines.

struct Expected {
  std::vector<std::string> lines;         // canonical forms, in order (see flatten())
  std::vector<std::string> unrecognized;  // CHECK lines that are neither a diagnostic nor a fix-it
  int exit = 0;
  std::string flags;  // `// FLAGS:`: more compiler flags
};

int line_of(const std::string& expr, int check_line) {
  static const std::regex at(R"(\[\[@LINE([+-]\d+)?\]\])");
  std::smatch m;
  if (std::regex_match(expr, m, at)) return check_line + (m[1].matched ? std::stoi(m[1].str()) : 0);
  return std::stoi(expr);
}

Expected expected_of(const fs::path& input) {
  // (CHECK lines may be indented, as FileCheck reads them.)
  static const std::regex diag(R"(^\s*// CHECK: ([\w.]+):(\[\[@LINE[+-]?\d*\]\]|\d+):(\d+): (error|warning|note): (.*)$)");
  static const std::regex fixit(
      R"re(^\s*// CHECK: fix-it:"\{\{\.\*\}\}([\w.]+)":\{\{\[\{\]\}\}(\[\[@LINE[+-]?\d*\]\]|\d+):(\d+)-(\[\[@LINE[+-]?\d*\]\]|\d+):(\d+)\{\{\[\}\]\}\}:"(.*)"$)re");
  static const std::regex exit(R"(^// EXIT: *(\d+))");
  static const std::regex flags(R"(^// FLAGS: *(.*)$)");
  Expected e;
  std::ifstream in(input);
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    std::smatch m;
    if (std::regex_search(text, m, exit)) {
      e.exit = std::stoi(m[1].str());
    } else if (std::regex_match(text, m, flags)) {
      e.flags = m[1].str();
    } else if (std::regex_match(text, m, diag)) {
      e.lines.push_back(m[1].str() + ":" + std::to_string(line_of(m[2].str(), n)) + ":" + m[3].str() + ": " +
                        m[4].str() + ": " + m[5].str());
    } else if (std::regex_match(text, m, fixit)) {
      e.lines.push_back("fix-it:\"" + m[1].str() + "\":{" + std::to_string(line_of(m[2].str(), n)) + ":" + m[3].str() +
                        "-" + std::to_string(line_of(m[4].str(), n)) + ":" + m[5].str() + "}:\"" + m[6].str() + "\"");
    } else if (text.find_first_not_of(" \t") != std::string::npos &&
               text.compare(text.find_first_not_of(" \t"), 8, "// CHECK") == 0) {
      e.unrecognized.push_back(text);
    }
  }
  return e;
}

// Whether `actual` is the line `expected` describes: equal, or, where it has FileCheck's {{regex}}
// blocks, matching them (the rest taken literally).
bool line_matches(const std::string& actual, const std::string& expected) {
  if (expected.find("{{") == std::string::npos) return actual == expected;
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  std::string pattern;
  size_t at = 0;
  for (size_t open; (open = expected.find("{{", at)) != std::string::npos;) {
    const size_t close = expected.find("}}", open + 2);
    if (close == std::string::npos) break;
    pattern += std::regex_replace(expected.substr(at, open - at), special, "\\$&");
    pattern += "(?:" + expected.substr(open + 2, close - open - 2) + ")";
    at = close + 2;
  }
  pattern += std::regex_replace(expected.substr(at), special, "\\$&");
  return std::regex_match(actual, std::regex(pattern));
}

::testing::AssertionResult lines_match(const std::vector<std::string>& actual, const std::vector<std::string>& expected) {
  bool same = actual.size() == expected.size();
  for (size_t i = 0; same && i < actual.size(); ++i) same = line_matches(actual[i], expected[i]);
  if (same) return ::testing::AssertionSuccess();
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  failure << "the JSON's diagnostics:\n";
  for (const std::string& l : actual) failure << "  " << l << "\n";
  failure << "the CHECK lines:\n";
  for (const std::string& l : expected) failure << "  " << l << "\n";
  return failure;
}

// The JSON document in the CHECK lines' terms: each diagnostic as Clang prints it (with its
// " [funcgen-id]"), its fix-its, then each note and its fix-its.
std::string basename(const std::string& path) { return fs::path(path).filename().string(); }

std::string fixit_line(const json& f) {
  return "fix-it:\"" + basename(f.at("file").get<std::string>()) + "\":{" +
         std::to_string(f.at("start").at("line").get<int>()) + ":" +
         std::to_string(f.at("start").at("column").get<int>()) + "-" +
         std::to_string(f.at("end").at("line").get<int>()) + ":" + std::to_string(f.at("end").at("column").get<int>()) +
         "}:\"" + f.at("replacement").get<std::string>() + "\"";
}

// As Clang prints it: " [funcgen-id]" after funcgen's messages, nothing after Clang's own errors.
std::string check_suffix(const std::string& check) {
  return check.rfind("clang-", 0) == 0 ? "" : " [" + check + "]";
}

std::vector<std::string> flatten(const json& doc, bool with_fixits) {
  std::vector<std::string> out;
  for (const json& d : doc.at("diagnostics")) {
    out.push_back(basename(d.at("file").get<std::string>()) + ":" + std::to_string(d.at("line").get<int>()) + ":" +
                  std::to_string(d.at("column").get<int>()) + ": " + d.at("severity").get<std::string>() + ": " +
                  d.at("message").get<std::string>() + check_suffix(d.at("check").get<std::string>()));
    if (with_fixits)
      for (const json& f : d.at("fixits")) out.push_back(fixit_line(f));
    for (const json& n : d.at("notes")) {
      out.push_back(basename(n.at("file").get<std::string>()) + ":" + std::to_string(n.at("line").get<int>()) + ":" +
                    std::to_string(n.at("column").get<int>()) + ": note: " + n.at("message").get<std::string>());
      if (with_fixits)
        for (const json& f : n.at("fixits")) out.push_back(fixit_line(f));
    }
  }
  return out;
}

// The keys of an object, sorted.
std::vector<std::string> keys(const json& j) {
  std::vector<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.push_back(it.key());
  std::sort(k.begin(), k.end());
  return k;
}

// The JSON document's shape: every diagnostic, note, range and fix-it has its fields, typed.
void expect_json_shape(const json& doc) {
  ASSERT_TRUE(doc.is_object());
  ASSERT_EQ(keys(doc), std::vector<std::string>{"diagnostics"});
  ASSERT_TRUE(doc["diagnostics"].is_array());
  const auto position = [](const json& p) {
    EXPECT_EQ(keys(p), (std::vector<std::string>{"column", "line"}));
    EXPECT_TRUE(p["line"].is_number_unsigned() && p["line"].get<int>() >= 1) << p;
    EXPECT_TRUE(p["column"].is_number_unsigned() && p["column"].get<int>() >= 1) << p;
  };
  const auto range = [&](const json& r, bool fixit) {
    EXPECT_EQ(keys(r), fixit ? (std::vector<std::string>{"end", "file", "replacement", "start"})
                             : (std::vector<std::string>{"end", "file", "start"}));
    EXPECT_TRUE(r["file"].is_string());
    position(r["start"]);
    position(r["end"]);
    if (fixit) {
      EXPECT_TRUE(r["replacement"].is_string());
    }
  };
  for (const json& d : doc["diagnostics"]) {
    EXPECT_EQ(keys(d), (std::vector<std::string>{"check", "column", "file", "fixits", "line", "message", "notes",
                                                 "ranges", "severity"}));
    EXPECT_TRUE(d["check"].is_string());
    EXPECT_TRUE(d["severity"] == "error" || d["severity"] == "warning") << d["severity"];
    EXPECT_TRUE(d["message"].is_string());
    EXPECT_EQ(d["message"].get<std::string>().find(" [funcgen-"), std::string::npos) << "the id suffix stays out";
    EXPECT_TRUE(d["file"].is_string());
    EXPECT_TRUE(d["line"].is_number_unsigned() && d["column"].is_number_unsigned());
    for (const json& r : d["ranges"]) range(r, false);
    for (const json& f : d["fixits"]) range(f, true);
    for (const json& n : d["notes"]) {
      EXPECT_EQ(keys(n), (std::vector<std::string>{"column", "file", "fixits", "line", "message", "ranges"}));
      EXPECT_TRUE(n["message"].is_string());
      for (const json& r : n["ranges"]) range(r, false);
      for (const json& f : n["fixits"]) range(f, true);
    }
  }
}

// What Clang's text output looks like: in json mode none of it may be printed.
void expect_no_clang_text(const std::string& err) {
  EXPECT_EQ(err.find("[funcgen-"), std::string::npos) << err;
  EXPECT_EQ(err.find(": error: "), std::string::npos) << err;
  EXPECT_EQ(err.find(": warning: "), std::string::npos) << err;
  EXPECT_EQ(err.find(": note: "), std::string::npos) << err;
  EXPECT_EQ(err.find("generated."), std::string::npos) << err;
}

// ---------------------------------------------------------------------------------------------
// --format=json against the CHECK lines.

struct Input {
  std::string path;
  bool with_fixits;  // the gallery lists every fix-it; the tool inputs list none
};

std::vector<Input> inputs_with_checks() {
  std::vector<Input> inputs;
  for (const auto& [dir, with_fixits] : {std::pair{kGallery, true}, std::pair{kToolInputs, false}})
    for (const auto& entry : fs::directory_iterator(dir))
      // The gallery's main.cpp runs the fixed versions; it has no specs to check.
      if (entry.path().extension() == ".cpp" && entry.path().filename() != "main.cpp")
        inputs.push_back(Input{entry.path().string(), with_fixits});
  std::sort(inputs.begin(), inputs.end(), [](const Input& a, const Input& b) { return a.path < b.path; });
  return inputs;
}

void PrintTo(const Input& input, std::ostream* os) { *os << input.path; }

class JsonMatchesChecks : public ::testing::TestWithParam<Input> {};

TEST_P(JsonMatchesChecks, DiagnosticsNotesFixits) {
  const Input& input = GetParam();
  const Expected expected = expected_of(input.path);
  if (input.with_fixits) {
    EXPECT_EQ(expected.unrecognized, std::vector<std::string>{}) << "a CHECK line this test cannot read";
  }
  TempDir tmp;
  const RunResult r =
      funcgen({input.path, "-o", (tmp.path() / "out").string(), "--format=json"}, tmp.path(), expected.flags);
  EXPECT_EQ(r.status, expected.exit) << r.err;
  expect_no_clang_text(r.err);
  json doc;
  ASSERT_NO_THROW(doc = json::parse(r.out)) << "stdout is one JSON document:\n" << r.out;
  expect_json_shape(doc);
  EXPECT_TRUE(lines_match(flatten(doc, input.with_fixits), expected.lines));
  for (const json& d : doc["diagnostics"]) EXPECT_EQ(d["file"], input.path) << "the file as Clang names it";
}

INSTANTIATE_TEST_SUITE_P(Inputs, JsonMatchesChecks, ::testing::ValuesIn(inputs_with_checks()),
                         [](const ::testing::TestParamInfo<Input>& info) {
                           std::string name = fs::path(info.param.path).parent_path().filename().string() + "_" +
                                              fs::path(info.param.path).stem().string();
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// One file in full: every field, the highlighted ranges included (those Clang's
// -fdiagnostics-print-source-range-info shows: {11:3-11:12} and {21:3-21:31}).
TEST(Json, InplaceBatchedDocument) {
  const std::string file = kGallery + "/inplace_batched.cpp";
  const auto pos = [](int line, int column) { return json{{"line", line}, {"column", column}}; };
  const auto range = [&](int l1, int c1, int l2, int c2) {
    return json{{"file", file}, {"start", pos(l1, c1)}, {"end", pos(l2, c2)}};
  };
  const json expected = {
      {"diagnostics",
       json::array(
           {{{"check", "funcgen-inplace-batched"},
             {"severity", "error"},
             {"message",
              "in-place 'add_' writes batched values of 'y' into 'x', which is not batched; under vmap it cannot hold "
              "one "
              "result per example"},
             {"file", file},
             {"line", 11},
             {"column", 5},
             {"ranges", json::array({range(11, 3, 11, 12)})},
             {"notes", json::array({{{"file", file},
                                     {"line", 10},
                                     {"column", 32},
                                     {"message",
                                      "'x' is not mapped: its in_dim is None; map it too, or use the out-of-place form "
                                      "('x = x + ...')"},
                                     {"ranges", json::array()},
                                     {"fixits", json::array()}}})},
             {"fixits", json::array()}},
            {{"check", "funcgen-inplace-batched"},
             {"severity", "error"},
             {"message",
              "in-place 'copy_' writes batched values of 'vec' into 'result.diagonal()', which is not batched; under "
              "vmap "
              "it cannot hold one result per example"},
             {"file", file},
             {"line", 21},
             {"column", 21},
             {"ranges", json::array({range(21, 3, 21, 31)})},
             {"notes",
              json::array({{{"file", file},
                            {"line", 20},
                            {"column", 23},
                            {"message",
                             "'result' is created by 'fg::zeros', which is not batched; create it with 'vec.new_zeros' "
                             "so that it is batched like 'vec'"},
                            {"ranges", json::array()},
                            {"fixits", json::array({{{"file", file},
                                                     {"start", pos(20, 23)},
                                                     {"end", pos(20, 32)},
                                                     {"replacement", "vec.new_zeros"}}})}}})},
             {"fixits", json::array()}}})}};
  TempDir tmp;
  const RunResult r = funcgen({file, "-o", (tmp.path() / "out").string(), "--format=json"}, tmp.path());
  EXPECT_EQ(r.status, 1);
  json doc;
  ASSERT_NO_THROW(doc = json::parse(r.out)) << r.out;
  EXPECT_EQ(doc, expected) << doc.dump(2);
  EXPECT_FALSE(fs::exists(tmp.path() / "out")) << "errors: nothing generated";
}

// out_variant's fix-it belongs to the error itself (not to a note).
TEST(Json, FixitOfTheDiagnostic) {
  TempDir tmp;
  const RunResult r =
      funcgen({kGallery + "/out_variant.cpp", "-o", (tmp.path() / "out").string(), "--format=json"}, tmp.path());
  EXPECT_EQ(r.status, 1);
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc["diagnostics"].size(), 1u);
  const json& d = doc["diagnostics"][0];
  EXPECT_EQ(d["check"], "funcgen-out-variant");
  ASSERT_EQ(d["fixits"].size(), 1u);
  EXPECT_EQ(d["fixits"][0]["replacement"], "out = fg::add(x, y)");
  EXPECT_EQ(d["fixits"][0]["start"], (json{{"line", d["line"]}, {"column", 3}}));
  EXPECT_EQ(d["fixits"][0]["end"], (json{{"line", d["line"]}, {"column", 25}}));
}

TEST(Json, CleanFileGenerates) {
  TempDir tmp;
  const RunResult r =
      funcgen({kGallery + "/fixed.cpp", "-o", (tmp.path() / "out").string(), "--format=json"}, tmp.path());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), json::parse(R"({"diagnostics": []})"));
  EXPECT_TRUE(fs::exists(tmp.path() / "out" / "fixed.funcgen.h"));
  EXPECT_TRUE(fs::exists(tmp.path() / "out" / "fixed.funcgen.cpp"));
}

// A warning only (side_effect.cpp): exit 0, the warnings are in the document.
TEST(Json, WarningsOnly) {
  TempDir tmp;
  const RunResult r =
      funcgen({kGallery + "/side_effect.cpp", "-o", (tmp.path() / "out").string(), "--format=json"}, tmp.path());
  EXPECT_EQ(r.status, 0) << r.err;
  const json doc = json::parse(r.out);
  ASSERT_FALSE(doc["diagnostics"].empty());
  for (const json& d : doc["diagnostics"]) EXPECT_EQ(d["severity"], "warning");
  expect_no_clang_text(r.err);
}

// Several sources: one document with the diagnostics of all of them, in order.
TEST(Json, SeveralSourcesOneDocument) {
  TempDir tmp;
  const RunResult r = funcgen({kGallery + "/inplace_batched.cpp", kGallery + "/randomness.cpp", "-o",
                               (tmp.path() / "out").string(), "--format=json"},
                              tmp.path());
  EXPECT_EQ(r.status, 1);
  const json doc = json::parse(r.out);
  std::vector<std::string> expected = expected_of(kGallery + "/inplace_batched.cpp").lines;
  const std::vector<std::string> second = expected_of(kGallery + "/randomness.cpp").lines;
  expected.insert(expected.end(), second.begin(), second.end());
  EXPECT_EQ(flatten(doc, true), expected);
}

// Clang's own diagnostics are in the document too, named as clang-tidy names them.
TEST(Json, ClangDiagnostics) {
  TempDir tmp;
  const fs::path source = tmp.path() / "broken.cpp";
  std::ofstream(source) << "int f() {\n  int unused = 0;\n  return 1;\n}\nint g() { return undeclared; }\n";
  const RunResult r =
      funcgen({source.string(), "-o", (tmp.path() / "out").string(), "--format=json", "--extra-arg=-Wunused-variable"},
              tmp.path());
  EXPECT_EQ(r.status, 1);
  expect_no_clang_text(r.err);
  const json doc = json::parse(r.out);
  expect_json_shape(doc);
  ASSERT_EQ(doc["diagnostics"].size(), 2u) << doc.dump(2);
  EXPECT_EQ(doc["diagnostics"][0]["check"], "clang-diagnostic-unused-variable");
  EXPECT_EQ(doc["diagnostics"][0]["severity"], "warning");
  EXPECT_EQ(doc["diagnostics"][0]["line"], 2);
  EXPECT_EQ(doc["diagnostics"][0]["column"], 7);
  EXPECT_EQ(doc["diagnostics"][1]["check"], "clang-diagnostic-error");
  EXPECT_EQ(doc["diagnostics"][1]["message"], "use of undeclared identifier 'undeclared'");
  EXPECT_EQ(doc["diagnostics"][1]["line"], 5);
  EXPECT_EQ(doc["diagnostics"][1]["column"], 18);
}

// --format=clang is the default: Clang's text on stderr, nothing on stdout.
TEST(Format, ClangIsTheDefault) {
  TempDir tmp;
  const std::string file = kGallery + "/inplace_batched.cpp";
  const RunResult by_default = funcgen({file, "-o", (tmp.path() / "out").string()}, tmp.path());
  const RunResult clang = funcgen({file, "-o", (tmp.path() / "out").string(), "--format=clang"}, tmp.path());
  EXPECT_EQ(by_default.status, 1);
  EXPECT_EQ(clang.status, 1);
  EXPECT_EQ(by_default.out, "");
  EXPECT_EQ(clang.out, "");
  EXPECT_EQ(by_default.err, clang.err);
  EXPECT_NE(clang.err.find(file + ":11:5: error: in-place 'add_' writes batched values of 'y' into 'x'"),
            std::string::npos)
      << clang.err;
  EXPECT_NE(clang.err.find("[funcgen-inplace-batched]"), std::string::npos);
  EXPECT_NE(clang.err.find("2 errors generated."), std::string::npos);
}

TEST(Format, UnknownFormatIsAUsageError) {
  TempDir tmp;
  const RunResult r =
      funcgen({kGallery + "/fixed.cpp", "-o", (tmp.path() / "out").string(), "--format=xml"}, tmp.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(tmp.path() / "out"));
}

// ---------------------------------------------------------------------------------------------
// SARIF 2.1.0: what its schema (sarif-schema-2.1.0.json) requires of the objects funcgen writes.

class SarifValidator {
 public:
  std::vector<std::string> errors;

  void log(const json& j) {
    const std::string at = "$";
    if (!object(j, at, {"$schema", "version", "runs", "inlineExternalProperties", "properties"}, {"version", "runs"}))
      return;
    if (j.contains("$schema") && !(j["$schema"].is_string() && uri(j["$schema"].get<std::string>(), false)))
      fail(at + ".$schema", "not a URI");
    if (j["version"] != "2.1.0") fail(at + ".version", "must be \"2.1.0\"");
    if (!j["runs"].is_array()) return fail(at + ".runs", "not an array");
    for (size_t i = 0; i < j["runs"].size(); ++i) run(j["runs"][i], at + ".runs[" + std::to_string(i) + "]");
  }

 private:
  void fail(const std::string& at, const std::string& what) { errors.push_back(at + ": " + what); }

  // An object with only the schema's properties and all of its required ones.
  bool object(const json& j, const std::string& at, const std::set<std::string>& allowed,
              const std::set<std::string>& required) {
    if (!j.is_object()) {
      fail(at, "not an object");
      return false;
    }
    for (auto it = j.begin(); it != j.end(); ++it)
      if (allowed.count(it.key()) == 0)
        fail(at + "." + it.key(), "not a property of this object (additionalProperties: false)");
    bool ok = true;
    for (const std::string& r : required)
      if (!j.contains(r)) {
        fail(at, "lacks required property '" + r + "'");
        ok = false;
      }
    return ok;
  }

  void integer(const json& j, const std::string& at, long minimum) {
    if (!j.is_number_integer()) return fail(at, "not an integer");
    if (j.get<long>() < minimum) fail(at, "below its minimum " + std::to_string(minimum));
  }

  void string(const json& j, const std::string& at) {
    if (!j.is_string()) fail(at, "not a string");
  }

  void one_of(const json& j, const std::string& at, const std::set<std::string>& values) {
    if (!j.is_string() || values.count(j.get<std::string>()) == 0)
      fail(at, "not one of the enum's values: " + j.dump());
  }

  // RFC 3986 characters only; `absolute`: with a scheme.
  static bool uri(const std::string& s, bool allow_relative) {
    static const std::regex chars(R"(^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+$)");
    static const std::regex scheme(R"(^[A-Za-z][A-Za-z0-9+.\-]*:)");
    return std::regex_match(s, chars) && (allow_relative || std::regex_search(s, scheme));
  }

  void run(const json& j, const std::string& at) {
    if (!object(j, at,
                {"tool",
                 "invocations",
                 "conversion",
                 "language",
                 "versionControlProvenance",
                 "originalUriBaseIds",
                 "artifacts",
                 "logicalLocations",
                 "graphs",
                 "results",
                 "automationDetails",
                 "runAggregates",
                 "baselineGuid",
                 "redactionTokens",
                 "defaultEncoding",
                 "defaultSourceLanguage",
                 "newlineSequences",
                 "columnKind",
                 "externalPropertyFileReferences",
                 "threadFlowLocations",
                 "taxonomies",
                 "addresses",
                 "translations",
                 "policies",
                 "webRequests",
                 "webResponses",
                 "specialLocations",
                 "properties"},
                {"tool"}))
      return;
    if (j.contains("columnKind")) one_of(j["columnKind"], at + ".columnKind", {"utf16CodeUnits", "unicodeCodePoints"});
    if (object(j["tool"], at + ".tool", {"driver", "extensions", "properties"}, {"driver"}))
      driver(j["tool"]["driver"], at + ".tool.driver");
    if (!j.contains("results")) return;
    if (!j["results"].is_array()) return fail(at + ".results", "not an array");
    const json rules = j["tool"].contains("driver") && j["tool"]["driver"].contains("rules")
                           ? j["tool"]["driver"]["rules"]
                           : json::array();
    for (size_t i = 0; i < j["results"].size(); ++i)
      result(j["results"][i], at + ".results[" + std::to_string(i) + "]", rules);
  }

  void driver(const json& j, const std::string& at) {
    if (!object(j, at,
                {"guid",
                 "name",
                 "organization",
                 "product",
                 "productSuite",
                 "shortDescription",
                 "fullDescription",
                 "fullName",
                 "version",
                 "semanticVersion",
                 "dottedQuadFileVersion",
                 "releaseDateUtc",
                 "downloadUri",
                 "informationUri",
                 "globalMessageStrings",
                 "notifications",
                 "rules",
                 "taxa",
                 "locations",
                 "language",
                 "contents",
                 "isComprehensive",
                 "localizedDataSemanticVersion",
                 "minimumRequiredLocalizedDataSemanticVersion",
                 "associatedComponent",
                 "translationMetadata",
                 "supportedTaxonomies",
                 "properties"},
                {"name"}))
      return;
    string(j["name"], at + ".name");
    if (j.contains("version")) string(j["version"], at + ".version");
    if (j.contains("informationUri") &&
        !(j["informationUri"].is_string() && uri(j["informationUri"].get<std::string>(), false)))
      fail(at + ".informationUri", "not an absolute URI");
    if (!j.contains("rules")) return;
    if (!j["rules"].is_array()) return fail(at + ".rules", "not an array");
    std::set<std::string> ids;
    for (size_t i = 0; i < j["rules"].size(); ++i) {
      const json& r = j["rules"][i];
      const std::string rat = at + ".rules[" + std::to_string(i) + "]";
      if (!object(r, rat,
                  {"id", "deprecatedIds", "guid", "deprecatedGuids", "name", "deprecatedNames", "shortDescription",
                   "fullDescription", "messageStrings", "defaultConfiguration", "helpUri", "help", "relationships",
                   "properties"},
                  {"id"}))
        continue;
      string(r["id"], rat + ".id");
      if (r["id"].is_string() && !ids.insert(r["id"].get<std::string>()).second) fail(rat + ".id", "not unique");
      for (const char* key : {"shortDescription", "fullDescription", "help"})
        if (r.contains(key)) multiformat(r[key], rat + "." + key);
      if (r.contains("defaultConfiguration") &&
          object(r["defaultConfiguration"], rat + ".defaultConfiguration",
                 {"enabled", "level", "rank", "parameters", "properties"}, {}) &&
          r["defaultConfiguration"].contains("level"))
        one_of(r["defaultConfiguration"]["level"], rat + ".defaultConfiguration.level",
               {"none", "note", "warning", "error"});
    }
  }

  void multiformat(const json& j, const std::string& at) {
    if (object(j, at, {"text", "markdown", "properties"}, {"text"})) string(j["text"], at + ".text");
  }

  void message(const json& j, const std::string& at) {
    if (!object(j, at, {"text", "markdown", "id", "arguments", "properties"}, {})) return;
    if (!j.contains("text") && !j.contains("id")) fail(at, "needs 'text' or 'id'");
    if (j.contains("text")) string(j["text"], at + ".text");
  }

  void result(const json& j, const std::string& at, const json& rules) {
    if (!object(j, at,
                {"ruleId",
                 "ruleIndex",
                 "rule",
                 "kind",
                 "level",
                 "message",
                 "analysisTarget",
                 "locations",
                 "guid",
                 "correlationGuid",
                 "occurrenceCount",
                 "partialFingerprints",
                 "fingerprints",
                 "stacks",
                 "codeFlows",
                 "graphs",
                 "graphTraversals",
                 "relatedLocations",
                 "suppressions",
                 "baselineState",
                 "rank",
                 "attachments",
                 "hostedViewerUri",
                 "workItemUris",
                 "provenance",
                 "fixes",
                 "taxa",
                 "webRequest",
                 "webResponse",
                 "properties"},
                {"message"}))
      return;
    message(j["message"], at + ".message");
    if (j.contains("ruleId")) string(j["ruleId"], at + ".ruleId");
    if (j.contains("ruleIndex")) integer(j["ruleIndex"], at + ".ruleIndex", -1);
    // SARIF §3.27.5-6: ruleId and ruleIndex name the same rules[] entry.
    if (j.contains("ruleIndex") && j["ruleIndex"].is_number_integer()) {
      const long index = j["ruleIndex"].get<long>();
      if (index >= 0 &&
          (static_cast<size_t>(index) >= rules.size() || rules[index].value("id", "") != j.value("ruleId", "")))
        fail(at + ".ruleIndex", "does not index the rule named by ruleId");
    }
    if (j.contains("ruleId")) {
      bool found = false;
      for (const json& r : rules) found = found || r.value("id", "") == j["ruleId"];
      if (!found) fail(at + ".ruleId", "matches no rules[] entry");
    }
    if (j.contains("level")) one_of(j["level"], at + ".level", {"none", "note", "warning", "error"});
    if (j.contains("kind"))
      one_of(j["kind"], at + ".kind", {"notApplicable", "pass", "fail", "review", "open", "informational"});
    for (const char* key : {"locations", "relatedLocations"}) {
      if (!j.contains(key)) continue;
      if (!j[key].is_array()) {
        fail(at + "." + key, "not an array");
        continue;
      }
      for (size_t i = 0; i < j[key].size(); ++i) location(j[key][i], at + "." + key + "[" + std::to_string(i) + "]");
      if (std::string(key) == "relatedLocations")  // uniqueItems: true
        for (size_t a = 0; a < j[key].size(); ++a)
          for (size_t b = a + 1; b < j[key].size(); ++b)
            if (j[key][a] == j[key][b]) fail(at + ".relatedLocations", "items not unique");
    }
    if (j.contains("fixes")) {
      if (!j["fixes"].is_array()) return fail(at + ".fixes", "not an array");
      for (size_t i = 0; i < j["fixes"].size(); ++i) fix(j["fixes"][i], at + ".fixes[" + std::to_string(i) + "]");
    }
  }

  void location(const json& j, const std::string& at) {
    if (!object(j, at,
                {"id", "physicalLocation", "logicalLocations", "message", "annotations", "relationships", "properties"},
                {}))
      return;
    if (j.contains("id")) integer(j["id"], at + ".id", -1);
    if (j.contains("message")) message(j["message"], at + ".message");
    if (j.contains("physicalLocation")) physical(j["physicalLocation"], at + ".physicalLocation");
  }

  void physical(const json& j, const std::string& at) {
    if (!object(j, at, {"address", "artifactLocation", "region", "contextRegion", "properties"}, {})) return;
    if (!j.contains("address") && !j.contains("artifactLocation")) fail(at, "needs 'address' or 'artifactLocation'");
    if (j.contains("artifactLocation")) artifact_location(j["artifactLocation"], at + ".artifactLocation");
    if (j.contains("region")) region(j["region"], at + ".region");
  }

  void artifact_location(const json& j, const std::string& at) {
    if (!object(j, at, {"uri", "uriBaseId", "index", "description", "properties"}, {})) return;
    if (j.contains("uri") && !(j["uri"].is_string() && uri(j["uri"].get<std::string>(), true)))
      fail(at + ".uri", "not a URI reference");
    if (j.contains("index")) integer(j["index"], at + ".index", -1);
  }

  void region(const json& j, const std::string& at) {
    if (!object(j, at,
                {"startLine", "startColumn", "endLine", "endColumn", "charOffset", "charLength", "byteOffset",
                 "byteLength", "snippet", "message", "sourceLanguage", "properties"},
                {}))
      return;
    for (const char* key : {"startLine", "startColumn", "endLine", "endColumn"})
      if (j.contains(key)) integer(j[key], at + "." + key, 1);  // 1-based
    // A text region has a start line (SARIF §3.30.2), and ends at or after its start (§3.30.5).
    if (!j.contains("startLine")) return fail(at, "a text region needs startLine");
    if (j.contains("endLine") && j["endLine"].is_number_integer() &&
        j["endLine"].get<long>() < j["startLine"].get<long>())
      fail(at, "ends before it starts");
    if (j.value("endLine", j["startLine"].get<long>()) == j["startLine"].get<long>() && j.contains("startColumn") &&
        j.contains("endColumn") && j["endColumn"].get<long>() < j["startColumn"].get<long>())
      fail(at, "ends before it starts");
  }

  void fix(const json& j, const std::string& at) {
    if (!object(j, at, {"description", "artifactChanges", "properties"}, {"artifactChanges"})) return;
    if (j.contains("description")) message(j["description"], at + ".description");
    if (!j["artifactChanges"].is_array() || j["artifactChanges"].empty())
      return fail(at + ".artifactChanges", "needs one item or more");
    for (size_t i = 0; i < j["artifactChanges"].size(); ++i) {
      const json& c = j["artifactChanges"][i];
      const std::string cat = at + ".artifactChanges[" + std::to_string(i) + "]";
      if (!object(c, cat, {"artifactLocation", "replacements", "properties"}, {"artifactLocation", "replacements"}))
        continue;
      artifact_location(c["artifactLocation"], cat + ".artifactLocation");
      if (!c["replacements"].is_array() || c["replacements"].empty()) {
        fail(cat + ".replacements", "needs one item or more");
        continue;
      }
      for (size_t k = 0; k < c["replacements"].size(); ++k) {
        const json& r = c["replacements"][k];
        const std::string rat = cat + ".replacements[" + std::to_string(k) + "]";
        if (!object(r, rat, {"deletedRegion", "insertedContent", "properties"}, {"deletedRegion"})) continue;
        region(r["deletedRegion"], rat + ".deletedRegion");
        if (r.contains("insertedContent") &&
            object(r["insertedContent"], rat + ".insertedContent", {"text", "binary", "rendered", "properties"}, {}) &&
            r["insertedContent"].contains("text"))
          string(r["insertedContent"]["text"], rat + ".insertedContent.text");
      }
    }
  }
};

std::vector<std::string> sarif_errors(const json& j) {
  SarifValidator v;
  v.log(j);
  return v.errors;
}

const std::vector<std::string> kSarifSamples = {"inplace_batched.cpp", "randomness.cpp", "out_variant.cpp",
                                                "side_effect.cpp"};

// funcgen on the samples with --sarif (and the given format); the parsed SARIF.
json run_sarif(const TempDir& tmp, const std::vector<std::string>& names, const std::vector<std::string>& extra,
               RunResult* run = nullptr) {
  std::vector<std::string> args;
  for (const auto& n : names) args.push_back(kGallery + "/" + n);
  args.insert(args.end(), {"-o", (tmp.path() / "out").string(), "--sarif=" + (tmp.path() / "log.sarif").string()});
  args.insert(args.end(), extra.begin(), extra.end());
  const RunResult r = funcgen(args, tmp.path());
  if (run != nullptr) *run = r;
  EXPECT_TRUE(fs::exists(tmp.path() / "log.sarif")) << r.err;
  return json::parse(read_file(tmp.path() / "log.sarif"));
}

TEST(Sarif, RequiredFieldsOfTheSchema) {
  TempDir tmp;
  RunResult r;
  const json log = run_sarif(tmp, kSarifSamples, {}, &r);
  EXPECT_EQ(r.status, 1) << "errors reported, and the SARIF written all the same";
  EXPECT_NE(r.err.find("[funcgen-inplace-batched]"), std::string::npos) << "the normal output too";
  EXPECT_EQ(sarif_errors(log), std::vector<std::string>{});
  // What this test relies on being there.
  EXPECT_EQ(log["version"], "2.1.0");
  EXPECT_TRUE(log.contains("$schema"));
  ASSERT_EQ(log["runs"].size(), 1u);
  const json& run = log["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "funcgen");
  EXPECT_TRUE(run["tool"]["driver"]["version"].is_string());
  EXPECT_EQ(run["columnKind"], "unicodeCodePoints");
  ASSERT_FALSE(run["results"].empty());
  for (const json& result : run["results"]) {
    EXPECT_TRUE(result["message"]["text"].is_string());
    EXPECT_TRUE(result.contains("ruleId"));
    EXPECT_TRUE(result.contains("ruleIndex"));
    ASSERT_EQ(result["locations"].size(), 1u);
    const json& region = result["locations"][0]["physicalLocation"]["region"];
    for (const char* key : {"startLine", "startColumn", "endLine", "endColumn"})
      EXPECT_TRUE(region.contains(key)) << key;
    const std::string uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
    EXPECT_EQ(uri.rfind("file:///", 0), 0u) << uri;
  }
}

// The validator finds what is wrong (so that the test above can fail).
TEST(Sarif, ValidatorRejectsBrokenLogs) {
  TempDir tmp;
  const json good = run_sarif(tmp, {"randomness.cpp"}, {});
  ASSERT_EQ(sarif_errors(good), std::vector<std::string>{});
  const auto broken = [&](const std::function<void(json&)>& edit) {
    json j = good;
    edit(j);
    return sarif_errors(j).size();
  };
  json::json_pointer result("/runs/0/results/0");
  EXPECT_GT(broken([](json& j) { j.erase("version"); }), 0u);
  EXPECT_GT(broken([](json& j) { j["version"] = "2.0.0"; }), 0u);
  EXPECT_GT(broken([](json& j) { j["runs"][0].erase("tool"); }), 0u);
  EXPECT_GT(broken([](json& j) { j["runs"][0]["tool"]["driver"].erase("name"); }), 0u);
  EXPECT_GT(broken([](json& j) { j["runs"][0]["tool"]["driver"]["rules"][0].erase("id"); }), 0u);
  EXPECT_GT(broken([](json& j) { j["runs"][0]["tool"]["driver"]["rules"][0]["help"].erase("text"); }), 0u);
  EXPECT_GT(broken([&](json& j) { j[result].erase("message"); }), 0u);
  EXPECT_GT(broken([&](json& j) { j[result]["message"].erase("text"); }), 0u);
  EXPECT_GT(broken([&](json& j) { j[result]["ruleId"] = "funcgen-nonexistent"; }), 0u);
  EXPECT_GT(broken([&](json& j) { j[result]["ruleIndex"] = 0; }), 0u);
  EXPECT_GT(broken([&](json& j) { j[result]["level"] = "fatal"; }), 0u);
  EXPECT_GT(broken([&](json& j) { j[result]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0; }), 0u);
  EXPECT_GT(broken([&](json& j) { j[result]["locations"][0]["physicalLocation"]["region"]["startColumn"] = 0; }), 0u);
  EXPECT_GT(broken([&](json& j) { j[result]["locations"][0]["physicalLocation"].erase("artifactLocation"); }), 0u);
  EXPECT_GT(broken([&](json& j) { j[result]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "a b"; }),
            0u);
  EXPECT_GT(broken([&](json& j) { j[result]["fixes"][0]["artifactChanges"] = json::array(); }), 0u);
  EXPECT_GT(
      broken([&](json& j) { j[result]["fixes"][0]["artifactChanges"][0]["replacements"][0].erase("deletedRegion"); }),
      0u);
  EXPECT_GT(broken([&](json& j) { j[result]["unknownProperty"] = 1; }), 0u);
}

// One rule per check, in all_checks()' order, with the summary and help that --list-checks and
// --explain print.
TEST(Sarif, OneRulePerCheckWithHelp) {
  TempDir tmp;
  const json log = run_sarif(tmp, {"inplace_batched.cpp"}, {});
  const json& rules = log["runs"][0]["tool"]["driver"]["rules"];
  const std::vector<std::string> ids = {"funcgen-spec",
                                        "funcgen-global-assignment",
                                        "funcgen-autograd-api",
                                        "funcgen-side-effect",
                                        "funcgen-inplace-batched",
                                        "funcgen-out-variant",
                                        "funcgen-data-dependent-control-flow",
                                        "funcgen-item",
                                        "funcgen-dynamic-shape",
                                        "funcgen-randomness",
                                        "funcgen-vmap-fallback",
                                        "funcgen-unsupported"};  // API.md §4
  ASSERT_EQ(rules.size(), ids.size());
  std::istringstream list(funcgen_info("--list-checks", tmp.path()));
  static const std::regex line(R"(^(funcgen-[a-z-]+)( \(warning\))?: (.*)$)");
  std::string text;
  size_t i = 0;
  for (; std::getline(list, text); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(text, m, line)) << text;
    ASSERT_LT(i, rules.size());
    const json& rule = rules[i];
    EXPECT_EQ(rule["id"], m[1].str());
    EXPECT_EQ(rule["id"], ids[i]);
    EXPECT_EQ(rule["shortDescription"]["text"], m[3].str());
    EXPECT_EQ(rule["defaultConfiguration"]["level"], m[2].matched ? "warning" : "error");
    // --explain: "<id> (<severity>): <summary>\n\n<help>\n".
    const std::string explained = funcgen_info("--explain " + m[1].str(), tmp.path());
    const size_t blank = explained.find("\n\n");
    ASSERT_NE(blank, std::string::npos) << explained;
    std::string help = explained.substr(blank + 2);
    while (!help.empty() && help.back() == '\n') help.pop_back();
    ASSERT_FALSE(help.empty());
    EXPECT_EQ(rule["help"]["text"], help);
    EXPECT_EQ(rule["fullDescription"]["text"], help);
  }
  EXPECT_EQ(i, ids.size());
}

// The results say what the JSON says: level, message, rule, location, notes, fixes.
TEST(Sarif, ResultsMatchTheJson) {
  TempDir tmp;
  RunResult r;
  const json log = run_sarif(tmp, kSarifSamples, {"--format=json"}, &r);
  EXPECT_EQ(r.status, 1);
  expect_no_clang_text(r.err);
  const json doc = json::parse(r.out);
  const json& results = log["runs"][0]["results"];
  const json& rules = log["runs"][0]["tool"]["driver"]["rules"];
  ASSERT_EQ(results.size(), doc["diagnostics"].size());
  const auto uri_of = [](const std::string& file) {
    return "file://" + file;
  };  // the gallery's path has no special characters
  const auto region = [](const json& start, const json& end) {
    return json{{"startLine", start["line"]},
                {"startColumn", start["column"]},
                {"endLine", end["line"]},
                {"endColumn", end["column"]}};
  };
  const auto fix = [&](const json& fixits) {
    json changes = json::array();
    for (const json& f : fixits)
      changes.push_back(json{{"artifactLocation", {{"uri", uri_of(f["file"])}}},
                             {"replacements", json::array({json{{"deletedRegion", region(f["start"], f["end"])},
                                                                {"insertedContent", {{"text", f["replacement"]}}}}})}});
    return changes;
  };
  for (size_t i = 0; i < results.size(); ++i) {
    const json& res = results[i];
    const json& d = doc["diagnostics"][i];
    EXPECT_EQ(res["ruleId"], d["check"]);
    EXPECT_EQ(rules[res["ruleIndex"].get<size_t>()]["id"], d["check"]);
    EXPECT_EQ(res["level"], d["severity"]);
    EXPECT_EQ(res["message"]["text"], d["message"]);
    const json& loc = res["locations"][0]["physicalLocation"];
    EXPECT_EQ(loc["artifactLocation"]["uri"], uri_of(d["file"]));
    EXPECT_EQ(loc["region"]["startLine"], d["line"]);
    EXPECT_EQ(loc["region"]["startColumn"], d["column"]);  // ASCII sources: code points are bytes
    EXPECT_EQ(loc["region"]["endLine"], d["line"]);
    EXPECT_GT(loc["region"]["endColumn"].get<int>(), d["column"].get<int>()) << "the token at the caret";
    // Notes: related locations, in order.
    ASSERT_EQ(res.value("relatedLocations", json::array()).size(), d["notes"].size());
    std::vector<json> fixes;
    if (!d["fixits"].empty()) fixes.push_back(fix(d["fixits"]));
    for (size_t k = 0; k < d["notes"].size(); ++k) {
      const json& rel = res["relatedLocations"][k];
      const json& n = d["notes"][k];
      EXPECT_EQ(rel["id"], k);
      EXPECT_EQ(rel["message"]["text"], n["message"]);
      EXPECT_EQ(rel["physicalLocation"]["artifactLocation"]["uri"], uri_of(n["file"]));
      EXPECT_EQ(rel["physicalLocation"]["region"]["startLine"], n["line"]);
      EXPECT_EQ(rel["physicalLocation"]["region"]["startColumn"], n["column"]);
      if (!n["fixits"].empty()) fixes.push_back(fix(n["fixits"]));
    }
    // Fixes: the diagnostic's own fix-its, then each note's, each a separate proposal.
    const json got = res.value("fixes", json::array());
    ASSERT_EQ(got.size(), fixes.size()) << res.dump(2);
    for (size_t k = 0; k < fixes.size(); ++k) EXPECT_EQ(got[k]["artifactChanges"], fixes[k]);
  }
  // The known ones: inplace_batched's new_zeros, randomness's two alternatives.
  int new_zeros = 0, alternatives = 0;
  for (const json& res : results)
    for (const json& f : res.value("fixes", json::array())) {
      const json& rep = f["artifactChanges"][0]["replacements"][0];
      if (rep["insertedContent"]["text"] == "vec.new_zeros") {
        ++new_zeros;
        EXPECT_EQ(rep["deletedRegion"],
                  (json{{"startLine", 20}, {"startColumn", 23}, {"endLine", 20}, {"endColumn", 32}}));
      }
      if (rep["insertedContent"]["text"] == ", randomness='different'" ||
          rep["insertedContent"]["text"] == ", randomness='same'") {
        ++alternatives;
        EXPECT_EQ(rep["deletedRegion"],
                  (json{{"startLine", 5}, {"startColumn", 42}, {"endLine", 5}, {"endColumn", 42}}));
      }
    }
  EXPECT_EQ(new_zeros, 1);
  EXPECT_EQ(alternatives, 2);
}

TEST(Sarif, CleanRunHasNoResults) {
  TempDir tmp;
  RunResult r;
  const json log = run_sarif(tmp, {"fixed.cpp"}, {}, &r);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(sarif_errors(log), std::vector<std::string>{});
  EXPECT_EQ(log["runs"][0]["results"], json::array());
  EXPECT_EQ(log["runs"][0]["tool"]["driver"]["rules"].size(), 12u);
}

// File URIs are absolute and percent-encoded; the log is written whole (no temporary left beside it).
TEST(Sarif, FileUrisAndAtomicWrite) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "with space+plus";
  fs::create_directories(dir / "logs");
  fs::copy_file(kGallery + "/inplace_batched.cpp", dir / "inplace_batched.cpp");
  const fs::path sarif = dir / "logs" / "out.sarif";
  std::ofstream(sarif) << "stale";
  const RunResult r = funcgen(
      {(dir / "inplace_batched.cpp").string(), "-o", (tmp.path() / "out").string(), "--sarif=" + sarif.string()},
      tmp.path());
  EXPECT_EQ(r.status, 1);
  const json log = json::parse(read_file(sarif));
  EXPECT_EQ(sarif_errors(log), std::vector<std::string>{});
  std::string encoded = "file://";
  for (char c : (dir / "inplace_batched.cpp").string())
    encoded += c == ' ' ? std::string("%20") : c == '+' ? std::string("%2B") : std::string(1, c);
  ASSERT_FALSE(log["runs"][0]["results"].empty());
  EXPECT_EQ(log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], encoded);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir / "logs")) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"out.sarif"});
}

// JSON columns are Clang's (bytes); SARIF's are code points (run.columnKind "unicodeCodePoints").
TEST(Sarif, ColumnsInCodePoints) {
  TempDir tmp;
  std::string source = read_file(kGallery + "/inplace_batched.cpp");
  const std::string line = "\n  x.add_(y);\n";
  const size_t at = source.find(line);
  ASSERT_NE(at, std::string::npos);
  source.replace(at, line.size(),
                 "\n  /*\xC3\xA9*/x.add_(y);\n");  // a two-byte 'e' with an acute accent before the caret
  const fs::path file = tmp.path() / "inplace_batched.cpp";
  std::ofstream(file, std::ios::binary) << source;
  const fs::path sarif = tmp.path() / "log.sarif";
  const RunResult r = funcgen(
      {file.string(), "-o", (tmp.path() / "out").string(), "--format=json", "--sarif=" + sarif.string()}, tmp.path());
  EXPECT_EQ(r.status, 1);
  const json doc = json::parse(r.out);
  const json log = json::parse(read_file(sarif));
  ASSERT_FALSE(doc["diagnostics"].empty());
  EXPECT_EQ(doc["diagnostics"][0]["line"], 11);
  EXPECT_EQ(doc["diagnostics"][0]["column"], 11);  // "  /*" 4 bytes, two for the letter, "*/x." 4: 'add_' at byte 11
  EXPECT_EQ(doc["diagnostics"][0]["ranges"][0]["start"]["column"], 9);
  EXPECT_EQ(log["runs"][0]["columnKind"], "unicodeCodePoints");
  const json& region = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
  EXPECT_EQ(region, (json{{"startLine", 11}, {"startColumn", 10}, {"endLine", 11}, {"endColumn", 14}}));
}

// Missing directories are created; a path that cannot be a file is an error (exit 1).
TEST(Sarif, WritesIntoNewDirectoriesOrFails) {
  TempDir tmp;
  const fs::path nested = tmp.path() / "new" / "dir" / "log.sarif";
  RunResult r =
      funcgen({kGallery + "/fixed.cpp", "-o", (tmp.path() / "out").string(), "--sarif=" + nested.string()}, tmp.path());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(sarif_errors(json::parse(read_file(nested))), std::vector<std::string>{});
  std::ofstream(tmp.path() / "a_file") << "not a directory";
  r = funcgen({kGallery + "/fixed.cpp", "-o", (tmp.path() / "out").string(),
               "--sarif=" + (tmp.path() / "a_file" / "log.sarif").string()},
              tmp.path());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("funcgen: "), std::string::npos) << r.err;
}

}  // namespace
