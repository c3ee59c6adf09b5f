// simplify.h: value numbering over straight-line code (an expression's key is its op and its
// operands' keys; locals are assigned once), then a backward liveness walk.
#include "transforms/simplify.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/build.h"
#include "ops/batching_rules.h"
#include "ops/inplace.h"
#include "ops/registry.h"
#include "transforms/ad/differentiate.h"

namespace funcgen {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::Stmt;
using ir::StmtKind;

// A runtime op that computes its result from its operands only: no state, no randomness, no
// writes to its operands.
bool pure_op(const Expr& e) {
  if (e.form != ir::CallForm::Free && e.form != ir::CallForm::Method && e.form != ir::CallForm::Operator) return false;
  // Ops that write into arguments (in place, out=, templates/inplace.def's FG_WRITES: batch_norm's
  // running statistics), and attention, the one op whose batching rule is not Random that draws
  // (its dropout).
  if (ops::info(e).writes_arguments || ops::id(e) == ops::scaled_dot_product_attention) return false;
  const OpRule rule = find_rule(e.op);
  return rule.rule != BatchRule::None && rule.rule != BatchRule::Random;
}

// Literals, enumerators and names: text whose value cannot change between two reads.
bool constant_text(const std::string& t) {
  for (char c : t)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '.' || c == '-' || c == '+' ||
          c == '{' || c == '}' || c == '"' || c == ' '))
      return false;
  return true;
}

// Whether no expression of fn writes state: in-place ops, helpers, lambdas and writing text make
// two evaluations of one expression differ, or a local change after it was read.
bool without_writes(const Expr& root) {
  bool ok = true;
  ir::for_each_expr(root, [&](const Expr& e) {
    if (e.kind == ExprKind::Lambda || e.kind == ExprKind::Member) ok = false;
    if (e.kind == ExprKind::Opaque && (!e.writes.empty() || ir::is_tape_op(e))) ok = false;
    if (e.kind != ExprKind::Call) return;
    if (e.form == ir::CallForm::User || e.form == ir::CallForm::External) ok = false;
    if (e.form == ir::CallForm::Vmapped) return;
    if (writes_arguments(e.op)) ok = false;  // (an out= op too: `buf.sin()` after it is not before)
  });
  return ok;
}

bool eligible(const ir::Function& fn) {
  for (size_t i = 0; i < fn.body.size(); ++i) {
    const Stmt& s = *fn.body[i];
    const bool decl = s.kind == StmtKind::Decl && s.expr && !s.is_static_local;
    const bool last_return = s.kind == StmtKind::Return && i + 1 == fn.body.size();
    if (!decl && !last_return) return false;
    if (s.expr && !without_writes(*s.expr)) return false;
  }
  return true;
}

// The value number of e: equal keys, equal values (in straight-line code of pure ops); "" when e
// has none (an impure op, a random one, text that may change).
std::string key(const Expr& e) {
  std::string k;
  switch (e.kind) {
    case ExprKind::VarRef:
      return "v" + std::to_string(e.var);
    case ExprKind::Opaque:
      return constant_text(e.text) && e.reads.empty() ? "'" + e.text + "'" : "";
    case ExprKind::Call:
      if (!pure_op(e)) return "";
      k = e.op + "#" + std::to_string(static_cast<int>(e.form)) + e.template_args;
      break;
    case ExprKind::Unary:
    case ExprKind::Binary:
    case ExprKind::Cast:
      k = e.text;
      break;
    case ExprKind::List:
      k = "{}";
      break;
    case ExprKind::Tuple:
      k = "tuple";
      break;
    case ExprKind::Get:
      k = "get" + std::to_string(e.index);
      break;
    default:
      return "";
  }
  std::vector<std::string> args;
  for (const auto& a : e.args) {
    args.push_back(key(*a));
    if (args.back().empty()) return "";
  }
  // a + b and b + a, a * b and b * a: one value (IEEE addition and multiplication commute, and so
  // do broadcasting and type promotion); the product rule of x * x makes both.
  if (e.kind == ExprKind::Call && (ops::id(e) == ops::add || ops::id(e) == ops::mul) && args.size() == 2) std::sort(args.begin(), args.end());
  k += "(";
  for (const std::string& a : args) k += a + ",";
  return k + ")";
}

