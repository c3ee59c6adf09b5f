#include "transforms/ad/ad_transforms.h"

#include "transforms/ad/ad_chain.h"

#include <algorithm>
#include <map>
#include <set>

#include "analyses/batching.h"
#include "emitter/printer.h"
#include "ir/cxx_text.h"
#include "ir/build.h"
#include "transforms/ad/anf.h"
#include "transforms/ad/differentiate.h"
#include "transforms/ad/structured_basis.h"

namespace funcgen::ad {

namespace {

using cxx::join;
using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;
using spec::TransformKind;

using ir::finish;

// self.op(args...) of a runtime op (args[0] is self), as the wrappers call it.
ExprPtr method_call(const std::string& op, std::vector<ExprPtr> args, ir::Type type) {
  auto x = std::make_unique<Expr>();
  x->kind = ExprKind::Call;
  x->form = ir::CallForm::Method;
  x->op = op;
  x->type = type;
  for (const auto& a : args) {
    x->params.push_back(x->params.empty() ? "self" : "");
    x->param_types.push_back(a->type);
  }
  x->args = std::move(args);
  return x;
}

// A function split in two at a statement boundary: the first part returns `first_returns` and
// every value the second part reads from it; the second takes those values, then `second_params`.
struct Split {
  std::unique_ptr<ir::Function> first, second;
  std::vector<int> residuals;  // the values passed from the first part to the second
};

// The predicate of split() that puts fn's statements from `first` on in the second part.
std::function<bool(const ir::Stmt&)> from_statement(const ir::Function& fn, size_t first) {
  std::set<const ir::Stmt*> second;
  for (size_t k = first; k < fn.body.size(); ++k) second.insert(fn.body[k].get());
  return [second](const ir::Stmt& st) { return second.count(&st) != 0; };
}

Split split(const ir::Function& fn, const std::function<bool(const ir::Stmt&)>& in_second,
            const std::vector<int>& second_params, const std::vector<int>& first_returns, ExprPtr second_return) {
  Split s;
  const auto copy = [&] {
    auto f = ir::derived_function(fn);
    f->vars = fn.vars;
    for (auto& v : f->vars) v.param_index = -1;
    return f;
  };
  s.first = copy();
  s.second = copy();
  std::vector<ir::StmtPtr> second_body;
  std::set<int> first_defined(fn.params.begin(), fn.params.end());
  for (const auto& st : fn.body) {
    if (in_second(*st)) {
      second_body.push_back(ir::clone(*st));
    } else {
      s.first->body.push_back(ir::clone(*st));
      if (st->var >= 0) first_defined.insert(st->var);
    }
  }
  const std::set<int> own(second_params.begin(), second_params.end());
  std::vector<ir::StmtPtr> probe;
  probe.push_back(ir::ret(ir::clone(*second_return)));
  std::vector<int> reads = ir::reads_of(second_body);
  for (int r : ir::reads_of(probe)) reads.push_back(r);
  std::set<int> seen;
  for (int r : reads)
    if (first_defined.count(r) && !own.count(r) && seen.insert(r).second) s.residuals.push_back(r);
  // first: the original parameters; returns first_returns then the residuals.
  for (size_t i = 0; i < fn.params.size(); ++i) {
    if (own.count(fn.params[i])) continue;
    s.first->params.push_back(fn.params[i]);
    s.first->vars[static_cast<size_t>(fn.params[i])].param_index = static_cast<int>(s.first->params.size() - 1);
  }
  std::vector<int> returns = first_returns;
  returns.insert(returns.end(), s.residuals.begin(), s.residuals.end());
  std::vector<ExprPtr> items;
  for (int id : returns) items.push_back(ir::var_ref(*s.first, id));
  ExprPtr tuple = ir::tuple(std::move(items));
  std::vector<std::string> types;
  for (int id : returns) types.push_back(ir::value_type(fn.var(id)));
  s.first->return_type = ir::Type::TensorTuple;
  s.first->return_cxx_type = cxx::tuple_type(types);
  s.first->outputs = returns.size();
  s.first->body.push_back(ir::ret(std::move(tuple)));
  // second: the residuals, then its own parameters.
  std::vector<int> params = s.residuals;
  params.insert(params.end(), second_params.begin(), second_params.end());
  for (int id : params) {
    ir::Var& v = s.second->vars[static_cast<size_t>(id)];
    v.param_index = static_cast<int>(s.second->params.size());
    if (v.type == ir::Type::Tensor) v.cxx_type = "const fg::Tensor&";
    s.second->params.push_back(id);
  }
  s.second->body = std::move(second_body);
  finish(*s.second, std::move(second_return));
  return s;
}

class AdEmitter : AdChain {
 public:
  using AdChain::AdChain;

