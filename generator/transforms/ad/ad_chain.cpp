#include "transforms/ad/ad_chain.h"

#include <algorithm>
#include <functional>
#include <set>

#include "ir/build.h"
#include "transforms/ad/anf.h"
#include "transforms/ad/differentiate.h"

namespace funcgen::ad {

using ir::Expr;
using ir::ExprPtr;
using ir::finish;
using spec::TransformKind;
using Link = SpecLink;

ExprPtr refs(const ir::Function& fn, const std::vector<int>& ids, bool as_tuple) {
  if (ids.size() == 1 && !as_tuple) return ir::var_ref(fn, ids[0]);
  std::vector<ExprPtr> items;
  for (int id : ids) items.push_back(ir::var_ref(fn, id));
  return ir::tuple(std::move(items));
}

void AdChain::unsupported(const Link& l, const std::string& message) {
  reporter_.report("unsupported", l.where->at(l.t->offset), message);
}

// Jacobians w.r.t. a list parameter (a std::vector<fg::Tensor> read at run-time indices): jacrev
// and the outermost jacfwd take them (one jacobian per element, a vector); hessian would
// differentiate the list's gradient again, and a jacfwd inside another transform would map the
// list of basis tangents in a vmap inside a transform, neither of which is generated yet.
bool AdChain::no_list_wrt(const Link& l, const ir::Function& n, TransformKind kind, bool nested) {
  const bool chunked = kind == TransformKind::Jacrev && l.t->chunk_size;  // rows of vectors are not chunked yet
  if ((kind == TransformKind::Jacrev && !chunked) || (kind == TransformKind::Jacfwd && !nested)) return true;
  for (int a : argnums(*l.t, n)) {
    if (a < 0 || static_cast<size_t>(a) >= n.params.size() || !list_wrt(n, a)) continue;
    const std::string name = n.var(n.params[static_cast<size_t>(a)]).name;
    if (chunked)
      unsupported(l, "jacrev with chunk_size w.r.t. the vector '" + name + "', which '" +
                         function_->getNameAsString() + "' reads at run-time indices, cannot be generated yet; "
                         "leave out chunk_size");
    else if (kind == TransformKind::Hessian)
      unsupported(l, "hessian w.r.t. the vector '" + name + "' cannot be generated yet: '" +
                         function_->getNameAsString() +
                         "' reads it at run-time indices, and the gradient of such a vector is not differentiated "
                         "again yet; take jacrev or jacfwd w.r.t. it, or keep its tensors in a struct or a std::array");
    else
      unsupported(l, "jacfwd w.r.t. the vector '" + name + "', which '" + function_->getNameAsString() +
                         "' reads at run-time indices, cannot be generated inside another transform yet; use jacrev "
                         "there, or keep the vector's tensors in a struct or a std::array");
    return false;
  }
  return true;
}

bool AdChain::list_wrt(const ir::Function& n, int a) {
  return n.var(n.params[static_cast<size_t>(a)]).type == ir::Type::TensorList;
}

ir::Type AdChain::output_type(const ir::Function& g, int k) {
  const auto outs = returned(g);
  return k >= 0 && static_cast<size_t>(k) < outs.size() ? outs[static_cast<size_t>(k)]->type : ir::Type::Tensor;
}

std::string AdChain::description(size_t i) const {
  std::string s;
  for (size_t k = i; k < links_.size(); ++k) {
    if (links_[k].t->kind == TransformKind::Function) {
      s += links_[k].t->function;
      break;
    }
    s += std::string(spec::name_of(links_[k].t->kind)) + "(";
  }
  for (size_t k = i; k + 1 < links_.size(); ++k) s += ")";
  return s;
}

// ---------------------------------------------------------------- IR transforms
std::unique_ptr<ir::Function> AdChain::normalized(size_t i, const char* what) {
  Ir inner = ir_of(i);
  if (inner.fn == nullptr) return nullptr;
  return normalize(*inner.fn, module_, reporter_, what, resolver_);
}

// The IR of links_[i] applied to what is inside it.
Ir AdChain::ir_of(size_t i) {
  Ir r;
  const Link& l = links_[i];
  switch (l.t->kind) {
    case TransformKind::Function:
      r.fn = module_.find(function_);
      return r;
    case TransformKind::Grad:
    case TransformKind::GradAndValue:
      r.owned = grad(i);
      break;
    case TransformKind::Jvp:
      r.owned = jvp(i);
      break;
    case TransformKind::Vmap:
      r.owned = vmap_ir(i);
      break;
    case TransformKind::Jacrev:
    case TransformKind::Jacfwd:
    case TransformKind::Hessian: {
      auto n = normalized(i + 1, spec::name_of(l.t->kind));
      if (!n || !no_list_wrt(l, *n, l.t->kind, true)) return r;
      if (l.t->kind == TransformKind::Jacrev) {
        r.owned = jacrev_ir(*n, l);
      } else if (l.t->kind == TransformKind::Jacfwd) {
        r.owned = jacfwd_ir(*n, l);
      } else if (auto jr = jacrev_ir(*n, l)) {
        r.owned = jacfwd_ir(*jr, l);
      }
      break;
    }
    default:
      unsupported(l, std::string("'") + spec::name_of(l.t->kind) + "' inside '" +
                         spec::name_of(links_[i - 1].t->kind) +
                         "' cannot be generated: it returns a function, not tensors; differentiate the function "
                         "itself (jacrev, jacfwd, grad and jvp nest in any order)");
      return r;
  }
  r.fn = r.owned.get();
  if (r.fn != nullptr && too_large(*r.fn, l)) {
    r.owned.reset();
    r.fn = nullptr;
  }
  return r;
}

// Each derivative transform multiplies the code it is given (nesting grows it geometrically:
// jvp 20 deep is millions of statements), so the size is bounded where it is made, with an
// error at the transform instead of a generator that runs for minutes and code that does not
// compile in reasonable time.
bool AdChain::too_large(const ir::Function& fn, const Link& l) {
  constexpr size_t kMaxStatements = 20000;  // the largest in the tests: 3080 (third order through loops)
  const size_t n = statements(fn);
  if (n <= kMaxStatements) return false;
  reporter_.report("spec", l.where->at(l.t->offset),
                   "'" + std::string(spec::name_of(l.t->kind)) + "' here makes about " + std::to_string(n) +
                       " statements of derivative code, more than the " + std::to_string(kMaxStatements) +
                       " funcgen generates for one spec; nest fewer transforms (each multiplies the code it is "
                       "given), or differentiate a smaller function");
  return true;
}

size_t AdChain::statements(const ir::Function& fn) {
  std::set<const ir::Function*> seen;
  std::function<size_t(const ir::Function&)> count = [&](const ir::Function& f) -> size_t {
    if (!seen.insert(&f).second) return 0;
    size_t n = 0;
    ir::for_each_stmt(f.body, [&](const ir::Stmt&) { ++n; });
    ir::for_each_expr(f.body, [&](const Expr& e) {
      if (e.vmapped) n += count(*e.vmapped);
    });
    return n;
  };
  return count(fn);
}

std::vector<int> AdChain::argnums(const spec::Transform& t, const ir::Function& fn) const {
  std::vector<int> out;
  for (int64_t a : t.argnums.argnums) out.push_back(static_cast<int>(a < 0 ? a + static_cast<int64_t>(fn.params.size()) : a));
  return out;
}

// The tensors and vectors of tensors (list parameters) among fn's parameters.
std::vector<int> AdChain::differentiable_params(const ir::Function& fn) const {
  std::vector<int> out;
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.var(fn.params[i]).type == ir::Type::Tensor || fn.var(fn.params[i]).type == ir::Type::TensorList)
      out.push_back(static_cast<int>(i));
  return out;
}

