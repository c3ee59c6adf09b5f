#include "transforms/ad/normal_form.h"

#include "ir/build.h"
#include "ops/registry.h"

namespace funcgen::ad::anf {

bool is_inplace(const Expr& e) {
  return e.kind == ExprKind::Call && (e.form == ir::CallForm::Method || e.form == ir::CallForm::Operator) &&
         ops::info(e).inplace_form() && !e.args.empty() && e.args[0]->type == ir::Type::Tensor;
}

std::string NormalForm::claim(const std::string& base) {
  std::string n = base;
  for (int i = 1; emitted_.count(n) != 0 || text_names_.count(n) != 0 || (n != base && names_.count(n) != 0); ++i)
    n = base + "_" + std::to_string(i);
  emitted_.insert(n);
  return n;
}

void NormalForm::avoid_text_names(const ir::Function& fn) {
  std::set<std::string> locals;
  for (const auto& v : fn.vars) locals.insert(v.name);
  for (const auto& n : ir::text_names(fn))
    if (locals.count(n) == 0) text_names_.insert(n);
}

std::string NormalForm::declared_name(std::string name) const {
  while (declared_.count(name) == 0) {
    const size_t at = name.find_last_of('_');
    if (at == std::string::npos || at + 1 == name.size() ||
        name.find_first_not_of("0123456789", at + 1) != std::string::npos)
      return "";
    name.resize(at);
  }
  return name;
}

int NormalForm::held(ExprPtr value, const std::string& base, ir::Type type, const std::string& cxx,
                     std::vector<ir::StmtPtr>& out) {
  const int id = ir::add_var(*out_, claim(base), type, cxx);
  out.push_back(ir::decl(id, std::move(value)));
  return id;
}

std::string NormalForm::plain_name(const std::string& name) {
  const bool made = name.size() > 2 && name.compare(name.size() - 2, 2, "__") == 0;
  return made ? name.substr(0, name.size() - 2) : name;
}

int NormalForm::emit_formula(const std::string& name, const std::string& formula, const FormulaEnv& env, const Expr& at,
                             std::vector<ir::StmtPtr>& out) {
  FormulaResult r = instantiate(formula, env, resolver_);
  if (!r.expr) {
    fail(at, "internal error: '" + formula + "': " + r.error);
    return 0;
  }
  r.expr->range = at.range;
  const int id = new_tensor(name);
  StmtPtr d = ir::decl(id, std::move(r.expr));
  d->range = at.range;
  out.push_back(std::move(d));
  return id;
}

}  // namespace funcgen::ad::anf
