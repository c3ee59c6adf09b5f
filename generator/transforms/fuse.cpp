// fuse.h: take element-wise sub-expressions out into locals, gather the top-level element-wise
// statements into runs (a run closes before the first statement that reads one of its values or
// may write a tensor), and print each run of two or more ops as one fg::Fused program.
#include "transforms/fuse.h"

#include <algorithm>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "ir/build.h"
#include "ops/inplace.h"
#include "ops/registry.h"

namespace funcgen {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;
using ir::Stmt;
using ir::StmtKind;

// The ops fg::Fused runs (templates/fused.def's rows, which the runtime reads too).
bool unary_elementwise(const std::string& op) { return ops::info(ops::id_of(op)).fused_unary; }
bool binary_elementwise(const std::string& op) { return ops::info(ops::id_of(op)).fused_binary; }

// A C++ number literal that means the same to strtod: no suffix, no octal or hex.
bool number(const Expr& e) {
  static const std::regex literal(R"(-?(0|[1-9][0-9]*)(\.[0-9]*)?([eE][-+]?[0-9]+)?|-?\.[0-9]+([eE][-+]?[0-9]+)?)");
  return e.kind == ExprKind::Opaque && e.reads.empty() && std::regex_match(e.text, literal);
}

bool tensor_leaf(const ir::Function& fn, const Expr& e) {
  return e.kind == ExprKind::VarRef && fn.var(e.var).type == ir::Type::Tensor;
}

// `y.sizes()` of a tensor local `y`: the shape a shape step takes.
bool sizes_of_leaf(const ir::Function& fn, const Expr& e) {
  return e.kind == ExprKind::Call && ops::id(e) == ops::sizes && e.form == ir::CallForm::Method && e.args.size() == 1 &&
         tensor_leaf(fn, e.arg(0));
}

// The fg::Fused shape step of `x.expand(y.sizes())` and `fg::ad::sum_to(x, y.sizes())` (how AD
// broadcasts tangents and sums gradients back; on values of one shape, x itself), or "".
std::string shape_step(const ir::Function& fn, const Expr& e) {
  if (e.kind != ExprKind::Call || e.args.size() != 2 || !sizes_of_leaf(fn, e.arg(1))) return "";
  if (ops::id(e) == ops::expand && e.form == ir::CallForm::Method) return "expand_as";
  if (ops::id(e) == ops::ad_sum_to && e.form == ir::CallForm::Free) return "sum_to_as";
  return "";
}

// An element-wise op whose operands are element-wise ops, tensor locals and numbers.
bool fusable(const ir::Function& fn, const Expr& e) {
  if (e.kind != ExprKind::Call || e.type != ir::Type::Tensor || !e.template_args.empty()) return false;
  if (e.form != ir::CallForm::Free && e.form != ir::CallForm::Method && e.form != ir::CallForm::Operator) return false;
  auto operand = [&](const Expr& a, bool numbers) { return fusable(fn, a) || tensor_leaf(fn, a) || (numbers && number(a)); };
  if (!shape_step(fn, e).empty()) return operand(e.arg(0), false);
  if (unary_elementwise(e.op) && e.args.size() == 1) return operand(e.arg(0), false);
  if (binary_elementwise(e.op) && e.args.size() == 2)
    return operand(e.arg(0), true) && operand(e.arg(1), true) && !(number(e.arg(0)) && number(e.arg(1)));
  return false;
}

// The element-wise ops of a fusable expression (shape steps are not: a run needs two ops).
int count_ops(const ir::Function& fn, const Expr& e) {
  if (!shape_step(fn, e).empty()) return count_ops(fn, e.arg(0));
  int n = e.kind == ExprKind::Call ? 1 : 0;
  for (const auto& a : e.args) n += count_ops(fn, *a);
  return n;
}

// Whether running s may change a tensor that an element-wise statement before it reads: in-place
// ops, assignments, calls of code that may write through its arguments, control flow.
bool may_write(const Stmt& s) {
  if (s.kind != StmtKind::Decl && s.kind != StmtKind::Bind && s.kind != StmtKind::Return &&
      s.kind != StmtKind::Opaque)
    return true;
  if (s.is_static_local) return true;
  bool writes = false;
  if (s.expr)
    ir::for_each_expr(*s.expr, [&](const Expr& e) {
      if (e.kind == ExprKind::Lambda) writes = true;
      if (e.kind == ExprKind::Opaque && (!e.writes.empty() || ir::is_tape_op(e))) writes = true;
      if (e.kind != ExprKind::Call) return;
      if (e.form == ir::CallForm::User || e.form == ir::CallForm::External || e.form == ir::CallForm::Vmapped)
        writes = true;
      else if (writes_arguments(e.op))
        writes = true;
    });
  return writes;
}

struct Run {
  std::vector<size_t> members;  // element-wise Decls
  std::vector<size_t> copies;   // `fg::Tensor b = a;` of a member: printed after the run
  std::set<int> vars;           // the members' and copies' locals
  size_t close = 0;             // the statement the run is printed before
  int ops = 0;
};

class Fuser {
 public:
  explicit Fuser(ir::Function& fn) : fn_(fn), taken_(ir::text_names(fn)) {
    for (const ir::Var& v : fn.vars) taken_.insert(v.name);
    // The locals that may get another handle after their declaration (assigned, written by text,
    // bound to a reference, passed to other code that may take a reference): a copy of one is not
    // the same tensor for good.
    ir::for_each_stmt(fn.body, [&](const Stmt& s) {
      if (s.kind == StmtKind::Assign) assigned_.insert(s.var);
      assigned_.insert(s.writes.begin(), s.writes.end());
      if (s.kind == StmtKind::Decl && s.var >= 0 && fn.var(s.var).cxx_type.find('&') != std::string::npos && s.expr)
        ir::for_each_expr(*s.expr, [&](const Expr& e) {
          if (e.kind == ExprKind::VarRef) assigned_.insert(e.var);
        });
    });
    ir::for_each_expr(fn.body, [&](const Expr& e) {
      assigned_.insert(e.writes.begin(), e.writes.end());
      const bool other_code = e.kind == ExprKind::Call && (e.form == ir::CallForm::User ||
                                                           e.form == ir::CallForm::External ||
                                                           e.form == ir::CallForm::Vmapped);
      if (other_code || e.kind == ExprKind::Lambda)
        for (const auto& a : e.args)
          if (a->kind == ExprKind::VarRef) assigned_.insert(a->var);
    });
  }

