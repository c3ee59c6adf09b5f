#include "transforms/ad/differentiate.h"

#include <map>
#include <set>

#include "ir/build.h"
#include "transforms/ad/anf.h"

namespace funcgen::ad {

namespace {

using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;

// What the transforms share: a copy of the normalized function to extend, unique names, and
// rules applied to one op.
class Differentiator {
 public:
  Differentiator(const ir::Function& n, const OpResolver& resolver, Reporter& reporter)
      : resolver_(resolver), reporter_(reporter) {
    fn_ = ir::derived_function(n);
    fn_->vars = n.vars;
    fn_->params = n.params;
    for (const auto& v : n.vars) names_.insert(v.name);
    for (const auto* e : returned(n)) outputs_.push_back(e->var);
  }

  bool ok() const { return ok_; }

  std::string claim(const std::string& base) {
    std::string n = base;
    for (int i = 1; names_.count(n) != 0; ++i) n = base + "_" + std::to_string(i);
    names_.insert(n);
    return n;
  }
  int tensor_var(const std::string& base) { return ir::add_var(*fn_, claim(base), ir::Type::Tensor, "fg::Tensor"); }
  int tensor_param(const std::string& base) {
    const int id = ir::add_var(*fn_, claim(base), ir::Type::Tensor, "const fg::Tensor&");
    fn_->vars[static_cast<size_t>(id)].param_index = static_cast<int>(fn_->params.size());
    fn_->params.push_back(id);
    return id;
  }
  ExprPtr ref(int id) const { return ir::var_ref(*fn_, id); }

  // Code that derivative rules made has no place in the source: its errors go to the function.
  void fail(clang::SourceLocation loc, const std::string& message) {
    if (!ok_) return;
    ok_ = false;
    if (loc.isInvalid() && fn_->decl != nullptr) loc = fn_->decl->getLocation();
    reporter_.report("unsupported", loc, message);
  }

  ExprPtr formula(const std::string& text, const FormulaEnv& env, const Expr& at) {
    FormulaResult r = instantiate(text, env, resolver_);
    if (!r.error.empty()) {
      fail(at.range.getBegin(), "the derivative rule '" + text + "' of '" + at.op + "' does not apply here: " + r.error);
      return ir::opaque("0", ir::Type::Int);
    }
    return std::move(r.expr);
  }

  // One op of the normalized function: its rule, and the parameter name of each argument.
  struct OpView {
    std::string op;
    const Rule* rule = nullptr;
    std::vector<std::string> params;
  };
  static OpView view(const Expr& call) {
    OpView v;
    v.op = call.op;
    v.params = call.params;
    if (call.form == ir::CallForm::Operator) {
      const bool scalar_left = call.args.size() == 2 && call.args[0]->type != ir::Type::Tensor &&
                               call.args[1]->type == ir::Type::Tensor;
      if (scalar_left && v.op == "sub") v.op = "rsub";
      if (scalar_left && v.op == "div") v.op = "rdiv";
      v.params = call.args.size() == 1 ? std::vector<std::string>{"self"}
                 : scalar_left         ? std::vector<std::string>{"other", "self"}
                                       : std::vector<std::string>{"self", "other"};
    }
    v.params.resize(call.args.size());
    v.rule = find_rule(v.op);
    return v;
  }

  // The names a formula of `call` can use: its parameters (given or defaulted) and `extra`.
  FormulaEnv env_of(const Expr& call, const OpView& v, std::vector<ExprPtr>& keep) {
    FormulaEnv env;
    for (size_t i = 0; i < call.args.size(); ++i)
      if (!v.params[i].empty()) env[v.params[i]] = call.args[i].get();
    if (v.rule != nullptr)
      for (const auto& [param, def] : v.rule->params)
        if (env.count(param) == 0 && !def.empty()) {
          keep.push_back(formula(def, {}, call));
          env[param] = keep.back().get();
        }
    return env;
  }

  // Whether the tensor argument `a` is a value that depends on the inputs being differentiated.
  bool active_arg(const Expr& a) const { return a.kind == ExprKind::VarRef && active_.count(a.var) != 0; }

