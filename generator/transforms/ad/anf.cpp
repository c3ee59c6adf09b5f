#include "transforms/ad/anf.h"

#include <map>
#include <set>

#include "emitter/cxx_text.h"
#include "ir/build.h"

namespace funcgen::ad {

namespace {

using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;
using ir::Stmt;
using ir::StmtKind;
using ir::StmtPtr;

// Ops that return a view of their first argument: an in-place write into one would change the
// base too, which the functionalized code would not.
bool is_view_op(const std::string& op) {
  static const std::set<std::string> views = {"view",   "reshape", "transpose", "t",      "permute",  "unsqueeze",
                                              "squeeze", "expand", "select",    "slice",  "narrow",   "diagonal",
                                              "flatten", "view_as", "expand_as", "reshape_as", "operator[]", "index"};
  return views.count(op) != 0;
}

bool has_tensors(const Stmt& s, const ir::Function& fn) {
  bool found = false;
  const auto stmt = [&](const Stmt& t) {
    if ((t.kind == StmtKind::Decl || t.kind == StmtKind::Assign) && t.var >= 0 && ir::is_tensor_like(fn.var(t.var).type))
      found = true;
    for (int v : t.vars) found |= ir::is_tensor_like(fn.var(v).type);
    const auto expr = [&](const Expr& e) { found |= ir::is_tensor_like(e.type); };
    if (t.expr) ir::for_each_expr(*t.expr, expr);
    if (t.step) ir::for_each_expr(*t.step, expr);
  };
  stmt(s);
  for (const auto* children : {&s.init, &s.body, &s.else_body}) ir::for_each_stmt(*children, stmt);
  return found;
}

const char* statement_name(StmtKind k) {
  switch (k) {
    case StmtKind::If: return "an 'if'";
    case StmtKind::For: return "a 'for' loop";
    case StmtKind::While: return "a 'while' loop";
    case StmtKind::DoWhile: return "a 'do' loop";
    case StmtKind::Switch: return "a 'switch'";
    default: return "this statement";
  }
}

class Normalizer {
 public:
  Normalizer(Lowering& lowering, Reporter& reporter, std::string what)
      : lowering_(lowering), reporter_(reporter), what_(std::move(what)) {}

  std::unique_ptr<ir::Function> run(const ir::Function& src) {
    out_ = ir::derived_function(src);
    Scope scope{&src};
    for (size_t i = 0; i < src.params.size(); ++i) {
      const ir::Var& p = src.var(src.params[i]);
      const int id = ir::add_var(*out_, p.name, p.type, p.cxx_type);
      out_->vars[static_cast<size_t>(id)].param_index = static_cast<int>(i);
      out_->vars[static_cast<size_t>(id)].decl = p.decl;
      out_->params.push_back(id);
      emitted_.insert(p.name);
      scope.vars[p.id] = id;
    }
    for (const auto& v : src.vars) names_.insert(v.name);
    std::vector<ExprPtr> results;
    scope.results = &results;
    active_.insert(src.decl);
    body(src.body, scope, out_->body);
    if (!ok_) return nullptr;
    if (!scope.returned) {
      fail(src.decl != nullptr ? src.decl->getLocation() : clang::SourceLocation(),
           "'" + src.name + "' must end in a return of its tensors to be differentiated");
      return nullptr;
    }
    out_->body.push_back(ir::ret(results.size() == 1 && src.return_type == ir::Type::Tensor
                                     ? std::move(results[0])
                                     : ir::tuple(std::move(results))));
    return std::move(out_);
  }

 private:
  struct Scope {
    const ir::Function* fn;
    std::map<int, int> vars;                     // source var -> current version in out_
    std::map<int, std::vector<int>> tuples;      // source tuple var -> the versions of its elements
    std::map<std::string, std::string> renames;  // source name -> out_ name, for C++ text
    std::vector<ExprPtr>* results = nullptr;
    bool returned = false;
  };