  std::optional<GeneratedFunction> run() {
    size_t head = 0;
    while (head < links_.size() && links_[head].t->kind == TransformKind::Vmap) ++head;
    if (head >= links_.size() || links_[head].t->kind == TransformKind::Function) return std::nullopt;
    const Link& h = links_[head];
    const std::vector<Link> outer(links_.begin(), links_.begin() + static_cast<long>(head));
    switch (h.t->kind) {
      case TransformKind::Grad:
      case TransformKind::GradAndValue:
      case TransformKind::Jvp: {
        Ir g = ir_of(head);
        if (g.fn == nullptr) return std::nullopt;
        if (outer.empty()) return plain(*g.fn, spec_.name, description(head), false, head);
        return vmapped(*g.fn, spec_.name, outer_levels(outer, *g.fn), false, head);
      }
      case TransformKind::Vjp:
      case TransformKind::Linearize:
        if (!outer.empty()) {
          unsupported(outer.back(), std::string("vmap of '") + spec::name_of(h.t->kind) +
                                        "', which returns a function, cannot be generated; vmap the function it returns "
                                        "through its own spec");
          return std::nullopt;
        }
        return h.t->kind == TransformKind::Vjp ? vjp(head) : linearize(head);
      case TransformKind::Jacrev:
        return jacrev(head, outer);
      case TransformKind::Jacfwd:
      case TransformKind::Hessian:
        return jacfwd(head, outer, h.t->kind == TransformKind::Hessian);
      default:
        break;
    }
    unsupported(h, "this transform cannot be generated here");
    return std::nullopt;
  }

 private:
  // ---------------------------------------------------------------- emission

  // `g`, made by links_[link], printed as it is (no vmap applies to it).
  GeneratedFunction plain(const ir::Function& g, const std::string& name, const std::string& what, bool is_static,
                          size_t link) {
    GeneratedFunction out;
    const std::string body = stages_.plain(g, name, link, out.helpers);
    const std::string signature = ir::signature(g, name);
    out.declaration = ir::declaration(g, name) + ";";
    out.definition = "// " + what + ": generated derivative code (rules: templates/derivatives.def).\n" +
                     (is_static ? "static " : "") + signature + " {\n" + body + "}\n";
    return out;
  }

  std::vector<VmapLevel> outer_levels(const std::vector<Link>& outer, const ir::Function& g) {
    std::vector<VmapLevel> levels;
    for (const Link& l : outer) levels.push_back(make_level(*l.t, l.where, g));
    return levels;
  }

  // `g`, made by links_[link], vmapped at `levels` (by the pipeline's vmap stage).
  std::optional<GeneratedFunction> vmapped(const ir::Function& g, const std::string& name,
                                           const std::vector<VmapLevel>& levels, bool is_static, size_t link) {
    std::optional<GeneratedFunction> out = stages_.vmap(g, name, levels, link);
    if (out && is_static) out->definition = "static " + out->definition;
    return out;
  }

  // What makes the basis a wrapper passes: the basis itself, or, where the function it is mapped
  // over reads only its shape (structured_basis.h), a placeholder of that shape.
  static std::string basis_factory(bool structured) {
    return structured ? "fg::ad::basis_placeholder" : "fg::ad::basis";
  }

  // A level over the standard basis: parameter `mapped` at dim 0, every output at out_dim.
  VmapLevel basis_level(const Link& l, const ir::Function& g, int mapped, int64_t out_dim) {
    VmapLevel level;
    level.transform = l.t;
    level.where = l.where;
    level.in_dims.assign(g.params.size(), std::nullopt);
    level.in_dims[static_cast<size_t>(mapped)] = 0;
    level.out_dims.assign(g.outputs, spec::Dim(out_dim));
    if (l.t->kind == TransformKind::Jacrev) level.chunk_size = l.t->chunk_size;
    if (l.t->kind == TransformKind::Jacfwd) level.randomness = l.t->randomness;
    return level;
  }

  static void append(GeneratedFunction& to, const GeneratedFunction& part) {
    to.helpers += part.helpers + part.definition + "\n";
  }

  // vjp: the forward pass returns its outputs and what the backward pass reads; the pullback holds those.
  std::optional<GeneratedFunction> vjp(size_t i) {
    const Link& l = links_[i];
    auto n = normalized(i + 1, "vjp");
    if (!n) return std::nullopt;
    const auto outs = returned(*n);
    if (!enough_outputs(l, outs)) return std::nullopt;
    const size_t differentiated = l.t->has_aux ? 1 : outs.size();
    const std::vector<int> wrt = differentiable_params(*n);
    ReverseResult r = reverse(*n, wrt, differentiated, false, spec_.name, module_, resolver_, reporter_);
    if (!r.fn) return std::nullopt;
    Split s = split(*r.fn, from_statement(*r.fn, r.forward_size), r.cotangents, r.outputs, refs(*r.fn, r.grads, true));
    return callable(s, i, r.outputs.size(), differentiated, "pullback", "__forward", "__backward",
                    "its pullback: the gradient of each primal for cotangents of the outputs");
  }

