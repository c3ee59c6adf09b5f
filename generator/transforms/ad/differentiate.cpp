#include "transforms/ad/differentiate.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/cxx_text.h"
#include "ir/build.h"
#include "transforms/ad/anf.h"
#include "ops/einsum_rules.h"
#include "ops/batching_rules.h"
#include "ops/registry.h"

namespace funcgen::ad {

namespace {

using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;

}  // namespace

bool draws_random(const ir::Function& fn) {
  bool found = false;
  ir::for_each_expr(fn.body, [&](const Expr& e) {
    if (e.kind != ExprKind::Call) return;
    if (e.form == ir::CallForm::Vmapped) found |= draws_random(*e.vmapped);
    else if (e.form != ir::CallForm::User && e.form != ir::CallForm::External)
      found |= funcgen::find_rule(e.op).rule == BatchRule::Random;
  });
  return found;
}

namespace {

// What the transforms share: a copy of the normalized function to extend, unique names, and
// rules applied to one op.
class Differentiator {
 public:
  Differentiator(const ir::Function& n, const ir::Module& module, const OpResolver& resolver, Reporter& reporter)
      : module_(module), resolver_(resolver), reporter_(reporter) {
    fn_ = ir::derived_function(n);
    fn_->vars = n.vars;
    fn_->params = n.params;
    for (const auto& v : n.vars) names_.insert(v.name);
    for (const auto& name : ir::text_names(n)) names_.insert(name);  // globals the text reads: not to be hidden
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
  // A parameter shaped like `like`: a tensor, or a list of tensors for a list parameter.
  int tangent_param(int like, const std::string& base) {
    if (fn_->var(like).type != ir::Type::TensorList) return tensor_param(base);
    return param(base, ir::Type::TensorList, "const std::vector<fg::Tensor>&");
  }
  // A list parameter's gradient from its list of gradients (filled by tape_add at the indices
  // read): zeros where no gradient reached an element, as torch.func gives.
  ExprPtr list_gradient(int grads, int list) const {
    std::vector<ExprPtr> args;
    args.push_back(ref(grads));
    args.push_back(ref(list));
    return ir::external_call(ir::kListGradient, std::move(args), ir::Type::TensorList);
  }
  int tensor_param(const std::string& base) { return param(base, ir::Type::Tensor, "const fg::Tensor&"); }
  int param(const std::string& base, ir::Type type, const std::string& cxx_type) {
    const int id = ir::add_var(*fn_, claim(base), type, cxx_type);
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

  // The names a formula of `call` can use: its parameters (given or defaulted).
  FormulaEnv env_of(const Expr& call, const OpView& v, std::vector<ExprPtr>& keep) {
    FormulaEnv env;
    if (std::string error = formula_env(call, v, resolver_, keep, env); !error.empty())
      fail(call.range.getBegin(), "the derivative rules of '" + call.op + "' do not apply here: " + error);
    return env;
  }

  // The derivative of a vmapped call of a random function runs that function again: it replays
  // the draws of the call. `const fg::ad::RngState rng = fg::ad::rng_state();` before the call;
  // `[const fg::ad::RngState saved =] fg::ad::rng_replay(rng);` before the rerun.
  int rng_state(std::vector<ir::StmtPtr>& out) {
    const int id = ir::add_var(*fn_, claim("rng"), ir::Type::Other, ir::kRngStateType);
    out.push_back(ir::decl(id, ir::rng_state()));
    return id;
  }
  ExprPtr rng_replay(int state) const { return ir::rng_replay(*fn_, state); }

  // fg::zeros_like(value): the derivative of what does not depend on the inputs.
  ExprPtr zeros_like(int value) {
    ExprPtr p = ref(value);
    Expr at;
    at.op = "zeros_like";
    return formula("fg::zeros_like(p)", {{"p", p.get()}}, at);
  }

  // fg::ad::zero_gradient(value): zeros, or no tensor where the value has none (a trip whose
  // value a branch not taken left unset).
  ExprPtr zero_gradient(int value) {
    ExprPtr p = ref(value);
    Expr at;
    at.op = "ad::zero_gradient";
    return formula("fg::ad::zero_gradient(p)", {{"p", p.get()}}, at);
  }

  // The derivative of a value that does not depend on the inputs: zeros, or for a value that may
  // have none, fg::ad::zero_gradient, which keeps it so.
  ExprPtr no_derivative(int value) {
    return maybe_undefined_.count(value) != 0 ? zero_gradient(value) : zeros_like(value);
  }

  // Two contributions to one derivative of `value`: a + b, or where the value may have no tensor
  // (and so its derivatives), fg::ad::add_gradients(a, b), which takes a missing one as none.
  ExprPtr add_to(int value, ExprPtr a, ExprPtr b, const Expr& at) {
    if (maybe_undefined_.count(value) == 0) return sum(std::move(a), std::move(b), at);
    return formula("fg::ad::add_gradients(a, b)", {{"a", a.get()}, {"b", b.get()}}, at);
  }

  // The tensors that may hold no tensor when the code runs: declared without a value (set by a
  // branch), read back from a tape (a trip on which such a value had none), the derivatives that
  // keep that (fg::ad::zero_gradient, fg::ad::add_gradients) and what is assigned from those. Ops
  // on such values run only where they have one (an op on no tensor throws).
  void find_maybe_undefined(const std::vector<ir::StmtPtr>& body) {
    for (bool changed = true; changed;) {
      changed = false;
      ir::for_each_stmt(body, [&](const ir::Stmt& s) {
        if ((s.kind != ir::StmtKind::Decl && s.kind != ir::StmtKind::Assign) || s.var < 0 ||
            fn_->var(s.var).type != ir::Type::Tensor || maybe_undefined_.count(s.var) != 0)
          return;
        const Expr* e = s.expr.get();
        const bool maybe = e == nullptr ? s.kind == ir::StmtKind::Decl
                                        : ir::is_tape_op(*e) ||
                                              (e->kind == ExprKind::VarRef && maybe_undefined_.count(e->var) != 0) ||
                                              (e->kind == ExprKind::Call &&
                                               (ops::id(*e) == ops::ad_zero_gradient || ops::id(*e) == ops::ad_add_gradients));
        if (maybe) changed = maybe_undefined_.insert(s.var).second;
      });
    }
  }
  std::set<int> maybe_undefined_;

  // a + b, for contributions to one gradient or tangent (`at`: the op they come from, for errors).
  ExprPtr sum(ExprPtr a, ExprPtr b, const Expr& at) { return formula("a + b", {{"a", a.get()}, {"b", b.get()}}, at); }

  // The positions of a call's tensor arguments that depend on the inputs.
  std::vector<int> active_tensor_args(const Expr& call) const {
    std::vector<int> out;
    for (size_t i = 0; i < call.args.size(); ++i)
      if (call.arg(i).type == ir::Type::Tensor && active_arg(call.arg(i))) out.push_back(static_cast<int>(i));
    return out;
  }

  // einsum(equation, {items...}) with `items` as its operands.
  ExprPtr einsum(const Expr& equation, std::vector<ExprPtr> items, const Expr& at) {
    Expr list;
    list.kind = ExprKind::List;
    list.type = ir::Type::TensorList;
    list.args = std::move(items);
    return formula("fg::einsum(e, l)", {{"e", &equation}, {"l", &list}}, at);
  }

  // The operands of an einsum call, or null (reported) when they are not a braced list.
  const Expr* einsum_operands(const Expr& call) {
    if (call.args.size() == 2 && call.arg(1).kind == ExprKind::List) return &call.arg(1);
    fail(call.range.getBegin(), "einsum can be differentiated with its operands in a braced list, {a, b}");
    return nullptr;
  }

  // `var = <a load from a tape>` (tape_at, tape_read, tape_pop), declared or assigned (a reverse
  // pass hoists declarations out of ifs): the load, else null.
  static const Expr* tape_load(const ir::Stmt& s) {
    if ((s.kind != ir::StmtKind::Decl && s.kind != ir::StmtKind::Assign) || s.var < 0 || !s.expr ||
        !ir::is_tape_op(*s.expr))
      return nullptr;
    return s.expr.get();
  }

  // Whether the tensor argument `a` is a value that depends on the inputs being differentiated.
  bool active_arg(const Expr& a) const { return a.kind == ExprKind::VarRef && active_.count(a.var) != 0; }

  // A tensor value's definition: `var = call`, `var = other` (a merge or a loop-carried value), or
  // a declaration without a value (assigned later). Null when `s` defines no tensor.
  const Expr* definition(const ir::Stmt& s) const {
    if ((s.kind != ir::StmtKind::Decl && s.kind != ir::StmtKind::Assign) || s.var < 0 ||
        fn_->var(s.var).type != ir::Type::Tensor || !s.expr)
      return nullptr;
    return s.expr.get();
  }

  // Marks the values that depend on `wrt` (to a fixed point: loops carry dependence around);
  // reports tensor ops on them that have no rule.
  void find_active(const std::vector<ir::StmtPtr>& body, const std::vector<int>& wrt_ids) {
    active_.insert(wrt_ids.begin(), wrt_ids.end());
    for (bool changed = true; changed && ok_;) {
      changed = false;
      ir::for_each_stmt(body, [&](const ir::Stmt& s) {
        // A tape that stores an active value holds active values (a reverse pass's loop trips).
        if (s.kind == ir::StmtKind::Eval && s.expr && ir::is_tape_op(*s.expr) && s.expr->reads.size() > 1 &&
            active_.count(s.expr->reads.back()) != 0 && active_.insert(s.expr->reads[0]).second) {
          changed = true;
          return;
        }
        if (const Expr* load = tape_load(s);
            load != nullptr && active_.count(load->reads[0]) != 0 && active_.insert(s.var).second) {
          changed = true;  // a trip read back from a tape of active values (a nested loop's tape too)
          return;
        }
        const Expr* e = definition(s);
        if (e == nullptr || active_.count(s.var) != 0) return;
        bool any = false;
        if (e->kind == ExprKind::VarRef) any = active_arg(*e);
        if (e->kind == ExprKind::Call) {
          for (const auto& a : e->args) {
            any |= active_arg(*a);
            if (a->kind == ExprKind::List)
              for (const auto& item : a->args) any |= active_arg(*item);
          }
          if (e->form == ir::CallForm::Vmapped)
            for (const auto& a : e->args)
              if (a->type == ir::Type::TensorList && active_arg(*a)) {
                fail(e->range.getBegin(), "differentiating a vmap of '" + e->vmapped->name + "' w.r.t. the vector '" +
                                              fn_->var(a->var).name + "' (read at run-time indices) cannot be "
                                              "generated yet; differentiate w.r.t. the other arguments (argnums)");
                return;
              }
          const bool user_rule = (e->form == ir::CallForm::User && resolver_.has_custom_rule(e->callee)) ||
                                 e->form == ir::CallForm::Vmapped;
          if (any && !user_rule) {
            const OpView v = view_of_call(*e);
            if (v.rule != nullptr && v.rule->constant) return;
            if (v.rule == nullptr || (v.rule->vjp.empty() && v.rule->jvp.empty() && !v.rule->from_equation)) {
              fail(e->range.getBegin(), "'" + e->op + "' has no derivative rule; funcgen cannot differentiate through "
                                        "it (templates/derivatives.def lists the ops it can)");
              return;
            }
          }
        }
        if (any) {
          active_.insert(s.var);
          changed = true;
        }
      });
    }
  }

  std::unique_ptr<ir::Function> fn_;
  std::vector<int> outputs_;
  std::set<int> active_;
  const ir::Module& module_;
  const OpResolver& resolver_;
  Reporter& reporter_;
  std::set<std::string> names_;
  bool ok_ = true;
};

}  // namespace

namespace {

// Reverse mode: the forward statements last first, each active op's FG_VJP rules adding to the
// gradients (adjoints) of its arguments. Control flow is reversed structurally:
// - an if runs its branches' reverse under the same recorded condition (`taken`); the forward pass
//   declares its branches' values before the if (hoisted), so that the reverse branches see them;
// - a loop counts its trips and stores, per trip, the values its reverse reads (`x_tape`); the
//   reverse loop runs the trips backwards from them. A loop-carried value's gradient travels from
//   the value a trip leaves back to the value it starts from (`x_prev`).
// Gradients of values defined outside an if or a loop that the reverse adds to inside it live in
// variables declared before it (accumulators), assigned inside.
class Reverse {
 public:
  explicit Reverse(Differentiator& d) : d_(d) {}

