// The op registry (generator/ops/registry.h) against the .def files and the runtime's header, read
// here as text: the registry reads the rows through X-macros at compile time, this test with its
// own parser at run time, so a row the macros drop or misread (or a fact derived from the wrong
// table) shows as a difference. Plus facts stated by hand for a few ops.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ops/derivative_rules.h"
#include "ops/inplace.h"
#include "ops/registry.h"

namespace funcgen {
namespace {

using ops::id_of;
using ops::info;

std::string read(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// One row of a .def file: FG_<kind>(args...), its arguments trimmed (strings keep their quotes).
struct Row {
  std::string kind;
  std::vector<std::string> args;
};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\n"), b = s.find_last_not_of(" \t\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The rows of templates/<file>: lines that start with FG_ once comments are gone; arguments split at
// top-level commas, outside string literals and parentheses.
std::vector<Row> rows(const std::string& file) {
  std::string text = read(std::string(FUNCGEN_SOURCE_DIR) + "/templates/" + file), code;
  for (std::istringstream lines(text); std::getline(lines, text);) {
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '"' && (i == 0 || text[i - 1] != '\\')) in_string = !in_string;
      if (!in_string && text.compare(i, 2, "//") == 0) {
        text.resize(i);
        break;
      }
    }
    code += text + "\n";
  }
  std::vector<Row> out;
  static const std::regex start(R"((^|\n)\s*FG_([A-Z_]+)\()");
  for (auto it = std::sregex_iterator(code.begin(), code.end(), start); it != std::sregex_iterator(); ++it) {
    Row row{(*it)[2].str(), {}};
    std::string arg;
    int depth = 0;
    bool in_string = false;
    for (size_t i = static_cast<size_t>(it->position() + it->length()); i < code.size(); ++i) {
      const char c = code[i];
      if (c == '"' && code[i - 1] != '\\') in_string = !in_string;
      if (!in_string && c == ')' && depth == 0) break;
      if (!in_string && c == ',' && depth == 0) {
        row.args.push_back(trim(arg));
        arg.clear();
        continue;
      }
      if (!in_string) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      arg += c;
    }
    row.args.push_back(trim(arg));
    out.push_back(row);
  }
  return out;
}

std::map<std::string, std::vector<Row>> all_rows() {
  std::map<std::string, std::vector<Row>> out;
  for (const char* f : {"batching_rules.def", "derivatives.def", "inplace.def", "views.def", "fused.def"})
    out[f] = rows(f);
  return out;
}

// The op names of rows of `kind` (first argument), in order.
std::vector<std::string> ops_of(const std::vector<Row>& rs, const std::string& kind) {
  std::vector<std::string> out;
  for (const Row& r : rs)
    if (r.kind == kind) out.push_back(r.args.at(0));
  return out;
}

TEST(Registry, TheParserReadsEveryFile) {
  // Counted by hand from the files' row kinds (grep -c), so that a parser that reads nothing fails.
  const auto files = all_rows();
  EXPECT_GE(ops_of(files.at("batching_rules.def"), "VMAP").size(), 200u);
  EXPECT_GE(ops_of(files.at("derivatives.def"), "VJP").size(), 150u);
  EXPECT_EQ(ops_of(files.at("views.def"), "VIEW").size(), 24u);
  EXPECT_EQ(ops_of(files.at("views.def"), "MAY_ALIAS").size(), 8u);
  EXPECT_EQ(ops_of(files.at("inplace.def"), "INPLACE").size(), 4u);
  EXPECT_GE(ops_of(files.at("fused.def"), "FUSED_UNARY").size(), 17u);
}

TEST(Registry, IdsOfNamedOps) {
  EXPECT_EQ(id_of(""), ops::OpId::Unknown);
  EXPECT_EQ(id_of("add"), ops::add);
  EXPECT_EQ(id_of("ad::sum_to"), ops::ad_sum_to);
  EXPECT_EQ(id_of("operator="), ops::assign_operator);  // a special op: no row names it
  EXPECT_EQ(ops::name_of(ops::matmul), "matmul");
  EXPECT_NE(ops::add, ops::mul);
  EXPECT_NE(id_of("add_"), ops::add);  // the in-place form is an op of its own
  // A name no row lists (a user's function) gets an id at run time, after the rows', and keeps it.
  const ops::OpId mine = id_of("my_helper_of_the_registry_test");
  EXPECT_NE(mine, ops::OpId::Unknown);
  EXPECT_GE(static_cast<uint32_t>(mine), ops::detail::kRowCount);
  EXPECT_EQ(id_of("my_helper_of_the_registry_test"), mine);
  EXPECT_EQ(ops::name_of(mine), "my_helper_of_the_registry_test");
  EXPECT_FALSE(info(mine).listed);
  EXPECT_EQ(info(mine).derivative, nullptr);
  EXPECT_EQ(info(mine).batching.rule, BatchRule::None);
}

TEST(Registry, EveryRowsOpIsListedUnderItsName) {
  size_t checked = 0;
  for (const auto& [file, rs] : all_rows())
    for (const Row& r : rs) {
      const std::string& op = r.args.at(0);
      const ops::OpId id = id_of(op);
      EXPECT_TRUE(info(id).listed) << file << ": " << op;
      EXPECT_LT(static_cast<uint32_t>(id), ops::detail::kRowCount) << op;
      EXPECT_EQ(ops::name_of(id), op);
      ++checked;
    }
  EXPECT_GT(checked, 700u);
}

TEST(Registry, ViewsAndMayAliasAreTheRowsOfViewsDef) {
  const auto files = all_rows();
  const auto views = ops_of(files.at("views.def"), "VIEW"), alias = ops_of(files.at("views.def"), "MAY_ALIAS");
  const std::set<std::string> view_set(views.begin(), views.end()), alias_set(alias.begin(), alias.end());
  // Every op some row names: a view exactly when views.def says so, and may alias likewise.
  for (const auto& [file, rs] : files)
    for (const Row& r : rs) {
      const std::string& op = r.args.at(0);
      EXPECT_EQ(info(id_of(op)).view, view_set.count(op) != 0) << op;
      EXPECT_EQ(info(id_of(op)).may_alias, alias_set.count(op) != 0) << op;
    }
  // By hand: a transpose always shares memory, reshape only where the strides allow (a view that
  // may alias), contiguous returns its input only when it already is; clone and add never do.
  EXPECT_TRUE(info(ops::t).view);
  EXPECT_FALSE(info(ops::t).may_alias);
  EXPECT_TRUE(info(id_of("reshape")).view && info(id_of("reshape")).may_alias);
  EXPECT_TRUE(!info(id_of("contiguous")).view && info(id_of("contiguous")).may_alias);
  EXPECT_TRUE(!info(id_of("clone")).view && !info(id_of("clone")).may_alias);
  EXPECT_TRUE(!info(ops::add).view && !info(ops::add).may_alias);
}

// The runtime's in-place methods, `const Tensor& name_(` in its Tensor class.
std::set<std::string> runtime_inplace_methods() {
  const std::string header = read(std::string(FUNCGEN_SOURCE_DIR) + "/runtime/include/funcgen/runtime/tensor.h");
  static const std::regex method(R"(Tensor& ([a-z][a-z0-9_]*_)\()");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(header.begin(), header.end(), method); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1].str());
  return out;
}