  // linearize: the forward pass runs once; the returned function computes tangents from what it kept.
  std::optional<GeneratedFunction> linearize(size_t i) {
    auto n = normalized(i + 1, "linearize");
    if (!n) return std::nullopt;
    const auto outs = returned(*n);
    ForwardResult r = forward(*n, differentiable_params(*n), outs.size(), module_, resolver_, reporter_);
    if (!r.fn) return std::nullopt;
    const size_t nvars = n->vars.size();
    bool tangents_in_control_flow = false;
    for (const auto& st : r.fn->body)
      ir::for_each_stmt(st->body, [&](const ir::Stmt& t) { tangents_in_control_flow |= t.var >= static_cast<int>(nvars); });
    if (tangents_in_control_flow) {
      // The tangents are computed inside the branches and loops beside the values they need, so
      // the jvp_fn keeps the primals and replays the forward pass with them (rematerialization).
      Split s;
      s.first = ir::copy_function(*n);
      s.first->body.pop_back();
      s.residuals = n->params;
      std::vector<int> returns = r.outputs;
      returns.insert(returns.end(), n->params.begin(), n->params.end());
      finish(*s.first, refs(*s.first, returns, true));
      s.second = std::move(r.fn);
      for (int p : n->params) {
        ir::Var& v = s.second->vars[static_cast<size_t>(p)];
        if (v.type == ir::Type::Tensor) v.cxx_type = "const fg::Tensor&";
      }
      finish(*s.second, refs(*s.second, r.tangents, false));
      return callable(s, i, r.outputs.size(), r.outputs.size(), "jvp_fn", "__primal", "__tangent",
                      "its jvp_fn: the output tangent for tangents of the primals (it replays the forward pass, "
                      "whose control flow the tangents follow)");
    }
    const std::vector<int> tangent_params(r.fn->params.begin() + static_cast<long>(n->params.size()), r.fn->params.end());
    Split s = split(
        *r.fn,
        [&](const ir::Stmt& st) {  // tangents, and the checks of tangent lists (which read them)
          const auto tangent = [&](int v) { return v >= static_cast<int>(nvars); };
          return tangent(st.var) || (st.kind == ir::StmtKind::Eval && st.expr &&
                                     std::any_of(st.expr->reads.begin(), st.expr->reads.end(), tangent));
        },
        tangent_params, r.outputs,
        refs(*r.fn, r.tangents, false));
    return callable(s, i, r.outputs.size(), r.outputs.size(), "jvp_fn", "__primal", "__tangent",
                    "its jvp_fn: the output tangent for tangents of the primals");
  }

  // The function of vjp and linearize: returns the outputs, an object holding the residuals whose
  // call runs the second part, and (has_aux) the aux values.
  GeneratedFunction callable(const Split& s, size_t link, size_t noutputs, size_t differentiated, const std::string& kind,
                             const std::string& first_suffix, const std::string& second_suffix, const std::string& what) {
    GeneratedFunction out;
    const std::string type = spec_.name + "_" + kind;
    const std::string first = spec_.name + first_suffix, second = spec_.name + second_suffix;
    const GeneratedFunction f = plain(*s.first, first, "the forward pass of " + spec_.name, true, link);
    const GeneratedFunction b = plain(*s.second, second, "the " + kind + " of " + spec_.name, true, link);
    append(out, f);
    append(out, b);
    const ir::Record object = callable_object(s, type, kind, second);
    // The outputs: one tensor or a tuple, then the object, then aux.
    std::vector<std::string> out_types(differentiated, "fg::Tensor");
    const std::string out_type = differentiated == 1 ? "fg::Tensor" : cxx::tuple_type(out_types);
    std::vector<std::string> result_types = {out_type, type};
    if (noutputs > differentiated) {
      std::vector<std::string> aux(noutputs - differentiated, "fg::Tensor");
      result_types.push_back(aux.size() == 1 ? "fg::Tensor" : "std::tuple<" + join(aux) + ">");
    }
    auto w = ir::derived_function(*s.first);
    w->name = spec_.name;
    w->vars = s.first->vars;
    w->params = s.first->params;
    w->return_cxx_type = "std::tuple<" + join(result_types) + ">";
    // The wrapper's locals end in "__", as every generated name (vmap.cpp's batch_name): the
    // parameters keep the user's names, which these must not hide.
    std::vector<ExprPtr> args;
    for (int id : s.first->params) args.push_back(ir::var_ref(*w, id));
    const int forward = ir::add_var(*w, "forward__", ir::Type::TensorTuple, "auto");
    w->body.push_back(ir::decl(forward, ir::external_call(first, std::move(args), ir::Type::TensorTuple)));
    const auto get = [&](size_t k) {
      std::vector<ExprPtr> moved;
      moved.push_back(ir::get(ir::var_ref(*w, forward), static_cast<int>(k)));
      return ir::external_call("std::move", std::move(moved), ir::Type::Tensor);
    };
    std::vector<ExprPtr> outs, held, items;
    for (size_t k = 0; k < differentiated; ++k) outs.push_back(get(k));
    for (size_t k = 0; k < s.residuals.size(); ++k) held.push_back(get(noutputs + k));
    items.push_back(differentiated == 1 ? std::move(outs[0]) : ir::tuple(std::move(outs)));
    items.push_back(braced(std::move(held), type));
    if (noutputs > differentiated) {
      std::vector<ExprPtr> aux;
      for (size_t k = differentiated; k < noutputs; ++k) aux.push_back(get(k));
      items.push_back(aux.size() == 1 ? std::move(aux[0])
                                      : ir::external_call("std::make_tuple", std::move(aux), ir::Type::TensorTuple));
    }
    w->body.push_back(ir::ret(braced(std::move(items), "")));
    out.declaration = emitter::print_record(object) + ir::signature(*w, spec_.name) + ";";
    out.definition = emitter::print_record_call(object) + "\n" +
                     emitter::print_function({std::move(w), description(0) + ": the outputs and " + what + ".", false});
    return out;
  }