  // Where the statement being reversed can put statements before itself in the forward pass.
  std::vector<ir::StmtPtr>* setup_ = nullptr;

  // Statements that only serve a tape of gradients: its declaration, its guarded pops.
  std::map<const ir::Stmt*, int> tape_guards;

  std::set<int> tape_accumulators;  // the tapes of gradients declared empty (not taken off an outer one)

  // Removes the tapes of gradients that no code adds to or stores (and the statements that only
  // serve them).
  void prune_tape_gradients(std::vector<ir::StmtPtr>& body) {
    std::set<int> unused = tape_accumulators;
    ir::for_each_expr(body, [&](const Expr& e) {
      if (!ir::is_tape_op(e)) return;
      if (e.op == ir::kTapeAdd) {
        unused.erase(e.reads[0]);
        unused.erase(e.reads[2]);
      }
      if (e.op == ir::kTapeRead || e.op == ir::kTapeTake || e.op == ir::kTapeSet)
        unused.erase(e.reads[0]);  // gradients pushed onto it are read back (or it is written)
      if (e.op == ir::kTapePush) unused.erase(e.reads[1]);   // a tape of gradients kept on an outer one
    });
    std::function<void(std::vector<ir::StmtPtr>&)> prune = [&](std::vector<ir::StmtPtr>& stmts) {
      std::vector<ir::StmtPtr> kept;
      for (auto& st : stmts) {
        auto g = tape_guards.find(st.get());
        if (g != tape_guards.end() && unused.count(g->second) != 0) continue;
        for (auto* children : {&st->init, &st->body, &st->else_body}) prune(*children);
        kept.push_back(std::move(st));
      }
      stmts = std::move(kept);
    };
    prune(body);
  }

  struct Adjoints {
    std::map<int, int> of;     // value -> the variable holding its gradient so far
    std::set<int> accumulators;  // those variables that are assigned (not defined) by additions
  };

  void accumulate(Adjoints& a, int value, ExprPtr contribution, std::vector<ir::StmtPtr>& out) {
    auto it = a.of.find(value);
    if (it != a.of.end() && a.accumulators.count(it->second) != 0) {
      const Expr& at = *contribution;
      out.push_back(ir::assign(it->second, d_.add_to(value, d_.ref(it->second), std::move(contribution), at)));
      return;
    }
    const int id = d_.tensor_var("d_" + d_.fn_->var(value).name);
    if (it == a.of.end()) {
      out.push_back(ir::decl(id, std::move(contribution)));
    } else {
      const Expr& at = *contribution;
      out.push_back(ir::decl(id, d_.add_to(value, d_.ref(it->second), std::move(contribution), at)));
    }
    a.of[value] = id;
  }

  // The reverse of `fwd` (last statement first), appended to `out`. `fwd` may get statements
  // added for loops (their counters and tapes).
  void block(std::vector<ir::StmtPtr>& fwd, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    std::vector<std::pair<size_t, std::vector<ir::StmtPtr>>> before;  // statements to add to fwd
    for (size_t i = fwd.size(); i-- > 0 && d_.ok();) {
      ir::Stmt& s = *fwd[i];
      switch (s.kind) {
        case ir::StmtKind::If: {
          branch(s, a, out);
          // Loops in the branches declared their counters and tapes there: move them out too.
          std::vector<ir::StmtPtr> setup;
          lift(s.body, setup);
          lift(s.else_body, setup);
          if (!setup.empty()) before.emplace_back(i, std::move(setup));
          break;
        }
        case ir::StmtKind::For:
        case ir::StmtKind::While:
        case ir::StmtKind::DoWhile: {
          std::vector<ir::StmtPtr> setup;
          loop(s, a, out, setup);
          if (!setup.empty()) before.emplace_back(i, std::move(setup));
          break;
        }
        default: {
          std::vector<ir::StmtPtr> setup;
          setup_ = &setup;
          statement(s, a, out);
          setup_ = nullptr;
          if (!setup.empty()) before.emplace_back(i, std::move(setup));
        }
      }
    }
    for (auto& [i, stmts] : before)  // last first: earlier indices stay valid
      fwd.insert(fwd.begin() + static_cast<std::ptrdiff_t>(i), std::make_move_iterator(stmts.begin()),
                 std::make_move_iterator(stmts.end()));
  }

  // Moves the declarations inside the ifs of `frame` (not inside its loops, which are frames of
  // their own) to before the outermost if, as declarations without a value: the reverse pass runs
  // outside the forward's branches and reads their values.
  void hoist(std::vector<ir::StmtPtr>& frame) {
    std::vector<ir::StmtPtr> out;
    for (auto& s : frame) {
      if (is_loop(s->kind)) hoist(s->body);
      if (s->kind == ir::StmtKind::If) {
        std::vector<ir::StmtPtr> decls;
        lift(s->body, decls);
        lift(s->else_body, decls);
        for (auto& dcl : decls) out.push_back(std::move(dcl));
      }
      out.push_back(std::move(s));
    }
    frame = std::move(out);
  }

 private:
  static bool is_loop(ir::StmtKind k) {
    return k == ir::StmtKind::For || k == ir::StmtKind::While || k == ir::StmtKind::DoWhile;
  }

