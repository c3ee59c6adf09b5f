// The lowering (frontend/lower.cpp) of each family of constructs, from a C++ snippet parsed in
// process to the IR that ir::dump prints: which statement kinds, variables and ops it makes. One
// AST per test; each prints its parse time.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "diag/reporter.h"
#include "frontend/lower.h"
#include "ir/dump.h"
#include "parse.h"

namespace funcgen {
namespace {

// The dumps of functions `names` of `code` (after the runtime's header), lowered without errors.
std::string lowered(const std::string& code, const std::vector<std::string>& names = {"f"}) {
  auto ast = test::parse("#include <funcgen/funcgen.h>\n#include <utility>\n#include <vector>\n" + code,
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
  if (!ast) return "";
  clang::ASTContext& context = ast->getASTContext();
  Reporter reporter(ast->getDiagnostics(), ast->getSourceManager());
  Lowering lowering(context, reporter);
  std::string out;
  for (const std::string& name : names) {
    const clang::FunctionDecl* fn = test::find_function(context, name);
    EXPECT_NE(fn, nullptr) << "no function " << name;
    const ir::Function* ir = fn ? lowering.lower(fn) : nullptr;
    out += ir ? ir::dump(*ir) : "(" + name + " not lowered)\n";
  }
  EXPECT_EQ(reporter.errors(), 0u);
  return out;
}

TEST(Lowering, DeclarationsAndAssignment) {
  EXPECT_EQ(lowered(R"(
fg::Tensor f(const fg::Tensor& x, double a) {
  fg::Tensor y = x * a;
  int n = 3;
  y = y + x.sin();
  y += x;
  n = n + 1;
  return y.sum();
})"), 
            // Tensor operators are calls of their ops; `+=` on a tensor is the in-place op; scalar
            // code stays C++ text with the locals it reads.
            "function f(x: tensor, a: float) -> tensor\n"
            "  decl y: tensor = operator:mul(x, 'a' reads(a))\n"
            "  decl n: int = '3'\n"
            "  assign y = operator:add(y, method:sin(x))\n"
            "  eval operator:add_(y, x)\n"
            "  assign n = 'n + 1' reads(n)\n"
            "  return method:sum(y)\n");
}

TEST(Lowering, IfElse) {
  EXPECT_EQ(lowered(R"(
fg::Tensor f(const fg::Tensor& x, bool flag) {
  fg::Tensor y;
  if (flag) {
    y = x.exp();
  } else {
    y = -x;
  }
  if (x.sum().item<double>() > 0) y = y * 2;
  return y;
})"), 
            // A condition that reads a tensor is IR (item of a sum, compared), one that does not is text.
            "function f(x: tensor, flag: bool) -> tensor\n"
            "  decl y: tensor\n"
            "  if 'flag' reads(flag)\n"
            "    assign y = method:exp(x)\n"
            "  else\n"
            "    assign y = operator:neg(x)\n"
            "  if (method:item<double>(method:sum(x)) > '0')\n"
            "    assign y = operator:mul(y, '2')\n"
            "  return y\n");
}

TEST(Lowering, ForAndWhile) {
  EXPECT_EQ(lowered(R"(
fg::Tensor f(const fg::Tensor& x, int n) {
  fg::Tensor y = x;
  for (int i = 0; i < n; ++i) y = y * x;
  while (n > 0) {
    y = y.cos();
    --n;
  }
  return y;
})"), 
            "function f(x: tensor, n: int) -> tensor\n"
            "  decl y: tensor = x\n"
            "  for 'i < n' reads(i, n); step '++i' reads(i) writes(i)\n"
            "    init decl i: int = '0'\n"
            "    assign y = operator:mul(y, x)\n"
            "  while 'n > 0' reads(n)\n"
            "    assign y = method:cos(y)\n"
            "    opaque '--n' reads(n) writes(n)\n"
            "  return y\n");
}

TEST(Lowering, SwitchWithACaseInABlock) {
  EXPECT_EQ(lowered(R"(
fg::Tensor f(const fg::Tensor& x, int k) {
  fg::Tensor y = x;
  switch (k) {
    case 0:
      y = x.sin();
      break;
    case 1: {
      y = x.cos();
      break;
    }
    default:
      y = x.exp();
  }
  return y;
})"), 
            // Each label with the statement it labels is a block "label"; a break after the
            // labelled statement stands beside it, one inside the case's block inside it.
            "function f(x: tensor, k: int) -> tensor\n"
            "  decl y: tensor = x\n"
            "  switch 'k' reads(k)\n"
            "    block label\n"
            "      case 0\n"
            "      assign y = method:sin(x)\n"
            "    break\n"
            "    block label\n"
            "      case 1\n"
            "      block\n"
            "        assign y = method:cos(x)\n"
            "        break\n"
            "    block label\n"
            "      default\n"
            "      assign y = method:exp(x)\n"
            "  return y\n");
}

TEST(Lowering, RangeForByReferenceWritesTheElement) {
  EXPECT_EQ(lowered(R"(
fg::Tensor f(const fg::Tensor& x) {
  std::vector<fg::Tensor> v = {x, x * 2};
  for (fg::Tensor& t : v) t = t.sin();
  return v[0] + v[1];
})"), 
            // An index loop over the vector; the element is a copy, written back where assigned.
            "function f(x: tensor) -> tensor\n"
            "  decl v: tensor list = {x, operator:mul(x, '2')}\n"
            "  for (t_index__ < 'v.size()'); step (++t_index__)\n"
            "    init decl t_index__: int = '0'\n"
            "    decl t: tensor = external:operator[](v, t_index__)\n"
            "    assign t = method:sin(t)\n"
            "    eval opaque<list_set>(v, t_index__, t)\n"
            "  return operator:add(external:operator[](v, '0'), external:operator[](v, '1'))\n");
}

TEST(Lowering, StdSwap) {
  EXPECT_EQ(lowered(R"(
fg::Tensor f(const fg::Tensor& x) {
  fg::Tensor a = x.sin();
  fg::Tensor b = x.cos();
  std::swap(a, b);
  return a - b;
})"), 
            "function f(x: tensor) -> tensor\n"
            "  decl a: tensor = method:sin(x)\n"
            "  decl b: tensor = method:cos(x)\n"
            "  block\n"
            "    decl a_swap: tensor = a\n"
            "    assign a = b\n"
            "    assign b = a_swap\n"
            "  return operator:sub(a, b)\n");
}

TEST(Lowering, HelperCall) {
  // A call of the user's function is a User call; the helper is lowered on its own, once.
  EXPECT_EQ(lowered(R"(
fg::Tensor helper(const fg::Tensor& t) { return t * t; }
fg::Tensor f(const fg::Tensor& x) { return helper(x) + 1; }
)", {"f", "helper"}),
            "function f(x: tensor) -> tensor\n"
            "  return operator:add(user:helper(x), '1')\n"
            "function helper(t: tensor) -> tensor\n"
            "  return operator:mul(t, t)\n");
}

TEST(Lowering, Lambda) {
  // The definition stays as written (for calls printed as written), reading what it captures;
  // its call passes the captured tensors before its arguments.
  EXPECT_EQ(lowered(R"(
fg::Tensor f(const fg::Tensor& x) {
  auto times_x = [&](const fg::Tensor& t) { return t * x; };
  return times_x(x.sin());
})"),
            "function f(x: tensor) -> tensor\n"
            "  lambda-definition opaque '[[maybe_unused]] auto times_x = [&](const fg::Tensor& t) { return t * x; };' reads(x)\n"
            "  return user:lambda[times_x](x, method:sin(x))\n");
}

TEST(Lowering, StructureParameter) {
  // A structure of tensors is flattened: a parameter per leaf, each read where the field is.
  EXPECT_EQ(lowered(R"(
struct Linear {
  fg::Tensor w;
  fg::Tensor b;
};
fg::Tensor f(const Linear& p, const fg::Tensor& x) { return fg::matmul(x, p.w) + p.b; }
)"),
            "function f(p_w: tensor, p_b: tensor, x: tensor) -> tensor\n"
            "  return operator:add(matmul(x, p_w), p_b)\n");
}

TEST(Lowering, PushBackThenStack) {
  // A vector filled by push_back and only stacked is the stacked tensor, grown a row per push.
  EXPECT_EQ(lowered(R"(
fg::Tensor f(const fg::Tensor& x, int n) {
  std::vector<fg::Tensor> v;
  for (int i = 0; i < n; ++i) v.push_back(x * i);
  return fg::stack(v, 0).sum();
})"),
            "function f(x: tensor, n: int) -> tensor\n"
            "  decl v: tensor\n"
            "  decl v_size__: int = '0'\n"
            "  for 'i < n' reads(i, n); step '++i' reads(i) writes(i)\n"
            "    init decl i: int = '0'\n"
            "    block\n"
            "      decl v_item__: tensor = method:unsqueeze(operator:mul(x, 'i' reads(i)), '0')\n"
            "      if (v_size__ == '0')\n"
            "        assign v = v_item__\n"
            "      else\n"
            "        assign v = cat({v, v_item__}, '0')\n"
            "      assign v_size__ += '1'\n"
            "  return method:sum(v)\n");
}

TEST(Lowering, VectorAssignedWholeIsItsElements) {
  // A vector assigned whole is held as its elements: braces assign each (both read first), v[i] at
  // a run-time index chooses one, v.size() is its length.
  EXPECT_EQ(lowered(R"(
fg::Tensor f(const fg::Tensor& x, int k) {
  std::vector<fg::Tensor> s{x, x * 2};
  for (int i = 0; i < 2; ++i) s = {s[1], s[0] * s[1]};
  return (s[k] * double(s.size())).sum();
})"),
            "function f(x: tensor, k: int) -> tensor\n"
            "  decl s_0: tensor = x\n"
            "  decl s_1: tensor = operator:mul(x, '2')\n"
            "  for 'i < 2' reads(i); step '++i' reads(i) writes(i)\n"
            "    init decl i: int = '0'\n"
            "    decl s_0_new: tensor = s_1\n"
            "    decl s_1_new: tensor = operator:mul(s_0, s_1)\n"
            "    assign s_0 = s_0_new\n"
            "    assign s_1 = s_1_new\n"
            "  return method:sum(operator:mul((('k' reads(k) == '0') ? s_0 : s_1), cast<double>('size_t{2}')))\n");
}

TEST(Lowering, PushBackThenIndex) {
  // Read at run-time indices, the vector stays a list: pushes are list_push (with the value), reads
  // elements.
  EXPECT_EQ(lowered(R"(
fg::Tensor f(const fg::Tensor& x, int n) {
  std::vector<fg::Tensor> v;
  for (int i = 0; i < n; ++i) v.push_back(x * i);
  fg::Tensor s = x;
  for (int i = 0; i < n; ++i) s = s + v[i];
  return s;
})"),
            "function f(x: tensor, n: int) -> tensor\n"
            "  decl v: tensor list\n"
            "  for 'i < n' reads(i, n); step '++i' reads(i) writes(i)\n"
            "    init decl i: int = '0'\n"
            "    block\n"
            "      decl v_item__: tensor = operator:mul(x, 'i' reads(i))\n"
            "      eval opaque<list_push>(v, v_item__)\n"
            "  decl s: tensor = x\n"
            "  for 'i < n' reads(i, n); step '++i' reads(i) writes(i)\n"
            "    init decl i: int = '0'\n"
            "    assign s = operator:add(s, external:operator[](v, 'i' reads(i)))\n"
            "  return s\n");
}

TEST(Lowering, RecursionWithAConstantDepthUnfolds) {
  // The call of a recursive helper passes its constant arguments (`n - 1` of the caller's known
  // n too); each level is lowered with them known: ?: and if on them take one side, and what
  // follows a return that always runs is not lowered.
  auto ast = test::parse(R"(#include <funcgen/funcgen.h>
fg::Tensor halve(const fg::Tensor& x, int n) { return n == 0 ? x : halve(x / 2, n - 1); }
fg::Tensor steps(const fg::Tensor& x, int n) {
  if (n <= 0) return x;
  const int m = n - 1;
  return steps(x.sin(), m) * x;
}
fg::Tensor f(const fg::Tensor& x, int k) { return halve(x, 2) + halve(x, k) + steps(x, 1); })",
                         "recursion");
  ASSERT_TRUE(ast);
  clang::ASTContext& context = ast->getASTContext();
  Reporter reporter(ast->getDiagnostics(), ast->getSourceManager());
  Lowering lowering(context, reporter);
  const auto dumped = [&](const char* name, const ir::Constants& constants) {
    const ir::Function* fn = lowering.lower(test::find_function(context, name), {}, constants);
    return fn ? ir::dump(*fn) : std::string("(not lowered)\n");
  };
  EXPECT_EQ(dumped("f", {}),
            "function f(x: tensor, k: int) -> tensor\n"
            "  return operator:add(operator:add(user:halve{n=2}(x, '2'), user:halve(x, 'k' reads(k))), "
            "user:steps{n=1}(x, '1'))\n");
  EXPECT_EQ(dumped("halve", {{"n", 2}}),
            "function halve{n=2}(x: tensor, n: int) -> tensor\n"
            "  return user:halve{n=1}(operator:div(x, '2'), 'n - 1' reads(n))\n");
  EXPECT_EQ(dumped("halve", {{"n", 0}}), "function halve{n=0}(x: tensor, n: int) -> tensor\n  return x\n");
  EXPECT_EQ(dumped("steps", {{"n", 1}}),
            "function steps{n=1}(x: tensor, n: int) -> tensor\n"
            "  decl m: int = 'n - 1' reads(n)\n"
            "  return operator:mul(user:steps{n=0}(method:sin(x), 'm' reads(m)), x)\n");
  EXPECT_EQ(dumped("steps", {{"n", 0}}), "function steps{n=0}(x: tensor, n: int) -> tensor\n  return x\n");
  EXPECT_EQ(reporter.errors(), 0u);
}

}  // namespace
}  // namespace funcgen