  // The object vjp and linearize return: the residuals of the first part are its members, and its
  // call runs the second part with them and its own parameters.
  ir::Record callable_object(const Split& s, const std::string& type, const std::string& kind,
                             const std::string& second) const {
    ir::Record r;
    r.name = type;
    r.comment = "The " + kind + " that " + spec_.name + " returns.";
    r.call = std::make_unique<ir::Function>();
    r.call->name = type + "::operator()";
    r.call->return_cxx_type = s.second->return_cxx_type;
    std::vector<ExprPtr> args;
    for (int id : s.residuals) {
      const ir::Var& v = s.first->var(id);
      r.members.push_back(ir::add_var(*r.call, v.name, v.type, ir::value_type(v)));
      args.push_back(ir::var_ref(*r.call, r.members.back()));
    }
    for (size_t k = s.residuals.size(); k < s.second->params.size(); ++k) {
      const ir::Var& v = s.second->var(s.second->params[k]);
      r.call->params.push_back(ir::add_var(*r.call, v.name, v.type, "const " + ir::value_type(v) + "&"));
      args.push_back(ir::var_ref(*r.call, r.call->params.back()));
    }
    r.call->body.push_back(ir::ret(ir::external_call(second, std::move(args), ir::Type::TensorTuple)));
    return r;
  }

  // `type{items...}`, or `{items...}` (`type` empty).
  static ExprPtr braced(std::vector<ExprPtr> items, const std::string& type) {
    auto x = std::make_unique<Expr>();
    x->kind = ExprKind::List;
    x->type = ir::Type::Other;
    x->text = type;
    x->args = std::move(items);
    return x;
  }

  // jacrev: the forward pass once (under the outer vmaps), then the pullback vmapped over the
  // standard basis of the output's cotangents; each row of the result is one output element's gradient.
  std::optional<GeneratedFunction> jacrev(size_t i, const std::vector<Link>& outer) {
    const Link& l = links_[i];
    auto n = normalized(i + 1, "jacrev");
    if (!n || !no_list_wrt(l, *n, TransformKind::Jacrev, false)) return std::nullopt;
    const auto outs = returned(*n);
    if (!enough_outputs(l, outs)) return std::nullopt;
    const auto composed = [&]() -> std::optional<GeneratedFunction> {
      // Each output's vjp over its own basis, inside one function that the outer vmaps batch whole.
      auto j = jacrev_ir(*n, l);
      if (!j) return std::nullopt;
      if (outer.empty()) return plain(*j, spec_.name, description(0), false, i);
      return vmapped(*j, spec_.name, outer_levels(outer, *j), false, i);
    };
    if (!l.t->has_aux && outs.size() != 1) return composed();  // one jacobian per output
    const std::vector<int> wrt = argnums(*l.t, *n);
    ReverseResult r = reverse(*n, wrt, 1, false, spec_.name, module_, resolver_, reporter_);
    if (!r.fn) return std::nullopt;
    Split s = split(*r.fn, from_statement(*r.fn, r.forward_size), r.cotangents, r.outputs, refs(*r.fn, r.grads, true));
    // Under vmap, the split passes only tensors from the batched forward pass to the pullback; a
    // derivative that needs C++ values computed in the function (a trip count, a shape, a branch
    // taken, a loop's stored trips) is the composed form, batched whole.
    if (!outer.empty())
      for (int id : s.residuals)
        if (s.first->var(id).type != ir::Type::Tensor) return composed();
    GeneratedFunction out;
    const size_t k = outer.size();
    const std::string first = spec_.name + "__forward", rows = spec_.name + "__pullback_rows";
    std::vector<Levels> held;  // the levels at which each residual is batched
    if (!jacrev_forward(out, s, l, outer, first, i, held)) return std::nullopt;
    bool structured = false;
    auto b = pullback_rows(s, l, outer, rows, i, held, structured);
    if (!b) return std::nullopt;
    append(out, *b);
    jacrev_wrapper(out, *n, s, r.outputs.size(), wrt, l, k, first, rows, structured);
    return out;
  }

