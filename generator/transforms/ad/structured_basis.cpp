// The structured-basis rewrite (structured_basis.h): a forward walk over the function's top-level
// statements that tracks which locals are the basis or a diagonal of it (`basis * v`, held as v),
// and which depend on it at all (a product's rows).
#include "transforms/ad/structured_basis.h"

#include <functional>
#include <set>
#include <string>

#include "ir/build.h"
#include "ops/registry.h"
#include "transforms/ad/differentiate.h"
#include "transforms/fuse.h"

namespace funcgen::ad {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::Stmt;
using ir::StmtKind;

void add_reads(const Expr& e, std::set<int>& out) {
  ir::for_each_expr(e, [&](const Expr& x) {
    if (x.kind == ExprKind::VarRef) out.insert(x.var);
    out.insert(x.reads.begin(), x.reads.end());
  });
}
// The locals an expression writes (tape and list operations, C++ text).
void add_writes(const Expr& e, std::set<int>& out) {
  ir::for_each_expr(e, [&](const Expr& x) { out.insert(x.writes.begin(), x.writes.end()); });
}

// The locals a statement (and the statements in it) reads and writes.
void effects(const Stmt& s, std::set<int>& reads, std::set<int>& writes) {
  if (s.expr) add_reads(*s.expr, reads);
  if (s.step) add_reads(*s.step, reads);
  if (s.expr) add_writes(*s.expr, writes);
  if (s.step) add_writes(*s.step, writes);
  reads.insert(s.reads.begin(), s.reads.end());
  writes.insert(s.writes.begin(), s.writes.end());
  if ((s.kind == StmtKind::Decl || s.kind == StmtKind::Assign) && s.var >= 0) writes.insert(s.var);
  writes.insert(s.vars.begin(), s.vars.end());
  for (const auto* list : {&s.init, &s.body, &s.else_body})
    for (const auto& c : *list) effects(*c, reads, writes);
}

bool is_call(const Expr& e, const char* op) {
  return e.kind == ExprKind::Call && e.op == op && e.args.size() == 2 &&
         (e.form == ir::CallForm::Free || e.form == ir::CallForm::Method || e.form == ir::CallForm::Operator);
}

class Rewriter {
 public:
  Rewriter(ir::Function& fn, int basis, const OpResolver& resolver) : fn_(fn), basis_(basis), resolver_(resolver) {
    structured_.insert(basis);
    tainted_.insert(basis);
  }

  bool run() {
    for (auto& s : fn_.body)
      if (!statement(*s)) return false;
    return true;
  }

 private:
  // The basis or a diagonal of it, read where a product's operand goes.
  bool is_structured(const Expr& e) const { return e.kind == ExprKind::VarRef && structured_.count(e.var) != 0; }
  bool is_free(const Expr& e) const {
    std::set<int> r;
    add_reads(e, r);
    for (int v : r)
      if (tainted_.count(v) != 0) return false;
    return e.type == ir::Type::Tensor;
  }

  bool statement(Stmt& s) {
    if (s.kind == StmtKind::Decl && s.expr && !s.is_static_local && fn_.var(s.var).type == ir::Type::Tensor) {
      if (auto rewritten = product(*s.expr)) {
        s.expr = std::move(rewritten);
        tainted_.insert(s.var);
        return true;
      }
      if (scaled(s)) return true;
    }
    std::set<int> reads, writes;
    effects(s, reads, writes);
    bool reads_tainted = false;
    for (int v : reads) {
      if (structured_.count(v) != 0) return false;  // used some other way: the basis would be formed
      reads_tainted |= tainted_.count(v) != 0;
    }
    for (int v : writes) {
      if (structured_.count(v) != 0) return false;
      if (reads_tainted) tainted_.insert(v);
    }
    return true;
  }

  // `d = basis * v` (either order) or `d = diag * v`: d becomes the diagonal, holding its scale.
  bool scaled(Stmt& s) {
    Expr& e = *s.expr;
    if (!is_call(e, "mul")) return false;
    const int side = is_structured(*e.args[0]) ? 0 : is_structured(*e.args[1]) ? 1 : -1;
    if (side < 0 || !is_free(*e.args[1 - side])) return false;
    const int of = e.args[static_cast<size_t>(side)]->var;
    if (of == basis_) s.expr = std::move(e.args[static_cast<size_t>(1 - side)]);  // the scale alone
    // (of a diagonal: d's scale is of's scale * v, which the statement computes as it stands)
    structured_.insert(s.var);
    tainted_.insert(s.var);
    s.comment = "the basis times this: a diagonal, never formed";
    return true;
  }