  void fail(clang::SourceLocation loc, const std::string& message) {
    if (!ok_) return;
    ok_ = false;
    reporter_.report("unsupported", loc, message);
  }
  void fail(const Expr& e, const std::string& message) { fail(e.range.getBegin(), message); }

  // A name for a new variable of out_: `base` the first time, then base_1, base_2, ... (never a
  // name of the source functions, which their C++ text may use).
  std::string claim(const std::string& base) {
    std::string n = base;
    for (int i = 1; emitted_.count(n) != 0 || (n != base && names_.count(n) != 0); ++i) n = base + "_" + std::to_string(i);
    emitted_.insert(n);
    return n;
  }

  // A new version of a tensor: the source's name for the first one, then name_1, ...
  int new_tensor(const std::string& base) { return ir::add_var(*out_, claim(base), ir::Type::Tensor, "fg::Tensor"); }

  std::function<int(int)> remap(Scope& scope) {
    return [&scope, this](int id) {
      auto it = scope.vars.find(id);
      if (it != scope.vars.end()) return it->second;
      fail(clang::SourceLocation(), "internal error: a variable was used before its definition");
      return 0;
    };
  }

  void body(const std::vector<ir::StmtPtr>& stmts, Scope& scope, std::vector<ir::StmtPtr>& out) {
    for (const auto& s : stmts) {
      if (!ok_) return;
      if (scope.returned) {
        fail(s->range.getBegin(), "code after a return cannot be differentiated");
        return;
      }
      statement(*s, scope, out);
    }
  }

  void statement(const Stmt& s, Scope& scope, std::vector<ir::StmtPtr>& out) {
    const ir::Function& fn = *scope.fn;
    switch (s.kind) {
      case StmtKind::Decl:
      case StmtKind::Assign: {
        const ir::Var& v = fn.var(s.var);
        if (v.type == ir::Type::Tensor) {
          if (!s.expr) {
            fail(s.range.getBegin(), "a tensor declared without a value cannot be differentiated; initialize it");
            return;
          }
          if (s.kind == StmtKind::Assign && s.text != "=") {
            fail(s.range.getBegin(), "this assignment to a tensor cannot be differentiated; write 'x = x + y'");
            return;
          }
          scope.vars[v.id] = value(*s.expr, scope, out, v.name);
          return;
        }
        if (v.type == ir::Type::TensorTuple) {
          if (!s.expr || s.kind != StmtKind::Decl) {
            fail(s.range.getBegin(), "a tuple of tensors must be declared with its value to be differentiated");
            return;
          }
          scope.tuples[v.id] = tuple_value(*s.expr, scope, out);
          return;
        }
        if (ir::is_tensor_like(v.type)) {
          fail(s.range.getBegin(), "lists of tensors cannot be differentiated yet");
          return;
        }
        // A scalar: kept, with the tensors it reads as their current versions.
        if (s.kind == StmtKind::Decl) {
          const std::string name = claim(v.name);
          if (name != v.name) scope.renames[v.name] = name;
          const int id = ir::add_var(*out_, name, v.type, v.cxx_type);
          out_->vars[static_cast<size_t>(id)].decl = v.decl;
          ExprPtr init = s.expr ? scalar(*s.expr, scope, out) : nullptr;
          scope.vars[v.id] = id;
          StmtPtr d = ir::decl(id, std::move(init));
          d->range = s.range;
          d->ast = s.ast;
          d->is_static_local = s.is_static_local;
          out.push_back(std::move(d));
        } else {
          ExprPtr e = scalar(*s.expr, scope, out);
          StmtPtr a = ir::assign(scope.vars.at(v.id), std::move(e));
          a->text = s.text;
          a->range = s.range;
          a->ast = s.ast;
          out.push_back(std::move(a));
        }
        return;
      }
      case StmtKind::Bind: {
        std::vector<int> items = tuple_value(*s.expr, scope, out);
        if (!ok_) return;
        if (items.size() != s.vars.size()) {
          fail(s.range.getBegin(), "structured binding of a tuple whose size is not known cannot be differentiated");
          return;
        }
        for (size_t i = 0; i < s.vars.size(); ++i) scope.vars[s.vars[i]] = items[i];
        return;
      }
      case StmtKind::Eval: {
        if (s.expr->kind == ExprKind::Call && is_inplace(*s.expr)) {
          inplace(*s.expr, scope, out);
          return;
        }
        ExprPtr e = scalar(*s.expr, scope, out);  // e.g. printing: kept, on the current versions
        StmtPtr st = ir::eval(std::move(e));
        st->range = s.range;
        st->ast = s.ast;
        out.push_back(std::move(st));
        return;
      }
      case StmtKind::Return: {
        if (scope.results == nullptr || !s.expr) {
          fail(s.range.getBegin(), what_ + " needs a function that returns tensors");
          return;
        }
        if (s.expr->type == ir::Type::Tensor) {
          scope.results->push_back(ir::var_ref(*out_, value(*s.expr, scope, out, "out")));
        } else if (s.expr->type == ir::Type::TensorTuple) {
          for (int id : tuple_value(*s.expr, scope, out)) scope.results->push_back(ir::var_ref(*out_, id));
        } else {
          fail(s.range.getBegin(), what_ + " needs a function that returns tensors");
        }
        scope.returned = true;
        return;
      }
      case StmtKind::Block:
        body(s.body, scope, out);
        return;
      case StmtKind::Opaque: {
        StmtPtr c = ir::clone(s, remap(scope));
        c->text = cxx::replace_identifiers(c->text, scope.renames);
        out.push_back(std::move(c));
        return;
      }
      default:
        if (!has_tensors(s, fn)) {  // scalar control flow (counting, indices) is kept as it is
          StmtPtr c = ir::clone(s, remap(scope));
          out.push_back(std::move(c));
          return;
        }
        fail(s.range.getBegin(), std::string(statement_name(s.kind)) +
                                     " on tensors cannot be differentiated by this version of funcgen; "
                                     "write it as straight-line code (fg::where selects element-wise)");
        return;
    }
  }

