#include "transforms/vmap/batcher.h"

#include <algorithm>

#include "ir/cxx_text.h"

namespace funcgen::vmap {

using ir::ExprKind;
using ir::StmtKind;

// ------------------------------------------------------------------ IR builders

std::string batch_name(int k) { return "batch" + std::to_string(k) + "__"; }

ExprPtr text(const std::string& t, ir::Type type) { return ir::opaque(t, type); }
ExprPtr literal(int64_t v) { return text(std::to_string(v), ir::Type::Int); }
ExprPtr quoted(const std::string& s) { return text("\"" + s + "\""); }

ExprPtr runtime(const std::string& op, std::vector<ExprPtr> args, ir::Type type) {
  auto x = std::make_unique<Expr>();
  x->kind = ExprKind::Call;
  x->form = ir::CallForm::Free;
  x->op = op;
  x->type = type;
  x->args = std::move(args);
  return x;
}

ExprPtr braced(std::vector<ExprPtr> items, ir::Type type) {
  auto x = std::make_unique<Expr>();
  x->kind = ExprKind::List;
  x->type = type;
  x->args = std::move(items);
  return x;
}

ExprPtr member(ExprPtr of, const std::string& name, ir::Type type) {
  auto x = std::make_unique<Expr>();
  x->kind = ExprKind::Member;
  x->text = name;
  x->type = type;
  x->levels = of->levels;
  x->args.push_back(std::move(of));
  return x;
}

ExprPtr call_named(const std::string& fn, std::vector<ExprPtr> args, ir::Type type) {
  return ir::external_call(fn, std::move(args), type);  // printed as `fn(args)`
}

ExprPtr subscript(ExprPtr of, int64_t i, ir::Type type) {
  ExprPtr x = runtime("[]", exprs(std::move(of), literal(i)), type);
  x->form = ir::CallForm::Operator;
  x->text = "[]";
  return x;
}

ExprPtr lambda(const std::string& introducer, std::vector<StmtPtr> body, bool invoked, ir::Type type) {
  auto x = std::make_unique<Expr>();
  x->kind = ExprKind::Lambda;
  x->text = introducer;
  x->body = std::move(body);
  x->invoked = invoked;
  x->type = type;
  return x;
}

ExprPtr mask(Levels l) {
  std::vector<ExprPtr> levels;
  for (int k = 0; k < 32; ++k)
    if (l & (1u << k)) levels.push_back(literal(k));
  return runtime("vmap::at_levels", std::move(levels), ir::Type::Int);
}

ExprPtr batched(ExprPtr value, Levels l) { return braced(exprs(std::move(value), mask(l))); }

StmtPtr comment(const std::string& t) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::Opaque;
  s->text = "// " + t;
  return s;
}

// ------------------------------------------------------------------ names and preludes

BatchedBuilder::BatchedBuilder(const BatchingAnalysis& analysis, Context& ctx, std::vector<Levels> params, bool helper)
    : an_(analysis), fn_(analysis.function()), ctx_(ctx), params_(std::move(params)), helper_(helper) {
  for (const auto& v : fn_.vars) names_.insert(v.name);
  for (const auto& n : ir::text_names(fn_)) names_.insert(n);  // globals the text reads: not to be hidden
}

Batcher::Batcher(const BatchingAnalysis& analysis, Context& ctx, std::vector<Levels> params, bool helper)
    : ExprBatcher(analysis, ctx, std::move(params), helper) {}

std::unique_ptr<ir::Function> Batcher::run(const std::string& name) {
  out_ = ir::derived_function(fn_);
  out_->name = name;
  out_->vars = fn_.vars;
  out_->params = fn_.params;
  out_->outputs = fn_.outputs;
  for (int k = 0; k < ctx_.nlevels; ++k) {
    const int id = ir::add_var(*out_, batch_name(k), ir::Type::Int, "int64_t");
    out_->params.push_back(id);
    batch_vars_.push_back(id);
    names_.insert(batch_name(k));
  }
  // A parameter that the function gives batched values holds its argument expanded from the start.
  for (size_t i = 0; i < fn_.params.size() && i < params_.size(); ++i) {
    const ir::Var& v = fn_.var(fn_.params[i]);
    const Levels want = an_.var(v.id);
    if (v.type != ir::Type::Tensor || want == params_[i] || v.cxx_type.find("const") != std::string::npos ||
        v.cxx_type.back() == '&')
      continue;
    StmtPtr s = ir::assign(v.id, coerce(Val{ref(v.id), params_[i]}, want));
    s->comment = "assigned batched values below";
    out_->body.push_back(std::move(s));
  }
  block(fn_.body, out_->body);
  return std::move(out_);
}