  // The forward pass of jacrev, batched as the outer vmaps say: the outputs with their batch dims
  // in front, the residuals at the levels where they are batched (`held`); a residual that a
  // level does not batch (a weight) stays unbatched there instead of being copied per example.
  bool jacrev_forward(GeneratedFunction& out, const Split& s, const Link& l, const std::vector<Link>& outer,
                      const std::string& first, size_t i, std::vector<Levels>& held) {
    held.assign(s.residuals.size(), 0);
    if (outer.empty()) {
      append(out, plain(*s.first, first, "the forward pass of " + spec_.name, true, i));
      return true;
    }
    std::vector<VmapLevel> levels = outer_levels(outer, *s.first);
    held = residual_levels(s, levels);
    const size_t noutputs = s.first->outputs - s.residuals.size();
    for (size_t k = 0; k < levels.size(); ++k) {
      levels[k].out_dims.assign(s.first->outputs, spec::Dim(0));
      for (size_t p = 0; p < held.size(); ++p)
        if (!(held[p] & (1u << k))) levels[k].out_dims[noutputs + p] = std::nullopt;
    }
    auto f = vmapped(*s.first, first, levels, true, i);  // its limitation checks first
    if (!f) return false;
    append(out, *f);
    for (int id : s.residuals) {
      const ir::Var& v = s.first->var(id);
      if (v.type == ir::Type::Tensor) continue;
      unsupported(l, "under vmap, jacrev of a function whose derivative needs the C++ value " +
                         (v.decl != nullptr ? "'" + v.decl->getNameAsString() + "'" : std::string("of a condition")) +
                         " computed in it cannot be generated yet; compute it outside the function and pass it in");
      return false;
    }
    return true;
  }

  // The levels at which the forward pass batches each residual (all of them for a residual that is
  // not a tensor, or where the analysis cannot tell).
  std::vector<Levels> residual_levels(const Split& s, const std::vector<VmapLevel>& levels) {
    const Levels all = (1u << levels.size()) - 1;
    std::vector<Levels> held(s.residuals.size(), all);
    std::vector<Levels> params(s.first->params.size(), 0);
    const VmapLevels masks = vmap_masks(levels, params);
    const BatchingAnalysis analysis(*s.first, params, masks, module_);
    const size_t noutputs = s.first->outputs - s.residuals.size();
    if (analysis.recursive() || analysis.outputs().size() != s.first->outputs) return held;
    for (size_t p = 0; p < held.size(); ++p)
      if (s.first->var(s.residuals[p]).type == ir::Type::Tensor) held[p] = analysis.outputs()[noutputs + p] & all;
    // A level must map some argument of the pullback (its batch size comes from one): where it
    // batches no residual (a linear map's only residual is its weight), all keep their batch dims.
    for (size_t k = 0; k < levels.size(); ++k) {
      const Levels bit = 1u << k;
      if (std::none_of(held.begin(), held.end(), [&](Levels h) { return (h & bit) != 0; }))
        for (Levels& h : held) h |= bit;
    }
    return held;
  }

  // The pullback over the basis: the residuals at the levels where the forward pass batches them
  // (`held`); `structured`: whether the basis is only read for its shape (structured_basis.h).
  std::optional<GeneratedFunction> pullback_rows(const Split& s, const Link& l, const std::vector<Link>& outer,
                                                 const std::string& rows, size_t i, const std::vector<Levels>& held,
                                                 bool& structured) {
    std::vector<VmapLevel> levels;
    for (size_t k = 0; k < outer.size(); ++k) {
      VmapLevel lv = make_level(*outer[k].t, outer[k].where, *s.second);
      for (size_t p = 0; p < s.second->params.size(); ++p)
        lv.in_dims[p] = p < s.residuals.size() && s.second->var(s.second->params[p]).type == ir::Type::Tensor &&
                                (held[p] & (1u << k))
                            ? spec::Dim(0)
                            : std::nullopt;
      lv.out_dims.assign(s.second->outputs, spec::Dim(0));
      levels.push_back(lv);
    }
    const int ct = static_cast<int>(s.second->params.size() - 1);
    // A chunked basis is rows of the identity, which the rewrite does not describe.
    std::unique_ptr<ir::Function> g = ir::copy_function(*s.second);
    structured = stages_.optimize && !l.t->chunk_size && structure_basis(*g, ct, resolver_);
    levels.push_back(basis_level(l, *g, ct, 0));
    return vmapped(*g, rows, levels, true, i);
  }