  static bool is_inplace(const Expr& e) {
    return e.kind == ExprKind::Call && (e.form == ir::CallForm::Method || e.form == ir::CallForm::Operator) &&
           e.op.size() > 1 && e.op.back() == '_' && !e.args.empty() && e.args[0]->kind == ExprKind::VarRef &&
           e.args[0]->type == ir::Type::Tensor;
  }

  // x.op_(args) as x = x.op(args): a new version of x.
  int inplace(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    const int src = e.args[0]->var;
    const int self = scope.vars.at(src);
    if (auto it = view_of_.find(self); it != view_of_.end()) {
      fail(e, "in-place '" + e.op + "' writes into a view of '" + out_->var(it->second).name +
                  "', which cannot be differentiated yet; clone() the view first");
      return self;
    }
    auto call = std::make_unique<Expr>();
    call->kind = ExprKind::Call;
    call->type = ir::Type::Tensor;
    call->range = e.range;
    call->form = e.form == ir::CallForm::Operator ? ir::CallForm::Operator : ir::CallForm::Method;
    call->callee = nullptr;
    call->text = e.text.size() == 2 && e.text[1] == '=' ? e.text.substr(0, 1) : e.text;  // += -> +
    std::string op = e.op.substr(0, e.op.size() - 1);
    std::vector<ExprPtr> args;
    for (const auto& a : e.args) args.push_back(atom(*a, scope, out));
    if (op == "zero") {  // writes that forget the old values
      call->form = ir::CallForm::Free;
      call->op = "zeros_like";
      args.resize(1);
      call->params = {"self"};
    } else if (op == "fill") {
      call->form = ir::CallForm::Free;
      call->op = "full_like";
      call->params = {"self", "fill_value"};
    } else if (op == "copy") {  // the source, broadcast to the destination's shape
      auto sizes = std::make_unique<Expr>();
      sizes->kind = ExprKind::Call;
      sizes->form = ir::CallForm::Method;
      sizes->op = "sizes";
      sizes->type = ir::Type::IntList;
      sizes->params = {"self"};
      sizes->param_types = {ir::Type::Tensor};
      sizes->args.push_back(ir::var_ref(*out_, self));
      ExprPtr source = std::move(args[1]);
      args.clear();
      args.push_back(std::move(source));
      args.push_back(std::move(sizes));
      call->form = ir::CallForm::Method;
      call->op = "expand";
      call->params = {"self", "size"};
    } else {
      call->op = op;
      call->params = e.params;
    }
    call->param_types.clear();
    for (const auto& a : args) call->param_types.push_back(a->type);
    call->args = std::move(args);
    const int id = new_tensor(out_->var(self).name);
    StmtPtr d = ir::decl(id, std::move(call));
    d->range = e.range;
    out.push_back(std::move(d));
    scope.vars[src] = id;
    return id;
  }