// A new name, ending in "__" as every generated name does (see batch_name); `base` may be one,
// or a user's name of any form.
std::string BatchedBuilder::fresh(const std::string& of) {
  const std::string base = cxx::name_stem(of);
  std::string name = base + "__";
  for (int i = 1; names_.count(name) != 0; ++i) name = base + std::to_string(i) + "__";
  names_.insert(name);
  return name;
}

int BatchedBuilder::local(const std::string& base, const std::string& cxx_type, ir::Type type) {
  return ir::add_var(*out_, fresh(base), type, cxx_type);
}

ExprPtr BatchedBuilder::ref(int var) const {
  ExprPtr x = ir::var_ref(*out_, var);
  if (static_cast<size_t>(var) < fn_.vars.size()) x->levels = an_.var(var);
  return x;
}

ExprPtr BatchedBuilder::batch_size(int k) const { return ref(batch_vars_[static_cast<size_t>(k)]); }

ExprPtr BatchedBuilder::batch_sizes_of(Levels l) const {
  std::vector<ExprPtr> sizes;
  for (int k = 0; k < ctx_.nlevels; ++k)
    if (l & (1u << k)) sizes.push_back(batch_size(k));
  return braced(std::move(sizes));
}

void BatchedBuilder::declare(int var, ExprPtr init, const std::string& note) {
  StmtPtr s = ir::decl(var, std::move(init));
  s->comment = note;
  pre_.push_back(std::move(s));
}

// A name for the value of `v`, so that it can be used twice: itself when it is one already.
ExprPtr BatchedBuilder::bind(Val v, const std::string& base) {
  if (v.e->kind == ExprKind::VarRef || (v.e->kind == ExprKind::Opaque && cxx::is_identifier(v.e->text))) return std::move(v.e);
  const int id = local(base, "const fg::Tensor");
  declare(id, std::move(v.e));
  ExprPtr r = ir::var_ref(*out_, id);
  r->levels = v.levels;
  return r;
}

void BatchedBuilder::flush(std::vector<StmtPtr>& out) {
  for (auto& p : pre_) out.push_back(std::move(p));
  pre_.clear();
  aligned_.clear();
}

void BatchedBuilder::emit(std::vector<StmtPtr>& out, StmtPtr s) {
  flush(out);
  out.push_back(std::move(s));
}

// A value at `want` levels: expanded to the batch dims it lacks.
ExprPtr BatchedBuilder::coerce(Val c, Levels want) {
  if (c.levels == want) return std::move(c.e);
  ExprPtr x = runtime("vmap::materialize", exprs(std::move(c.e), mask(c.levels), mask(want), batch_sizes_of(want)));
  x->levels = want;
  return x;
}

// ------------------------------------------------------------------ statements

void Batcher::block(const std::vector<StmtPtr>& body, std::vector<StmtPtr>& out, size_t start) {
  for (size_t i = start; i < body.size(); ++i) {
    const Stmt& s = *body[i];
    if (an_.vmap().select && s.expr && an_.of(*s.expr) != 0) {
      if (s.kind == StmtKind::If && !s.has_else && !s.body.empty() && s.body.back()->kind == StmtKind::Return) {
        select_return(s, body, i + 1, out);
        return;  // the rest of the block was the else branch
      }
      if (s.kind == StmtKind::If) {
        select_if(s, out);
        continue;
      }
      if (s.kind == StmtKind::While) {
        select_while(s, out);
        continue;
      }
    }
    stmt(s, out);
  }
}

std::vector<StmtPtr> Batcher::sub_block(const std::vector<StmtPtr>& body, size_t start) {
  std::vector<StmtPtr> out;
  block(body, out, start);
  flush(out);
  return out;
}

// The value of `e` for variable `v`: a braced list stored into a std::vector of tensors has every
// element at the vector's levels, as v[i] reads them.
ExprPtr Batcher::stored(const Expr& e, const ir::Var& v) {
  if (v.type != ir::Type::TensorList || e.kind != ExprKind::List) {
    Val c = expr(e);
    // (a list a helper returned, at fewer levels than the variable: every element expanded)
    const bool tensors = v.type == ir::Type::Tensor || (v.type == ir::Type::TensorList && e.type == ir::Type::TensorList);
    return tensors ? coerce(std::move(c), an_.var(v.id)) : std::move(c.e);
  }
  std::vector<ExprPtr> items;
  for (const auto& a : e.args) {
    Val c = expr(*a);
    items.push_back(a->type == ir::Type::Tensor ? coerce(std::move(c), an_.var(v.id)) : std::move(c.e));
  }
  ExprPtr list = braced(std::move(items), ir::Type::TensorList);
  list->levels = an_.var(v.id);
  return list;
}