  // jacrev's function: the forward pass once, then the pullback of every output element at once;
  // `noutputs`: the forward pass's outputs (the differentiated one, then aux).
  void jacrev_wrapper(GeneratedFunction& out, const ir::Function& n, const Split& s, size_t noutputs,
                      const std::vector<int>& wrt, const Link& l, size_t k, const std::string& first,
                      const std::string& rows, bool structured) {
    const size_t naux = noutputs - 1;
    std::vector<std::string> jac_types;
    for (int a : wrt) jac_types.push_back(list_wrt(n, a) ? "std::vector<fg::Tensor>" : "fg::Tensor");
    std::string jac_type = l.t->argnums.is_tuple ? cxx::tuple_type(jac_types) : jac_types[0];
    std::vector<std::string> aux_types(naux, "fg::Tensor");
    const std::string aux_type = naux == 1 ? "fg::Tensor" : "std::tuple<" + join(aux_types) + ">";
    auto w = std::make_unique<ir::Function>(signature_of(n, l.t->has_aux ? "std::tuple<" + jac_type + ", " + aux_type + ">" : jac_type));
    w->name = spec_.name;
    const auto declare = [&](const std::string& name, ir::Type type, const std::string& cxx_type, ExprPtr init) {
      const int id = ir::add_var(*w, name, type, cxx_type);  // "__": see the vjp wrapper
      w->body.push_back(ir::decl(id, std::move(init)));
      return id;
    };
    const auto ref = [&](int id) { return ir::var_ref(*w, id); };
    const auto call = [](const std::string& fn, auto... args) {
      std::vector<ExprPtr> items;
      (items.push_back(std::move(args)), ...);
      return ir::external_call(fn, std::move(items), ir::Type::Tensor);
    };
    std::vector<ExprPtr> args;
    for (int id : s.first->params) args.push_back(ref(id));  // (the forward pass keeps n's parameters)
    const int forward = declare("forward__", ir::Type::TensorTuple, "const auto",
                                ir::external_call(first, std::move(args), ir::Type::TensorTuple));
    const int output = declare("out__", ir::Type::Tensor, "const fg::Tensor&", ir::get(ref(forward), 0));
    const auto levels = [&] { return ir::opaque(std::to_string(k), ir::Type::Int); };
    const auto logical_sizes = [&] { return call("fg::vmap::logical_sizes", ref(output), levels()); };
    const int basis = declare("basis__", ir::Type::Tensor, "const fg::Tensor",
                              call(basis_factory(structured), ref(output), logical_sizes()));
    for (size_t p = 0; p < s.residuals.size(); ++p) args.push_back(ir::get(ref(forward), static_cast<int>(noutputs + p)));
    args.push_back(ref(basis));
    const int rows_of = declare("rows__", ir::Type::TensorTuple, "const auto",
                                ir::external_call(rows, std::move(args), ir::Type::TensorTuple));
    std::vector<ExprPtr> jacs;
    for (size_t a = 0; a < wrt.size(); ++a) {
      const bool list = list_wrt(n, wrt[a]);
      jacs.push_back(call(list ? "fg::ad::unflatten_each" : "fg::ad::unflatten",
                          ir::get(ref(rows_of), static_cast<int>(a)), levels(), logical_sizes()));
      if (list) jacs.back()->type = ir::Type::TensorList;
    }
    ExprPtr result = l.t->argnums.is_tuple ? ir::tuple(std::move(jacs)) : std::move(jacs[0]);
    if (l.t->has_aux) {  // (a std::tuple whatever the items: the return type says so)
      std::vector<ExprPtr> aux;
      for (size_t a = 1; a <= naux; ++a) aux.push_back(ir::get(ref(forward), static_cast<int>(a)));
      result = call("std::make_tuple", std::move(result),
                    naux == 1 ? std::move(aux[0]) : ir::external_call("std::make_tuple", std::move(aux), ir::Type::TensorTuple));
    }
    w->body.push_back(ir::ret(std::move(result)));
    out.declaration = ir::declaration(*w, spec_.name) + ";";
    out.definition = emitter::print_function(
        {std::move(w), description(0) + ": the pullback of each output element, all at once (vmap over the basis).", false});
  }

  // A function with the parameters of `fn` and the given return type (for signatures).
  ir::Function signature_of(const ir::Function& fn, const std::string& ret) const {
    ir::Function f;
    f.vars = fn.vars;
    f.params = fn.params;
    f.return_cxx_type = ret;
    return f;
  }

  // The levels of a jvp vmapped over the basis of its last parameter (the tangent): the outer
  // vmaps' (the tangent not batched by them), then the basis's; aux outputs are not batched by it.
  std::vector<VmapLevel> jvp_levels(const ir::Function& g, const Link& l, const std::vector<Link>& outer,
                                    size_t differentiated) {
    const int tangent = static_cast<int>(g.params.size() - 1);
    std::vector<VmapLevel> levels;
    for (const Link& o : outer) {
      VmapLevel lv = make_level(*o.t, o.where, g);
      lv.in_dims[static_cast<size_t>(tangent)] = std::nullopt;
      lv.out_dims.assign(g.outputs, spec::Dim(0));
      levels.push_back(lv);
    }
    levels.push_back(basis_level(l, g, tangent, -1));
    for (size_t k = differentiated; k < g.outputs; ++k) levels.back().out_dims[k] = std::nullopt;
    return levels;
  }