TEST(Registry, EveryInplaceOpHasItsFunctionalForm) {
  const std::set<std::string> methods = runtime_inplace_methods();
  for (const char* known : {"add_", "mul_", "copy_", "zero_", "fill_"}) EXPECT_EQ(methods.count(known), 1u) << known;
  std::map<std::string, Row> rows_of;
  for (const Row& r : rows("inplace.def"))
    if (r.kind == "INPLACE") rows_of[r.args.at(0)] = r;
  for (const std::string& op : methods) {
    const ops::OpInfo& i = info(id_of(op));
    EXPECT_TRUE(i.inplace_form()) << op;
    EXPECT_TRUE(i.writes_arguments) << op;
    EXPECT_TRUE(i.batching.inplace) << op;
    const std::optional<InplaceOp> in = find_inplace(op);
    ASSERT_TRUE(in.has_value()) << op;
    const ops::OpInfo& functional = info(id_of(in->partner));
    EXPECT_TRUE(functional.listed) << op << " -> " << in->partner;
    EXPECT_NE(functional.batching.rule, BatchRule::None) << op << " -> " << in->partner;
    if (auto row = rows_of.find(op); row != rows_of.end()) {
      EXPECT_EQ(in->partner, row->second.args.at(1)) << op;  // its own row: copy_ is expand of the source
      const std::string kind = row->second.args.at(2);
      EXPECT_EQ(in->kind, kind == "Forget" ? InplaceKind::Forget : kind == "Source" ? InplaceKind::Source : InplaceKind::Update)
          << op;
    } else {
      // No row: `x_` updates self with `x`, whose rule it shares (in place) and whose derivative AD
      // uses; such ops must be element-wise, or vmap has no rule for them.
      EXPECT_EQ(in->partner, op.substr(0, op.size() - 1));
      EXPECT_EQ(in->kind, InplaceKind::Update) << op;
      EXPECT_EQ(functional.batching.rule, BatchRule::Pointwise) << op;
      EXPECT_EQ(i.batching.rule, BatchRule::Pointwise) << op;
      EXPECT_NE(functional.derivative, nullptr) << op;
    }
  }
  // The functional ops themselves write nothing.
  for (const char* op : {"add", "clone", "zeros_like", "expand"}) EXPECT_FALSE(info(id_of(op)).writes_arguments) << op;
  // An out= op is its functional op's rule (Out), writing its `out` argument.
  const ops::OpInfo& out = info(id_of("add_out"));
  EXPECT_EQ(out.batching.rule, BatchRule::Out);
  EXPECT_EQ(out.out_functional, "add");
  EXPECT_TRUE(out.writes_arguments);
}