// A tensor stored into a tape or a list (push_back, fg::ad::tape_add) at the levels of the tape,
// as reading it back takes it: a list may get values the mapped inputs reach beside ones they do
// not (a constant pushed, a zero tangent). Null when `e` is not such a store.
ExprPtr Batcher::stored_entry(const Expr& e) {
  const bool store = ir::is_tape_op(e) && (e.op == ir::kTapePush || e.op == ir::kListPush || e.op == ir::kTapeAdd ||
                                           e.op == ir::kListSet || e.op == ir::kTapeSet);
  if (!store || fn_.var(e.reads.back()).type != ir::Type::Tensor) return nullptr;
  const Levels want = an_.var(e.reads[0]), have = an_.var(e.reads.back());
  if (want == have) return nullptr;
  const int value = local(fn_.var(e.reads.back()).name + "_b", "const fg::Tensor");
  declare(value, coerce(Val{ref(e.reads.back()), have}, want));
  std::vector<int> operands = e.reads;
  operands.back() = value;
  ExprPtr x = ir::tape_op(*out_, e.op, operands, e.type);
  x->range = e.range;
  return x;
}

// A returned value at the levels of the function's outputs (the analysis joins every return):
// a return of a value that the mapped inputs do not reach, beside one that they do, returns it
// expanded, so that every return has the same layout.
ExprPtr Batcher::returned(const Expr& e) {
  if (return_target_ != 0) return coerce(expr(e), return_target_);
  std::vector<Levels> outs = an_.outputs();
  if (helper_) {
    Levels all = 0;
    for (Levels o : outs) all |= o;
    std::fill(outs.begin(), outs.end(), all);
  }
  if (e.kind == ExprKind::Tuple && e.args.size() == outs.size()) {
    std::vector<ExprPtr> items;
    for (size_t i = 0; i < e.args.size(); ++i) {
      Val c = expr(e.arg(i));
      items.push_back(e.arg(i).type == ir::Type::Tensor ? coerce(std::move(c), outs[i]) : std::move(c.e));
    }
    return rebuild(e, std::move(items));
  }
  Val c = expr(e);
  if ((fn_.return_type == ir::Type::Tensor || fn_.return_type == ir::Type::TensorList) && outs.size() == 1)
    return coerce(std::move(c), outs[0]);  // (a list: each element)
  return std::move(c.e);
}

void Batcher::stmt(const Stmt& s, std::vector<StmtPtr>& out) {
  StmtPtr x = ir::copy_node(s);
  switch (s.kind) {
    case StmtKind::Decl:
    case StmtKind::Assign:
      if (s.expr) x->expr = stored(*s.expr, fn_.var(s.var));
      break;
    case StmtKind::Bind:
    case StmtKind::Eval:
    case StmtKind::Switch:
      x->expr = s.kind == StmtKind::Eval ? stored_entry(*s.expr) : nullptr;
      if (!x->expr) x->expr = expr(*s.expr).e;
      break;
    case StmtKind::Return:
      if (s.expr) x->expr = returned(*s.expr);
      break;
    case StmtKind::If:
      x->expr = expr(*s.expr).e;
      flush(out);
      x->body = sub_block(s.body);
      x->else_body = sub_block(s.else_body);
      break;
    case StmtKind::For:
    case StmtKind::While:
    case StmtKind::DoWhile:
      loop(s, out);
      return;
    case StmtKind::Block:
      flush(out);
      x->body = sub_block(s.body);
      break;
    case StmtKind::Case:
    case StmtKind::Break:
    case StmtKind::Continue:
    case StmtKind::Opaque:
      break;
  }
  if (s.kind == StmtKind::Switch) {
    // Statements that a case's statement needs go before it, after its label.
    flush(out);
    for (const Stmt* t : ir::switch_items(s.body)) stmt(*t, x->body);
    flush(x->body);
  }
  emit(out, std::move(x));
}

// Loops: a condition or step that needs statements of its own evaluates them each time.
void Batcher::loop(const Stmt& s, std::vector<StmtPtr>& out) {
  StmtPtr x = std::make_unique<Stmt>();
  x->kind = s.kind;
  x->range = s.range;
  x->ast = s.ast;
  std::vector<StmtPtr> init;
  for (const auto& i : s.init) stmt(*i, init);
  flush(init);
  if (s.expr) x->expr = scoped([&] { return expr(*s.expr).e; });
  if (s.step) x->step = scoped([&] { return expr(*s.step).e; });
  x->body = sub_block(s.body);
  x->init = std::move(init);
  emit(out, std::move(x));
}

}  // namespace funcgen::vmap