  bool run() {
    hoist_all();
    std::vector<Run> runs = find_runs();
    reads_ = read_counts();
    bool fused = false;
    std::map<size_t, std::vector<ir::StmtPtr>> before;  // statement index -> what is printed before it
    std::set<size_t> moved;
    for (Run& r : runs) {
      if (r.ops < 2) continue;
      std::vector<ir::StmtPtr> printed = fuse(r);
      if (printed.empty()) continue;
      fused = true;
      for (size_t i : r.members) moved.insert(i);
      for (size_t i : r.copies) moved.insert(i);
      for (auto& s : printed) before[r.close].push_back(std::move(s));
    }
    if (!fused) return false;
    std::vector<ir::StmtPtr> body;
    for (size_t i = 0; i <= fn_.body.size(); ++i) {
      if (auto it = before.find(i); it != before.end())
        for (auto& s : it->second) body.push_back(std::move(s));
      if (i == fn_.body.size() || moved.count(i) != 0) continue;
      const Stmt& s = *fn_.body[i];
      const bool unread_copy = s.kind == StmtKind::Decl && copy_of_.count(s.var) != 0 && reads_[s.var] == 0;
      if (!unread_copy) body.push_back(std::move(fn_.body[i]));  // (runs read what it copies directly)
    }
    fn_.body = std::move(body);
    return true;
  }