  // A matmul with the basis or a diagonal of it, as the fg::ad product that batches without it.
  ir::ExprPtr product(const Expr& e) {
    if (!is_call(e, "matmul")) return nullptr;
    const bool left = is_structured(*e.args[0]) && is_free(*e.args[1]);
    const bool right = is_structured(*e.args[1]) && is_free(*e.args[0]);
    if (!left && !right) return nullptr;
    const Expr& structured = *e.args[left ? 0 : 1];
    const Expr& other = *e.args[left ? 1 : 0];
    const bool has_scale = structured.var != basis_;
    auto x = std::make_unique<Expr>();
    x->kind = ExprKind::Call;
    x->form = ir::CallForm::Free;
    x->range = e.range;
    x->op = std::string(left ? "ad::basis_matmul" : "ad::matmul_basis") + (has_scale ? "_scaled" : "");
    if (!left) x->args.push_back(ir::clone(other));
    x->args.push_back(ir::var_ref(fn_, basis_));
    if (has_scale) x->args.push_back(ir::var_ref(fn_, structured.var));
    if (left) x->args.push_back(ir::clone(other));
    if (!resolver_.resolve(*x)) return nullptr;
    return x;
  }

  ir::Function& fn_;
  const int basis_;
  const OpResolver& resolver_;
  std::set<int> structured_;  // the basis and its diagonals
  std::set<int> tainted_;     // locals whose value depends on the basis
};

// The ops a product's rows may feed without a copy: they compute a new tensor from their operands
// (no view, no in-place write, never their operand itself): the element-wise ops and matmul.
bool reads_only(const Expr& e) {
  return e.kind == ExprKind::Call && (ops::info(e).fused() || ops::id(e) == ops::matmul) &&
         (e.form == ir::CallForm::Free || e.form == ir::CallForm::Method || e.form == ir::CallForm::Operator);
}

// The unscaled products (whose rows would be a copy of the other operand) that nothing but
// reads_only ops use become their *_view variant: the rows may stay the operand's memory.
void view_read_only_rows(ir::Function& fn, const OpResolver& resolver) {
  std::set<int> products, escaping;
  for (const auto& s : fn.body)
    if (s->kind == StmtKind::Decl && s->expr && s->expr->kind == ExprKind::Call &&
        (ops::id(*s->expr) == ops::ad_basis_matmul || ops::id(*s->expr) == ops::ad_matmul_basis))
      products.insert(s->var);
  if (products.empty()) return;
  // A use escapes unless it is an operand of a reads_only op.
  std::function<void(const Expr&, bool)> walk = [&](const Expr& e, bool operand_of_read) {
    if (e.kind == ExprKind::VarRef && !operand_of_read) escaping.insert(e.var);
    escaping.insert(e.reads.begin(), e.reads.end());
    escaping.insert(e.writes.begin(), e.writes.end());
    for (const auto& a : e.args) walk(*a, reads_only(e));
    if (!e.body.empty()) escaping.insert(products.begin(), products.end());  // a lambda: give up
  };
  ir::for_each_stmt(fn.body, [&](const Stmt& st) {
    if (st.expr) walk(*st.expr, false);
    if (st.step) walk(*st.step, false);
    escaping.insert(st.reads.begin(), st.reads.end());
    escaping.insert(st.writes.begin(), st.writes.end());
    if (st.kind == StmtKind::Assign) escaping.insert(st.var);
  });
  for (auto& s : fn.body) {
    if (products.count(s->var) == 0 || escaping.count(s->var) != 0 || s->kind != StmtKind::Decl) continue;
    const std::string op = s->expr->op;
    s->expr->op += "_view";
    if (!resolver.resolve(*s->expr)) {
      s->expr->op = op;
      resolver.resolve(*s->expr);
    }
  }
}

}  // namespace

bool structure_basis(ir::Function& fn, int param, const OpResolver& resolver) {
  std::unique_ptr<ir::Function> copy = ir::copy_function(fn);
  // A random draw may be batched at the basis's level (randomness='different'): not free of it.
  if (draws_random(*copy)) return false;
  const int basis = copy->params[static_cast<size_t>(param)];
  if (copy->var(basis).type != ir::Type::Tensor || !Rewriter(*copy, basis, resolver).run()) return false;
  view_read_only_rows(*copy, resolver);
  fn = std::move(*copy);
  return true;
}

}  // namespace funcgen::ad