  // A tensor-valued expression as a version in out_ (the statements computing it appended to out).
  int value(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out, const std::string& name) {
    if (!ok_) return 0;
    switch (e.kind) {
      case ExprKind::VarRef:
        if (auto it = scope.vars.find(e.var); it != scope.vars.end()) return it->second;
        fail(e, "internal error: '" + scope.fn->var(e.var).name + "' used before its definition");
        return 0;
      case ExprKind::Get: {
        std::vector<int> items = tuple_value(e.arg(0), scope, out);
        if (!ok_) return 0;
        if (e.index < 0 || static_cast<size_t>(e.index) >= items.size()) {
          fail(e, "std::get of an element that the tuple does not have");
          return 0;
        }
        return items[static_cast<size_t>(e.index)];
      }
      case ExprKind::Call:
        break;
      default:
        fail(e, "this expression on tensors cannot be differentiated by this version of funcgen");
        return 0;
    }
    if (e.form == ir::CallForm::User) {
      std::vector<int> results = inline_call(e, scope, out);
      if (ok_ && results.size() != 1) fail(e, "'" + e.op + "' returns a tuple here; take its elements with std::get");
      return ok_ ? results[0] : 0;
    }
    if (e.form == ir::CallForm::External) {
      fail(e, "calls of '" + e.op + "' cannot be differentiated: funcgen sees only fg ops and functions defined in "
              "this file");
      return 0;
    }
    if (is_inplace(e)) return inplace(e, scope, out);
    ExprPtr call = ir::clone(e);
    call->args.clear();
    for (const auto& a : e.args) call->args.push_back(atom(*a, scope, out));
    if (!ok_) return 0;
    const int self = !call->args.empty() && call->args[0]->kind == ExprKind::VarRef ? call->args[0]->var : -1;
    const int id = new_tensor(name.empty() ? "t" : name);
    if (self >= 0 && is_view_op(e.op)) view_of_[id] = self;
    StmtPtr d = ir::decl(id, std::move(call));
    d->range = e.range;
    out.push_back(std::move(d));
    return id;
  }

  std::vector<int> tuple_value(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    if (e.kind == ExprKind::VarRef) {
      if (auto it = scope.tuples.find(e.var); it != scope.tuples.end()) return it->second;
    } else if (e.kind == ExprKind::Call && e.form == ir::CallForm::User) {
      return inline_call(e, scope, out);
    } else if (e.kind == ExprKind::Tuple) {
      std::vector<int> items;
      for (const auto& a : e.args) {
        if (a->type != ir::Type::Tensor) {
          fail(*a, "tuples with values other than tensors cannot be differentiated yet");
          return {};
        }
        items.push_back(value(*a, scope, out, ""));
      }
      return items;
    }
    fail(e, "this tuple of tensors cannot be differentiated yet (ops that return several tensors have no "
            "derivative rules)");
    return {};
  }

