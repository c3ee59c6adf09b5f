// AD's normalizer (transforms/ad/anf.h) on functions built by hand: in-place ops become new
// versions of the value they write (functionalization), which is what AD then differentiates.
// The runtime's header is parsed once, for the declarations the calls resolve against.
#include <gtest/gtest.h>

#include "diag/reporter.h"
#include "ir/dump.h"
#include "ir/module.h"
#include "ir_builders.h"
#include "ops/derivative_rules.h"
#include "parse.h"
#include "transforms/ad/anf.h"

namespace funcgen {
namespace {

using ir::var_ref;
using test::method;

class Functionalize : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ast_ = test::parse("#include <funcgen/funcgen.h>\n", "the runtime's header").release(); }
  static void TearDownTestSuite() {
    delete ast_;
    ast_ = nullptr;
  }

  // A call resolved against the runtime's declarations, as the lowering makes it.
  ir::ExprPtr resolved(ir::ExprPtr call) {
    EXPECT_TRUE(resolver_.resolve(*call)) << call->op;
    return call;
  }

  // The dump of the normalized function, or "refused" (with the errors it reported).
  std::string normalized(const ir::Function& fn) {
    std::unique_ptr<ir::Function> out = ad::normalize(fn, module_, reporter_, "grad", resolver_);
    if (!out) return "refused, " + std::to_string(reporter_.errors()) + " error(s)";
    EXPECT_EQ(reporter_.errors(), 0u);
    return ir::dump(*out);
  }
  ir::ExprPtr number(const char* text) { return ir::opaque(text, ir::Type::Int); }

  static clang::ASTUnit* ast_;
  Reporter reporter_{ast_->getDiagnostics(), ast_->getSourceManager()};
  ir::Module module_;  // (the functions call no helper)
  ad::OpResolver resolver_{ast_->getASTContext()};
};
clang::ASTUnit* Functionalize::ast_ = nullptr;

int local(ir::Function& fn, const std::string& name) { return ir::add_var(fn, name, ir::Type::Tensor, "fg::Tensor"); }

TEST_F(Functionalize, InplaceAddOfAClone) {
  // y = x.clone(); y.add_(x); return y;
  auto fn = test::tensor_function("f", {"x"});
  const int y = local(*fn, "y");
  fn->body.push_back(ir::decl(y, resolved(method("clone", var_ref(*fn, 0)))));
  fn->body.push_back(ir::eval(resolved(method("add_", var_ref(*fn, y), var_ref(*fn, 0)))));
  fn->body.push_back(ir::ret(var_ref(*fn, y)));
  EXPECT_EQ(normalized(*fn),
            "function f(x: tensor) -> tensor\n"
            "  decl y: tensor = method:clone(x)\n"
            "  decl y_1: tensor = method:add(y, x)\n"
            "  return y_1\n");
}

TEST_F(Functionalize, WriteIntoAView) {
  // y = x.clone(); v = y.unsqueeze(0); v.mul_(2); return y;  the write reaches y through its view.
  auto fn = test::tensor_function("f", {"x"});
  const int y = local(*fn, "y"), v = local(*fn, "v");
  fn->body.push_back(ir::decl(y, resolved(method("clone", var_ref(*fn, 0)))));
  fn->body.push_back(ir::decl(v, resolved(method("unsqueeze", var_ref(*fn, y), number("0")))));
  fn->body.push_back(ir::eval(resolved(method("mul_", var_ref(*fn, v), number("2")))));
  fn->body.push_back(ir::ret(var_ref(*fn, y)));
  EXPECT_EQ(normalized(*fn),
            // v's new value, its change, and the change put back through the inverse view.
            "function f(x: tensor) -> tensor\n"
            "  decl y: tensor = method:clone(x)\n"
            "  decl v: tensor = method:unsqueeze(y, '0')\n"
            "  decl v_1: tensor = method:mul(v, '2')\n"
            "  decl v_change: tensor = operator:sub(v_1, v)\n"
            "  decl y_write: tensor = method:squeeze(v_change, '0')\n"
            "  decl y_1: tensor = operator:add(y, y_write)\n"
            "  return y_1\n");
}

TEST_F(Functionalize, WriteThroughAHandleCopy) {
  // y = x.clone(); z = y; z.add_(x); return y;  z is y's tensor, not a copy of its values.
  auto fn = test::tensor_function("f", {"x"});
  const int y = local(*fn, "y"), z = local(*fn, "z");
  fn->body.push_back(ir::decl(y, resolved(method("clone", var_ref(*fn, 0)))));
  fn->body.push_back(ir::decl(z, var_ref(*fn, y)));
  fn->body.push_back(ir::eval(resolved(method("add_", var_ref(*fn, z), var_ref(*fn, 0)))));
  fn->body.push_back(ir::ret(var_ref(*fn, y)));
  EXPECT_EQ(normalized(*fn),
            "function f(x: tensor) -> tensor\n"
            "  decl y: tensor = method:clone(x)\n"
            "  decl y_1: tensor = method:add(y, x)\n"
            "  return y_1\n");
}

TEST_F(Functionalize, WriteIntoWhatMayAliasIsRefused) {
  // c = x.contiguous(); c.add_(1); return c;  whether x changes depends on x's strides.
  auto fn = test::tensor_function("f", {"x"});
  const int c = local(*fn, "c");
  fn->body.push_back(ir::decl(c, resolved(method("contiguous", var_ref(*fn, 0)))));
  fn->body.push_back(ir::eval(resolved(method("add_", var_ref(*fn, c), number("1")))));
  fn->body.push_back(ir::ret(var_ref(*fn, c)));
  EXPECT_EQ(normalized(*fn),
            "refused, 1 error(s)");
}

}  // namespace
}  // namespace funcgen
