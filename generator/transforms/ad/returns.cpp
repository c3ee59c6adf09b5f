#include "transforms/ad/returns.h"

#include "ir/build.h"

namespace funcgen::ad {

namespace {

using ir::StmtKind;
using ir::StmtPtr;

bool has_return(const std::vector<StmtPtr>& body) {
  bool found = false;
  ir::for_each_stmt(body, [&](const ir::Stmt& s) { found |= s.kind == StmtKind::Return; });
  return found;
}

// Whether every path through `body` ends in a return.
bool always_returns(const std::vector<StmtPtr>& body) {
  if (body.empty()) return false;
  const ir::Stmt& last = *body.back();
  if (last.kind == StmtKind::Return) return true;
  return last.kind == StmtKind::If && last.has_else && always_returns(last.body) && always_returns(last.else_body);
}

// Whether the returns of `body` are all where this pass can move them: in ifs, not in loops,
// switches or blocks.
bool movable(const std::vector<StmtPtr>& body) {
  for (const auto& s : body) {
    if (s->kind == StmtKind::If && !(movable(s->body) && movable(s->else_body))) return false;
    if (s->kind != StmtKind::If && has_return(s->body)) return false;
  }
  return true;
}

class Rewriter {
 public:
  explicit Rewriter(std::vector<int> results) : results_(std::move(results)) {}

  std::vector<StmtPtr> rewrite(std::vector<StmtPtr> stmts) {
    std::vector<StmtPtr> out;
    for (size_t i = 0; i < stmts.size(); ++i) {
      StmtPtr s = std::move(stmts[i]);
      if (s->kind == StmtKind::Return) {
        assign_results(*s, out);
        return out;  // what follows a return never runs
      }
      if (s->kind == StmtKind::If && (has_return(s->body) || has_return(s->else_body))) {
        std::vector<StmtPtr> rest;
        for (size_t k = i + 1; k < stmts.size(); ++k) rest.push_back(std::move(stmts[k]));
        const bool then_falls = !always_returns(s->body), else_falls = !always_returns(s->else_body);
        if (then_falls)
          for (auto& r : rest) s->body.push_back(else_falls ? ir::clone(*r) : std::move(r));
        if (else_falls)
          for (auto& r : rest) s->else_body.push_back(std::move(r));
        s->body = rewrite(std::move(s->body));
        s->else_body = rewrite(std::move(s->else_body));
        s->has_else = !s->else_body.empty();
        out.push_back(std::move(s));
        return out;
      }
      out.push_back(std::move(s));
    }
    return out;
  }

 private:
  void assign_results(const ir::Stmt& ret, std::vector<StmtPtr>& out) {
    const ir::Expr& value = *ret.expr;
    for (size_t k = 0; k < results_.size(); ++k) {
      StmtPtr a = ir::assign(results_[k], ir::clone(results_.size() == 1 ? value : value.arg(k)));
      a->range = ret.range;
      a->ast = ret.ast;
      out.push_back(std::move(a));
    }
  }

  std::vector<int> results_;
};

// The number of tensors every return returns (one, or a std::make_tuple of tensors), or 0 when
// the returns differ or return something else.
size_t returned_tensors(const ir::Function& fn) {
  size_t n = 0;
  bool ok = true;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.kind != StmtKind::Return) return;
    size_t here = 0;
    if (s.expr && s.expr->type == ir::Type::Tensor) here = 1;
    if (s.expr && s.expr->kind == ir::ExprKind::Tuple) {
      here = s.expr->args.size();
      for (const auto& a : s.expr->args) ok &= a->type == ir::Type::Tensor;
    }
    ok &= here != 0 && (n == 0 || n == here);
    n = here;
  });
  return ok ? n : 0;
}

}  // namespace

std::unique_ptr<ir::Function> single_return(const ir::Function& fn) {
  if (fn.body.empty()) return nullptr;
  bool early = false;  // a return that is not the function's last statement
  for (const auto& s : fn.body)
    if (s.get() != fn.body.back().get() || s->kind != StmtKind::Return) early |= s->kind == StmtKind::Return || has_return(s->body) || has_return(s->else_body);
  if (!early || !movable(fn.body)) return nullptr;
  const size_t n = returned_tensors(fn);
  if (n == 0) return nullptr;
  std::unique_ptr<ir::Function> out = ir::copy_function(fn);
  std::vector<int> results;
  for (size_t k = 0; k < n; ++k)
    results.push_back(ir::add_var(*out, n == 1 ? "result__" : "result" + std::to_string(k) + "__", ir::Type::Tensor,
                                  "fg::Tensor"));
  std::vector<StmtPtr> body;
  for (int r : results) body.push_back(ir::decl(r, nullptr));
  Rewriter rw(results);
  for (StmtPtr& s : rw.rewrite(std::move(out->body))) body.push_back(std::move(s));
  std::vector<ir::ExprPtr> values;
  for (int r : results) values.push_back(ir::var_ref(*out, r));
  body.push_back(ir::ret(n == 1 ? std::move(values[0]) : ir::tuple(std::move(values))));
  out->body = std::move(body);
  return out;
}

}  // namespace funcgen::ad
