#include "analyses/batching.h"

#include "ir/build.h"
#include "ir/types.h"
#include "ops/batching_rules.h"
#include "ops/registry.h"

namespace funcgen {

BatchingAnalysis::BatchingAnalysis(const ir::Function& fn, std::vector<Levels> param_levels, VmapLevels vmap,
                                   const ir::Module& module, ir::CallChain* active)
    : fn_(fn), vmap_(vmap), module_(module), vars_(fn.vars.size(), 0), active_(active ? active : &own_active_) {
  for (size_t i = 0; i < fn.params.size() && i < param_levels.size(); ++i)
    vars_[static_cast<size_t>(fn.params[i])] = param_levels[i];
  active_->enter(fn);
  // Loops carry batching around: iterate until nothing grows (levels only grow, so this ends).
  for (int round = 0; round < 32; ++round) {
    changed_ = false;
    outputs_.assign(fn.outputs, 0);
    walk(fn.body, 0);
    if (!changed_) break;
  }
  active_->leave();
}

Levels BatchingAnalysis::of(const ir::Expr& e) const {
  auto it = exprs_.find(&e);
  return it == exprs_.end() ? 0 : it->second;
}

const BatchingAnalysis* BatchingAnalysis::callee(const ir::Expr& call) const {
  auto it = callees_.find(&call);
  return it == callees_.end() ? nullptr : it->second.get();
}

void BatchingAnalysis::assign(int var, Levels l) {
  Levels& v = vars_[static_cast<size_t>(var)];
  if ((v | l) != v) {
    v |= l;
    changed_ = true;
  }
}

// `control`: the levels of the batched conditions the statements run under (control_flow='select'):
// what they assign or return is selected per example, so it is batched at those levels too.
void BatchingAnalysis::walk(const std::vector<ir::StmtPtr>& body, Levels control) {
  for (const auto& s : body) {
    Levels l = s->expr ? eval(*s->expr) : 0;
    switch (s->kind) {
      case ir::StmtKind::Decl:
        if (s->var >= 0) assign(s->var, l);
        break;
      case ir::StmtKind::Assign:
        if (s->var >= 0) assign(s->var, l | control);
        break;
      case ir::StmtKind::Bind:
        for (int v : s->vars) assign(v, l);
        break;
      case ir::StmtKind::Return:
        if (s->expr && s->expr->kind == ir::ExprKind::Tuple && s->expr->args.size() == outputs_.size()) {
          for (size_t i = 0; i < outputs_.size(); ++i) outputs_[i] |= of(*s->expr->args[i]) | control;
        } else {
          for (auto& o : outputs_) o |= l;
        }
        break;
      case ir::StmtKind::Opaque:
        // Scalars computed from batched scalars are batched too.
        for (int w : s->writes) {
          Levels r = 0;
          for (int v : s->reads) r |= vars_[static_cast<size_t>(v)];
          assign(w, r);
        }
        break;
      default:
        break;
    }
    walk(s->init, control);
    if (s->step) eval(*s->step);
    const bool branch = s->kind == ir::StmtKind::If || s->kind == ir::StmtKind::While;
    const Levels inner = control | (vmap_.select && branch && s->expr ? of(*s->expr) : 0);
    walk(s->body, inner);
    walk(s->else_body, inner);
    // `if (c) { ...; return a; }` without else: the rest of the block is c's else branch.
    if (inner != control && s->kind == ir::StmtKind::If && !s->has_else && !s->body.empty() &&
        s->body.back()->kind == ir::StmtKind::Return)
      control = inner;
  }
}

Levels BatchingAnalysis::eval(const ir::Expr& e) {
  Levels args = 0;
  for (const auto& a : e.args) args |= eval(*a);
  Levels out = args;
  switch (e.kind) {
    case ir::ExprKind::VarRef:
      out = vars_[static_cast<size_t>(e.var)];
      break;
    case ir::ExprKind::Opaque:
      out = 0;
      if (e.op == ir::kListSize) break;  // a list's length: the same in every example
      for (int v : e.reads) out |= vars_[static_cast<size_t>(v)];
      for (int w : e.writes) assign(w, out);
      break;
    case ir::ExprKind::Call: {
      if (e.form == ir::CallForm::User) {
        std::vector<Levels> params;
        for (const auto& a : e.args) params.push_back(of(*a));
        if (active_->recursive(e, module_)) {
          recursive_ = true;
          if (recursive_call_ == nullptr) recursive_call_ = &e;
          break;
        }
        const ir::Function* callee = module_.find(e);
        if (callee == nullptr) break;
        auto analysis = std::make_unique<BatchingAnalysis>(*callee, params, vmap_, module_, active_);
        recursive_ |= analysis->recursive();
        if (recursive_call_ == nullptr) recursive_call_ = analysis->recursive_call();
        out = 0;
        for (Levels o : analysis->outputs()) out |= o;
        // A tensor the helper assigns through a reference (`void accumulate(fg::Tensor& total, ...)`)
        // is the variable passed: batched as the helper leaves it.
        for (size_t i = 0; i < callee->params.size() && i < e.args.size(); ++i) {
          if (e.args[i]->kind == ir::ExprKind::VarRef && ir::by_reference(callee->var(callee->params[i])))
            assign(e.args[i]->var, analysis->var(callee->params[i]));
        }
        callees_[&e] = std::move(analysis);
        break;
      }
      if (e.form == ir::CallForm::Vmapped) {
        // The mapped function runs at one more level (the next bit); its result has that level's
        // dim among its logical dims, and the outer levels its arguments and its body give it.
        const Levels inner = 1u << nbatch(vmap_.all);
        std::vector<Levels> params;
        for (size_t i = 0; i < e.args.size(); ++i)
          params.push_back(of(*e.args[i]) | (i < e.in_dims.size() && e.in_dims[i] ? inner : 0));
        VmapLevels levels = vmap_;
        levels.all |= inner;
        levels.select = false;
        if (e.randomness == ir::Randomness::Different) levels.different |= inner;
        if (e.randomness == ir::Randomness::Same) levels.same |= inner;
        auto analysis = std::make_unique<BatchingAnalysis>(*e.vmapped, params, levels, module_, active_);
        recursive_ |= analysis->recursive();
        if (recursive_call_ == nullptr) recursive_call_ = analysis->recursive_call();
        const auto& outs = analysis->outputs();
        out = static_cast<size_t>(e.index) < outs.size() ? outs[static_cast<size_t>(e.index)] & ~inner : 0;
        callees_[&e] = std::move(analysis);
        break;
      }
      if (e.form == ir::CallForm::External) break;
      const OpRule rule = find_rule(e.op);
      switch (rule.rule) {
        case BatchRule::Factory:
        case BatchRule::Query:
        case BatchRule::Meta:
          out = 0;
          break;
        case BatchRule::Random:
          // randn_like(x) and dropout(x) are shaped like x: 'same' keeps x's batch, 'different'
          // adds every 'different' level.
          out = vmap_.different;
          if (ops::id(e) == ops::dropout || ops::id(e) == ops::bernoulli) out |= args;
          break;
        default:
          break;
      }
      break;
    }
    default:
      break;
  }
  Levels& slot = exprs_[&e];
  if ((slot | out) != slot) slot |= out;
  return slot;
}

VmapLevels vmap_masks(const std::vector<VmapLevel>& levels, std::vector<Levels>& params) {
  VmapLevels masks;
  for (size_t k = 0; k < levels.size(); ++k) {
    const Levels bit = 1u << k;
    masks.all |= bit;
    if (levels[k].randomness == spec::Randomness::Different) masks.different |= bit;
    if (levels[k].randomness == spec::Randomness::Same) masks.same |= bit;
    if (levels[k].control_flow == spec::ControlFlow::Select) masks.select = true;
    for (size_t i = 0; i < params.size(); ++i)
      if (levels[k].in_dims[i]) params[i] |= bit;
  }
  return masks;
}

}  // namespace funcgen