  // Marks the values that depend on `wrt`; reports tensor ops on them that have no rule.
  void find_active(const std::vector<ir::StmtPtr>& body, const std::vector<int>& wrt_ids) {
    active_.insert(wrt_ids.begin(), wrt_ids.end());
    for (const auto& s : body) {
      if (s->kind != ir::StmtKind::Decl || s->var < 0 || fn_->var(s->var).type != ir::Type::Tensor) continue;
      const Expr& e = *s->expr;
      if (e.kind != ExprKind::Call) continue;
      bool any = false;
      for (const auto& a : e.args) {
        any |= active_arg(*a);
        if (a->kind == ExprKind::List)
          for (const auto& item : a->args) any |= active_arg(*item);
      }
      if (!any) continue;
      const OpView v = view(e);
      if (v.rule != nullptr && v.rule->constant) continue;
      if (v.rule == nullptr || (v.rule->vjp.empty() && v.rule->jvp.empty())) {
        fail(e.range.getBegin(), "'" + e.op + "' has no derivative rule; funcgen cannot differentiate through it "
                                 "(templates/derivatives.def lists the ops it can)");
        return;
      }
      active_.insert(s->var);
    }
  }

  std::unique_ptr<ir::Function> fn_;
  std::vector<int> outputs_;
  std::set<int> active_;
  const OpResolver& resolver_;
  Reporter& reporter_;
  std::set<std::string> names_;
  bool ok_ = true;
};

}  // namespace

ReverseResult reverse(const ir::Function& normalized, const std::vector<int>& wrt, size_t differentiated, bool seed,
                      const std::string& name, const OpResolver& resolver, Reporter& reporter) {
  Differentiator d(normalized, resolver, reporter);
  ReverseResult r;
  for (size_t i = 0; i + 1 < normalized.body.size(); ++i) d.fn_->body.push_back(ir::clone(*normalized.body[i]));
  std::vector<int> wrt_ids;
  for (int w : wrt) wrt_ids.push_back(normalized.params[static_cast<size_t>(w)]);
  d.find_active(d.fn_->body, wrt_ids);
  r.forward_size = d.fn_->body.size();
  r.outputs = d.outputs_;
  if (!d.ok()) return r;

  std::map<int, int> adjoint;  // value -> the variable holding its gradient so far
  std::vector<ir::StmtPtr> backward;
  const auto accumulate = [&](int value, ExprPtr contribution) {
    auto it = adjoint.find(value);
    const int id = d.tensor_var("d_" + d.fn_->var(value).name);
    if (it == adjoint.end()) {
      backward.push_back(ir::decl(id, std::move(contribution)));
    } else {
      FormulaEnv env{{"a", nullptr}, {"b", nullptr}};
      ExprPtr a = d.ref(it->second);
      env["a"] = a.get();
      env["b"] = contribution.get();
      backward.push_back(ir::decl(id, d.formula("a + b", env, *contribution)));
    }
    adjoint[value] = id;
  };

  for (size_t k = 0; k < differentiated && k < r.outputs.size(); ++k) {
    const int out = r.outputs[k];
    if (seed) {
      FormulaEnv env;
      ExprPtr o = d.ref(out);
      ExprPtr n = ir::opaque("\"" + name + "\"", ir::Type::Other);
      env["out"] = o.get();
      env["name"] = n.get();
      Expr at;
      at.op = "grad";
      const int id = d.tensor_var("d_" + d.fn_->var(out).name);
      backward.push_back(ir::decl(id, d.formula("fg::ad::grad_seed(out, name)", env, at)));
      adjoint[out] = id;
    } else {
      const int id = d.tensor_param("ct_" + d.fn_->var(out).name);
      r.cotangents.push_back(id);
      if (adjoint.count(out) == 0) adjoint[out] = id;
    }
  }

  for (size_t i = r.forward_size; i-- > 0;) {
    const ir::Stmt& s = *d.fn_->body[i];
    if (s.kind != ir::StmtKind::Decl || d.active_.count(s.var) == 0 || !s.expr || s.expr->kind != ExprKind::Call) continue;
    auto adj = adjoint.find(s.var);
    if (adj == adjoint.end()) continue;  // the outputs do not depend on this value
    const Expr& call = *s.expr;
    const auto v = Differentiator::view(call);
    std::vector<ExprPtr> keep;
    FormulaEnv env = d.env_of(call, v, keep);
    ExprPtr grad = d.ref(adj->second), result = d.ref(s.var);
    env["grad"] = grad.get();
    env["result"] = result.get();
    for (size_t a = 0; a < call.args.size(); ++a) {
      if (!d.active_arg(call.arg(a)) || v.rule->shape_only.count(v.params[a])) continue;
      auto f = v.rule->vjp.find(v.params[a]);
      if (f == v.rule->vjp.end()) {
        d.fail(call.range.getBegin(), "'" + call.op + "' has no reverse-mode rule for its argument '" + v.params[a] + "'");
        break;
      }
      ExprPtr c = d.formula(f->second, env, call);
      if (v.rule->broadcasts) {
        FormulaEnv e2{{"c", c.get()}, {"x", &call.arg(a)}};
        c = d.formula("fg::ad::sum_to(c, x.sizes())", e2, call);
      }
      accumulate(call.arg(a).var, std::move(c));
    }
    if (!d.ok()) return r;
  }
  for (int w : wrt_ids) {
    auto it = adjoint.find(w);
    if (it != adjoint.end()) {
      r.grads.push_back(it->second);
      continue;
    }
    // The outputs do not depend on this input: its gradient is zero.
    const int id = d.tensor_var("d_" + d.fn_->var(w).name);
    ExprPtr p = d.ref(w);
    Expr at;
    at.op = "zeros_like";
    backward.push_back(ir::decl(id, d.formula("fg::zeros_like(p)", {{"p", p.get()}}, at)));
    r.grads.push_back(id);
  }
  for (auto& s : backward) d.fn_->body.push_back(std::move(s));
  r.fn = std::move(d.fn_);
  return r;
}

ForwardResult forward(const ir::Function& normalized, const std::vector<int>& wrt, size_t differentiated,
                      const OpResolver& resolver, Reporter& reporter) {
  Differentiator d(normalized, resolver, reporter);
  ForwardResult r;
  r.outputs = d.outputs_;
  std::map<int, int> tangent;
  std::vector<int> wrt_ids;
  for (int w : wrt) {
    const int p = normalized.params[static_cast<size_t>(w)];
    wrt_ids.push_back(p);
    tangent[p] = d.tensor_param(d.fn_->var(p).name + "_tangent");
  }
  std::vector<ir::StmtPtr> body;
  for (size_t i = 0; i + 1 < normalized.body.size(); ++i) body.push_back(ir::clone(*normalized.body[i]));
  d.find_active(body, wrt_ids);
  if (!d.ok()) return r;
  for (auto& s : body) {
    const bool differentiate = s->kind == ir::StmtKind::Decl && d.active_.count(s->var) != 0 && s->expr &&
                               s->expr->kind == ExprKind::Call;
    const int var = s->var;
    const Expr* call_ptr = differentiate ? s->expr.get() : nullptr;
    d.fn_->body.push_back(std::move(s));
    if (call_ptr == nullptr) continue;
    const Expr& call = *call_ptr;
    const auto v = Differentiator::view(call);
    std::vector<ExprPtr> keep;
    FormulaEnv env = d.env_of(call, v, keep);
    ExprPtr result = d.ref(var);
    env["result"] = result.get();
    ExprPtr total;
    for (size_t a = 0; a < call.args.size(); ++a) {
      if (!d.active_arg(call.arg(a)) || v.rule->shape_only.count(v.params[a])) continue;
      auto f = v.rule->jvp.find(v.params[a]);
      if (f == v.rule->jvp.end()) {
        d.fail(call.range.getBegin(), "'" + call.op + "' has no forward-mode rule for its argument '" + v.params[a] + "'");
        return r;
      }
      auto t = tangent.find(call.arg(a).var);
      if (t == tangent.end()) continue;
      ExprPtr tan = d.ref(t->second);
      env["tangent"] = tan.get();
      ExprPtr c = d.formula(f->second, env, call);
      if (!total) {
        total = std::move(c);
      } else {
        FormulaEnv e2{{"a", total.get()}, {"b", c.get()}};
        total = d.formula("a + b", e2, call);
      }
    }
    if (!total) continue;
    if (v.rule->broadcasts) {
      FormulaEnv e2{{"t", total.get()}, {"r", result.get()}};
      total = d.formula("t.expand(r.sizes())", e2, call);
    }
    const int id = d.tensor_var(d.fn_->var(var).name + "_tangent");
    d.fn_->body.push_back(ir::decl(id, std::move(total)));
    tangent[var] = id;
    if (!d.ok()) return r;
  }
  for (size_t k = 0; k < differentiated && k < r.outputs.size(); ++k) {
    const int out = r.outputs[k];
    auto t = tangent.find(out);
    if (t != tangent.end()) {
      r.tangents.push_back(t->second);
      continue;
    }
    const int id = d.tensor_var(d.fn_->var(out).name + "_tangent");
    ExprPtr o = d.ref(out);
    Expr at;
    at.op = "zeros_like";
    d.fn_->body.push_back(ir::decl(id, d.formula("fg::zeros_like(o)", {{"o", o.get()}}, at)));
    r.tangents.push_back(id);
  }
  if (!d.ok()) return r;
  r.fn = std::move(d.fn_);
  return r;
}

}  // namespace funcgen::ad
