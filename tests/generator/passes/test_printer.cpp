// emitter/printer.h on functions built by hand: each call form, declarations, assignment, if/else,
// a for loop with its init, a switch whose cases get blocks, and a signature that leaves unused
// parameters unnamed.
#include <gtest/gtest.h>

#include "emitter/printer.h"
#include "ir/ir.h"
#include "ir/program.h"
#include "ir_builders.h"

namespace funcgen {
namespace {

using ir::var_ref;
using test::call;
using test::method;

ir::ExprPtr text(const std::string& t, std::vector<int> reads = {}, ir::Type type = ir::Type::Bool) {
  ir::ExprPtr e = ir::opaque(t, type);
  e->reads = std::move(reads);
  return e;
}
ir::ExprPtr op(const std::string& name, const std::string& symbol, ir::ExprPtr a, ir::ExprPtr b) {
  ir::ExprPtr e = test::call_of(ir::CallForm::Operator, name, test::list(std::move(a), std::move(b)));
  e->text = symbol;
  return e;
}
ir::StmtPtr stmt(ir::StmtKind kind, ir::ExprPtr e = nullptr) {
  auto s = std::make_unique<ir::Stmt>();
  s->kind = kind;
  s->expr = std::move(e);
  return s;
}

std::unique_ptr<ir::Function> function_with_scalars() {
  auto fn = test::tensor_function("f", {"x", "y"});
  for (const char* p : {"n", "unused"}) {
    const int id = ir::add_var(*fn, p, ir::Type::Int, "int64_t");
    fn->vars[static_cast<size_t>(id)].param_index = static_cast<int>(fn->params.size());
    fn->params.push_back(id);
  }
  return fn;
}

TEST(Printer, CallFormsAndIfElse) {
  auto fn = function_with_scalars();
  const int x = 0, y = 1, n = 2;
  const int a = ir::add_var(*fn, "a", ir::Type::Tensor, "fg::Tensor");
  const int s = ir::add_var(*fn, "s", ir::Type::Tensor, "fg::Tensor");
  const int m = ir::add_var(*fn, "m", ir::Type::Tensor, "fg::Tensor");
  fn->body.push_back(ir::decl(a, call("add", var_ref(*fn, x), var_ref(*fn, y))));
  fn->body.push_back(ir::decl(s, method("sum", var_ref(*fn, a))));
  fn->body.push_back(ir::decl(m, op("mul", "*", var_ref(*fn, a), text("2", {}, ir::Type::Int))));
  ir::StmtPtr branch = stmt(ir::StmtKind::If, text("n > 0", {n}));
  branch->body.push_back(ir::assign(s, op("add", "+", var_ref(*fn, s), var_ref(*fn, m))));
  branch->has_else = true;
  branch->else_body.push_back(ir::eval(method("mul_", var_ref(*fn, s), text("2", {}, ir::Type::Int))));
  fn->body.push_back(std::move(branch));
  fn->body.push_back(ir::ret(var_ref(*fn, s)));
  ir::ProgramFunction f{std::move(fn), "the printer's test", true};
  EXPECT_EQ(emitter::print_function(f),
            "// the printer's test\n"
            // (Reference types as Clang spells them, `const fg::Tensor &`; clang-format spaces the output.)
            "static fg::Tensor f(const fg::Tensor &x, const fg::Tensor &y, int64_t n, int64_t /*unused*/) {\n"
            "  fg::Tensor a = fg::add(x, y);\n"
            "  fg::Tensor s = a.sum();\n"
            "  fg::Tensor m = a * 2;\n"
            "  if (n > 0) {\n"
            "    s = s + m;\n"
            "  } else {\n"
            "    s.mul_(2);\n"
            "  }\n"
            "  return s;\n"
            "}\n");
}

TEST(Printer, ForLoopAndSwitch) {
  auto fn = function_with_scalars();
  const int x = 0, n = 2;
  const int s = ir::add_var(*fn, "s", ir::Type::Tensor, "fg::Tensor");
  const int i = ir::add_var(*fn, "i", ir::Type::Int, "int");
  fn->body.push_back(ir::decl(s, var_ref(*fn, x)));
  ir::StmtPtr loop = stmt(ir::StmtKind::For, text("i < n", {i, n}));
  loop->init.push_back(ir::decl(i, text("0", {}, ir::Type::Int)));
  loop->step = text("++i", {i}, ir::Type::Int);
  loop->step->writes = {i};
  loop->body.push_back(ir::assign(s, op("mul", "*", var_ref(*fn, s), var_ref(*fn, x))));
  fn->body.push_back(std::move(loop));
  // switch (n) { case 0: s = s.neg(); break; default: return s; }, as the lowering makes it: each
  // label and the statement it labels in a block "label".
  ir::StmtPtr sw = stmt(ir::StmtKind::Switch, text("n", {n}, ir::Type::Int));
  for (const char* label : {"case 0", "default"}) {
    ir::StmtPtr labelled = stmt(ir::StmtKind::Block);
    labelled->text = "label";
    ir::StmtPtr c = stmt(ir::StmtKind::Case);
    c->text = label;
    labelled->body.push_back(std::move(c));
    if (std::string(label) == "default")
      labelled->body.push_back(ir::ret(var_ref(*fn, s)));
    else
      labelled->body.push_back(ir::assign(s, method("neg", var_ref(*fn, s))));
    sw->body.push_back(std::move(labelled));
    if (std::string(label) == "case 0") sw->body.push_back(stmt(ir::StmtKind::Break));
  }
  fn->body.push_back(std::move(sw));
  fn->body.push_back(ir::ret(var_ref(*fn, s)));
  EXPECT_EQ(emitter::print_body(*fn),
            "  fg::Tensor s = x;\n"
            "  for (int i = 0; i < n; ++i) {\n"
            "    s = s * x;\n"
            "  }\n"
            "  switch (n) {\n"
            "    case 0: {\n"
            "      s = s.neg();\n"
            "      break;\n"
            "    }\n"
            "    default: {\n"
            "      return s;\n"
            "    }\n"
            "  }\n"
            "  return s;\n");
}

}  // namespace
}  // namespace funcgen