bool AdChain::enough_outputs(const Link& l, const std::vector<const Expr*>& outs) {
  if (!l.t->has_aux || outs.size() >= 2) return true;
  unsupported(l, "has_aux=True needs a function that returns std::tuple<fg::Tensor, aux...>");
  return false;
}

ExprPtr AdChain::aux_of(const ir::Function& fn, const std::vector<int>& outs) {
  std::vector<int> aux(outs.begin() + 1, outs.end());
  return refs(fn, aux, false);
}

std::unique_ptr<ir::Function> AdChain::grad(size_t i) {
  const Link& l = links_[i];
  auto n = normalized(i + 1, spec::name_of(l.t->kind));
  if (!n) return nullptr;
  if (!enough_outputs(l, returned(*n))) return nullptr;
  ReverseResult r = reverse(*n, argnums(*l.t, *n), 1, true, spec_.name, module_, resolver_, reporter_);
  if (!r.fn) return nullptr;
  ir::Function& f = *r.fn;
  ExprPtr grads = refs(f, r.grads, l.t->argnums.is_tuple);
  ExprPtr value = ir::var_ref(f, r.outputs[0]);
  ExprPtr result;
  if (l.t->kind == TransformKind::GradAndValue) {
    std::vector<ExprPtr> items;
    items.push_back(std::move(grads));
    if (l.t->has_aux) {
      std::vector<ExprPtr> va;
      va.push_back(std::move(value));
      va.push_back(aux_of(f, r.outputs));
      items.push_back(ir::tuple(std::move(va)));
    } else {
      items.push_back(std::move(value));
    }
    result = ir::tuple(std::move(items));
  } else if (l.t->has_aux) {
    std::vector<ExprPtr> items;
    items.push_back(std::move(grads));
    items.push_back(aux_of(f, r.outputs));
    result = ir::tuple(std::move(items));
  } else {
    result = std::move(grads);
  }
  finish(f, std::move(result));
  return std::move(r.fn);
}