  // The statements of jacfwd's function `w` that make the basis of parameter `x` (number `param`):
  // `shape<as>`, its shape without the outer batch dims, and `basis<as>`. Returns the basis and the
  // variable the columns are unflattened to (a list parameter's: its elements without the outer
  // batch dims).
  std::pair<int, int> basis_of(ir::Function& w, const ir::Var& x, int param, const std::vector<Link>& outer, const std::string& as,
               bool structured) const {
    const bool list = x.type == ir::Type::TensorList;
    const ir::Type type = list ? ir::Type::TensorList : ir::Type::Tensor;
    ExprPtr logical = ir::var_ref(w, x.id);
    for (const Link& o : outer) {
      const spec::Transform& t = *o.t;
      const spec::Dim dim = t.in_dims.per_item ? t.in_dims.dims[static_cast<size_t>(param)] : t.in_dims.dims[0];
      if (!dim) continue;
      std::vector<ExprPtr> args;
      args.push_back(std::move(logical));
      args.push_back(ir::opaque(std::to_string(*dim), ir::Type::Int));
      args.push_back(ir::opaque("0", ir::Type::Int));
      logical = list ? ir::external_call("fg::ad::select_each", std::move(args), type)
                     : method_call("select", std::move(args), type);
    }
    int of = x.id;
    if (logical->kind != ExprKind::VarRef) {  // views without the batch dims, kept alive for their sizes
      of = ir::add_var(w, "example" + as, type, list ? "const std::vector<fg::Tensor>" : "const fg::Tensor");
      w.body.push_back(ir::decl(of, std::move(logical)));
    }
    std::vector<ExprPtr> args;
    if (list) {
      args.push_back(ir::var_ref(w, of));
      args.push_back(ir::opaque(cxx::string_literal(spec_.name), ir::Type::Other));
      args.push_back(ir::opaque(cxx::string_literal(x.name), ir::Type::Other));
      const int basis = ir::add_var(w, "basis" + as, type, "const std::vector<fg::Tensor>");
      w.body.push_back(ir::decl(basis, ir::external_call("fg::ad::list_basis", std::move(args), type)));
      return {basis, of};
    }
    const int shape = ir::add_var(w, "shape" + as, ir::Type::IntList, "const fg::IntArrayRef");
    args.push_back(ir::var_ref(w, of));
    w.body.push_back(ir::decl(shape, method_call("sizes", std::move(args), ir::Type::IntList)));
    args.push_back(ir::var_ref(w, x.id));
    args.push_back(ir::var_ref(w, shape));
    const int basis = ir::add_var(w, "basis" + as, type, "const fg::Tensor");
    w.body.push_back(ir::decl(basis, ir::external_call(basis_factory(structured), std::move(args), type)));
    return {basis, shape};
  }

  // jacfwd's result and its type: per output, one jacobian per argnum (a tuple for tuple argnums);
  // a tuple over several outputs; with aux, (jacobians, aux).
  static std::pair<ExprPtr, std::string> jacfwd_result(std::vector<std::vector<ExprPtr>> jacs,
                                                       const std::vector<std::string>& types, std::vector<ExprPtr> aux,
                                                       bool tuple_argnums, bool has_aux) {
    std::vector<ExprPtr> per_output;
    std::vector<std::string> per_output_types;
    for (auto& j : jacs) {
      per_output.push_back(tuple_argnums ? ir::tuple(std::move(j)) : std::move(j[0]));
      per_output_types.push_back(tuple_argnums ? cxx::tuple_type(types) : types[0]);
    }
    ExprPtr result = per_output.size() == 1 ? std::move(per_output[0]) : ir::tuple(std::move(per_output));
    std::string ret = per_output.size() == 1 ? per_output_types[0] : cxx::tuple_type(per_output_types);
    if (has_aux) {
      const std::vector<std::string> aux_types(aux.size(), "fg::Tensor");
      ret = "std::tuple<" + ret + ", " + (aux.size() == 1 ? "fg::Tensor" : "std::tuple<" + join(aux_types) + ">") + ">";
      std::vector<ExprPtr> items;  // (a std::tuple whatever the items: the type above says so)
      items.push_back(std::move(result));
      items.push_back(aux.size() == 1 ? std::move(aux[0]) : ir::external_call("std::make_tuple", std::move(aux), ir::Type::TensorTuple));
      result = ir::external_call("std::make_tuple", std::move(items), ir::Type::TensorTuple);
    }
    return {std::move(result), ret};
  }