 private:
  std::string fresh(const std::string& stem) {
    for (int k = 1;; ++k) {
      const std::string name = stem + std::to_string(k) + "__";
      if (taken_.insert(name).second) return name;
    }
  }

  // Element-wise sub-expressions of the top-level statements become locals declared just before.
  void hoist_all() {
    std::vector<ir::StmtPtr> body;
    for (auto& s : fn_.body) {
      std::vector<ir::StmtPtr> hoisted;
      const bool member = s->kind == StmtKind::Decl && s->expr && !s->is_static_local &&
                          fn_.var(s->var).type == ir::Type::Tensor && fusable(fn_, *s->expr);
      // Not out of a statement that may write: an operand evaluated after the write (the argument
      // of `x.mul_(2).add(x * 3)`) would be computed before it.
      if (s->expr && !member && !may_write(*s) &&
          (s->kind == StmtKind::Decl || s->kind == StmtKind::Bind || s->kind == StmtKind::Return))
        hoist(s->expr, hoisted);
      for (auto& h : hoisted) body.push_back(std::move(h));
      body.push_back(std::move(s));
    }
    fn_.body = std::move(body);
  }
  void hoist(ExprPtr& e, std::vector<ir::StmtPtr>& out) {
    if (fusable(fn_, *e)) {
      const int v = ir::add_var(fn_, fresh("e"), ir::Type::Tensor, "fg::Tensor");
      ExprPtr ref = ir::var_ref(fn_, v);
      ref->range = e->range;
      out.push_back(ir::decl(v, std::move(e)));
      e = std::move(ref);
      return;
    }
    // Operands evaluated unconditionally before e (not a conditional's branches, not && / ||).
    const bool unconditional = e->kind == ExprKind::Call || e->kind == ExprKind::Member ||
                               e->kind == ExprKind::Tuple || e->kind == ExprKind::Get || e->kind == ExprKind::List ||
                               e->kind == ExprKind::Cast;
    if (!unconditional) return;
    for (auto& a : e->args) hoist(a, out);
  }

  int resolve(int v) const {
    auto it = copy_of_.find(v);
    return it == copy_of_.end() ? v : it->second;
  }
  void resolve_leaves(Expr& e) {
    if (e.kind == ExprKind::VarRef) e.var = resolve(e.var);
    for (auto& a : e.args) resolve_leaves(*a);
  }

  std::vector<Run> find_runs() {
    std::vector<Run> runs;
    Run open;
    auto close = [&](size_t at) {
      if (!open.members.empty()) {
        open.close = at;
        runs.push_back(open);
      }
      open = Run{};
    };
    for (size_t i = 0; i < fn_.body.size(); ++i) {
      Stmt& s = *fn_.body[i];
      const bool decl = s.kind == StmtKind::Decl && s.expr && !s.is_static_local &&
                        fn_.var(s.var).type == ir::Type::Tensor;
      if (decl && fusable(fn_, *s.expr)) {
        resolve_leaves(*s.expr);
        open.members.push_back(i);
        open.vars.insert(s.var);
        open.ops += count_ops(fn_, *s.expr);
        continue;
      }
      // A copy of a handle of the open run (the same tensor): printed after the run, and read as
      // what it copies inside it.
      if (decl && tensor_leaf(fn_, *s.expr) && assigned_.count(s.var) == 0 && assigned_.count(s.expr->var) == 0 &&
          open.vars.count(resolve(s.expr->var)) != 0) {
        copy_of_[s.var] = resolve(s.expr->var);
        open.copies.push_back(i);
        open.vars.insert(s.var);
        continue;
      }
      bool reads_run = false;
      for (int v : ir::reads_of(s)) reads_run |= open.vars.count(v) != 0;
      if (reads_run || may_write(s)) close(i);
    }
    close(fn_.body.size());
    return runs;
  }

