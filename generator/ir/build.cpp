#include "ir/build.h"

#include "ir/cxx_text.h"

#include <set>

namespace funcgen::ir {

namespace {
int mapped(const std::function<int(int)>& remap, int id) { return remap && id >= 0 ? remap(id) : id; }
std::vector<int> mapped(const std::function<int(int)>& remap, const std::vector<int>& ids) {
  std::vector<int> out;
  for (int id : ids) out.push_back(mapped(remap, id));
  return out;
}
}  // namespace

ExprPtr copy_node(const Expr& e, const std::function<int(int)>& remap) {
  auto x = std::make_unique<Expr>();
  x->kind = e.kind;
  x->type = e.type;
  x->range = e.range;
  x->ast = e.ast;
  x->var = mapped(remap, e.var);
  x->text = e.text;
  x->op = e.op;
  x->form = e.form;
  x->callee = e.callee;
  x->params = e.params;
  x->param_types = e.param_types;
  x->index = e.index;
  x->template_args = e.template_args;
  x->packing = e.packing;
  x->absent = e.absent;
  x->constants = e.constants;
  x->result_leaves = e.result_leaves;
  x->reads = mapped(remap, e.reads);
  x->writes = mapped(remap, e.writes);
  x->vmapped = e.vmapped;
  x->in_dims = e.in_dims;
  x->out_dim = e.out_dim;
  x->chunk_size = e.chunk_size;
  x->randomness = e.randomness;
  x->invoked = e.invoked;
  x->levels = e.levels;
  return x;
}

ExprPtr clone(const Expr& e, const std::function<int(int)>& remap) {
  ExprPtr x = copy_node(e, remap);
  for (const auto& a : e.args) x->args.push_back(clone(*a, remap));
  for (const auto& b : e.body) x->body.push_back(clone(*b, remap));
  return x;
}

StmtPtr copy_node(const Stmt& s, const std::function<int(int)>& remap) {
  auto x = std::make_unique<Stmt>();
  x->kind = s.kind;
  x->range = s.range;
  x->ast = s.ast;
  x->var = mapped(remap, s.var);
  x->vars = mapped(remap, s.vars);
  x->text = s.text;
  x->has_else = s.has_else;
  x->reads = mapped(remap, s.reads);
  x->writes = mapped(remap, s.writes);
  x->is_static_local = s.is_static_local;
  x->lambda_definition = s.lambda_definition;
  x->comment = s.comment;
  return x;
}

StmtPtr clone(const Stmt& s, const std::function<int(int)>& remap) {
  StmtPtr x = copy_node(s, remap);
  if (s.expr) x->expr = clone(*s.expr, remap);
  for (const auto& b : s.body) x->body.push_back(clone(*b, remap));
  for (const auto& b : s.else_body) x->else_body.push_back(clone(*b, remap));
  for (const auto& b : s.init) x->init.push_back(clone(*b, remap));
  if (s.step) x->step = clone(*s.step, remap);
  return x;
}

ExprPtr var_ref(const Function& fn, int id) {
  auto x = std::make_unique<Expr>();
  x->kind = ExprKind::VarRef;
  x->var = id;
  x->type = fn.var(id).type;
  return x;
}

ExprPtr opaque(const std::string& text, Type type) {
  auto x = std::make_unique<Expr>();
  x->kind = ExprKind::Opaque;
  x->text = text;
  x->type = type;
  return x;
}

ExprPtr unary(const std::string& op, ExprPtr a, Type type) {
  auto x = std::make_unique<Expr>();
  x->kind = ExprKind::Unary;
  x->type = type;
  x->text = op;
  x->range = a->range;
  x->args.push_back(std::move(a));
  return x;
}

ExprPtr binary(const std::string& op, ExprPtr a, ExprPtr b, Type type) {
  auto x = std::make_unique<Expr>();
  x->kind = ExprKind::Binary;
  x->type = type;
  x->text = op;
  x->range = a->range;
  x->args.push_back(std::move(a));
  x->args.push_back(std::move(b));
  return x;
}

ExprPtr external_call(const std::string& fn, std::vector<ExprPtr> args, Type type) {
  auto x = std::make_unique<Expr>();
  x->kind = ExprKind::Call;
  x->form = CallForm::External;
  x->op = fn;
  x->type = type;
  for (const auto& a : args) {
    x->params.emplace_back();
    x->param_types.push_back(a->type);
  }
  x->args = std::move(args);
  return x;
}

ExprPtr element(ExprPtr list, ExprPtr index) {
  std::vector<ExprPtr> args;
  args.push_back(std::move(list));
  args.push_back(std::move(index));
  ExprPtr x = external_call("operator[]", std::move(args), Type::Tensor);
  x->text = "[]";
  return x;
}

bool is_element(const Expr& e) {
  return e.kind == ExprKind::Call && e.form == CallForm::External && e.text == "[]" && e.args.size() == 2 &&
         e.args[0]->type == Type::TensorList;
}

ExprPtr get(ExprPtr of, int index) {
  auto x = std::make_unique<Expr>();
  x->kind = ExprKind::Get;
  x->type = Type::Tensor;
  x->index = index;
  x->args.push_back(std::move(of));
  return x;
}

ExprPtr tape_op(const Function& fn, const std::string& op, const std::vector<int>& operands, Type type) {
  std::vector<std::string> names;
  for (int id : operands) names.push_back(fn.var(id).name);
  ExprPtr x;
  if (op == kTapePush) x = opaque(names[0] + ".push_back(" + names[1] + ")", Type::Void);
  else if (op == kListPush) x = opaque(names[0] + ".push_back(" + names.back() + ")", Type::Void);
  else if (op == kListSet) x = opaque(names[0] + "[" + names[1] + "] = " + names[2], Type::Void);
  else if (op == kTapeTake) x = opaque("fg::ad::tape_take(" + names[0] + ", " + names[1] + ")", type);
  else if (op == kTapeSet) x = opaque("fg::ad::tape_set(" + names[0] + ", " + names[1] + ", " + names[2] + ")", Type::Void);
  else if (op == kTapeAt) x = opaque(names[0] + "[" + names[1] + "]", type);
  else if (op == kTapeAdd) x = opaque("fg::ad::tape_add(" + names[0] + ", " + names[1] + ", " + names[2] + ")", Type::Void);
  else if (op == kTapeRead) x = opaque("fg::ad::tape_read(" + names[0] + ", " + names[1] + ")", type);
  else x = opaque("fg::ad::tape_pop(" + names[0] + ")", type);
  x->op = op;
  x->reads = operands;
  if (op != kTapeAt) x->writes = {operands[0]};
  return x;
}

bool is_tape_op(const Expr& e) {
  if (e.kind != ExprKind::Opaque) return false;
  if (e.op == kTapePush || e.op == kTapeAt || e.op == kTapeRead) return e.reads.size() == 2;
  if (e.op == kTapeAdd || e.op == kListSet || e.op == kTapeSet) return e.reads.size() == 3;
  if (e.op == kTapeTake) return e.reads.size() == 2;
  if (e.op == kListPush) return e.reads.size() == 2 || e.reads.size() == 3;
  return e.op == kTapePop && e.reads.size() == 1;
}

ExprPtr rng_state() { return opaque("fg::ad::rng_state()", Type::Other); }  // no reads: not batched

ExprPtr rng_replay(const Function& fn, int state) {
  ExprPtr x = opaque("fg::ad::rng_replay(" + fn.var(state).name + ")", Type::Other);
  x->reads = {state};
  return x;
}

ExprPtr tuple(std::vector<ExprPtr> items) {
  auto x = std::make_unique<Expr>();
  x->kind = ExprKind::Tuple;
  x->type = Type::TensorTuple;
  x->args = std::move(items);
  return x;
}

int add_var(Function& fn, const std::string& name, Type type, const std::string& cxx_type) {
  Var v;
  v.id = static_cast<int>(fn.vars.size());
  v.name = name;
  v.type = type;
  v.cxx_type = cxx_type;
  fn.vars.push_back(v);
  return v.id;
}

std::unique_ptr<Function> derived_function(const Function& src) {
  auto f = std::make_unique<Function>();
  f->name = src.name;
  f->qualified_name = src.qualified_name;
  f->namespaces = src.namespaces;
  f->return_type = src.return_type;
  f->return_cxx_type = src.return_cxx_type;
  f->outputs = src.outputs;
  f->decl = src.decl;
  f->constants = src.constants;
  return f;
}

std::string returned_type(const Function& fn, const Expr& value) {
  if (value.kind == ExprKind::Tuple) {
    std::vector<std::string> items;
    for (const auto& a : value.args) items.push_back(returned_type(fn, *a));
    return cxx::tuple_type(items);
  }
  // A variable returned beside tensors (linearize's replayed primals: `int k`) keeps its type.
  if (value.kind == ExprKind::VarRef && value.var >= 0 && static_cast<size_t>(value.var) < fn.vars.size()) {
    const Var& v = fn.var(value.var);
    if (v.type != Type::Tensor && v.type != Type::TensorList) return value_type(v);
  }
  return value.type == Type::TensorList ? "std::vector<fg::Tensor>" : "fg::Tensor";
}

void finish(Function& fn, ExprPtr value) {
  fn.return_type = value->kind == ExprKind::Tuple        ? Type::TensorTuple
                   : value->type == Type::TensorList ? Type::TensorList
                                                     : Type::Tensor;
  fn.return_cxx_type = returned_type(fn, *value);
  fn.outputs = value->kind == ExprKind::Tuple ? value->args.size() : 1;
  fn.body.push_back(ret(std::move(value)));
}

std::unique_ptr<Function> copy_function(const Function& src) {
  auto f = derived_function(src);
  f->vars = src.vars;
  f->params = src.params;
  for (const auto& s : src.body) f->body.push_back(clone(*s));
  return f;
}

ExprPtr vmapped_call(std::shared_ptr<const Function> fn, std::vector<ExprPtr> args,
                     std::vector<std::optional<int64_t>> in_dims, std::optional<int64_t> out_dim, int output,
                     const std::string& label) {
  auto x = std::make_unique<Expr>();
  x->kind = ExprKind::Call;
  x->form = CallForm::Vmapped;
  x->type = Type::Tensor;
  x->op = label;
  x->index = output;
  x->args = std::move(args);
  x->in_dims = std::move(in_dims);
  x->out_dim = out_dim;
  x->vmapped = std::move(fn);
  return x;
}

std::set<std::string> declared_names(const Function& fn, const std::vector<StmtPtr>& stmts, size_t from) {
  std::set<std::string> names;
  for (size_t i = from; i < stmts.size(); ++i) {
    if (stmts[i]->kind == StmtKind::Decl) names.insert(fn.var(stmts[i]->var).name);
    if (stmts[i]->kind == StmtKind::Bind)
      for (int v : stmts[i]->vars) names.insert(fn.var(v).name);
  }
  return names;
}

std::string value_type(const Var& v) {
  if (v.type == Type::Tensor) return "fg::Tensor";
  std::string t = v.cxx_type;
  if (!t.empty() && t.back() == '&') t.pop_back();
  if (t.rfind("const ", 0) == 0) t = t.substr(6);
  return t;
}

namespace {
StmtPtr make(StmtKind kind, int var, ExprPtr e) {
  auto s = std::make_unique<Stmt>();
  s->kind = kind;
  s->var = var;
  s->expr = std::move(e);
  return s;
}
}  // namespace

StmtPtr decl(int var, ExprPtr init) { return make(StmtKind::Decl, var, std::move(init)); }
StmtPtr assign(int var, ExprPtr value) {
  StmtPtr s = make(StmtKind::Assign, var, std::move(value));
  s->text = "=";
  return s;
}
StmtPtr ret(ExprPtr value) { return make(StmtKind::Return, -1, std::move(value)); }
StmtPtr eval(ExprPtr value) { return make(StmtKind::Eval, -1, std::move(value)); }

namespace {
void add_reads(const Stmt& s, std::set<int>& ids) {
  auto expr = [&](const Expr& e) {
    if (e.kind == ExprKind::VarRef) ids.insert(e.var);
    ids.insert(e.reads.begin(), e.reads.end());
  };
  if (s.expr) for_each_expr(*s.expr, expr);
  if (s.step) for_each_expr(*s.step, expr);
  ids.insert(s.reads.begin(), s.reads.end());
  for (const auto* list : {&s.init, &s.body, &s.else_body})
    for (const auto& c : *list) add_reads(*c, ids);
}
}  // namespace

std::vector<int> reads_of(const std::vector<StmtPtr>& body) {
  std::set<int> ids;
  for (const auto& s : body) add_reads(*s, ids);
  return std::vector<int>(ids.begin(), ids.end());
}

std::vector<int> reads_of(const Stmt& stmt) {
  std::set<int> ids;
  add_reads(stmt, ids);
  return std::vector<int>(ids.begin(), ids.end());
}

}  // namespace funcgen::ir