  // The declarations of `body` (and of its ifs) to `decls`, without their values; a declaration
  // with a value stays as an assignment.
  void lift(std::vector<ir::StmtPtr>& body, std::vector<ir::StmtPtr>& decls) {
    std::vector<ir::StmtPtr> kept;
    for (auto& s : body) {
      if (is_loop(s->kind)) {
        hoist(s->body);
      } else {
        lift(s->body, decls);
        lift(s->else_body, decls);
        if (s->kind == ir::StmtKind::Decl && !s->is_static_local) {
          ir::Var& v = d_.fn_->vars[static_cast<size_t>(s->var)];
          v.cxx_type = ir::value_type(v);
          // A scalar starts value-initialized: a condition recorded on one path only (a switch's
          // later cases) is still copied whole into the residuals, and an indeterminate bool is UB.
          decls.push_back(ir::decl(s->var, ir::is_scalar(v.type) ? ir::opaque("{}", v.type) : nullptr));
          if (!s->expr) continue;  // nothing left here
          s->kind = ir::StmtKind::Assign;
          s->text = "=";
        }
      }
      kept.push_back(std::move(s));
    }
    body = std::move(kept);
  }

  // One straight-line statement.
  void statement(const ir::Stmt& s, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    if (s.kind == ir::StmtKind::Eval && s.expr && ir::is_tape_op(*s.expr)) {
      if (s.expr->op == ir::kTapePush) tape_push_vjp(s, a, out);
      else if (s.expr->op == ir::kListPush) list_push_vjp(s, a, out);
      else if (s.expr->op == ir::kListSet || s.expr->op == ir::kTapeSet) set_vjp(s, a, out);
      else tape_add_vjp(s, a, out);
      return;
    }
    if (Differentiator::tape_load(s) != nullptr) {
      if (d_.active_.count(s.var) == 0) return;
      if (s.expr->op == ir::kTapePop) tape_pop_vjp(s, a, out);
      else if (s.expr->op == ir::kTapeTake) take_vjp(s, a, out);
      else if (auto g = a.of.find(s.var); g != a.of.end()) tape_at_vjp(s, *s.expr, g->second, a, out);
      return;
    }
    const Expr* e = d_.definition(s);
    if (e == nullptr || d_.active_.count(s.var) == 0) return;
    auto adj = a.of.find(s.var);
    if (adj == a.of.end()) return;  // the outputs do not depend on this value
    if (e->kind == ExprKind::VarRef) {  // x = y: y gets x's gradient
      if (d_.active_arg(*e)) accumulate(a, e->var, d_.ref(adj->second), out);
      return;
    }
    if (e->kind != ExprKind::Call) return;
    const Expr& call = *e;
    if (call.form == ir::CallForm::User) {
      custom_vjp(call, s.var, adj->second, a, out);
      return;
    }
    if (call.form == ir::CallForm::Vmapped) {
      vmapped_vjp(call, adj->second, a, out);
      return;
    }
    const auto v = view_of_call(call);
    if (v.rule->from_equation) {
      einsum_vjp(call, adj->second, a, out);
      return;
    }
    std::vector<ExprPtr> keep;
    FormulaEnv env = d_.env_of(call, v, keep);
    ExprPtr grad = d_.ref(adj->second), result = d_.ref(s.var);
    env["grad"] = grad.get();
    env["result"] = result.get();
    for (size_t i = 0; i < call.args.size(); ++i) {
      if (call.arg(i).kind == ExprKind::List && call.arg(i).type == ir::Type::TensorList) {
        list_vjp(call, v, i, env, a, out);
        continue;
      }
      if (!d_.active_arg(call.arg(i)) || v.rule->shape_only.count(v.params[i])) continue;
      auto f = v.rule->vjp.find(v.params[i]);
      if (f == v.rule->vjp.end()) {
        d_.fail(call.range.getBegin(), "'" + call.op + "' has no reverse-mode rule for its argument '" + v.params[i] + "'");
        return;
      }
      ExprPtr c = d_.formula(f->second, env, call);
      if (v.rule->broadcasts) {
        FormulaEnv e2{{"c", c.get()}, {"x", &call.arg(i)}};
        c = d_.formula("fg::ad::sum_to(c, x.sizes())", e2, call);
      }
      accumulate(a, call.arg(i).var, std::move(c), out);
    }
  }

  // Reverse mode over a reverse pass (the gradient of its loop's stored trips): a trip read back
  // from a tape (tape_at, tape_read) adds its gradient to the tape's tape of gradients, at the same
  // trip; the trip's store takes it off again (the reverse of the storing loop runs its trips last
  // first). (A nested loop's tape read back: its tape of gradients goes on the outer one.)
  void tape_at_vjp(const ir::Stmt& s, const Expr& load, int grad, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    const int tape = load.reads[0];
    // inputs() declares it before a loop or an if that reads the tape; a list read where it is
    // declared gets its list of gradients at its last read (the first that the reverse meets).
    if (a.of.count(tape) == 0) new_accumulator(tape, a, out);
    out.push_back(ir::eval(ir::tape_op(*d_.fn_, ir::kTapeAdd, {a.of.at(tape), load.reads[1], grad}, ir::Type::Void)));
  }

  void tape_push_vjp(const ir::Stmt& s, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    const int tape = s.expr->reads[0], value = s.expr->reads[1];
    auto g = a.of.find(tape);
    if (g == a.of.end() || d_.active_.count(value) == 0) return;
    const ir::Var v = d_.fn_->var(value);  // a copy: adding variables moves the vector
    if (v.type != ir::Type::Tensor) {  // a nested loop's tape: its tape of gradients, for its own stores
      const int id = ir::add_var(*d_.fn_, d_.claim("d_" + v.name), ir::Type::Other, ir::value_type(v));
      out.push_back(ir::decl(id, ir::tape_op(*d_.fn_, ir::kTapePop, {g->second}, ir::Type::Other)));
      a.of[value] = id;
      return;
    }
    // Gradients reach the trips on every trip or on none (a trip read back only for its shape):
    // `if (!d_x_tape.empty())`, and when no code adds to that tape, neither (prune_tape_gradients).
    // A trip's entry has no value where the trip's value had none (set only by a branch not taken).
    auto it = a.of.find(value);
    if (it == a.of.end() || a.accumulators.count(it->second) == 0) new_accumulator(value, a, out);
    const int acc = a.of.at(value);
    const auto guarded = [&](const std::string& cond, std::vector<ir::StmtPtr> body) {
      auto st = std::make_unique<ir::Stmt>();
      st->kind = ir::StmtKind::If;
      st->range = s.range;
      st->expr = ir::opaque(cond, ir::Type::Bool);  // no reads: it asks about sizes, not values
      st->body = std::move(body);
      return st;
    };
    const int entry = d_.tensor_var("d_" + v.name + "_trip");
    std::vector<ir::StmtPtr> add, pop;
    add.push_back(ir::assign(acc, d_.sum(d_.ref(acc), d_.ref(entry), *s.expr)));
    pop.push_back(ir::decl(entry, ir::tape_op(*d_.fn_, ir::kTapePop, {g->second}, ir::Type::Tensor)));
    pop.push_back(guarded(d_.fn_->var(entry).name + ".defined()", std::move(add)));
    ir::StmtPtr guard = guarded("!" + d_.fn_->var(g->second).name + ".empty()", std::move(pop));
    tape_guards[guard.get()] = g->second;
    out.push_back(std::move(guard));
  }

  // Reverse mode over a reverse pass's reverse (a third derivative through a loop). The pass took
  // the gradients of its stored trips off a tape of gradients (`e = tape_pop(d_tape)`, last trip
  // first): their reverse, running first trip first, pushes e's gradient onto d_tape's own tape
  // of gradients, so that entry i is trip i's; where e has no gradient, a zero one (a place
  // holder that keeps the entries in trip order).
  void tape_pop_vjp(const ir::Stmt& s, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    const int tape = s.expr->reads[0];
    auto g = a.of.find(tape);
    auto grad = a.of.find(s.var);
    if (g == a.of.end()) {
      if (grad != a.of.end()) d_.fail(s.range.getBegin(), "internal error: a tape of gradients without its own");
      return;
    }
    int pushed = grad != a.of.end() ? grad->second : -1;
    if (pushed < 0) {
      const ir::Var v = d_.fn_->var(s.var);  // a copy: adding variables moves the vector
      if (v.type == ir::Type::Tensor) {
        pushed = d_.tensor_var("d_" + v.name);
        out.push_back(ir::decl(pushed, d_.zero_gradient(s.var)));
      } else {  // an inner loop's tape of gradients: an empty one
        pushed = ir::add_var(*d_.fn_, d_.claim("d_" + v.name), ir::Type::Other, ir::value_type(v));
        out.push_back(ir::decl(pushed, nullptr));
      }
    }
    out.push_back(ir::eval(ir::tape_op(*d_.fn_, ir::kTapePush, {g->second, pushed}, ir::Type::Void)));
    tape_guards[out.back().get()] = g->second;  // pruned with the tape when nothing reads it
  }

  // The reverse of `tape_add(d_tape, i, value)`: value's gradient is entry i of d_tape's tape of
  // gradients (which the reverse of the pops filled).
  void tape_add_vjp(const ir::Stmt& s, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    const int tape = s.expr->reads[0], index = s.expr->reads[1], value = s.expr->reads[2];
    auto g = a.of.find(tape);
    if (g == a.of.end() || d_.active_.count(value) == 0) return;
    const ir::Var v = d_.fn_->var(value);  // a copy: adding variables moves the vector
    if (v.type == ir::Type::Tensor) {
      read_entry(s, g->second, index, value, a, out);
      return;
    }
    const int id = ir::add_var(*d_.fn_, d_.claim("d_" + v.name), ir::Type::Other, ir::value_type(v));
    out.push_back(ir::decl(id, ir::tape_op(*d_.fn_, ir::kTapeRead, {g->second, index}, ir::Type::Other)));
    a.of[value] = id;  // an inner loop's tape of gradients, given once
    a.accumulators.insert(id);
  }