  // The locals read anywhere in the function, counted per read.
  std::map<int, int> read_counts() const {
    std::map<int, int> n;
    ir::for_each_expr(fn_.body, [&](const Expr& e) {
      if (e.kind == ExprKind::VarRef) ++n[e.var];
      for (int v : e.reads) ++n[v];
    });
    ir::for_each_stmt(fn_.body, [&](const Stmt& s) {
      for (int v : s.reads) ++n[v];
      if (s.kind == StmtKind::Assign) ++n[s.var];  // its declaration must stay: the run binds it
    });
    return n;
  }

  // An element-wise expression as text (its locals by name), equal for equal computations.
  std::string structure(const Expr& e) const {
    if (e.kind == ExprKind::VarRef) return fn_.var(e.var).name;
    if (e.kind == ExprKind::Opaque) return e.text;
    std::string t = e.op + "(";
    for (const auto& a : e.args) t += structure(*a) + ",";
    return t + ")";
  }

  // The statements that print run r: the program, the call that binds the values read after
  // it, and the kept copies; empty when the run computes nothing that is read.
  std::vector<ir::StmtPtr> fuse(const Run& r) {
    std::map<int, int> outside = reads_;
    for (size_t i : r.members)
      ir::for_each_expr(*fn_.body[i]->expr, [&](const Expr& e) {
        if (e.kind == ExprKind::VarRef) --outside[e.var];
      });
    std::vector<size_t> copies;  // the copies something reads, in order
    for (size_t k = r.copies.size(); k-- > 0;) {
      const Stmt& c = *fn_.body[r.copies[k]];
      if (outside[c.var] > 0)
        copies.insert(copies.begin(), r.copies[k]);
      else
        --outside[c.expr->var];
    }
    std::vector<int> outputs;
    for (size_t i : r.members)
      if (outside[fn_.body[i]->var] > 0) outputs.push_back(fn_.body[i]->var);
    if (outputs.empty()) return {};

    std::set<int> members;
    for (size_t i : r.members) members.insert(fn_.body[i]->var);
    std::vector<int> inputs;
    std::vector<std::string> steps;
    std::map<std::string, std::string> known;  // "op(a, b)" -> the value that holds it
    int internal = 0;
    std::map<std::string, std::string> member_like;  // a member's expression -> its name
    for (size_t i : r.members) member_like.emplace(structure(*fn_.body[i]->expr), fn_.var(fn_.body[i]->var).name);
    std::set<std::string> early;  // members computed where an earlier member needed their value
    std::function<std::string(const Expr&, const std::string*)> value = [&](const Expr& e, const std::string* name) {
      if (e.kind == ExprKind::VarRef) {
        if (members.count(e.var) == 0 && std::find(inputs.begin(), inputs.end(), e.var) == inputs.end())
          inputs.push_back(e.var);
        return fn_.var(e.var).name;
      }
      if (e.kind == ExprKind::Opaque) return e.text;
      std::string call;
      if (const std::string step = shape_step(fn_, e); !step.empty()) {  // (y of y.sizes() is read for its shape)
        call = step + "(" + value(e.arg(0), nullptr) + ", " + value(e.arg(1).arg(0), nullptr) + ")";
      } else {
        call = e.op + "(";
        for (size_t k = 0; k < e.args.size(); ++k) call += (k ? ", " : "") + value(e.arg(k), nullptr);
        call += ")";
      }
      if (name == nullptr) {
        if (auto it = known.find(call); it != known.end()) return it->second;
        // A later member computes the same: it takes its value now (cos(x) inside t_tangent is t_1).
        if (auto it = member_like.find(structure(e)); it != member_like.end() && early.insert(it->second).second) {
          known[call] = it->second;
          steps.push_back(it->second + " = " + call);
          return it->second;
        }
        std::string v;
        do v = "_" + std::to_string(++internal);
        while (taken_.count(v) != 0);
        known[call] = v;
        steps.push_back(v + " = " + call);
        return v;
      }
      known.emplace(call, *name);
      steps.push_back(*name + " = " + call);
      return *name;
    };
    for (size_t i : r.members) {
      const std::string& name = fn_.var(fn_.body[i]->var).name;
      if (!early.count(name)) value(*fn_.body[i]->expr, &name);
    }

    const std::string kernel = fresh("fused");
    auto quoted = [](const std::vector<std::string>& names) {
      std::string t = "{";
      for (size_t k = 0; k < names.size(); ++k) t += (k ? ", \"" : "\"") + names[k] + "\"";
      return t + "}";
    };
    std::vector<std::string> in_names, out_names;
    for (int v : inputs) in_names.push_back(fn_.var(v).name);
    for (int v : outputs) out_names.push_back(fn_.var(v).name);
    std::string program;
    for (const std::string& s : steps) program += (program.empty() ? "\"" : " \"") + s + "; \"";
    auto kernel_stmt = std::make_unique<Stmt>();
    kernel_stmt->kind = StmtKind::Opaque;
    kernel_stmt->text = "static const fg::Fused " + kernel + "(" + quoted(in_names) + ", " + program + ", " +
                        quoted(out_names) + ");";
    const auto shape_steps = std::count_if(steps.begin(), steps.end(), [](const std::string& st) {
      return st.find(" = expand_as(") != std::string::npos || st.find(" = sum_to_as(") != std::string::npos;
    });
    kernel_stmt->comment = std::to_string(static_cast<long>(steps.size()) - shape_steps) + " element-wise ops" +
                           (shape_steps > 0 ? " and " + std::to_string(shape_steps) + " shape steps" : "") +
                           " in one pass";

    std::vector<ExprPtr> args;
    for (int v : inputs) args.push_back(ir::var_ref(fn_, v));
    auto list = std::make_unique<Expr>();
    list->kind = ExprKind::List;
    list->type = ir::Type::TensorList;
    list->args = std::move(args);
    std::vector<ExprPtr> call_args;
    call_args.push_back(std::move(list));
    ExprPtr call = ir::external_call(kernel + ".run", std::move(call_args), ir::Type::TensorTuple);
    call->template_args = "<" + std::to_string(outputs.size()) + ">";
    auto bind = std::make_unique<Stmt>();
    bind->kind = StmtKind::Bind;
    bind->text = "auto";
    bind->vars = outputs;
    bind->expr = std::move(call);

    std::vector<ir::StmtPtr> printed;
    printed.push_back(std::move(kernel_stmt));
    printed.push_back(std::move(bind));
    for (size_t i : copies) printed.push_back(std::move(fn_.body[i]));
    return printed;
  }

  ir::Function& fn_;
  std::set<std::string> taken_;
  std::map<int, int> copy_of_;  // a handle copy's local -> the local it copies (resolved)
  std::map<int, int> reads_;    // per local, how many times the function reads it
  std::set<int> assigned_;      // locals assigned after their declaration
};

}  // namespace

bool fusable_op(const std::string& op) { return unary_elementwise(op) || binary_elementwise(op); }

bool fuse_elementwise(ir::Function& fn) {
  // A run's values are bound by `auto [a, b] = ...`, which a C++17 lambda cannot capture.
  bool lambdas = false;
  ir::for_each_expr(fn.body, [&](const Expr& e) { lambdas |= e.kind == ExprKind::Lambda; });
  ir::for_each_stmt(fn.body, [&](const Stmt& s) { lambdas |= s.lambda_definition; });
  if (lambdas) return false;
  std::unique_ptr<ir::Function> copy = ir::copy_function(fn);
  if (!Fuser(*copy).run()) return false;
  fn = std::move(*copy);
  return true;
}

}  // namespace funcgen