// Whether evaluating e can only compute (no checks whose error a user expects, no random draws).
bool removable(const Expr& root) {
  bool ok = true;
  ir::for_each_expr(root, [&](const Expr& e) {
    if (e.kind != ExprKind::Call) return;
    if (e.form == ir::CallForm::Vmapped)
      ok &= !ad::draws_random(*e.vmapped);
    else
      ok &= pure_op(e) && ops::id(e) != ops::ad_grad_seed && ops::id(e) != ops::ad_checked;
  });
  return ok;
}

class Simplifier {
 public:
  explicit Simplifier(ir::Function& fn) : fn_(fn) {}

  bool run() {
    const std::set<int> outputs = output_storage();
    for (auto& s : fn_.body) {
      if (!s->expr || s->kind == StmtKind::Return) continue;  // outputs are returned as computed
      // A local whose storage an output has (itself, a view or a copy of the handle) keeps its own
      // computation: equal outputs are distinct tensors (a caller may write one in place).
      if (outputs.count(s->var) != 0)
        for (auto& a : s->expr->args) number(a);
      else
        number(s->expr);
      // (Every other statement is a Decl: eligible.) Tensors only: a scalar local may hold a
      // converted value (a float of a double).
      if (s->expr->kind != ExprKind::VarRef && fn_.var(s->var).type == ir::Type::Tensor &&
          s->expr->type == ir::Type::Tensor) {
        const std::string k = key(*s->expr);
        if (!k.empty()) held_.emplace(k, s->var);
      }
    }
    return eliminate() || changed_;
  }

 private:
  // The locals whose storage the returned tensors may share: the returned ones, and back from
  // them through handle copies, views (templates/views.def) and ops that may return their operand
  // (`to`, `contiguous`).
  std::set<int> output_storage() const {
    std::set<int> out;
    // The locals whose memory e may be (a fresh result has none).
    std::function<void(const Expr&)> bases = [&](const Expr& e) {
      if (e.kind == ExprKind::VarRef) out.insert(e.var);
      if (e.kind == ExprKind::Tuple)
        for (const auto& a : e.args) bases(*a);
      const bool aliasing = e.kind == ExprKind::Get ||
                            (e.kind == ExprKind::Call && (is_view_op(e.op) || find_rule(e.op).rule == BatchRule::Like));
      if (aliasing && !e.args.empty()) bases(*e.args[0]);
    };
    const Stmt& last = *fn_.body.back();
    if (last.kind == StmtKind::Return && last.expr) bases(*last.expr);
    for (size_t i = fn_.body.size(); i-- > 0;) {
      const Stmt& s = *fn_.body[i];
      if (s.kind == StmtKind::Decl && out.count(s.var) != 0) bases(*s.expr);
    }
    return out;
  }

  // Replaces e and its operands by the locals that already hold their values.
  void number(ir::ExprPtr& e) {
    for (auto& a : e->args) number(a);
    if (e->kind != ExprKind::Call) return;
    const std::string k = key(*e);
    if (k.empty()) return;
    auto it = held_.find(k);
    if (it == held_.end() || fn_.var(it->second).type != e->type) return;
    ir::ExprPtr ref = ir::var_ref(fn_, it->second);
    ref->range = e->range;
    e = std::move(ref);
    changed_ = true;
  }

  // Drops the locals that transforms made and no output needs (a user's own are kept: their ops
  // may raise the errors the user expects).
  bool eliminate() {
    std::set<int> live;
    bool removed = false;
    for (size_t i = fn_.body.size(); i-- > 0;) {
      Stmt& s = *fn_.body[i];
      if (s.kind == StmtKind::Decl && live.count(s.var) == 0 && s.ast == nullptr && removable(*s.expr)) {
        fn_.body.erase(fn_.body.begin() + static_cast<std::ptrdiff_t>(i));
        removed = true;
        continue;
      }
      if (!s.expr) continue;  // `return;`
      ir::for_each_expr(*s.expr, [&](const Expr& e) {
        if (e.kind == ExprKind::VarRef) live.insert(e.var);
        live.insert(e.reads.begin(), e.reads.end());
      });
    }
    return removed;
  }

  ir::Function& fn_;
  std::map<std::string, int> held_;
  bool changed_ = false;
};

}  // namespace

std::unique_ptr<ir::Function> simplify(const ir::Function& fn) {
  if (fn.body.empty() || !eligible(fn)) return nullptr;
  std::unique_ptr<ir::Function> copy = ir::copy_function(fn);
  if (!Simplifier(*copy).run()) return nullptr;
  return copy;
}

}  // namespace funcgen