  // jacfwd: the jvp vmapped over the standard basis of the input's tangents, one argnum at a time;
  // the primal computation is not batched by the basis, so it runs once per argnum.
  // hessian is jacfwd(jacrev(f)), as torch.func builds it (through a loop, forward mode over the
  // reverse pass keeps a tape of tangents beside each tape of the reverse pass).
  std::optional<GeneratedFunction> jacfwd(size_t i, const std::vector<Link>& outer, bool hessian) {
    const Link& l = links_[i];
    const char* what = hessian ? "hessian" : "jacfwd";
    auto n = normalized(i + 1, what);
    if (!n || !no_list_wrt(l, *n, l.t->kind, false)) return std::nullopt;
    std::string how = "the jvp of each basis tangent, all at once (vmap over the basis)";
    if (hessian) {
      auto jr = jacrev_ir(*n, l);
      if (!jr) return std::nullopt;
      n = normalize(*jr, module_, reporter_, what, resolver_);
      if (!n) return std::nullopt;
      how = "jacfwd of jacrev: the jvp of the rows of the gradient for each basis tangent";
    }
    const auto outs = returned(*n);
    if (!enough_outputs(l, outs)) return std::nullopt;
    const bool has_aux = l.t->has_aux;  // never set on hessian (the spec language has no has_aux for it)
    const size_t differentiated = has_aux ? 1 : outs.size();
    const std::vector<int> wrt = argnums(*l.t, *n);
    GeneratedFunction out;
    auto w = std::make_unique<ir::Function>();  // the function the spec names
    w->name = spec_.name;
    w->vars = n->vars;
    w->params = n->params;
    std::vector<std::vector<ExprPtr>> jacs(differentiated);
    std::vector<std::string> jac_types;  // per argnum
    std::vector<ExprPtr> aux;
    for (size_t a = 0; a < wrt.size(); ++a) {
      ForwardResult r = forward(*n, {wrt[a]}, differentiated, module_, resolver_, reporter_);
      if (!r.fn) return std::nullopt;
      std::unique_ptr<ir::Function> g = std::move(r.fn);
      // The tangents of the differentiated outputs, then the aux values (not batched by the basis).
      std::vector<int> returns = r.tangents;
      const bool with_aux = has_aux && a == 0;
      if (with_aux) returns.insert(returns.end(), r.outputs.begin() + 1, r.outputs.end());
      finish(*g, refs(*g, returns, false));
      const bool structured =
          stages_.optimize && structure_basis(*g, static_cast<int>(g->params.size() - 1), resolver_);
      const std::vector<VmapLevel> levels = jvp_levels(*g, l, outer, differentiated);
      const std::string name = spec_.name + "__jvp" + (wrt.size() > 1 ? std::to_string(a) : "");
      auto v = vmapped(*g, name, levels, true, i);
      if (!v) return std::nullopt;
      append(out, *v);
      const std::string as = std::to_string(a) + "__";  // "__": see the vjp wrapper
      const ir::Var& x = n->var(n->params[static_cast<size_t>(wrt[a])]);
      const bool list = x.type == ir::Type::TensorList;
      const auto [basis, like] = basis_of(*w, x, wrt[a], outer, as, structured);
      jac_types.push_back(list ? "std::vector<fg::Tensor>" : "fg::Tensor");
      std::vector<ExprPtr> args;
      for (int id : n->params) args.push_back(ir::var_ref(*w, id));
      args.push_back(ir::var_ref(*w, basis));
      const int columns = ir::add_var(*w, "columns" + as, ir::Type::TensorTuple, "const auto");
      w->body.push_back(ir::decl(columns, ir::external_call(name, std::move(args), ir::Type::TensorTuple)));
      for (size_t o = 0; o < g->outputs; ++o) {
        ExprPtr item = ir::var_ref(*w, columns);
        if (g->outputs != 1) item = ir::get(std::move(item), static_cast<int>(o));
        if (o >= differentiated) {
          aux.push_back(std::move(item));
          continue;
        }
        // [batch..., out..., n(, n)] -> [batch..., out..., in...(, in...)] (a list's: one per element)
        std::vector<ExprPtr> unflatten;
        unflatten.push_back(std::move(item));
        unflatten.push_back(ir::opaque("-1", ir::Type::Int));
        unflatten.push_back(ir::var_ref(*w, like));
        jacs[o].push_back(ir::external_call(list ? "fg::ad::unflatten_list" : "fg::ad::unflatten", std::move(unflatten),
                                            list ? ir::Type::TensorList : ir::Type::Tensor));
      }
    }
    auto [result, ret] = jacfwd_result(std::move(jacs), jac_types, std::move(aux), l.t->argnums.is_tuple, has_aux);
    w->return_cxx_type = ret;
    w->body.push_back(ir::ret(std::move(result)));
    out.declaration = ir::declaration(*w, spec_.name) + ";";
    out.definition = emitter::print_function({std::move(w), description(0) + ": " + how + ".", false});
    return out;
  }
};

}  // namespace

std::optional<GeneratedFunction> emit_ad_spec(const AnnotatedSpec& spec, const std::vector<SpecLink>& chain,
                                              const ir::Module& module, Reporter& reporter, const OpResolver& resolver,
                                              const Stages& stages) {
  return AdEmitter(spec, chain, module, reporter, resolver, stages).run();
}

}  // namespace funcgen::ad
