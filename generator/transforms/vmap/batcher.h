// vmap's rewrite of one function into batched IR (private to transforms/vmap*): every op becomes
// the call its batching rule makes, every value carries the levels it is batched at, and the
// statements that batching needs (alignments, moved arguments, per-example merges) are new IR
// statements. The printer (emitter/) prints the result like any other function.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "analyses/batching.h"
#include "analyses/levels.h"
#include "diag/reporter.h"
#include "ir/build.h"
#include "ir/program.h"
#include "ops/batching_rules.h"

namespace funcgen::vmap {

using ir::Expr;
using ir::ExprPtr;
using ir::Stmt;
using ir::StmtPtr;

// A value of batched IR with the levels it is batched at.
struct Val {
  ExprPtr e;
  Levels levels = 0;
};

// Shared by every function made for one spec.
struct Context {
  std::string spec_name;
  int nlevels = 0;
  Reporter* reporter = nullptr;
  ir::Program* program = nullptr;  // receives the helpers
  std::map<std::pair<const ir::Function*, std::vector<Levels>>, std::string> specializations;  // per lowering of the callee
  std::map<std::pair<const ir::Function*, std::vector<Levels>>, std::string> vmapped;
  std::set<std::string> helper_names;
};

// The batch size of vmap level k. Every name the generated code introduces ends in "__": C++
// reserves names with a double underscore, so no name of the user's (a local, a global the body
// reads, a keyword) can be one.
std::string batch_name(int k);

// IR builders for the code batching makes.
ExprPtr text(const std::string& t, ir::Type type = ir::Type::Other);
ExprPtr literal(int64_t v);
ExprPtr quoted(const std::string& s);
ExprPtr runtime(const std::string& op, std::vector<ExprPtr> args, ir::Type type = ir::Type::Tensor);
ExprPtr braced(std::vector<ExprPtr> items, ir::Type type = ir::Type::Other);
ExprPtr member(ExprPtr of, const std::string& name, ir::Type type = ir::Type::Tensor);
ExprPtr call_named(const std::string& fn, std::vector<ExprPtr> args, ir::Type type);
ExprPtr subscript(ExprPtr of, int64_t i, ir::Type type = ir::Type::Tensor);
ExprPtr lambda(const std::string& introducer, std::vector<StmtPtr> body, bool invoked, ir::Type type);
// The mask of levels `l` as generated code names it: fg::vmap::at_levels(0, 2).
ExprPtr mask(Levels l);
// {value, mask}: a fg::vmap::Batched.
ExprPtr batched(ExprPtr value, Levels l);
StmtPtr comment(const std::string& text);
template <typename... A>
std::vector<ExprPtr> exprs(A&&... a) {
  std::vector<ExprPtr> v;
  (v.push_back(std::forward<A>(a)), ...);
  return v;
}

// The state of one function's rewrite and the builders of its new statements (batcher.cpp): names,
// locals, the statements an expression needs before it (pre_), values expanded to more levels.
class BatchedBuilder {
 protected:
  // `params`: the levels each parameter arrives batched at. A helper (a user function called from
  // the transformed one) returns every tensor at the levels of all its outputs, as its callers'
  // analysis takes the levels of a call to be.
  BatchedBuilder(const BatchingAnalysis& analysis, Context& ctx, std::vector<Levels> params, bool helper);
  virtual ~BatchedBuilder() = default;

  std::string fresh(const std::string& of);
  int local(const std::string& base, const std::string& cxx_type, ir::Type type = ir::Type::Tensor);
  ExprPtr ref(int var) const;
  ExprPtr batch_size(int k) const;
  ExprPtr batch_sizes_of(Levels l) const;
  ExprPtr bind(Val v, const std::string& base = "t");
  void declare(int var, ExprPtr init, const std::string& note = "");
  template <typename F>
  ExprPtr scoped(F fn);
  void flush(std::vector<StmtPtr>& out);
  void emit(std::vector<StmtPtr>& out, StmtPtr s);
  ExprPtr coerce(Val c, Levels want);

  const BatchingAnalysis& an_;
  const ir::Function& fn_;
  Context& ctx_;
  std::vector<Levels> params_;
  bool helper_ = false;
  std::unique_ptr<ir::Function> out_;
  std::vector<int> batch_vars_;  // the batch size parameter of each level
  std::set<std::string> names_;
  std::vector<StmtPtr> pre_;
  // The aligned operands of lists that pre_ aligns: valid until pre_ is emitted.
  std::map<std::string, std::vector<int>> aligned_;
  Levels return_target_ = 0;
};

// Expressions: each op by its batching rule (rules.cpp), calls of the user's helpers and of vmaps
// inside the body (calls.cpp). A conditional under control_flow='select' is the statements' part.
class ExprBatcher : protected BatchedBuilder {
 protected:
  using BatchedBuilder::BatchedBuilder;

