// transforms/simplify.h on functions built by hand: repeated pure subexpressions read the first
// local that holds them, unread locals that transforms made go, and what must stay stays (random
// draws, distinct outputs, code with writes).
#include <gtest/gtest.h>

#include "ir/dump.h"
#include "ir_builders.h"
#include "transforms/simplify.h"

namespace funcgen {
namespace {

using ir::var_ref;
using test::call;
using test::method;

// The dump of simplify(fn), or "unchanged" where it returns nullptr.
std::string simplified(const ir::Function& fn) {
  std::unique_ptr<ir::Function> out = simplify(fn);
  return out ? ir::dump(*out) : "unchanged";
}

int local(ir::Function& fn, const std::string& name) { return ir::add_var(fn, name, ir::Type::Tensor, "fg::Tensor"); }

TEST(Simplify, RepeatedSubexpressionsReadTheFirstLocal) {
  auto fn = test::tensor_function("f", {"x", "y"});
  const int x = 0, y = 1, a = local(*fn, "a"), b = local(*fn, "b"), c = local(*fn, "c"), d = local(*fn, "d");
  fn->body.push_back(ir::decl(a, call("sin", var_ref(*fn, x))));
  fn->body.push_back(ir::decl(b, call("sin", var_ref(*fn, x))));                   // = a
  fn->body.push_back(ir::decl(c, call("mul", var_ref(*fn, x), var_ref(*fn, y))));
  fn->body.push_back(ir::decl(d, call("mul", var_ref(*fn, y), var_ref(*fn, x))));  // = c: mul commutes
  fn->body.push_back(
      ir::ret(call("add", call("add", var_ref(*fn, a), var_ref(*fn, b)), call("sub", var_ref(*fn, c), var_ref(*fn, d)))));
  EXPECT_EQ(simplified(*fn),
            "function f(x: tensor, y: tensor) -> tensor\n"
            "  decl a: tensor = sin(x)\n"
            "  decl b: tensor = a\n"
            "  decl c: tensor = mul(x, y)\n"
            "  decl d: tensor = c\n"
            "  return add(add(a, b), sub(c, d))\n");
}

TEST(Simplify, SubIsNotCommutative) {
  auto fn = test::tensor_function("f", {"x", "y"});
  const int c = local(*fn, "c"), d = local(*fn, "d");
  fn->body.push_back(ir::decl(c, call("sub", var_ref(*fn, 0), var_ref(*fn, 1))));
  fn->body.push_back(ir::decl(d, call("sub", var_ref(*fn, 1), var_ref(*fn, 0))));
  fn->body.push_back(ir::ret(call("mul", var_ref(*fn, c), var_ref(*fn, d))));
  EXPECT_EQ(simplified(*fn), "unchanged");
}

TEST(Simplify, UnreadLocalsGoUnlessTheyDraw) {
  auto fn = test::tensor_function("f", {"x"});
  const int dead = local(*fn, "dead"), draw = local(*fn, "draw"), kept = local(*fn, "kept");
  fn->body.push_back(ir::decl(dead, call("cos", var_ref(*fn, 0))));  // nothing reads it
  fn->body.push_back(ir::decl(draw, call("randn_like", var_ref(*fn, 0))));  // nothing reads it, but it draws
  fn->body.push_back(ir::decl(kept, call("exp", var_ref(*fn, 0))));
  fn->body.push_back(ir::ret(var_ref(*fn, kept)));
  EXPECT_EQ(simplified(*fn),
            "function f(x: tensor) -> tensor\n"
            "  decl draw: tensor = randn_like(x)\n"
            "  decl kept: tensor = exp(x)\n"
            "  return kept\n");
}

TEST(Simplify, EqualOutputsStayDistinctTensors) {
  // Both returned: a caller may write one in place, so neither is the other.
  auto fn = test::tensor_function("f", {"x"});
  const int a = local(*fn, "a"), b = local(*fn, "b");
  fn->body.push_back(ir::decl(a, call("sin", var_ref(*fn, 0))));
  fn->body.push_back(ir::decl(b, call("sin", var_ref(*fn, 0))));
  std::vector<ir::ExprPtr> items;
  items.push_back(var_ref(*fn, a));
  items.push_back(var_ref(*fn, b));
  fn->body.push_back(ir::ret(ir::tuple(std::move(items))));
  EXPECT_EQ(simplified(*fn), "unchanged");
}

TEST(Simplify, CodeWithWritesIsLeftAlone) {
  // x.add_(1) between two sin(x): they differ, and simplify only takes straight-line pure code.
  auto fn = test::tensor_function("f", {"x"});
  const int a = local(*fn, "a"), b = local(*fn, "b");
  fn->body.push_back(ir::decl(a, call("sin", var_ref(*fn, 0))));
  fn->body.push_back(ir::eval(method("add_", var_ref(*fn, 0), ir::opaque("1", ir::Type::Int))));
  fn->body.push_back(ir::decl(b, call("sin", var_ref(*fn, 0))));
  fn->body.push_back(ir::ret(call("add", var_ref(*fn, a), var_ref(*fn, b))));
  EXPECT_EQ(simplified(*fn), "unchanged");
}

}  // namespace
}  // namespace funcgen