  // The reverse of `list.push_back(value)` at `index`: value's gradient is that entry of the list's
  // list of gradients, which the reverse of the reads after the push filled (none: no read of it
  // reached the outputs).
  void list_push_vjp(const ir::Stmt& s, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    const int list = s.expr->reads[0], index = s.expr->reads[1], value = s.expr->reads[2];
    auto g = a.of.find(list);
    if (g == a.of.end() || d_.active_.count(value) == 0 || d_.fn_->var(value).type != ir::Type::Tensor) return;
    read_entry(s, g->second, index, value, a, out);
  }

  // The reverse of `list[index] = value` (and of tape_set): value's gradient is entry index of the
  // list's gradients, taken off it (the reads before the assignment read the value it replaced).
  void set_vjp(const ir::Stmt& s, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    const int list = s.expr->reads[0], index = s.expr->reads[1], value = s.expr->reads[2];
    auto g = a.of.find(list);
    if (g == a.of.end()) return;  // no read after it reached the outputs
    const bool active = d_.active_.count(value) != 0 && d_.fn_->var(value).type == ir::Type::Tensor;
    if (active) {
      read_entry(s, g->second, index, value, a, out, ir::kTapeTake);
      return;
    }
    const int dropped = d_.tensor_var("d_" + d_.fn_->var(value).name + "_dropped");
    out.push_back(ir::decl(dropped, ir::tape_op(*d_.fn_, ir::kTapeTake, {g->second, index}, ir::Type::Tensor)));
  }

  // The reverse of `e = tape_take(list, index)`: entry index of the list's gradients is e's
  // gradient (none where e has none), set where the take cleared it.
  void take_vjp(const ir::Stmt& s, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    const int list = s.expr->reads[0], index = s.expr->reads[1];
    if (a.of.count(list) == 0) new_accumulator(list, a, out);
    int grad = -1;
    if (auto it = a.of.find(s.var); it != a.of.end()) {
      grad = it->second;
    } else {
      grad = d_.tensor_var("d_" + d_.fn_->var(s.var).name);
      out.push_back(ir::decl(grad, nullptr));  // none: the entry gets no gradient
    }
    out.push_back(ir::eval(ir::tape_op(*d_.fn_, ir::kTapeSet, {a.of.at(list), index, grad}, ir::Type::Void)));
  }

  // value's gradient += entry `index` of the tape of gradients `grads`, where it has one:
  // `d_x_entry = fg::ad::tape_read(grads, index); if (d_x_entry.defined()) d_x = d_x + d_x_entry;`
  void read_entry(const ir::Stmt& s, int grads, int index, int value, Adjoints& a, std::vector<ir::StmtPtr>& out,
                  const char* load = ir::kTapeRead) {
    auto it = a.of.find(value);
    if (it == a.of.end() || a.accumulators.count(it->second) == 0) new_accumulator(value, a, out);
    const int acc = a.of.at(value);
    const int entry = d_.tensor_var("d_" + d_.fn_->var(value).name + "_entry");
    out.push_back(ir::decl(entry, ir::tape_op(*d_.fn_, load, {grads, index}, ir::Type::Tensor)));
    auto add = std::make_unique<ir::Stmt>();
    add->kind = ir::StmtKind::If;
    add->range = s.range;
    add->expr = ir::opaque(d_.fn_->var(entry).name + ".defined()", ir::Type::Bool);  // no reads: not a value
    add->body.push_back(ir::assign(acc, d_.sum(d_.ref(acc), d_.ref(entry), *s.expr)));
    out.push_back(std::move(add));
  }



  // The gradients of the elements of a list argument: the rule per element, with its position
  // and its offset along `dim` (the sum of the sizes of the elements before it).
  void list_vjp(const Expr& call, const OpView& v, size_t i, FormulaEnv env, Adjoints& a,
                std::vector<ir::StmtPtr>& out) {
    const Expr& list = call.arg(i);
    bool any = false;
    for (const auto& item : list.args) any |= d_.active_arg(*item);
    if (!any) return;
    auto f = v.rule->vjp.find(v.params[i]);
    if (f == v.rule->vjp.end()) {
      d_.fail(call.range.getBegin(), "'" + call.op + "' has no reverse-mode rule for its argument '" + v.params[i] + "'");
      return;
    }
    ExprPtr offset = ir::opaque("0", ir::Type::Int);
    for (size_t k = 0; k < list.args.size() && d_.ok(); ++k) {
      const Expr& item = *list.args[k];
      ExprPtr position = ir::opaque(std::to_string(k), ir::Type::Int);
      env["item"] = &item;
      env["position"] = position.get();
      env["offset"] = offset.get();
      if (d_.active_arg(item)) accumulate(a, item.var, d_.formula(f->second, env, call), out);
      FormulaEnv e2{{"o", offset.get()}, {"x", &item}, {"dim", env.count("dim") ? env.at("dim") : nullptr}};
      if (e2["dim"] != nullptr) offset = d_.formula("o + x.size(dim)", e2, call);
    }
  }

  // A call of a function with a custom_vjp rule: rule(args..., result, grad) gives the gradient of
  // each tensor argument (a tuple when there are several).
  void custom_vjp(const Expr& call, int result, int grad, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    const clang::FunctionDecl* rule = d_.resolver_.custom_vjp(call.callee);
    if (rule == nullptr) {
      d_.fail(call.range.getBegin(), "'" + call.op + "' has a custom_jvp rule but no custom_vjp; reverse mode (grad, "
                                     "vjp, jacrev) needs a custom_vjp rule for it");
      return;
    }
    std::vector<ExprPtr> args;
    std::vector<size_t> tensors;  // the argument of each gradient
    for (size_t i = 0; i < call.args.size(); ++i) {
      args.push_back(ir::clone(call.arg(i)));
      if (call.arg(i).type == ir::Type::Tensor) tensors.push_back(i);
    }
    args.push_back(d_.ref(result));
    args.push_back(d_.ref(grad));
    ExprPtr grads = user_call(rule, std::move(args));
    if (tensors.size() == 1) {
      if (d_.active_arg(call.arg(tensors[0]))) accumulate(a, call.arg(tensors[0]).var, std::move(grads), out);
      return;
    }
    std::vector<std::string> types(tensors.size(), "fg::Tensor");
    const int tuple = ir::add_var(*d_.fn_, d_.claim("d_" + call.op), ir::Type::TensorTuple,
                                  "std::tuple<" + cxx::join(types, ", ") + ">");
    grads->type = ir::Type::TensorTuple;
    out.push_back(ir::decl(tuple, std::move(grads)));
    for (size_t k = 0; k < tensors.size(); ++k) {
      if (!d_.active_arg(call.arg(tensors[k]))) continue;
      accumulate(a, call.arg(tensors[k]).var, ir::get(d_.ref(tuple), static_cast<int>(k)), out);
    }
  }

  // einsum: each active operand's gradient is an einsum of grad with the other operands
  // (einsum_rules.h), broadcast along the indices only that operand has.
  void einsum_vjp(const Expr& call, int grad, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    const Expr* list = d_.einsum_operands(call);
    if (list == nullptr) return;
    for (size_t k = 0; k < list->args.size() && d_.ok(); ++k) {
      const Expr& operand = *list->args[k];
      if (!d_.active_arg(operand)) continue;
      EinsumGradient g;
      if (std::string error = einsum_gradient(call.arg(0).text, k, list->args.size(), g); !error.empty()) {
        d_.fail(call.range.getBegin(), "einsum cannot be differentiated here: " + error);
        return;
      }
      std::vector<ExprPtr> items;
      items.push_back(d_.ref(grad));
      for (size_t i = 0; i < list->args.size(); ++i)
        if (i != k) items.push_back(ir::clone(*list->args[i]));
      for (int64_t p : g.identities) {
        ExprPtr at = ir::opaque(std::to_string(p), ir::Type::Int);
        items.push_back(d_.formula("fg::eye(x.size(p), x.options())", {{"x", &operand}, {"p", at.get()}}, call));
      }
      ExprPtr equation = ir::opaque(g.equation, call.arg(0).type);
      ExprPtr c = d_.einsum(*equation, std::move(items), call);
      for (int64_t p : g.unsqueeze) {
        ExprPtr at = ir::opaque(std::to_string(p), ir::Type::Int);
        c = d_.formula("c.unsqueeze(p)", {{"c", c.get()}, {"p", at.get()}}, call);
      }
      if (g.reshape)  // (c + zeros: c broadcast against the operand, whose '...' may be larger or smaller)
        c = d_.formula("fg::ad::sum_to(c + fg::zeros_like(x), x.sizes())", {{"c", c.get()}, {"x", &operand}}, call);
      else if (!g.unsqueeze.empty()) c = d_.formula("c.expand(x.sizes())", {{"c", c.get()}, {"x", &operand}}, call);
      else if (g.broadcast) c = d_.formula("fg::ad::sum_to(c, x.sizes())", {{"c", c.get()}, {"x", &operand}}, call);
      accumulate(a, operand.var, std::move(c), out);
    }
  }