TEST(Registry, DerivativeRowsArePresent) {
  const auto rs = rows("derivatives.def");
  std::set<std::string> differentiable, constant, broadcasts;
  for (const Row& r : rs) {
    const std::string& op = r.args.at(0);
    if (r.kind == "VJP" || r.kind == "JVP") {
      differentiable.insert(op);
      const ad::Rule* rule = info(id_of(op)).derivative;
      ASSERT_NE(rule, nullptr) << op;
      const auto& formulas = r.kind == "VJP" ? rule->vjp : rule->jvp;
      EXPECT_EQ(formulas.count(r.args.at(1)), 1u) << op << " of " << r.args.at(1);
    }
    if (r.kind == "CONSTANT") constant.insert(op);
    if (r.kind == "BROADCASTS") broadcasts.insert(op);
  }
  for (const std::string& op : constant) {
    EXPECT_TRUE(info(id_of(op)).constant) << op;
    EXPECT_EQ(differentiable.count(op), 0u) << op << " is constant and has formulas";
  }
  for (const std::string& op : broadcasts) EXPECT_TRUE(info(id_of(op)).broadcasts) << op;
  // By hand: mul has a VJP for each input (grad * other, grad * self); comparisons are constant.
  ASSERT_NE(info(ops::mul).derivative, nullptr);
  EXPECT_EQ(info(ops::mul).derivative->vjp.size(), 2u);
  EXPECT_TRUE(info(ops::add).broadcasts);
  EXPECT_FALSE(info(ops::sum).constant);
  EXPECT_EQ(info(id_of("zero_")).derivative, nullptr);  // in place: AD functionalizes it first
}

TEST(Registry, BatchingRowsArePresent) {
  static const std::map<std::string, BatchRule> kRules = {
      {"Pointwise", BatchRule::Pointwise}, {"Reduce", BatchRule::Reduce},   {"Dims", BatchRule::Dims},
      {"Size", BatchRule::Size},           {"Helper", BatchRule::Helper},   {"Factory", BatchRule::Factory},
      {"Like", BatchRule::Like},           {"Random", BatchRule::Random},   {"Query", BatchRule::Query},
      {"Meta", BatchRule::Meta},           {"Item", BatchRule::Item},       {"Dynamic", BatchRule::Dynamic},
      {"Out", BatchRule::Out}};
  std::set<std::string> seen;
  for (const Row& r : rows("batching_rules.def")) {
    if (r.kind != "VMAP" || !seen.insert(r.args.at(0)).second) continue;  // an op is its first row
    auto rule = kRules.find(r.args.at(1));
    ASSERT_NE(rule, kRules.end()) << r.args.at(0) << ": rule " << r.args.at(1);
    EXPECT_EQ(info(id_of(r.args.at(0))).batching.rule, rule->second) << r.args.at(0);
  }
  EXPECT_EQ(info(ops::sum).batching.rule, BatchRule::Reduce);
  EXPECT_TRUE(info(ops::randn).random());
  EXPECT_TRUE(info(ops::sum).reduction());
}

TEST(Registry, FusedRowsAreTheFusedOps) {
  const auto rs = rows("fused.def");
  const auto unary = ops_of(rs, "FUSED_UNARY"), binary = ops_of(rs, "FUSED_BINARY");
  for (const std::string& op : unary) EXPECT_TRUE(info(id_of(op)).fused_unary && !info(id_of(op)).fused_binary) << op;
  for (const std::string& op : binary) EXPECT_TRUE(info(id_of(op)).fused_binary && !info(id_of(op)).fused_unary) << op;
  EXPECT_TRUE(info(id_of("sin")).fused());
  EXPECT_FALSE(info(ops::matmul).fused());
}

}  // namespace
}  // namespace funcgen
