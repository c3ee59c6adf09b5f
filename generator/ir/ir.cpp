#include "ir/ir.h"

#include <algorithm>
#include <cctype>

#include <clang/AST/DeclCXX.h>

#include "ir/types.h"

namespace funcgen::ir {

bool changes_object(const clang::FunctionDecl& fn) {
  const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(&fn);
  return m != nullptr && !m->isStatic() && !m->isConst() && !m->getParent()->isLambda();
}

bool by_reference(const Var& p) {
  // (a fg::Tensor* parameter is a reference to the caller's variable: frontend/lower/calls.cpp)
  if (llvm::isa_and_nonnull<clang::ParmVarDecl>(p.decl)) return writable_parameter(p.decl);
  const auto* method = llvm::dyn_cast_or_null<clang::FunctionDecl>(p.decl);  // a leaf of its object
  return method != nullptr && p.param_index >= 0 && changes_object(*method);
}

bool takes_by_reference(const clang::FunctionDecl& fn) {
  return changes_object(fn) ||
         std::any_of(fn.param_begin(), fn.param_end(), [](const clang::ParmVarDecl* p) { return writable_parameter(p); });
}

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
  if (!expr.body.empty()) for_each_expr(expr.body, fn);  // a lambda's statements
  fn(expr);
}

bool computes_tensors(const Expr& e) {
  bool found = false;
  for_each_expr(e, [&](const Expr& x) {
    found |= (x.kind != ExprKind::VarRef && is_tensor_like(x.type)) || (x.kind == ExprKind::Call && x.form == CallForm::User);
  });
  return found;
}

void for_each_stmt(const std::vector<StmtPtr>& body, const std::function<void(const Stmt&)>& fn) {
  for (const auto& s : body) {
    fn(*s);
    for_each_stmt(s->init, fn);
    for_each_stmt(s->body, fn);
    for_each_stmt(s->else_body, fn);
  }
}

namespace {

void add_identifiers(const std::string& text, std::set<std::string>& out) {
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"' || c == '\'') {  // literals name nothing
      size_t j = i + 1;
      while (j < text.size() && text[j] != c) j += text[j] == '\\' ? 2 : 1;
      i = j + 1;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      out.insert(text.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
}

}  // namespace

std::set<std::string> names_in(const Function& fn, const Expr& e) {
  std::set<std::string> out;
  for_each_expr(e, [&](const Expr& x) {
    add_identifiers(x.text, out);
    if (x.kind == ExprKind::VarRef && x.var >= 0) out.insert(fn.var(x.var).name);
  });
  return out;
}

std::set<std::string> text_names(const Function& fn) {
  std::set<std::string> out;
  for_each_stmt(fn.body, [&](const Stmt& s) { add_identifiers(s.text, out); });
  for_each_expr(fn.body, [&](const Expr& e) {
    add_identifiers(e.text, out);
    if (e.kind == ExprKind::Call && e.form != CallForm::Free && e.form != CallForm::Method) add_identifiers(e.op, out);
  });
  return out;
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