  // y = vmap(g, in_dims, out_dim)(args): the gradient of each active argument is vmap of g's vjp
  // over the same batch (the cotangent mapped at out_dim), summed over the batch for arguments
  // that the vmap does not map (they were shared by every example).
  void vmapped_vjp(const Expr& call, int grad, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    const std::vector<int> wrt = d_.active_tensor_args(call);
    if (wrt.empty()) return;
    std::shared_ptr<const ir::Function> g =
        vjp_function(*call.vmapped, wrt, static_cast<size_t>(call.index), d_.module_, d_.resolver_, d_.reporter_, "vjp");
    if (!g) {
      d_.ok_ = false;
      return;
    }
    std::vector<std::optional<int64_t>> in_dims = call.in_dims;
    in_dims.resize(call.args.size());
    in_dims.push_back(call.out_dim);
    const int rng = setup_ != nullptr && draws_random(*call.vmapped) ? d_.rng_state(*setup_) : -1;
    for (size_t k = 0; k < wrt.size(); ++k) {
      int saved = -1;
      if (rng >= 0) {  // the vjp reruns the call's forward pass on the call's draws
        saved = ir::add_var(*d_.fn_, d_.claim("rng_saved"), ir::Type::Other, ir::kRngStateType);
        out.push_back(ir::decl(saved, d_.rng_replay(rng)));
      }
      const Expr& arg = call.arg(static_cast<size_t>(wrt[k]));
      const std::optional<int64_t> dim = in_dims[static_cast<size_t>(wrt[k])];
      std::vector<ExprPtr> args;
      for (const auto& x : call.args) args.push_back(ir::clone(*x));
      args.push_back(d_.ref(grad));
      ExprPtr c = ir::vmapped_call(g, std::move(args), in_dims, dim.value_or(0), static_cast<int>(k), call.op + "_vjp");
      c->range = call.range;
      c->chunk_size = call.chunk_size;  // its derivative runs over the same batch, in the same chunks
      c->randomness = call.randomness;  // and draws as it did (replayed)
      // An argument shared by the examples gets the sum of theirs; where the result is not batched
      // (out_dims=None), it is the same for every example, and so is each one's gradient.
      if (!dim) c = d_.formula(call.out_dim ? "c.sum({0})" : "c.select(0, 0)", {{"c", c.get()}}, call);
      accumulate(a, arg.var, std::move(c), out);
      if (saved >= 0) out.push_back(ir::eval(d_.rng_replay(saved)));  // back to where the generator was
    }
  }

  // The active values that the reverse of `bodies` adds gradients to and that they do not define.
  std::set<int> inputs(const std::vector<const std::vector<ir::StmtPtr>*>& bodies) const {
    std::set<int> defined, read;
    for (const auto* b : bodies)
      ir::for_each_stmt(*b, [&](const ir::Stmt& s) {
        if ((s.kind == ir::StmtKind::Decl || s.kind == ir::StmtKind::Assign) && s.var >= 0) defined.insert(s.var);
        if (Differentiator::tape_load(s) != nullptr && d_.active_.count(s.var) != 0)
          read.insert(s.expr->reads[0]);  // a trip read back: its tape gets the gradient
        if (s.kind == ir::StmtKind::Eval && s.expr && ir::is_tape_op(*s.expr) &&
            d_.active_.count(s.expr->reads.back()) != 0 && d_.fn_->var(s.expr->reads.back()).type == ir::Type::Tensor)
          read.insert(s.expr->reads.back());  // a value stored: it gets the gradient of its entry
        const Expr* e = d_.definition(s);
        if (e == nullptr || d_.active_.count(s.var) == 0) return;
        if (e->kind == ExprKind::VarRef && d_.active_arg(*e)) read.insert(e->var);
        if (e->kind == ExprKind::Call)
          for (const auto& arg : e->args) {
            if (d_.active_arg(*arg)) read.insert(arg->var);
            if (arg->kind == ExprKind::List)
              for (const auto& item : arg->args)
                if (d_.active_arg(*item)) read.insert(item->var);
          }
      });
    std::set<int> out;
    for (int r : read)
      if (defined.count(r) == 0) out.insert(r);
    return out;
  }

  // Accumulators, declared in `out`, for the gradients of `values` (those that have none yet).
  void accumulators(const std::set<int>& values, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    for (int v : values) {
      auto it = a.of.find(v);
      if (it == a.of.end() || a.accumulators.count(it->second) == 0) new_accumulator(v, a, out);
    }
  }

  // A variable for v's gradient that additions assign to, starting as its gradient so far or zeros.
  void new_accumulator(int v, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    auto it = a.of.find(v);
    if (d_.fn_->var(v).type == ir::Type::Other) {  // a tape: a tape of gradients, one per trip, none yet
      if (it != a.of.end()) return;  // tape_add adds to it in place
      const int id = ir::add_var(*d_.fn_, d_.claim("d_" + d_.fn_->var(v).name), ir::Type::Other,
                                 ir::value_type(d_.fn_->var(v)));
      out.push_back(ir::decl(id, nullptr));  // tape_add grows it (it is batched as the gradients added)
      tape_guards[out.back().get()] = id;
      tape_accumulators.insert(id);
      a.of[v] = id;
      a.accumulators.insert(id);
      return;
    }
    const int id = d_.tensor_var("d_" + d_.fn_->var(v).name);
    out.push_back(ir::decl(id, it != a.of.end() ? d_.ref(it->second) : d_.no_derivative(v)));
    a.of[v] = id;
    a.accumulators.insert(id);
  }

  void branch(ir::Stmt& s, Adjoints& a, std::vector<ir::StmtPtr>& out) {
    accumulators(inputs({&s.body, &s.else_body}), a, out);
    auto st = std::make_unique<ir::Stmt>();
    st->kind = ir::StmtKind::If;
    st->range = s.range;
    st->expr = ir::clone(*s.expr);  // the recorded condition
    Adjoints then_a = a, else_a = a;
    block(s.body, then_a, st->body);
    block(s.else_body, else_a, st->else_body);
    st->has_else = !st->else_body.empty();
    if (!st->body.empty() || st->has_else) out.push_back(std::move(st));
  }

  // A loop body's shape (anf.cpp): `x_prev = x` for each carried x (body[0, first)), the trip,
  // then `x = <value>` (body[last, end)).
  struct LoopShape {
    std::vector<std::pair<int, int>> carried;  // carried x, x_prev
    size_t first = 0, last = 0;
  };

  LoopShape shape_of(const ir::Stmt& s) const {
    LoopShape l;
    l.last = s.body.size();
    std::set<int> carried_vars;
    while (l.last > 0 && s.body[l.last - 1]->kind == ir::StmtKind::Assign && s.body[l.last - 1]->var >= 0 &&
           d_.fn_->var(s.body[l.last - 1]->var).type == ir::Type::Tensor)
      carried_vars.insert(s.body[--l.last]->var);
    while (l.first < l.last && s.body[l.first]->kind == ir::StmtKind::Decl && s.body[l.first]->expr &&
           s.body[l.first]->expr->kind == ExprKind::VarRef && carried_vars.count(s.body[l.first]->expr->var) != 0) {
      l.carried.emplace_back(s.body[l.first]->expr->var, s.body[l.first]->var);
      ++l.first;
    }
    return l;
  }

  // Whether the outputs' gradients depend on anything the loop computes.
  bool matters(const ir::Stmt& s, const Adjoints& a, const LoopShape& l, const std::set<int>& outer) const {
    if (!outer.empty()) return true;
    bool any = false;
    for (auto& [x, prev] : l.carried) any |= d_.active_.count(x) != 0 && a.of.count(x) != 0;
    ir::for_each_stmt(s.body, [&](const ir::Stmt& st) {  // stores of trips whose gradients came back
      any |= st.kind == ir::StmtKind::Eval && st.expr && ir::is_tape_op(*st.expr) && a.of.count(st.expr->reads[0]);
    });
    return any;
  }

  // The reverse trip: the carried values' gradients to the values the trip assigns, the body
  // backwards, then the gradients of the values the trip started from, for the trip before.
  // Differentiating the body may add statements to it (the counters and tapes of inner loops).
  std::vector<ir::StmtPtr> reverse_trip(ir::Stmt& s, LoopShape& l, const Adjoints& inner) {
    std::vector<ir::StmtPtr> trip;
    Adjoints t = inner;
    for (size_t i = s.body.size(); i-- > l.last;) statement(*s.body[i], t, trip);
    std::vector<ir::StmtPtr> middle;
    for (size_t i = l.first; i < l.last; ++i) middle.push_back(std::move(s.body[i]));
    block(middle, t, trip);
    std::vector<ir::StmtPtr> body;
    for (size_t i = 0; i < l.first; ++i) body.push_back(std::move(s.body[i]));
    for (auto& m : middle) body.push_back(std::move(m));
    for (size_t i = l.last; i < s.body.size(); ++i) body.push_back(std::move(s.body[i]));
    l.last = l.first + middle.size();
    s.body = std::move(body);
    for (auto& [x, prev] : l.carried) {
      if (d_.active_.count(x) == 0) continue;
      auto g = t.of.find(prev);
      trip.push_back(ir::assign(inner.of.at(x), g != t.of.end() ? d_.ref(g->second) : d_.no_derivative(prev)));
    }
    return trip;
  }