std::unique_ptr<ir::Function> AdChain::jvp(size_t i) {
  const Link& l = links_[i];
  auto n = normalized(i + 1, "jvp");
  if (!n) return nullptr;
  const auto outs = returned(*n);
  if (!enough_outputs(l, outs)) return nullptr;
  const size_t differentiated = l.t->has_aux ? 1 : outs.size();
  ForwardResult r = forward(*n, differentiable_params(*n), differentiated, module_, resolver_, reporter_);
  if (!r.fn) return nullptr;
  ir::Function& f = *r.fn;
  std::vector<int> primal(r.outputs.begin(), r.outputs.begin() + static_cast<long>(differentiated));
  std::vector<ExprPtr> items;
  items.push_back(refs(f, primal, false));
  items.push_back(refs(f, r.tangents, false));
  if (l.t->has_aux) items.push_back(aux_of(f, r.outputs));
  finish(f, ir::tuple(std::move(items)));
  return std::move(r.fn);
}

// ------------------------------------------------ transforms that vmap, as IR (for nesting)
// A new local of `fn` named `base` (made unique).
int AdChain::local(ir::Function& fn, const std::string& base, ir::Type type,
                 const std::string& cxx_type) {
  std::set<std::string> names = ir::text_names(fn);  // and the globals its text reads
  for (const auto& v : fn.vars) names.insert(v.name);
  std::string name = base;
  for (int i = 1; names.count(name) != 0; ++i) name = base + std::to_string(i);
  return ir::add_var(fn, name, type, cxx_type);
}

// `name = formula` in fn, the formula's names bound to fn's values.
int AdChain::define(ir::Function& fn, const std::string& name, const std::string& formula,
           const std::map<std::string, int>& values) {
  std::vector<ExprPtr> keep;
  FormulaEnv env;
  for (const auto& [k, id] : values) {
    keep.push_back(ir::var_ref(fn, id));
    env[k] = keep.back().get();
  }
  FormulaResult r = instantiate(formula, env, resolver_);
  if (!r.expr) {
    reporter_.report("unsupported", spec_.spec_locations.at(spec_.transform->offset),
                     "internal error: '" + formula + "' does not resolve: " + r.error);
    return -1;
  }
  const bool list = r.expr->type == ir::Type::TensorList;
  const int id = list ? local(fn, name, ir::Type::TensorList, "std::vector<fg::Tensor>") : local(fn, name);
  fn.body.push_back(ir::decl(id, std::move(r.expr)));
  return id;
}

ir::Randomness AdChain::randomness_of(const spec::Transform& t) {
  switch (t.randomness) {
    case spec::Randomness::Different: return ir::Randomness::Different;
    case spec::Randomness::Same: return ir::Randomness::Same;
    default: return ir::Randomness::Error;
  }
}

