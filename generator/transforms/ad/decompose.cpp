#include "transforms/ad/decompose.h"

#include <cctype>
#include <cstdlib>
#include <sstream>

#include <clang/AST/ExprCXX.h>

#include "ir/build.h"
#include "ir/cxx_text.h"
#include "ir/types.h"
#include "ops/inplace.h"
#include "ops/registry.h"

namespace funcgen::ad::anf {

int Decomposer::run(const Expr& e, const Expr& call, const Rule& rule, std::vector<ir::StmtPtr>& out,
                    const std::string& name) {
  const OpView v = view_of_call(call);
  std::vector<ExprPtr> keep;
  FormulaEnv env;
  if (std::string err = formula_env(call, v, form_.resolver(), keep, env); !err.empty()) {
    form_.fail(e, "internal error: " + err);
    return 0;
  }
  std::set<std::string> given;
  for (size_t i = 0; i < v.params.size(); ++i) given.insert(v.params[i]);
  // Optional tensors left out: {} (a default, or written), or std::nullopt where a tensor goes.
  absent_.clear();
  bool_params_.clear();
  if (call.callee != nullptr)
    for (const clang::ParmVarDecl* p : call.callee->parameters())
      if (p->getType()->isBooleanType()) bool_params_.insert(p->getNameAsString());
  for (const std::string& param : tensor_params(call))
    if (auto it = env.find(param); it != env.end() && ir::is_absent(*it->second)) absent_.insert(param);
  for (size_t i = 0; i < call.args.size() && i < call.param_types.size(); ++i)
    if (call.param_types[i] == ir::Type::Tensor && call.args[i]->type != ir::Type::Tensor &&
        !ir::is_absent(*call.args[i])) {
      form_.fail(e.arg(i), "'" + e.op + "' is differentiated with its '" + v.params[i] +
                               "' as a tensor or left out; "
                               "pass an fg::Tensor (or {} for none), not this optional value");
      return 0;
    }
  defaults_.clear();
  for (const OpParam& p : rule.params)
    if (!p.default_value.empty()) defaults_[p.name] = p.default_value;
  const Rule::Decomposition* row = nullptr;
  for (const auto& d : rule.decompositions) {
    const std::optional<bool> holds = guard_holds(d.guard, env, given);
    if (!holds) {
      form_.fail(e, "'" + e.op + "' is differentiated in one of two forms chosen by " + undecided_ +
                        ", which must be "
                        "a literal true or false here; write the call in each branch of an if/else on it");
      return 0;
    }
    if (*holds) {
      row = &d;
      break;
    }
  }
  if (row == nullptr) {
    form_.fail(e, rule.no_decomposition.empty() ? "'" + e.op + "' cannot be differentiated with these arguments"
                                                : rule.no_decomposition);
    return 0;
  }
  int last = 0;
  for (const Rule::Step& st : row->steps) {
    const std::string& step = st.name;
    const std::string& formula = st.formula;
    const std::optional<bool> wanted = guard_holds(st.guard, env, given);
    if (!wanted) {
      form_.fail(e, "'" + e.op + "' is differentiated in a form chosen by " + undecided_ +
                        ", which must be a literal "
                        "true or false here; write the call in each branch of an if/else on it");
      return 0;
    }
    if (!*wanted || names_absent(formula)) {  // (skipped, or on an absent weight: the value so far)
      if (last != 0) bind_step(step, ir::var_ref(form_.out(), last), keep, env);
      continue;
    }
    FormulaResult r = instantiate(formula, env, form_.resolver());
    if (!r.expr) {
      form_.fail(e, "internal error: '" + formula + "': " + r.error);
      return 0;
    }
    if (r.expr->type != ir::Type::Tensor) {  // a number or a shape, used where the steps name it
      bind_step(step, std::move(r.expr), keep, env);
      continue;
    }
    const bool final = &st == &row->steps.back();
    last = emit_tree(final && !name.empty() ? name : step, std::move(r.expr), e, out);
    bind_step(step, ir::var_ref(form_.out(), last), keep, env);
  }
  if (last == 0) form_.fail(e, "internal error: the decomposition of '" + e.op + "' computed no tensor");
  return last;
}

bool Decomposer::names(const std::string& formula, const std::string& word) {
  for (size_t at = formula.find(word); at != std::string::npos; at = formula.find(word, at + 1)) {
    const auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    const bool before = at > 0 && (ident(formula[at - 1]) || formula[at - 1] == '.' || formula[at - 1] == ':');
    const bool after = at + word.size() < formula.size() && ident(formula[at + word.size()]);
    if (!before && !after) return true;
  }
  return false;
}

std::vector<std::string> Decomposer::tensor_params(const Expr& call) {
  std::vector<std::string> out;
  if (call.callee == nullptr) return out;
  for (const clang::ParmVarDecl* p : call.callee->parameters())
    if (ir_type_of(p->getType()) == ir::Type::Tensor) out.push_back(p->getNameAsString());
  return out;
}

bool Decomposer::names_absent(const std::string& formula) const {
  for (const std::string& param : absent_)
    if (names(formula, param)) return true;
  return false;
}

void Decomposer::bind_step(const std::string& step, ExprPtr x, std::vector<ExprPtr>& keep, FormulaEnv& env) {
  keep.push_back(std::move(x));
  env[step] = keep.back().get();
}

std::optional<bool> Decomposer::guard_holds(const std::string& guard, const FormulaEnv& env,
                                            const std::set<std::string>& given) {
  std::istringstream words(guard);
  std::string w;
  bool holds = true, decided = true;
  while (words >> w) {
    const bool negated = w[0] == '!';
    const std::string param = negated ? w.substr(1) : w;
    auto it = env.find(param);
    bool value = false;
    if (it == env.end()) {
      value = false;
    } else if (bool_params_.count(param) != 0 || it->second->type == ir::Type::Bool) {
      // A flag: true, false, or an integer literal (0 is false), as the bool parameter takes it.
      const std::string& text = it->second->text;
      const bool literal =
          it->second->kind == ExprKind::Opaque &&
          (text == "true" || text == "false" || text.find_first_not_of("0123456789") == std::string::npos);
      if (!literal || text.empty()) {
        decided = false;
        undecided_ = "'" + param + "'";
        continue;
      }
      value = text == "true" || (text != "false" && text.find_first_not_of('0') != std::string::npos);
    } else {
      value = absent_.count(param) == 0 && (it->second->type == ir::Type::Tensor || given.count(param) != 0) &&
              !at_default(param, *it->second);
    }
    holds &= value != negated;
  }
  if (!holds) return false;
  if (!decided) return std::nullopt;
  return true;
}

bool Decomposer::at_default(const std::string& param, const Expr& e) const {
  auto it = defaults_.find(param);
  if (it == defaults_.end() || e.kind != ExprKind::Opaque || e.text.empty()) return false;
  const auto number = [](const std::string& t, double& v) {
    char* end = nullptr;
    v = std::strtod(t.c_str(), &end);
    return end != t.c_str() && (*end == '\0' || ((*end == 'f' || *end == 'F') && end[1] == '\0'));
  };
  double a = 0, b = 0;
  if (number(e.text, a) && number(it->second, b)) return a == b;
  return e.text == it->second;
}

int Decomposer::emit_tree(const std::string& name, ExprPtr x, const Expr& at, std::vector<ir::StmtPtr>& out) {
  atomize(*x, at, out);
  x->range = at.range;
  const int id = form_.new_tensor(name);
  StmtPtr d = ir::decl(id, std::move(x));
  d->range = at.range;
  out.push_back(std::move(d));
  return id;
}

void Decomposer::atomize(Expr& x, const Expr& at, std::vector<ir::StmtPtr>& out) {
  for (auto& a : x.args) {
    if (a->kind == ExprKind::Call && a->type == ir::Type::Tensor)
      a = ir::var_ref(form_.out(), emit_tree("t", std::move(a), at, out));
    else
      atomize(*a, at, out);
  }
}

}  // namespace funcgen::ad::anf