  // `setup`: statements the forward pass needs before the loop (its trip counter and tapes).
  void loop(ir::Stmt& s, Adjoints& a, std::vector<ir::StmtPtr>& out, std::vector<ir::StmtPtr>& setup) {
    LoopShape l = shape_of(s);
    const std::set<int> outer = inputs({&s.body});
    if (!matters(s, a, l, outer)) return;
    Adjoints inner = a;
    accumulators(outer, inner, out);
    for (auto& [x, prev] : l.carried)  // a trip's x starts as the gradient of the value it leaves
      if (d_.active_.count(x) != 0) new_accumulator(x, inner, out);
    std::vector<ir::StmtPtr> trip = reverse_trip(s, l, inner);
    if (!d_.ok()) return;
    if (!trip.empty()) {  // (no gradient reaches what the loop computes: a count on a tensor's value)
      auto rev = record_trips(s, l.last, std::move(trip), setup);
      if (!rev) return;
      out.push_back(std::move(rev));
    }
    for (auto& [x, prev] : l.carried)
      if (inner.of.count(x)) {
        a.of[x] = inner.of.at(x);
        a.accumulators.insert(inner.of.at(x));
      }
    for (int v : outer) {
      a.of[v] = inner.of.at(v);
      a.accumulators.insert(inner.of.at(v));
    }
  }

  // The variables that the loop declares (its header and its body, where declarations are
  // hoisted), and those that nested statements declare.
  static void loop_locals(const ir::Stmt& s, std::set<int>& local, std::set<int>& nested) {
    for (const auto& i : s.init)
      if (i->kind == ir::StmtKind::Decl) local.insert(i->var);
    for (const auto& st : s.body)
      if (st->kind == ir::StmtKind::Decl) local.insert(st->var);
    ir::for_each_stmt(s.body, [&](const ir::Stmt& st) {
      if (st.kind == ir::StmtKind::Decl && local.count(st.var) == 0) nested.insert(st.var);
    });
  }

  // The forward loop counts its trips and keeps, per trip, what the reverse trip reads of it; the
  // reverse loop (returned; null on an error) runs the trips backwards on what was kept.
  ir::StmtPtr record_trips(ir::Stmt& s, size_t last, std::vector<ir::StmtPtr> trip, std::vector<ir::StmtPtr>& setup) {
    const int count = ir::add_var(*d_.fn_, d_.claim("trips"), ir::Type::Int, "int64_t");
    setup.push_back(ir::decl(count, ir::opaque("0", ir::Type::Int)));
    std::set<int> local, nested_decls;
    loop_locals(s, local, nested_decls);
    const int index = ir::add_var(*d_.fn_, d_.claim("trip"), ir::Type::Int, "int64_t");
    std::vector<ir::StmtPtr> restore, at_start, at_end;
    at_start.push_back(ir::assign(count, ir::opaque("1", ir::Type::Int)));
    at_start.back()->text = "+=";
    std::set<int> own;  // what the reverse trip declares itself (its gradients, inner loops' restores)
    ir::for_each_stmt(trip, [&](const ir::Stmt& st) {
      if (st.kind == ir::StmtKind::Decl) own.insert(st.var);
    });
    for (int v : ir::reads_of(trip)) {
      if (own.count(v) != 0) continue;
      if (nested_decls.count(v) != 0) {
        d_.fail(s.range.getBegin(), "the reverse pass of this loop needs '" + d_.fn_->var(v).name +
                                        "', which a nested statement declares; declare it in the loop body");
        return nullptr;
      }
      if (local.count(v) == 0) continue;
      const ir::Var var = d_.fn_->var(v);  // a copy: adding the tape's variable moves the others
      const int tape = ir::add_var(*d_.fn_, d_.claim(var.name + "_tape"), ir::Type::Other,
                                   "std::vector<" + ir::value_type(var) + ">");
      setup.push_back(ir::decl(tape, nullptr));
      const bool in_header = std::any_of(s.init.begin(), s.init.end(), [&](const auto& i) { return i->var == v; });
      (in_header ? at_start : at_end).push_back(ir::eval(ir::tape_op(*d_.fn_, ir::kTapePush, {tape, v}, ir::Type::Void)));
      restore.push_back(ir::decl(v, ir::tape_op(*d_.fn_, ir::kTapeAt, {tape, index}, var.type)));
    }
    // The forward body: count, store the header's values, the trip, store its values, carry.
    std::vector<ir::StmtPtr> body;
    for (auto& st : at_start) body.push_back(std::move(st));
    for (size_t i = 0; i < last; ++i) body.push_back(std::move(s.body[i]));
    for (auto& st : at_end) body.push_back(std::move(st));
    for (size_t i = last; i < s.body.size(); ++i) body.push_back(std::move(s.body[i]));
    s.body = std::move(body);

    auto rev = std::make_unique<ir::Stmt>();
    rev->kind = ir::StmtKind::For;
    rev->range = s.range;
    rev->init.push_back(ir::decl(index, d_.ref(count)));
    rev->expr = ir::opaque(d_.fn_->var(index).name + "-- > 0", ir::Type::Bool);
    rev->expr->reads = {index};
    rev->expr->writes = {index};
    for (auto& st : restore) rev->body.push_back(std::move(st));
    for (auto& st : trip) rev->body.push_back(std::move(st));
    return rev;
  }

  Differentiator& d_;
};

}  // namespace

ReverseResult reverse(const ir::Function& normalized, const std::vector<int>& wrt, size_t differentiated, bool seed,
                      const std::string& name, const ir::Module& module, const OpResolver& resolver, Reporter& reporter) {
  Differentiator d(normalized, module, resolver, reporter);
  Reverse rev(d);
  ReverseResult r;
  std::vector<ir::StmtPtr> forward;
  for (size_t i = 0; i + 1 < normalized.body.size(); ++i) forward.push_back(ir::clone(*normalized.body[i]));
  rev.hoist(forward);
  d.find_maybe_undefined(forward);
  std::vector<int> wrt_ids;
  for (int w : wrt) wrt_ids.push_back(normalized.params[static_cast<size_t>(w)]);
  d.find_active(forward, wrt_ids);
  r.outputs = d.outputs_;
  if (!d.ok()) return r;

  Reverse::Adjoints adjoints;
  std::vector<ir::StmtPtr> backward;
  // A list parameter's gradients, added where its elements are read (tape_add): declared here, not
  // as a tape accumulator, which prune_tape_gradients would drop when no element gets one, while
  // list_gradient still reads it.
  for (int w : wrt_ids)
    if (d.fn_->var(w).type == ir::Type::TensorList) {
      const int id = ir::add_var(*d.fn_, d.claim("d_" + d.fn_->var(w).name), ir::Type::Other, "std::vector<fg::Tensor>");
      backward.push_back(ir::decl(id, nullptr));
      adjoints.of[w] = id;
      adjoints.accumulators.insert(id);
    }
  for (size_t k = 0; k < differentiated && k < r.outputs.size(); ++k) {
    const int out = r.outputs[k];
    if (seed) {
      ExprPtr o = d.ref(out);
      ExprPtr n = ir::opaque("\"" + name + "\"", ir::Type::Other);
      Expr at;
      at.op = "grad";
      const int id = d.tensor_var("d_" + d.fn_->var(out).name);
      backward.push_back(ir::decl(id, d.formula("fg::ad::grad_seed(out, name)", {{"out", o.get()}, {"name", n.get()}}, at)));
      adjoints.of[out] = id;
    } else {
      const int id = d.tensor_param("ct_" + d.fn_->var(out).name);
      r.cotangents.push_back(id);
      // One value returned as several outputs (`return {s, s};`, an input returned twice, a copy
      // the normalizer folded into its source): its gradient is the sum of their cotangents.
      if (adjoints.of.count(out) == 0) adjoints.of[out] = id;
      else rev.accumulate(adjoints, out, d.ref(id), backward);
    }
  }
  rev.block(forward, adjoints, backward);
  rev.prune_tape_gradients(backward);
  if (!d.ok()) return r;
  for (int w : wrt_ids) {
    if (d.fn_->var(w).type == ir::Type::TensorList) {
      const int id = ir::add_var(*d.fn_, d.claim("grad_" + d.fn_->var(w).name), ir::Type::TensorList,
                                 "std::vector<fg::Tensor>");
      backward.push_back(ir::decl(id, d.list_gradient(adjoints.of.at(w), w)));
      r.grads.push_back(id);
      continue;
    }
    if (auto it = adjoints.of.find(w); it != adjoints.of.end()) {
      r.grads.push_back(it->second);
      continue;
    }
    // The outputs do not depend on this input: its gradient is zero.
    const int id = d.tensor_var("d_" + d.fn_->var(w).name);
    backward.push_back(ir::decl(id, d.zeros_like(w)));
    r.grads.push_back(id);
  }
  r.forward_size = forward.size();
  d.fn_->body = std::move(forward);
  for (auto& s : backward) d.fn_->body.push_back(std::move(s));
  r.fn = std::move(d.fn_);
  return r;
}

namespace {

// Forward mode: each statement, then the tangent of what it defines. Control flow keeps its shape
// (a branch's tangents are computed in the branch, a loop's in the loop); a value defined in
// several places (merged after an if, carried around a loop) has one tangent variable, declared
// where the value is and assigned where it is.
class Forward {
 public:
  Forward(Differentiator& d) : d_(d) {}