// vmap(g, in_dims, out_dim)(fn's parameters, extra), output `output`, as `name`.
int AdChain::define_vmapped(ir::Function& fn, const std::string& name, std::shared_ptr<const ir::Function> g,
                   const std::vector<int>& extra, int64_t out_dim, int output, const std::string& label,
                   std::optional<int64_t> chunk_size,
                   ir::Randomness randomness) {
  std::vector<ExprPtr> args;
  std::vector<std::optional<int64_t>> in_dims;
  for (int p : fn.params) {
    args.push_back(ir::var_ref(fn, p));
    in_dims.push_back(std::nullopt);
  }
  for (int e : extra) {
    args.push_back(ir::var_ref(fn, e));
    in_dims.push_back(0);
  }
  const bool list = output_type(*g, output) == ir::Type::TensorList;
  const int id = list ? local(fn, name, ir::Type::TensorList, "std::vector<fg::Tensor>") : local(fn, name);
  ExprPtr call = ir::vmapped_call(std::move(g), std::move(args), in_dims, out_dim, output, label);
  call->type = fn.var(id).type;
  call->chunk_size = chunk_size;
  call->randomness = randomness;
  fn.body.push_back(ir::decl(id, std::move(call)));
  return id;
}

std::optional<AdChain::JacobianFrame> AdChain::jacobian_frame(const ir::Function& fn, const Link& l) {
  JacobianFrame f;
  f.n = normalize(fn, module_, reporter_, spec::name_of(l.t->kind), resolver_);
  if (!f.n) return std::nullopt;
  f.outs = returned(*f.n);
  if (!enough_outputs(l, f.outs)) return std::nullopt;
  f.differentiated = l.t->has_aux ? 1 : f.outs.size();
  f.wrt = argnums(*l.t, *f.n);
  f.j = ir::copy_function(*f.n);
  f.j->body.pop_back();
  return f;
}

// The result of a jacobian: per differentiated output, one jacobian per argnum (a tuple when the
// argnums are a tuple), a tuple over several outputs, and the aux values after it (has_aux).
ExprPtr AdChain::jacobian_result(const JacobianFrame& frame, const Link& l, const std::vector<std::vector<int>>& jacs) {
  ir::Function& fn = *frame.j;
  std::vector<int> aux;
  for (size_t k = frame.differentiated; k < frame.outs.size(); ++k) aux.push_back(frame.outs[k]->var);
  std::vector<ExprPtr> per_output;
  for (const auto& j : jacs) per_output.push_back(refs(fn, j, l.t->argnums.is_tuple));
  ExprPtr result = per_output.size() == 1 ? std::move(per_output[0]) : ir::tuple(std::move(per_output));
  if (!l.t->has_aux) return result;
  std::vector<ExprPtr> items;
  items.push_back(std::move(result));
  items.push_back(refs(fn, aux, false));
  return ir::tuple(std::move(items));
}

// jacrev(fn) as IR: fn's outputs, then for each one the vjp of fn vmapped over the standard basis
// of its cotangents (rows [n, in...]), unflattened to [out..., in...].
std::unique_ptr<ir::Function> AdChain::jacrev_ir(const ir::Function& fn, const Link& l) {
  auto frame = jacobian_frame(fn, l);
  if (!frame) return nullptr;
  auto& [n, j, outs, differentiated, wrt] = *frame;  // j keeps the outputs: the basis needs their shapes
  // The rows rerun fn's forward pass: a random fn draws there what j's outputs (and aux) drew.
  int rng = -1;
  if (draws_random(*n)) {
    rng = local(*j, "rng", ir::Type::Other, ir::kRngStateType);
    j->body.insert(j->body.begin(), ir::decl(rng, ir::rng_state()));
  }
  std::vector<std::vector<int>> jacs;
  for (size_t o = 0; o < differentiated; ++o) {
    std::shared_ptr<const ir::Function> g =
        vjp_function(*n, wrt, o, module_, resolver_, reporter_, "jacrev");
    if (!g) return nullptr;
    const int out = outs[o]->var;
    const int basis = define(*j, "basis", "fg::ad::basis(o, o.sizes())", {{"o", out}});
    if (basis < 0) return nullptr;
    std::vector<int> per_arg;
    for (size_t k = 0; k < wrt.size(); ++k) {
      if (rng >= 0) j->body.push_back(ir::eval(ir::rng_replay(*j, rng)));
      const int rows =
          define_vmapped(*j, "rows", g, {basis}, 0, static_cast<int>(k), "jacrev_rows", l.t->chunk_size);
      const int jac = define(*j, "jac", list_wrt(*n, wrt[k]) ? "fg::ad::unflatten_each(r, 0, o.sizes())"
                                                              : "fg::ad::unflatten(r, 0, o.sizes())",
                             {{"r", rows}, {"o", out}});
      if (jac < 0) return nullptr;
      per_arg.push_back(jac);
    }
    jacs.push_back(per_arg);
  }
  finish(*j, jacobian_result(*frame, l, jacs));
  return std::move(j);
}