  // An argument: tensors become the VarRef of their version, everything else is kept.
  ExprPtr atom(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    if (e.type == ir::Type::Tensor) {
      ExprPtr r = ir::var_ref(*out_, value(e, scope, out, ""));
      r->range = e.range;
      return r;
    }
    if (e.kind == ExprKind::List && e.type == ir::Type::TensorList) {
      auto list = std::make_unique<Expr>();
      list->kind = ExprKind::List;
      list->type = e.type;
      list->range = e.range;
      for (const auto& a : e.args) list->args.push_back(atom(*a, scope, out));
      return list;
    }
    return scalar(e, scope, out);
  }

  // A non-tensor expression: copied, with the tensors it reads (x.size(0)) as their versions.
  ExprPtr scalar(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    if (e.type == ir::Type::Tensor) return atom(e, scope, out);
    if (e.kind == ExprKind::Call && e.form == ir::CallForm::User) {
      // A helper that computes a scalar: called as it is (it is not differentiated).
      ExprPtr c = ir::clone(e, remap(scope));
      c->args.clear();
      for (const auto& a : e.args) c->args.push_back(atom(*a, scope, out));
      return c;
    }
    auto x = ir::clone(e, remap(scope));
    if (e.kind == ExprKind::Opaque) {
      x->text = cxx::replace_identifiers(x->text, scope.renames);
      return x;
    }
    x->args.clear();
    for (const auto& a : e.args) x->args.push_back(atom(*a, scope, out));
    return x;
  }

  // The helper's body in place of the call; its results' versions.
  std::vector<int> inline_call(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    if (e.callee == nullptr) {
      fail(e, "internal error: a call of '" + e.op + "' without its function");
      return {};
    }
    if (active_.count(e.callee) != 0) {
      fail(e, "'" + e.op + "' calls itself (directly or through helpers); recursion cannot be differentiated");
      return {};
    }
    const ir::Function* callee = lowering_.lower(e.callee);
    if (callee == nullptr) {
      ok_ = false;  // reported by the lowering
      return {};
    }
    Scope inner{callee};
    std::vector<ExprPtr> results;
    inner.results = &results;
    for (size_t i = 0; i < callee->params.size() && i < e.args.size(); ++i) {
      const ir::Var& p = callee->var(callee->params[i]);
      if (p.type == ir::Type::Tensor) {
        inner.vars[p.id] = value(e.arg(i), scope, out, p.name);
        continue;
      }
      // A scalar parameter: a local of the caller's, holding the argument.
      const std::string name = claim(p.name);
      if (name != p.name) inner.renames[p.name] = name;
      const int id = ir::add_var(*out_, name, p.type, "const " + ir::value_type(p));
      inner.vars[p.id] = id;
      out.push_back(ir::decl(id, scalar(e.arg(i), scope, out)));
    }
    for (const auto& v : callee->vars) names_.insert(v.name);
    active_.insert(e.callee);
    body(callee->body, inner, out);
    active_.erase(e.callee);
    if (!ok_) return {};
    if (!inner.returned) {
      fail(e, "'" + e.op + "' must end in a return of its tensors to be differentiated");
      return {};
    }
    std::vector<int> ids;
    for (const auto& r : results) ids.push_back(r->var);
    return ids;
  }

  Lowering& lowering_;
  Reporter& reporter_;
  std::string what_;
  std::unique_ptr<ir::Function> out_;
  std::set<std::string> names_, emitted_;
  std::map<int, int> view_of_;  // version -> the version it is a view of
  std::set<const clang::FunctionDecl*> active_;
  bool ok_ = true;
};

}  // namespace

std::unique_ptr<ir::Function> normalize(const ir::Function& fn, Lowering& lowering, Reporter& reporter,
                                        const std::string& what) {
  return Normalizer(lowering, reporter, what).run(fn);
}

std::vector<const ir::Expr*> returned(const ir::Function& fn) {
  std::vector<const ir::Expr*> out;
  if (fn.body.empty() || fn.body.back()->kind != ir::StmtKind::Return) return out;
  const ir::Expr& e = *fn.body.back()->expr;
  if (e.kind == ir::ExprKind::Tuple) {
    for (const auto& a : e.args) out.push_back(a.get());
  } else {
    out.push_back(&e);
  }
  return out;
}

}  // namespace funcgen::ad