  std::map<int, int> tangent;

  void block(std::vector<ir::StmtPtr>& in, std::vector<ir::StmtPtr>& out) {
    for (auto& s : in) {
      if (!d_.ok()) return;
      for (auto* children : {&s->init, &s->body, &s->else_body}) {
        std::vector<ir::StmtPtr> inner = std::move(*children);
        children->clear();
        block(inner, *children);
      }
      const Expr* e = d_.definition(*s);
      const int var = s->var;
      const bool is_decl = s->kind == ir::StmtKind::Decl;
      const bool active = d_.active_.count(var) != 0;
      const ir::Stmt& st = *s;
      // A vmapped call of a random function: its jvp reruns it, on the same draws.
      const bool replay = active && e != nullptr && e->kind == ExprKind::Call && e->form == ir::CallForm::Vmapped &&
                          draws_random(*e->vmapped);
      const int rng = replay ? d_.rng_state(out) : -1;
      out.push_back(std::move(s));
      if (rng >= 0) out.push_back(ir::eval(d_.rng_replay(rng)));
      if (tape(st, out)) continue;
      if (!active) continue;
      if (e == nullptr) {  // declared without a value: so is its tangent
        if (is_decl) out.push_back(ir::decl(tangent_var(var), nullptr));
        continue;
      }
      ExprPtr t = e->kind == ExprKind::Call ? of_call(*e, var)
                  : ir::is_tape_op(*e)      ? load_tangent(*e)
                                            : of_value(e->var);
      if (!t) continue;
      if (is_decl) out.push_back(ir::decl(tangent_var(var), std::move(t)));
      else out.push_back(ir::assign(tangent.at(var), std::move(t)));
    }
  }

  // A tape of active values (a reverse pass's loop trips) has a tape of their tangents beside it:
  // declared with it, pushed to with it, read back with it (`out` gets those statements; a tape
  // of a nested loop's tapes holds their tapes of tangents). Whether `s` was one of those.
  bool tape(const ir::Stmt& s, std::vector<ir::StmtPtr>& out) {
    const bool is_tape_var = s.var >= 0 && d_.fn_->var(s.var).type == ir::Type::Other;
    if (is_tape_var && s.kind == ir::StmtKind::Assign && Differentiator::tape_load(s) != nullptr) {
      if (d_.active_.count(s.var) == 0) return false;
      auto it = tangent.find(s.var);
      ExprPtr load = load_tangent(*s.expr);
      if (it == tangent.end()) d_.fail(s.range.getBegin(), "internal error: a tape assigned before its tangents");
      else if (load) out.push_back(ir::assign(it->second, std::move(load)));
      return true;
    }
    if (is_tape_var && s.kind == ir::StmtKind::Decl && (!s.expr || ir::is_tape_op(*s.expr))) {
      if (d_.active_.count(s.var) == 0) return false;
      const ir::Var v = d_.fn_->var(s.var);  // a copy: adding variables moves the vector
      const std::string name = v.name + "_tangent", type = ir::value_type(v);
      ExprPtr load = s.expr ? load_tangent(*s.expr) : nullptr;
      if (s.expr && !load) return true;
      const int id = ir::add_var(*d_.fn_, d_.claim(name), ir::Type::Other, type);
      tangent[s.var] = id;
      out.push_back(ir::decl(id, std::move(load)));
      return true;
    }
    if (s.kind != ir::StmtKind::Eval || !s.expr || !ir::is_tape_op(*s.expr)) return false;
    // tape_push(tape, value) and tape_add(tape, i, value): the same on the tape of tangents.
    const int tape = s.expr->reads[0], value = s.expr->reads.back();
    if (d_.active_.count(tape) == 0) return true;
    auto tt = tangent.find(tape);
    int t = -1;
    if (auto it = tangent.find(value); it != tangent.end()) {
      t = it->second;
    } else if (d_.fn_->var(value).type == ir::Type::Tensor) {  // a trip on which it does not depend on the inputs
      t = d_.tensor_var(d_.fn_->var(value).name + "_tangent");
      out.push_back(ir::decl(t, d_.zero_gradient(value)));
    }
    if (t < 0 || tt == tangent.end()) {
      d_.fail(s.range.getBegin(), "internal error: a stored tape without its tangents");
      return true;
    }
    std::vector<int> operands = s.expr->reads;
    operands.front() = tt->second;
    operands.back() = t;
    out.push_back(ir::eval(ir::tape_op(*d_.fn_, s.expr->op, operands, ir::Type::Void)));
    return true;
  }


  // The tangent of a value read from a tape (tape_at, tape_read, tape_pop): read the same way
  // from the tape of tangents.
  ExprPtr load_tangent(const Expr& load) {
    auto it = tangent.find(load.reads[0]);
    if (it == tangent.end()) {
      d_.fail(load.range.getBegin(), "internal error: a stored loop trip read before its tape is declared");
      return nullptr;
    }
    std::vector<int> operands = load.reads;
    operands.front() = it->second;
    return ir::tape_op(*d_.fn_, load.op, operands, load.type);
  }

  // The tangent of `value` (zeros when it does not depend on the inputs).
  ExprPtr of_value(int value) {
    if (auto t = tangent.find(value); t != tangent.end()) return d_.ref(t->second);
    return d_.no_derivative(value);
  }

 private:
  int tangent_var(int var) {
    const int id = d_.tensor_var(d_.fn_->var(var).name + "_tangent");
    tangent[var] = id;
    return id;
  }

  // The tangent contribution of a list argument: the rule on the list of the elements' tangents.
  ExprPtr list_jvp(const Expr& call, const OpView& v, size_t a, FormulaEnv env) {
    const Expr& list = call.arg(a);
    bool any = false;
    for (const auto& item : list.args) any |= d_.active_arg(*item);
    if (!any) return nullptr;
    auto f = v.rule->jvp.find(v.params[a]);
    if (f == v.rule->jvp.end()) {
      d_.fail(call.range.getBegin(), "'" + call.op + "' has no forward-mode rule for its argument '" + v.params[a] + "'");
      return nullptr;
    }
    auto tangents = std::make_unique<Expr>();
    tangents->kind = ExprKind::List;
    tangents->type = ir::Type::TensorList;
    for (const auto& item : list.args) {
      if (item->kind != ExprKind::VarRef) {
        d_.fail(call.range.getBegin(), "internal error: an element of the list of '" + call.op + "' is not a value");
        return nullptr;
      }
      tangents->args.push_back(of_value(item->var));
    }
    env["tangents"] = tangents.get();
    return d_.formula(f->second, env, call);
  }

  // A call of a function with a custom_jvp rule: rule(args..., one tangent per tensor argument).
  ExprPtr custom_jvp(const Expr& call) {
    const clang::FunctionDecl* rule = d_.resolver_.custom_jvp(call.callee);
    if (rule == nullptr) {
      d_.fail(call.range.getBegin(), "'" + call.op + "' has a custom_vjp rule but no custom_jvp; forward mode (jvp, "
                                     "jacfwd, hessian) needs a custom_jvp rule for it");
      return nullptr;
    }
    std::vector<ExprPtr> args, tangents;
    for (const auto& a : call.args) {
      args.push_back(ir::clone(*a));
      if (a->type == ir::Type::Tensor) tangents.push_back(a->kind == ExprKind::VarRef ? of_value(a->var) : nullptr);
    }
    for (auto& t : tangents) {
      if (!t) {
        d_.fail(call.range.getBegin(), "internal error: an argument of '" + call.op + "' is not a value");
        return nullptr;
      }
      args.push_back(std::move(t));
    }
    return user_call(rule, std::move(args));
  }

  // einsum is linear in each operand: the tangent is the sum over the active operands of the
  // einsum with that operand replaced by its tangent.
  ExprPtr einsum_jvp(const Expr& call, int var) {
    const Expr* list = d_.einsum_operands(call);
    if (list == nullptr) return nullptr;
    if (std::string error = einsum_check(call.arg(0).text, list->args.size()); !error.empty()) {
      d_.fail(call.range.getBegin(), "einsum cannot be differentiated here: " + error);
      return nullptr;
    }
    ExprPtr total;
    for (size_t k = 0; k < list->args.size(); ++k) {
      if (!d_.active_arg(*list->args[k])) continue;
      std::vector<ExprPtr> items;
      for (size_t i = 0; i < list->args.size(); ++i)
        items.push_back(i == k ? of_value(list->args[i]->var) : ir::clone(*list->args[i]));
      ExprPtr c = d_.einsum(call.arg(0), std::move(items), call);
      total = total ? d_.sum(std::move(total), std::move(c), call) : std::move(c);
    }
    return total ? std::move(total) : of_value(var);
  }

