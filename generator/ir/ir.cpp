#include "ir/ir.h"

namespace funcgen::ir {

const char* name_of(Type type) {
  switch (type) {
    case Type::Tensor: return "tensor";
    case Type::TensorTuple: return "tuple";
    case Type::TensorList: return "tensor list";
    case Type::IntList: return "int list";
    case Type::Int: return "int";
    case Type::Float: return "float";
    case Type::Bool: return "bool";
    case Type::Void: return "void";
    case Type::Other: return "other";
  }
  return "other";
}

void for_each_expr(const Expr& expr, const std::function<void(const Expr&)>& fn) {
  for (const auto& a : expr.args) for_each_expr(*a, fn);
  fn(expr);
}

void for_each_stmt(const std::vector<StmtPtr>& body, const std::function<void(const Stmt&)>& fn) {
  for (const auto& s : body) {
    fn(*s);
    for_each_stmt(s->init, fn);
    for_each_stmt(s->body, fn);
    for_each_stmt(s->else_body, fn);
  }
}

std::vector<const Stmt*> switch_items(const std::vector<StmtPtr>& body) {
  std::vector<const Stmt*> flat;
  for (const auto& s : body) {
    if (s->kind == StmtKind::Block && s->text == "label") {
      for (const Stmt* inner : switch_items(s->body)) flat.push_back(inner);
    } else {
      flat.push_back(s.get());
    }
  }
  return flat;
}

void for_each_expr(const std::vector<StmtPtr>& body, const std::function<void(const Expr&)>& fn) {
  for_each_stmt(body, [&](const Stmt& s) {
    if (s.expr) for_each_expr(*s.expr, fn);
    if (s.step) for_each_expr(*s.step, fn);
  });
}

}  // namespace funcgen::ir