// jacfwd(fn) as IR: for each argnum, the jvp of fn vmapped over the standard basis of its
// tangents (columns [out..., n] of every output), unflattened to [out..., in...].
std::unique_ptr<ir::Function> AdChain::jacfwd_ir(const ir::Function& fn, const Link& l) {
  auto frame = jacobian_frame(fn, l);
  if (!frame) return nullptr;
  auto& [n, j, outs, differentiated, wrt] = *frame;
  if (!l.t->has_aux) j->body.clear();  // the jvps compute the outputs they need
  std::vector<std::vector<int>> jacs(differentiated);
  for (int a : wrt) {
    std::shared_ptr<const ir::Function> g =
        jvp_function(*n, {a}, module_, resolver_, reporter_, spec::name_of(l.t->kind));
    if (!g) return nullptr;
    const int x = n->params[static_cast<size_t>(a)];
    const int basis = define(*j, "basis", "fg::ad::basis(x, x.sizes())", {{"x", x}});  // (never a list: no_list_wrt)
    if (basis < 0) return nullptr;
    for (size_t o = 0; o < differentiated; ++o) {
      // (randomness: each column draws its own values or they share one draw, as torch.func's)
      const int cols = define_vmapped(*j, "cols", g, {basis}, -1, static_cast<int>(o), "jacfwd_cols", std::nullopt,
                                      randomness_of(*l.t));
      const int jac = define(*j, "jac", "fg::ad::unflatten(c, -1, x.sizes())", {{"c", cols}, {"x", x}});
      if (jac < 0) return nullptr;
      jacs[o].push_back(jac);
    }
  }
  finish(*j, jacobian_result(*frame, l, jacs));
  return std::move(j);
}

// vmap(inner) as IR: each output of the inner function, vmapped.
std::unique_ptr<ir::Function> AdChain::vmap_ir(size_t i) {
  const Link& l = links_[i];
  Ir inner = ir_of(i + 1);
  if (inner.fn == nullptr) return nullptr;
  std::shared_ptr<const ir::Function> g =
      inner.owned ? std::shared_ptr<const ir::Function>(std::move(inner.owned)) : ir::copy_function(*inner.fn);
  const VmapLevel level = make_level(*l.t, l.where, *g);
  if (std::none_of(level.in_dims.begin(), level.in_dims.end(), [](const spec::Dim& d) { return d.has_value(); })) {
    reporter_.report("spec", l.where->at(l.t->offset), "vmap needs at least one tensor argument with an in_dim that is not None");
    return nullptr;
  }
  auto w = ir::derived_function(*g);
  for (int id : g->params) {
    const ir::Var& v = g->var(id);
    const int p = ir::add_var(*w, v.name, v.type, v.cxx_type);
    w->vars[static_cast<size_t>(p)].param_index = static_cast<int>(w->params.size());
    w->vars[static_cast<size_t>(p)].decl = v.decl;
    w->params.push_back(p);
  }
  std::vector<int> outs;
  for (size_t o = 0; o < g->outputs; ++o) {
    std::vector<ExprPtr> args;
    for (int p : w->params) args.push_back(ir::var_ref(*w, p));
    const int id = local(*w, "batched");
    ExprPtr call = ir::vmapped_call(g, std::move(args), level.in_dims, level.out_dims[o], static_cast<int>(o), "vmapped");
    call->randomness = randomness_of(*l.t);
    call->range = out_dims_location(level, o);  // where an out_dims=None that cannot hold is reported
    w->body.push_back(ir::decl(id, std::move(call)));
    outs.push_back(id);
  }
  finish(*w, refs(*w, outs, false));
  return w;
}

}  // namespace funcgen::ad
