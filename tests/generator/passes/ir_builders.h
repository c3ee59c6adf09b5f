// The pass-level tests' IR built by hand (ir/build.h has the rest): functions of tensors and calls
// of runtime ops.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/build.h"
#include "ir/ir.h"

namespace funcgen::test {

// A function built by hand: parameters of type tensor (fg::Tensor), return type tensor.
inline std::unique_ptr<ir::Function> tensor_function(const std::string& name, const std::vector<std::string>& params) {
  auto fn = std::make_unique<ir::Function>();
  fn->name = fn->qualified_name = name;
  fn->return_cxx_type = "fg::Tensor";
  for (const std::string& p : params) {
    const int id = ir::add_var(*fn, p, ir::Type::Tensor, "const fg::Tensor &");  // as Clang spells it
    fn->vars[static_cast<size_t>(id)].param_index = static_cast<int>(fn->params.size());
    fn->params.push_back(id);
  }
  return fn;
}

// A call of a runtime op: `fg::op(args)` (Free) or `args[0].op(args[1..])` (Method), of tensor type,
// with the parameter names the derivative rules read (self, other, alpha).
inline ir::ExprPtr call_of(ir::CallForm form, const std::string& op, std::vector<ir::ExprPtr> args) {
  auto e = std::make_unique<ir::Expr>();
  e->kind = ir::ExprKind::Call;
  e->type = ir::Type::Tensor;
  e->op = op;
  e->form = form;
  static const char* const kNames[] = {"self", "other", "alpha"};
  for (size_t i = 0; i < args.size(); ++i) {
    e->params.push_back(i < 3 ? kNames[i] : "arg" + std::to_string(i));
    e->param_types.push_back(args[i]->type);
  }
  e->args = std::move(args);
  return e;
}
template <class... Args>
std::vector<ir::ExprPtr> list(Args&&... args) {
  std::vector<ir::ExprPtr> out;
  (out.push_back(std::forward<Args>(args)), ...);
  return out;
}
template <class... Args>
ir::ExprPtr call(const std::string& op, Args&&... args) {
  return call_of(ir::CallForm::Free, op, list(std::forward<Args>(args)...));
}
template <class... Args>
ir::ExprPtr method(const std::string& op, Args&&... args) {
  return call_of(ir::CallForm::Method, op, list(std::forward<Args>(args)...));
}

}  // namespace funcgen::test
