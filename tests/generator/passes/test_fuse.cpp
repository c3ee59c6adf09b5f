// transforms/fuse.h on functions built by hand: a run of element-wise ops becomes one fg::Fused
// program (its inputs, its steps, the values read after it), a statement that may write closes a
// run, and a run of one op is left as it is.
#include <gtest/gtest.h>

#include "ir/dump.h"
#include "ir_builders.h"
#include "transforms/fuse.h"

namespace funcgen {
namespace {

using ir::var_ref;
using test::call;
using test::method;

int local(ir::Function& fn, const std::string& name) { return ir::add_var(fn, name, ir::Type::Tensor, "fg::Tensor"); }
ir::ExprPtr number(const char* text) { return ir::opaque(text, ir::Type::Int); }

TEST(Fuse, ARunIsOneProgram) {
  auto fn = test::tensor_function("f", {"x", "y"});
  const int a = local(*fn, "a"), b = local(*fn, "b"), c = local(*fn, "c");
  fn->body.push_back(ir::decl(a, call("sin", var_ref(*fn, 0))));
  fn->body.push_back(ir::decl(b, call("mul", var_ref(*fn, a), var_ref(*fn, 1))));
  fn->body.push_back(ir::decl(c, call("add", var_ref(*fn, b), number("1"))));
  fn->body.push_back(ir::ret(method("sum", var_ref(*fn, c))));
  ASSERT_TRUE(fuse_elementwise(*fn));
  // Inputs x and y in the order the steps read them; only c is read after the run.
  EXPECT_EQ(ir::dump(*fn),
            "function f(x: tensor, y: tensor) -> tensor\n"
            "  opaque 'static const fg::Fused fused1__({\"x\", \"y\"}, \"a = sin(x); \" \"b = mul(a, y); \" "
            "\"c = add(b, 1); \", {\"c\"});'\n"
            "  bind [c] = external:fused1__.run<1>({x, y})\n"
            "  return method:sum(c)\n");
}

TEST(Fuse, AWriteClosesTheRun) {
  // x.mul_(2) splits the ops into two programs, the second reading x after the write; the
  // returned b + d is taken out into a local to join the second.
  auto fn = test::tensor_function("f", {"x"});
  const int a = local(*fn, "a"), b = local(*fn, "b"), c = local(*fn, "c"), d = local(*fn, "d");
  fn->body.push_back(ir::decl(a, call("sin", var_ref(*fn, 0))));
  fn->body.push_back(ir::decl(b, call("exp", var_ref(*fn, a))));
  fn->body.push_back(ir::eval(method("mul_", var_ref(*fn, 0), number("2"))));
  fn->body.push_back(ir::decl(c, call("cos", var_ref(*fn, 0))));
  fn->body.push_back(ir::decl(d, call("neg", var_ref(*fn, c))));
  fn->body.push_back(ir::ret(call("add", var_ref(*fn, b), var_ref(*fn, d))));
  ASSERT_TRUE(fuse_elementwise(*fn));
  EXPECT_EQ(ir::dump(*fn),
            "function f(x: tensor) -> tensor\n"
            "  opaque 'static const fg::Fused fused1__({\"x\"}, \"a = sin(x); \" \"b = exp(a); \", {\"b\"});'\n"
            "  bind [b] = external:fused1__.run<1>({x})\n"
            "  eval method:mul_(x, '2')\n"
            "  opaque 'static const fg::Fused fused2__({\"x\", \"b\"}, \"c = cos(x); \" \"d = neg(c); \" "
            "\"e1__ = add(b, d); \", {\"e1__\"});'\n"
            "  bind [e1__] = external:fused2__.run<1>({x, b})\n"
            "  return e1__\n");
}

TEST(Fuse, OneOpIsLeftAsItIs) {
  auto fn = test::tensor_function("f", {"x"});
  const int a = local(*fn, "a");
  fn->body.push_back(ir::decl(a, call("sin", var_ref(*fn, 0))));
  fn->body.push_back(ir::ret(call("matmul", var_ref(*fn, a), var_ref(*fn, 0))));  // not element-wise
  const std::string before = ir::dump(*fn);
  EXPECT_FALSE(fuse_elementwise(*fn));
  EXPECT_EQ(ir::dump(*fn), before);
}

}  // namespace
}  // namespace funcgen