  // y = vmap(g, in_dims, out_dim)(args): its tangent is vmap of g's jvp over the same batch, each
  // active argument's tangent mapped as the argument is.
  ExprPtr vmapped_jvp(const Expr& call) {
    const std::vector<int> wrt = d_.active_tensor_args(call);
    std::shared_ptr<const ir::Function> g =
        jvp_function(*call.vmapped, wrt, d_.module_, d_.resolver_, d_.reporter_, "jvp");
    if (!g) {
      d_.ok_ = false;
      return nullptr;
    }
    std::vector<std::optional<int64_t>> in_dims = call.in_dims;
    in_dims.resize(call.args.size());
    std::vector<ExprPtr> args;
    for (const auto& x : call.args) args.push_back(ir::clone(*x));
    for (int i : wrt) {
      args.push_back(of_value(call.arg(static_cast<size_t>(i)).var));
      in_dims.push_back(in_dims[static_cast<size_t>(i)]);
    }
    ExprPtr t = ir::vmapped_call(g, std::move(args), in_dims, call.out_dim, call.index, call.op + "_jvp");
    t->range = call.range;
    t->chunk_size = call.chunk_size;
    t->randomness = call.randomness;
    return t;
  }

  ExprPtr of_call(const Expr& call, int var) {
    if (call.form == ir::CallForm::User) return custom_jvp(call);
    if (call.form == ir::CallForm::Vmapped) return vmapped_jvp(call);
    const auto v = view_of_call(call);
    if (v.rule->from_equation) return einsum_jvp(call, var);
    std::vector<ExprPtr> keep;
    FormulaEnv env = d_.env_of(call, v, keep);
    ExprPtr result = d_.ref(var);
    env["result"] = result.get();
    ExprPtr total;
    for (size_t a = 0; a < call.args.size(); ++a) {
      ExprPtr c;
      if (call.arg(a).kind == ExprKind::List && call.arg(a).type == ir::Type::TensorList) {
        c = list_jvp(call, v, a, env);
      } else {
        if (!d_.active_arg(call.arg(a)) || v.rule->shape_only.count(v.params[a])) continue;
        const JvpFormula f = jvp_of(*v.rule, v.params[a]);
        if (f.text == nullptr) {
          d_.fail(call.range.getBegin(), "'" + call.op + "' has no forward-mode rule for its argument '" + v.params[a] + "'");
          return nullptr;
        }
        auto t = tangent.find(call.arg(a).var);
        if (t == tangent.end()) continue;
        ExprPtr tan = d_.ref(t->second);
        env[f.tangent] = tan.get();  // `grad` in an element-wise op's VJP formula, used as its JVP
        c = d_.formula(*f.text, env, call);
      }
      if (c) total = total ? d_.add_to(var, std::move(total), std::move(c), call) : std::move(c);
    }
    if (!total) return of_value(var);  // active only through arguments without a tangent yet
    if (v.rule->broadcasts) {
      FormulaEnv e2{{"t", total.get()}, {"r", result.get()}};
      total = d_.formula("t.expand(r.sizes())", e2, call);
    }
    return total;
  }

  Differentiator& d_;
};

}  // namespace

ForwardResult forward(const ir::Function& normalized, const std::vector<int>& wrt, size_t differentiated,
                      const ir::Module& module, const OpResolver& resolver, Reporter& reporter) {
  Differentiator d(normalized, module, resolver, reporter);
  ForwardResult r;
  r.outputs = d.outputs_;
  Forward f(d);
  std::vector<int> wrt_ids;
  for (int w : wrt) {
    const int p = normalized.params[static_cast<size_t>(w)];
    wrt_ids.push_back(p);
    f.tangent[p] = d.tangent_param(p, d.fn_->var(p).name + "_tangent");
  }
  std::vector<ir::StmtPtr> body;
  for (size_t i = 0; i + 1 < normalized.body.size(); ++i) body.push_back(ir::clone(*normalized.body[i]));
  d.find_active(body, wrt_ids);
  d.find_maybe_undefined(body);
  if (!d.ok()) return r;
  for (int p : wrt_ids)  // a list's tangents are read at its indices: as many as its tensors
    if (d.fn_->var(p).type == ir::Type::TensorList) {
      const std::string& name = d.fn_->var(p).name;
      ExprPtr check = ir::opaque("fg::ad::check_tangent_list(" + name + ", " + d.fn_->var(f.tangent.at(p)).name +
                                     ", \"" + name + "\")",
                                 ir::Type::Void);
      check->reads = {p, f.tangent.at(p)};
      d.fn_->body.push_back(ir::eval(std::move(check)));
    }
  f.block(body, d.fn_->body);
  for (size_t k = 0; k < differentiated && k < r.outputs.size(); ++k) {
    const int out = r.outputs[k];
    if (auto t = f.tangent.find(out); t != f.tangent.end()) {
      r.tangents.push_back(t->second);
      continue;
    }
    const int id = d.tensor_var(d.fn_->var(out).name + "_tangent");
    d.fn_->body.push_back(ir::decl(id, f.of_value(out)));
    r.tangents.push_back(id);
  }
  if (!d.ok()) return r;
  r.fn = std::move(d.fn_);
  return r;
}

namespace {
// Removes the top-level declarations of tensors by op calls whose values nothing reads (forward
// values that a derivative does not need), last first so that chains go too. Random ops stay:
// dropping one would change what the ops after it draw.
void drop_unused(ir::Function& fn) {
  std::vector<ir::StmtPtr> kept;
  std::set<int> read;
  for (size_t i = fn.body.size(); i-- > 0;) {
    ir::StmtPtr& s = fn.body[i];
    const Expr* e = s->expr.get();
    const bool droppable = s->kind == ir::StmtKind::Decl && s->var >= 0 && fn.var(s->var).type == ir::Type::Tensor &&
                           e != nullptr && e->kind == ExprKind::Call &&
                           (e->form == ir::CallForm::Free || e->form == ir::CallForm::Method ||
                            e->form == ir::CallForm::Operator || e->form == ir::CallForm::Vmapped) &&
                           !e->op.empty() && !ops::info(*e).inplace_form() &&
                           (e->form == ir::CallForm::Vmapped || funcgen::find_rule(e->op).rule != BatchRule::Random);
    if (droppable && read.count(s->var) == 0) continue;
    std::vector<ir::StmtPtr> one;
    one.push_back(std::move(s));
    for (int r : ir::reads_of(one)) read.insert(r);
    ir::for_each_stmt(one, [&](const ir::Stmt& st) {
      if (st.var >= 0) read.insert(st.var);  // assigned later: its declaration stays
    });
    kept.push_back(std::move(one[0]));
  }
  fn.body.assign(std::make_move_iterator(kept.rbegin()), std::make_move_iterator(kept.rend()));
}

ExprPtr returned_refs(const ir::Function& fn, const std::vector<int>& ids) {
  if (ids.size() == 1) return ir::var_ref(fn, ids[0]);
  std::vector<ExprPtr> items;
  for (int id : ids) items.push_back(ir::var_ref(fn, id));
  return ir::tuple(std::move(items));
}
}  // namespace

std::unique_ptr<ir::Function> vjp_function(const ir::Function& fn, const std::vector<int>& wrt, size_t output,
                                           const ir::Module& module, const OpResolver& resolver, Reporter& reporter,
                                           const std::string& what) {
  auto n = normalize(fn, module, reporter, what, resolver);
  if (!n) return nullptr;
  const auto outs = returned(*n);
  if (output >= outs.size()) return nullptr;
  // Only the output whose cotangent is given.
  const int value = outs[output]->var;
  n->body.pop_back();
  ir::finish(*n, ir::var_ref(*n, value));
  ReverseResult r = reverse(*n, wrt, 1, false, what, module, resolver, reporter);
  if (!r.fn) return nullptr;
  ir::finish(*r.fn, returned_refs(*r.fn, r.grads));
  drop_unused(*r.fn);  // the output itself, when its gradient does not read it
  return std::move(r.fn);
}

std::unique_ptr<ir::Function> jvp_function(const ir::Function& fn, const std::vector<int>& wrt, const ir::Module& module,
                                           const OpResolver& resolver, Reporter& reporter, const std::string& what) {
  auto n = normalize(fn, module, reporter, what, resolver);
  if (!n) return nullptr;
  ForwardResult r = forward(*n, wrt, returned(*n).size(), module, resolver, reporter);
  if (!r.fn) return nullptr;
  ir::finish(*r.fn, returned_refs(*r.fn, r.tangents));
  return std::move(r.fn);
}

}  // namespace funcgen::ad