  virtual Val select_conditional(const Expr& e) = 0;

  // expressions and calls by batching rule (rules.cpp)
  Val expr(const Expr& e);
  Val expr_of(const Expr& e);
  ExprPtr rebuild(const Expr& e, std::vector<ExprPtr> args) const;
  Val call(const Expr& e);
  Val pointwise(const Expr& e, std::vector<Val> args);
  Val reduce(const Expr& e, std::vector<Val> args, int nb);
  Val dims(const Expr& e, const OpRule& rule, std::vector<Val> args, int nb);
  Val query(const Expr& e, std::vector<Val> args, int nb);
  Val helper(const Expr& e, std::vector<Val> args, int nb);
  Val unsupported_list(const Expr& e, std::vector<Val> args);
  Val random(const Expr& e, std::vector<Val> args);
  std::vector<ExprPtr> per_example_operands(const Expr& e, std::vector<Val>& args, std::vector<ExprPtr>& texts);
  Val fallback(const Expr& e, std::vector<Val> args);
  Val unseen(const Expr& e, std::vector<Val> args);

  // calls of functions: the user's helpers and vmaps inside the body (calls.cpp)
  Val specialize(const Expr& e, std::vector<Val> args);
  Val vmapped(const Expr& e, std::vector<Val> args);
  ExprPtr vmapped_output(const Expr& e, const std::string& name, const std::vector<ExprPtr>& args, ExprPtr size,
                         Levels got, Levels want);
  std::string vmapped_helper(const Expr& e, const std::vector<Levels>& key);
};

// The rewrite of one function: its statements (batcher.cpp) and control_flow='select' (select.cpp).
class Batcher final : ExprBatcher {
 public:
  Batcher(const BatchingAnalysis& analysis, Context& ctx, std::vector<Levels> params, bool helper);

  // The batched function, named `name`, with one batch size parameter per level.
  std::unique_ptr<ir::Function> run(const std::string& name);

 private:
  // statements (batcher.cpp)
  void block(const std::vector<StmtPtr>& body, std::vector<StmtPtr>& out, size_t start = 0);
  void stmt(const Stmt& s, std::vector<StmtPtr>& out);
  void loop(const Stmt& s, std::vector<StmtPtr>& out);
  std::vector<StmtPtr> sub_block(const std::vector<StmtPtr>& body, size_t start = 0);
  ExprPtr stored(const Expr& e, const ir::Var& v);
  ExprPtr stored_entry(const Expr& e);
  ExprPtr returned(const Expr& e);

  // control_flow='select' (select.cpp)
  std::optional<Val> predicate(const Expr& e);
  Val predicate_or_report(const Expr& cond);
  void assigned_outer(const std::vector<StmtPtr>& body, std::vector<int>& out) const;
  bool side_effect_free(const std::vector<StmtPtr>& body, const std::vector<int>& vars);
  bool side_effect_free_stmt(const Stmt& s);
  ExprPtr branch_lambda(const std::vector<StmtPtr>& body, const std::vector<int>& vars);
  void merge(const Val& pred, const std::vector<int>& vars, int then_t, int else_t, std::vector<StmtPtr>& out);
  void select_if(const Stmt& s, std::vector<StmtPtr>& out);
  void select_while(const Stmt& s, std::vector<StmtPtr>& out);
  void select_return(const Stmt& s, const std::vector<StmtPtr>& body, size_t rest, std::vector<StmtPtr>& out);
  Val select_conditional(const Expr& e) override;
  ExprPtr where(const Val& pred, ExprPtr a, Levels la, ExprPtr b, Levels lb);
};

template <typename F>
ExprPtr BatchedBuilder::scoped(F fn) {
  std::vector<StmtPtr> saved;
  saved.swap(pre_);
  const auto saved_aligned = aligned_;
  ExprPtr value = fn();
  aligned_ = saved_aligned;
  std::vector<StmtPtr> mine;
  mine.swap(pre_);
  pre_.swap(saved);
  if (mine.empty()) return value;
  // The statements it needs run exactly where and when the expression is evaluated.
  const ir::Type type = value->type;
  mine.push_back(ir::ret(std::move(value)));
  return lambda("[&]", std::move(mine), true, type);
}

}  // namespace funcgen::vmap
