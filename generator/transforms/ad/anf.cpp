#include "transforms/ad/anf.h"

#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <clang/AST/ExprCXX.h>

#include "ir/cxx_text.h"
#include "ir/build.h"
#include "ir/types.h"
#include "ops/inplace.h"
#include "ops/registry.h"
#include "transforms/ad/returns.h"

namespace funcgen::ad {

namespace {

using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;
using ir::Stmt;
using ir::StmtKind;
using ir::StmtPtr;


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
  Normalizer(const ir::Module& module, Reporter& reporter, std::string what, const OpResolver& resolver)
      : module_(module), reporter_(reporter), what_(std::move(what)), resolver_(resolver) {}

  std::unique_ptr<ir::Function> run(const ir::Function& src) {
    out_ = ir::derived_function(src);
    for (const ir::Var& v : src.vars)
      if (v.decl != nullptr) declared_.insert(v.name);
    Scope scope;
    scope.fn = &src;
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
    avoid_text_names(src);
    std::vector<ExprPtr> results;
    scope.results = &results;
    active_.insert(src.decl);
    if (resolver_.has_custom_rule(src.decl)) {  // the rule stands for the body
      std::vector<ExprPtr> args;
      for (int p : out_->params) args.push_back(ir::var_ref(*out_, p));
      const int id = new_tensor("out");
      out_->body.push_back(ir::decl(id, user_call(src.decl, std::move(args))));
      results.push_back(ir::var_ref(*out_, id));
      scope.returned = true;
    } else {
      body(src.body, scope, out_->body);
    }
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
    const ir::Function* fn = nullptr;
    std::map<int, int> vars;                     // source var -> current version in out_
    std::map<int, std::vector<int>> tuples;      // source tuple var -> the versions of its elements
    std::map<std::string, std::string> renames;  // source name -> out_ name, for C++ text
    std::vector<ExprPtr>* results = nullptr;  // null inside control flow: no return there
    bool returned = false;
    const char* inside = nullptr;   // the control flow statement the scope is in ("an 'if'")
    bool in_loop = false;           // break/continue would skip the loop's bookkeeping
    bool helper = false;            // a helper's body, inlined
  };

  // A tensor declared without a value, before its first assignment.
  static constexpr int kUnset = -2;

  std::set<int> lists_;  // out_'s local vectors of tensors (tapes pushed to with ir::kListPush)
  bool in_trip_expr_ = false;  // normalizing a loop's condition or step
  std::map<int, int> pushed_;  // a version pushed onto a local list -> the list

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
    for (int i = 1; emitted_.count(n) != 0 || text_names_.count(n) != 0 || (n != base && names_.count(n) != 0); ++i)
      n = base + "_" + std::to_string(i);
    emitted_.insert(n);
    return n;
  }

  // The names fn's text uses that are not its locals': a global `trips` the body reads must not
  // be hidden by a loop counter named so.
  void avoid_text_names(const ir::Function& fn) {
    std::set<std::string> locals;
    for (const auto& v : fn.vars) locals.insert(v.name);
    for (const auto& n : ir::text_names(fn))
      if (locals.count(n) == 0) text_names_.insert(n);
  }

  // The name the user declared that version `name` (y, y_1, y_1_2) is of, or "" for a temporary.
  std::string declared_name(std::string name) const {
    while (declared_.count(name) == 0) {
      const size_t at = name.find_last_of('_');
      if (at == std::string::npos || at + 1 == name.size() ||
          name.find_first_not_of("0123456789", at + 1) != std::string::npos)
        return "";
      name.resize(at);
    }
    return name;
  }

  // A new version of a tensor: the source's name for the first one, then name_1, ...
  int new_tensor(const std::string& base) { return ir::add_var(*out_, claim(base), ir::Type::Tensor, "fg::Tensor"); }

  std::function<int(int)> remap(Scope& scope) {
    return [&scope, this](int id) {
      auto it = scope.vars.find(id);
      if (it != scope.vars.end()) return it->second;
      fail(clang::SourceLocation(), "internal error: a variable was used before its definition: " + scope.fn->var(id).name);
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

  // A declaration or assignment: a tensor gets a new version, a tuple its items' versions, a
  // scalar is kept on the current versions of the tensors it reads.
  void assignment(const Stmt& s, Scope& scope, std::vector<ir::StmtPtr>& out) {
    const ir::Function& fn = *scope.fn;
    const ir::Var& v = fn.var(s.var);
    if (v.type == ir::Type::Tensor) {
      if (!s.expr) {
        if (s.kind == StmtKind::Decl) scope.vars[v.id] = kUnset;  // given a value later, on every path
        else fail(s.range.getBegin(), "this assignment to a tensor cannot be differentiated");
        return;
      }
      if (s.kind == StmtKind::Assign && s.text != "=") {
        fail(s.range.getBegin(), "this assignment to a tensor cannot be differentiated; write 'x = x + y'");
        return;
      }
      if (s.expr->kind == ExprKind::Opaque && s.expr->text == "fg::Tensor()" && !scope.in_loop) {  // undefined
        scope.vars[v.id] = kUnset;
        return;
      }
      scope.vars[v.id] = value(*s.expr, scope, out, plain_name(v.name));
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
    // A list's gradient, or its jacobians (the rows of its gradients vmapped, unflattened per element).
    const bool list_derivative = s.expr && s.expr->kind == ExprKind::Call && v.type == ir::Type::TensorList &&
                                 (s.expr->op == ir::kListGradient || s.expr->form == ir::CallForm::Vmapped ||
                                  ops::info(*s.expr).ad_helper());
    if (list_derivative) {
      fail(s.range.getBegin(), "the gradient of a vector of tensors read at run-time indices cannot be differentiated "
                               "again yet; differentiate w.r.t. the other arguments (argnums), or keep the vector's "
                               "tensors in a struct or a std::array");
      return;
    }
    if (v.type == ir::Type::TensorList && s.kind == StmtKind::Decl && list_value(s.expr.get())) {
      declare_list(s, scope, out);
      return;
    }
    if (v.type == ir::Type::TensorList && s.kind == StmtKind::Decl) {  // `hs = states(x, n)`: the helper's list
      if (const int made = inlined_list(*s.expr, scope, out); made >= 0) {
        scope.vars[v.id] = made;
        if (v.name != out_->var(made).name) scope.renames[v.name] = out_->var(made).name;
        return;
      }
      if (!ok_) return;
    }
    if (ir::is_tensor_like(v.type)) {
      fail(s.range.getBegin(), v.type == ir::Type::TensorList && s.kind == StmtKind::Assign
                                   ? "assigning a whole vector of tensors cannot be differentiated yet; push_back "
                                     "into it, or declare a new vector"
                                   : "this vector of tensors cannot be differentiated yet; declare it empty or with "
                                     "braces and push_back into it");
      return;
    }
    // A scalar: kept, with the tensors it reads as their current versions.
    if (s.kind == StmtKind::Decl) {
      const std::string name = claim(plain_name(v.name));
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
  }

  // v.size() or v.empty() of a local list, as it is here, in a variable: the derivative code, which
  // reads it later (in a reverse pass, or per trip of a loop), would see the list as it is then.
  ExprPtr list_size(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    ExprPtr x = ir::clone(e, remap(scope));
    x->text = cxx::replace_identifiers(x->text, scope.renames);
    if (x->reads.size() != 1 || lists_.count(x->reads[0]) == 0) return x;
    const bool size = x->type != ir::Type::Bool;
    const std::string base = out_->var(x->reads[0]).name + (size ? "_size" : "_empty");
    const ir::Type type = x->type;
    return ir::var_ref(*out_, held(std::move(x), base, type, size ? "const size_t" : "const bool", out));
  }

  // `const <cxx> base = value;` appended to `out`: a number as it is here, which derivative code
  // reads later (per trip of a loop's reverse pass, or after the function changed it). Its id.
  int held(ExprPtr value, const std::string& base, ir::Type type, const std::string& cxx, std::vector<ir::StmtPtr>& out) {
    const int id = ir::add_var(*out_, claim(base), type, cxx);
    out.push_back(ir::decl(id, std::move(value)));
    return id;
  }

  // The error for an in-place write into a tensor a list holds (`list`: its name, "" when not known).
  static std::string held_by_list(const std::string& op, const std::string& list) {
    return "in-place '" + op + "' writes into a tensor that " + (list.empty() ? "a vector of tensors took on an earlier "
                                                                                "trip of this loop"
                                                                              : "the vector '" + list + "' holds") +
           " (push_back and assigning an element share its memory), which cannot be differentiated yet; store a "
           "clone(), or compute a new tensor (h = h * 2) instead of writing in place";
  }

  // A name the lowering made (`v_item__`) without its mark: one value of the derivative code.
  static std::string plain_name(const std::string& name) {
    const bool made = name.size() > 2 && name.compare(name.size() - 2, 2, "__") == 0;
    return made ? name.substr(0, name.size() - 2) : name;
  }

  // What a local list can start as: nothing, or a braced list of tensors.
  static bool list_value(const Expr* e) {
    return e == nullptr || (e->kind == ExprKind::List && e->type == ir::Type::TensorList) ||
           (e->kind == ExprKind::Opaque && e->text == "{}");
  }

  // A local std::vector of tensors: a tape (ir::kListPush) that starts empty, its braced items
  // pushed onto it.
  void declare_list(const Stmt& s, Scope& scope, std::vector<ir::StmtPtr>& out) {
    const ir::Var& v = scope.fn->var(s.var);
    const std::string name = claim(v.name);
    if (name != v.name) scope.renames[v.name] = name;
    const int id = ir::add_var(*out_, name, ir::Type::Other, "std::vector<fg::Tensor>");
    out_->vars[static_cast<size_t>(id)].decl = v.decl;
    lists_.insert(id);
    scope.vars[v.id] = id;
    StmtPtr d = ir::decl(id, nullptr);
    d->range = s.range;
    out.push_back(std::move(d));
    if (s.expr && s.expr->kind == ExprKind::List)
      for (const auto& item : s.expr->args) push_list(id, value(*item, scope, out, name + "_item"), *item, out);
  }

  // list.push_back(value), with the index it lands at, for reverse mode to read its gradient from.
  void push_list(int list, int value, const Expr& at, std::vector<ir::StmtPtr>& out) {
    if (!ok_) return;
    ExprPtr size = ir::opaque("static_cast<int64_t>(" + out_->var(list).name + ".size())", ir::Type::Int);
    size->op = ir::kListSize;  // (no reads: the list's size here, not a value; unread, it is not printed)
    const int index = held(std::move(size), out_->var(list).name + "_at", ir::Type::Int, "const int64_t", out);
    pushed_[value] = list;
    StmtPtr p = ir::eval(ir::tape_op(*out_, ir::kListPush, {list, index, value}, ir::Type::Void));
    p->range = at.range;
    p->expr->range = at.range;
    out.push_back(std::move(p));
  }

  // The function's return: its tensors are the results (returns inside ifs were moved to the end
  // before, by returns.h).
  void return_statement(const Stmt& s, Scope& scope, std::vector<ir::StmtPtr>& out) {
    if (scope.inside != nullptr) {
      const std::string where = scope.in_loop ? "a loop" : scope.inside;
      fail(s.range.getBegin(), "a return inside " + where +
                                   " cannot be differentiated yet; keep the result in a variable" +
                                   (scope.in_loop ? ", leave the loop with 'break'," : "") +
                                   " and return it at the end of the function");
      return;
    }
    if (!s.expr && scope.fn->return_type == ir::Type::Void && scope.helper) {  // `return;` of a helper
      scope.returned = true;
      return;
    }
    if (scope.results == nullptr || !s.expr) {
      fail(s.range.getBegin(), what_ + " needs a function that returns tensors");
      return;
    }
    if (!scope.helper && s.expr->type == ir::Type::TensorList) {
      const std::string name = s.expr->kind == ExprKind::VarRef ? scope.fn->var(s.expr->var).name : "v";
      fail(s.range.getBegin(), what_ + " of a function that returns a std::vector of tensors built at run time (its "
                               "length known only when it runs) cannot be generated yet; return fg::stack(" + name +
                               ") where its tensors have one shape");
      return;
    }
    if (s.expr->type == ir::Type::Tensor) {
      scope.results->push_back(ir::var_ref(*out_, value(*s.expr, scope, out, "out")));
    } else if (s.expr->type == ir::Type::TensorTuple) {
      for (int id : tuple_value(*s.expr, scope, out)) scope.results->push_back(ir::var_ref(*out_, id));
    } else if (scope.helper && s.expr->type == ir::Type::TensorList) {  // a helper's local list: the list itself
      auto named = s.expr->kind == ExprKind::VarRef ? scope.vars.find(s.expr->var) : scope.vars.end();
      const int list = named != scope.vars.end() ? named->second : inlined_list(*s.expr, scope, out);  // (`return steps(x, n);`)
      if (!ok_) return;
      if (lists_.count(list) == 0) {
        fail(s.range.getBegin(), "a helper that returns a vector of tensors other than one it built cannot be "
                                 "differentiated yet; return a vector declared in the helper");
        return;
      }
      scope.results->push_back(ir::var_ref(*out_, list));
    } else if (scope.helper && s.expr->type != ir::Type::Void) {  // a number (or other value) of a helper inlined (scalar())
      const int id = ir::add_var(*out_, claim("result"), s.expr->type, "const " + scope.fn->return_cxx_type);
      out.push_back(ir::decl(id, scalar(*s.expr, scope, out)));
      scope.results->push_back(ir::var_ref(*out_, id));
    } else {
      fail(s.range.getBegin(), what_ + " needs a function that returns tensors");
    }
    scope.returned = true;
  }

  void statement(const Stmt& s, Scope& scope, std::vector<ir::StmtPtr>& out) {
    const ir::Function& fn = *scope.fn;
    switch (s.kind) {
      case StmtKind::Decl:
      case StmtKind::Assign:
        assignment(s, scope, out);
        return;
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
        if (s.expr->op == ir::kListPush && s.expr->reads.size() == 2 && ir::is_tape_op(*s.expr)) {
          auto list = scope.vars.find(s.expr->reads[0]);
          auto item = scope.vars.find(s.expr->reads[1]);
          if (list == scope.vars.end() || lists_.count(list->second) == 0 || item == scope.vars.end() ||
              (item->second < 0 && item->second != kUnset)) {
            fail(s.range.getBegin(), "internal error: push_back into a vector of tensors without its value");
            return;
          }
          const int pushed = item->second != kUnset ? item->second  // `h(n)`: n empty tensors, given values later
                                                    : undefined_tensor(fn.var(s.expr->reads[1]).name, out);
          push_list(list->second, pushed, *s.expr, out);
          return;
        }
        if (s.expr->kind == ExprKind::Call && is_inplace(*s.expr)) {
          inplace(*s.expr, scope, out);
          return;
        }
        if (const ir::Function* callee = helper_of(*s.expr);  // its result unused: called for what it changes
            callee != nullptr && must_inline(*s.expr, *callee)) {
          inline_call(*s.expr, scope, out);
          return;
        }
        ExprPtr e = scalar(*s.expr, scope, out);  // e.g. printing: kept, on the current versions
        if (e->op == ir::kListSet && ir::is_tape_op(*e) &&
            std::count(out_->params.begin(), out_->params.end(), e->reads[0]) != 0) {
          const std::string list = out_->var(e->reads[0]).name;
          fail(s.range.getBegin(), "an element of '" + list + "', a parameter of '" + out_->name + "', is assigned, which "
                                   "cannot be differentiated: the transforms take their inputs as values; build a new "
                                   "vector of the results (std::vector<fg::Tensor> out; out.push_back(...)) and "
                                   "return it");
          return;
        }
        if (e->op == ir::kListSet && ir::is_tape_op(*e)) pushed_[e->reads.back()] = e->reads[0];
        StmtPtr st = ir::eval(std::move(e));
        st->range = s.range;
        st->ast = s.ast;
        out.push_back(std::move(st));
        return;
      }
      case StmtKind::Return:
        return_statement(s, scope, out);
        return;
      case StmtKind::Block:
        body(s.body, scope, out);
        return;
      case StmtKind::Opaque: {
        // A lambda's definition: AD inlines its calls (must_inline), so nothing here calls it.
        if (s.lambda_definition) return;
        if (scope.helper && has_return(s.ast)) {  // C++ text that would return from the caller
          fail(s.range.getBegin(), "a return inside code without tensors in '" + scope.fn->name + "', which is "
                                   "inlined into its caller to be differentiated, cannot be differentiated yet; "
                                   "return at the end of '" + scope.fn->name + "'");
          return;
        }
        StmtPtr c = ir::clone(s, remap(scope));
        // The tensors it reads by their current versions' names (a lambda's definition kept as text
        // captures `y`, which may be an inlined helper's result here).
        std::map<std::string, std::string> renames = scope.renames;
        for (size_t i = 0; i < s.reads.size() && i < c->reads.size(); ++i)
          if (c->reads[i] >= 0 && ir::is_tensor_like(scope.fn->var(s.reads[i]).type))
            renames[scope.fn->var(s.reads[i]).name] = out_->var(c->reads[i]).name;
        c->text = cxx::replace_identifiers(c->text, renames);
        out.push_back(std::move(c));
        return;
      }
      case StmtKind::Break:
      case StmtKind::Continue:
        if (scope.in_loop) {
          leaving_loop(s);
          return;
        }
        out.push_back(ir::clone(s, remap(scope)));
        return;
      default:
        if (!computes_tensors(s, fn)) {  // scalar control flow (counting, indices) is kept as it is
          if (const Stmt* jump = scope.in_loop ? leaves_loop(s) : nullptr) {
            leaving_loop(*jump);
            return;
          }
          if (scope.helper && returns_inside(s)) {  // `if (m <= 0) return;` of a helper inlined here
            fail(s.range.getBegin(), "a return inside an 'if' on numbers in '" + scope.fn->name + "', which is "
                                     "inlined into its caller to be differentiated, cannot be differentiated yet; put "
                                     "the rest of '" + scope.fn->name + "' in the 'if' or its 'else' instead");
            return;
          }
          StmtPtr c = ir::clone(s, remap(scope));
          if (!scope.renames.empty()) rename_texts(*c, scope.renames);
          out.push_back(std::move(c));
          return;
        }
        if (s.kind == StmtKind::If) branch(s, scope, out);
        else if (s.kind == StmtKind::Switch)  // the others are chains of ifs by now (returns.h)
          // (returns.cpp turns every other switch into a chain of ifs)
          fail(s.range.getBegin(), "a 'break' of this switch inside a statement on scalars that funcgen keeps as "
                                   "C++ (an 'if' with an initializer, say) cannot be differentiated yet; declare the "
                                   "scalar before the 'if'");
        else loop(s, scope, out);
        return;
    }
  }

  // The C++ text in `s` (its statements' and expressions' opaque text) with the scalars renamed
  // (a helper inlined twice declares its locals under new names the second time).
  static void rename_texts(Stmt& s, const std::map<std::string, std::string>& renames) {
    const std::function<void(Expr&)> expr = [&](Expr& e) {
      if (e.kind == ExprKind::Opaque) e.text = cxx::replace_identifiers(e.text, renames);
      for (auto& a : e.args) expr(*a);
    };
    if (s.kind == StmtKind::Opaque) s.text = cxx::replace_identifiers(s.text, renames);
    if (s.expr) expr(*s.expr);
    if (s.step) expr(*s.step);
    for (auto* children : {&s.init, &s.body, &s.else_body})
      for (auto& c : *children) rename_texts(*c, renames);
  }

  // A break or continue out of a loop that computes tensors: it would skip the loop's carried
  // assignments (and, in reverse mode, its trip bookkeeping).
  void leaving_loop(const Stmt& jump) {
    fail(jump.range.getBegin(), std::string("'") + (jump.kind == StmtKind::Break ? "break" : "continue") +
                                    "' in a loop that computes tensors cannot be differentiated yet; make the "
                                    "loop's condition say when it ends");
  }

  // A break or continue in `s` that leaves the loop around `s` (not one of a loop or switch inside).
  static const Stmt* leaves_loop(const Stmt& s, bool in_switch = false) {
    const bool loop = s.kind == StmtKind::For || s.kind == StmtKind::While || s.kind == StmtKind::DoWhile;
    if (loop) return nullptr;
    if ((s.kind == StmtKind::Break && !in_switch) || s.kind == StmtKind::Continue) return &s;
    const bool sw = in_switch || s.kind == StmtKind::Switch;
    for (const auto* children : {&s.body, &s.else_body})
      for (const auto& c : *children)
        if (const Stmt* j = leaves_loop(*c, sw)) return j;
    return nullptr;
  }

  // ------------------------------------------------------------------ control flow
  // A branch or a loop keeps its structure; what makes it differentiable is that every tensor it
  // changes gets an explicit variable of its own outside it (`merged` after an if, `carried` around
  // a loop) and that the condition of each if is a named bool: the taken branch, for the reverse pass.

  // A new scope for statements inside control flow: the enclosing versions, no return.
  static Scope nested(const Scope& scope, const char* inside, bool in_loop) {
    Scope s = scope;
    s.results = nullptr;
    s.inside = inside;
    s.in_loop = in_loop;
    return s;
  }

  // `cond` as a named bool declared before the branch (the reverse pass reads it again).
  ExprPtr recorded(ExprPtr cond, std::vector<ir::StmtPtr>& out) {
    const int taken = ir::add_var(*out_, claim("taken"), ir::Type::Bool, "const bool");
    out.push_back(ir::decl(taken, std::move(cond)));
    return ir::var_ref(*out_, taken);
  }

  // Runs each alternative body in a scope of its own (appending to the matching `outs`); then each
  // tensor of the enclosing scope that some path changed gets one merged variable, declared in
  // `out` and assigned at the end of every path.
  void alternatives(const std::vector<const std::vector<ir::StmtPtr>*>& bodies,
                    const std::vector<std::vector<ir::StmtPtr>*>& outs, Scope& scope, const char* inside,
                    std::vector<ir::StmtPtr>& out) {
    std::vector<Scope> paths;
    for (size_t i = 0; i < bodies.size(); ++i) {
      paths.push_back(nested(scope, inside, scope.in_loop));
      if (bodies[i] != nullptr) body(*bodies[i], paths.back(), *outs[i]);
      if (!ok_) return;
    }
    for (auto& [src, version] : scope.vars) {
      if (scope.fn->var(src).type != ir::Type::Tensor) continue;
      bool changed = false;
      for (const auto& p : paths) changed |= p.vars.at(src) != version;
      if (!changed) continue;
      // A path that gives it no value leaves the merged variable without one, as the source does
      // (the derivative code of a later branch on the same condition reads it only where it is set).
      const int merged = new_tensor(scope.fn->var(src).name);
      out.push_back(ir::decl(merged, nullptr));
      std::vector<int> incoming{version};
      std::vector<const Scope*> where{&scope};
      for (size_t i = 0; i < paths.size(); ++i)
        if (paths[i].vars.at(src) != kUnset) {
          outs[i]->push_back(ir::assign(merged, ir::var_ref(*out_, paths[i].vars.at(src))));
          incoming.push_back(paths[i].vars.at(src));
          where.push_back(&paths[i]);
        }
      detach(merged, incoming, where);
      version = merged;
    }
    for (const auto& p : paths)
      for (const auto& [src, items] : p.tuples)
        if (scope.tuples.count(src) != 0 && scope.tuples.at(src) != items) {
          fail(clang::SourceLocation(), "a tuple of tensors changed inside " + std::string(inside) +
                                            " cannot be differentiated; change its elements instead");
          return;
        }
  }

  void branch(const Stmt& s, Scope& scope, std::vector<ir::StmtPtr>& out) {
    ExprPtr cond = recorded(scalar(*s.expr, scope, out), out);
    auto st = std::make_unique<Stmt>();
    st->kind = StmtKind::If;
    st->range = s.range;
    st->ast = s.ast;
    st->expr = std::move(cond);
    alternatives({&s.body, &s.else_body}, {&st->body, &st->else_body}, scope, "an 'if'", out);
    st->has_else = !st->else_body.empty();
    out.push_back(std::move(st));
  }

  // The tensors a loop body assigns (its loop-carried values, when they exist before it).
  // The tensors `b` assigns or writes in place into `out`; whether it writes any in place.
  // A helper's call counts as what it does to the variables it is passed (carry_back).
  bool assigned_tensors(const std::vector<ir::StmtPtr>& b, const ir::Function& fn, std::set<int>& out) {
    bool writes = false;
    ir::for_each_stmt(b, [&](const Stmt& t) {
      if (t.kind == StmtKind::Assign && t.var >= 0 && fn.var(t.var).type == ir::Type::Tensor) out.insert(t.var);
      if (t.expr)
        ir::for_each_expr(*t.expr, [&](const Expr& e) {
          if (const ir::Function* callee = helper_of(e)) {
            writes = writes || writes_in_place(callee->body);
            for (size_t i = 0; i < callee->params.size() && i < e.args.size(); ++i)
              if (e.arg(i).kind == ExprKind::VarRef && fn.var(e.arg(i).var).type == ir::Type::Tensor &&
                  by_reference(callee->var(callee->params[i])) && assigns(*callee, callee->params[i]))
                out.insert(e.arg(i).var);
            return;
          }
          if (!is_inplace(e)) return;
          if (e.args[0]->kind == ExprKind::VarRef) out.insert(e.args[0]->var);
          writes = true;
        });
    });
    return writes;
  }

  // A loop: each tensor it assigns that exists before it is carried in a variable of its own,
  // declared before the loop; the body starts by naming the value it starts from (`x_prev`) and
  // ends by assigning the value it leaves.
  void loop(const Stmt& s, Scope& scope, std::vector<ir::StmtPtr>& out) {
    const char* what = statement_name(s.kind);
    Scope inner = nested(scope, what, true);
    auto st = std::make_unique<Stmt>();
    st->kind = s.kind;
    st->range = s.range;
    st->ast = s.ast;
    for (const auto& i : s.init) {
      statement(*i, inner, st->init);
      if (!ok_) return;
    }
    for (const auto& i : st->init)
      if (i->var >= 0 && ir::is_tensor_like(out_->var(i->var).type)) {
        fail(s.range.getBegin(), "a tensor declared in a for loop's header cannot be differentiated; declare it "
                                 "before the loop");
        return;
      }
    if (const Expr* w = written_after_push(s.body)) {
      fail(*w, held_by_list(w->op, ""));
      return;
    }
    std::set<int> assigned;
    const bool writes = assigned_tensors(s.body, *scope.fn, assigned);
    if (writes)  // an in-place write may reach any tensor through a view or a copy: all are carried
      for (const auto& [src, version] : inner.vars)
        if (version >= 0 && scope.fn->var(src).type == ir::Type::Tensor) assigned.insert(src);
    std::vector<std::pair<int, int>> carried;  // source var, carried variable
    for (int src : assigned) {
      auto it = inner.vars.find(src);
      if (it == inner.vars.end()) continue;  // local to the body
      const int c = new_tensor(scope.fn->var(src).name);
      if (it->second == kUnset) {  // first given a value in the loop: the first trip starts without one
        out.push_back(ir::decl(c, nullptr));
      } else {
        out.push_back(ir::decl(c, ir::var_ref(*out_, it->second)));
        detach(c, {it->second}, {&inner});
      }
      carried.emplace_back(src, c);
      it->second = c;
    }
    // Conditions and steps are evaluated on every trip: they may read tensors, not compute them.
    const auto trip_expr = [&](const Expr& e) -> ExprPtr {
      std::vector<ir::StmtPtr> computed;
      in_trip_expr_ = true;  // a list's size read here is read where it is
      ExprPtr x = scalar(e, inner, computed);
      in_trip_expr_ = false;
      if (!computed.empty())
        fail(e.range.getBegin(), std::string("the condition of ") + what + " computes tensors and the loop is left "
                                 "by a 'continue' or 'return' inside a 'switch', or by a 'return' of a function that "
                                 "returns no tensor, which cannot be differentiated yet; compute the condition into a "
                                 "bool at the end of the loop body");
      return x;
    };
    if (s.expr) st->expr = trip_expr(*s.expr);
    if (s.step) st->step = trip_expr(*s.step);
    if (!ok_) return;
    for (auto& [src, c] : carried) {
      const int prev = ir::add_var(*out_, claim(out_->var(c).name + "_prev"), ir::Type::Tensor, "const fg::Tensor");
      st->body.push_back(ir::decl(prev, ir::var_ref(*out_, c)));
      detach(prev, {c}, {&inner});
      inner.vars[src] = prev;
    }
    body(s.body, inner, st->body);
    if (!ok_) return;
    for (auto& [src, c] : carried) {
      const int last = inner.vars.at(src);
      if (last == kUnset) continue;
      detach(c, {last}, {&inner});
      st->body.push_back(ir::assign(c, ir::var_ref(*out_, last)));
      scope.vars[src] = c;
    }
    out.push_back(std::move(st));
  }

  // An in-place write in a loop body into a variable that the body also pushes onto a list: on the
  // next trip it writes into the tensor the list holds (written() sees only later writes into the
  // same version). Null when there is none.
  static const Expr* written_after_push(const std::vector<ir::StmtPtr>& body) {
    std::set<int> pushed;
    ir::for_each_stmt(body, [&](const Stmt& st) {
      if (st.kind == StmtKind::Eval && st.expr && st.expr->op == ir::kListPush && ir::is_tape_op(*st.expr))
        pushed.insert(st.expr->reads.back());
    });
    for (size_t before = 0; before != pushed.size();) {  // and the copies of those (`h = acc`)
      before = pushed.size();
      ir::for_each_stmt(body, [&](const Stmt& st) {
        if ((st.kind != StmtKind::Decl && st.kind != StmtKind::Assign) || !st.expr || st.expr->kind != ExprKind::VarRef)
          return;
        if (pushed.count(st.var) != 0) pushed.insert(st.expr->var);
        if (pushed.count(st.expr->var) != 0) pushed.insert(st.var);
      });
    }
    const Expr* found = nullptr;
    ir::for_each_expr(body, [&](const Expr& e) {
      if (found != nullptr || !is_inplace(e)) return;
      const Expr* target = e.args[0].get();  // the variable, or the base of the view written
      while (target->kind == ExprKind::Call && !target->args.empty()) target = target->args[0].get();
      if (target->kind == ExprKind::VarRef && pushed.count(target->var) != 0) found = &e;
    });
    return found;
  }

  // A variable that holds `version`, for errors (the version's own name where none does).
  std::string shown_name(int version, const Scope& scope) const {
    for (const auto& [src, v] : scope.vars)
      if (v == version) return scope.fn->var(src).name;
    return out_->var(version).name;
  }

  // x.op_(args), also on a view made in place (`y.select(0, i).copy_(v)`).
  static bool is_inplace(const Expr& e) {
    return e.kind == ExprKind::Call && (e.form == ir::CallForm::Method || e.form == ir::CallForm::Operator) &&
           ops::info(e).inplace_form() && !e.args.empty() && e.args[0]->type == ir::Type::Tensor;
  }

  // x.op_(args) as x = x.op(args): a new version of x (and of what shares x's memory: written()).
  int inplace(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    const bool named = e.args[0]->kind == ExprKind::VarRef;
    const int src = named ? e.args[0]->var : -1;
    const int self = named ? scope.vars.at(src) : value(*e.args[0], scope, out, "view");  // a view written at once
    if (!ok_) return self;
    // The tensor written and the tensors it is a view of (`v[0][1] = y` writes into v[0] too).
    for (int b = self; b >= 0;) {
      const bool first = b == self;
      const std::string shown = first && named ? scope.fn->var(src).name : shown_name(b, scope);
      if (from_list_.count(b) != 0) {
        fail(e, "in-place '" + e.op + "' on " + (first ? "" : "a view of ") + "an element of a vector of tensors cannot "
                "be differentiated yet (later reads of the vector would not see it); compute a new tensor (w = w * 2) "
                "instead");
        return self;
      }
      if (detached_.count(b) != 0) {
        fail(e, "in-place '" + e.op + "' writes into " + (first ? "" : "a view of ") + "'" + shown +
                    "', a view that an 'if' or a loop carried, which cannot be differentiated yet; take the view where "
                    "it is written");
        return self;
      }
      if (auto m = sometimes_aliased_.find(b); m != sometimes_aliased_.end()) {
        fail(e, "in-place '" + e.op + "' writes into " + (first ? "" : "a view of ") + "what '" +
                    ops::name_of(m->second) + "' returned, " +
                    (m->second == ops::detach
                         ? "which shares its input's memory but not its derivatives, so the write cannot be "
                           "differentiated; write into the input itself, or into a clone()"
                         : "which is its input's memory or a copy depending on the input's layout, so funcgen cannot "
                           "tell whether the write changes the input; write into the input itself (or a view() of "
                           "it), or into a clone()"));
        return self;
      }
      auto up = view_of_.find(b);
      b = up == view_of_.end() ? -1 : up->second;
    }
    auto call = std::make_unique<Expr>();
    call->kind = ExprKind::Call;
    call->type = ir::Type::Tensor;
    call->range = e.range;
    call->form = e.form == ir::CallForm::Operator ? ir::CallForm::Operator : ir::CallForm::Method;
    call->callee = nullptr;
    call->text = e.text.size() == 2 && e.text[1] == '=' ? e.text.substr(0, 1) : e.text;  // += -> +
    const InplaceOp form = *find_inplace(e.op);  // is_inplace: the name ends in '_'
    std::vector<ExprPtr> args;
    args.push_back(ir::var_ref(*out_, self));
    for (size_t i = 1; i < e.args.size(); ++i) args.push_back(atom(*e.args[i], scope, out));
    call->op = form.partner;
    call->params = e.params;
    if (form.kind == InplaceKind::Forget) {  // a write that forgets the old values: fg::zeros_like(self)
      call->form = ir::CallForm::Free;
    } else if (form.kind == InplaceKind::Source) {  // the source, broadcast to the destination's shape
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
      call->params = {"self", "size"};
    }
    call->param_types.clear();
    for (const auto& a : args) call->param_types.push_back(a->type);
    call->args = std::move(args);
    const int id = new_tensor(out_->var(self).name);
    StmtPtr d = ir::decl(id, std::move(call));
    d->range = e.range;
    out.push_back(std::move(d));
    if (named) scope.vars[src] = id;
    written(self, id, e, scope, out);
    return id;
  }

  // ------------------------------------------------------------------ aliasing (functionalization)
  // Tensors share memory as libtorch's do: a copy (`fg::Tensor z = y;`) and a view (`y.select(0, 0)`)
  // see writes into y, and a write into a view writes into its base. As PyTorch's functionalization
  // does, a write makes new versions of all of them: the variables that held the written version
  // hold the new one; the base of a view becomes base + the view op's adjoint applied to the
  // change (its reverse-mode rule: select_backward, a reshape, an inverse permutation), and the
  // views of a changed tensor are taken again from its new version.

  // Version `old` became `now` through the write `at`.
  void written(int old, int now, const Expr& at, Scope& scope, std::vector<ir::StmtPtr>& out) {
    overwritten_.insert(old);
    for (const auto& [held, list] : pushed_) {  // a list's entry shares memory with what was pushed
      bool shares = false;
      for (int b = held; !shares;) {  // held, the base of its view, that base's base, ...
        shares = b == old;
        auto up = view_of_.find(b);
        if (up == view_of_.end()) break;
        b = up->second;
      }
      if (shares) {
        fail(at, held_by_list(at.op, out_->var(list).name));
        return;
      }
    }
    std::set<int> holders;  // the variables that held the written version
    for (auto& [src, version] : scope.vars)
      if (version == old) {
        version = now;
        holders.insert(src);
      }
    for (const auto& [src, version] : scope.vars) {  // a view of them that an if or a loop carried
      auto d = detached_.find(version);
      if (d == detached_.end()) continue;
      for (int base : d->second)
        if (holders.count(base) != 0) {
          fail(at, "in-place '" + at.op + "' writes into '" + scope.fn->var(base).name + "', whose view '" +
                       scope.fn->var(src).name + "' an 'if' or a loop carried, which cannot be differentiated yet; " +
                       "take the view again after the write");
          return;
        }
    }
    views_again(old, now, at, scope, out);
    auto base = view_of_.find(old);
    if (base == view_of_.end() || !ok_) return;
    const int b = base->second;
    const int b_now = write_back(old, now, b, at, out);
    if (!ok_) return;
    view_of_[now] = b_now;  // still a view: a later write into it reaches the base again
    view_call_[now] = view_call(*view_call_.at(old), b_now);
    written(b, b_now, at, scope, out);
  }

  // The views of `old` that variables hold, taken again from `now` (and their views, from those).
  void views_again(int old, int now, const Expr& at, Scope& scope, std::vector<ir::StmtPtr>& out) {
    std::map<int, int> again;  // view version -> its new version (aliases share one)
    for (auto& [src, version] : scope.vars) {
      auto v = view_of_.find(version);
      if (version < 0 || v == view_of_.end() || v->second != old || !ok_) continue;
      auto done = again.find(version);
      if (done == again.end()) {
        const int w = new_tensor(out_->var(version).name);
        StmtPtr d = ir::decl(w, view_call(*view_call_.at(version), now));
        d->range = at.range;
        out.push_back(std::move(d));
        view_of_[w] = now;
        view_call_[w] = view_call(*view_call_.at(version), now);
        done = again.emplace(version, w).first;
      }
      version = done->second;
    }
    for (const auto& [view, w] : again) views_again(view, w, at, scope, out);
  }

  // `merged` (an if's merged or a loop's carried variable) takes the value of `incoming`: where one
  // is a view, `merged` is one too, but no longer tied to its base (writes would not reach it):
  // it remembers the variables that held the base (in the scopes `where`), for a clear error.
  void detach(int merged, const std::vector<int>& incoming, const std::vector<const Scope*>& where) {
    for (int v : incoming) {
      if (auto d = detached_.find(v); d != detached_.end()) detached_[merged].insert(d->second.begin(), d->second.end());
      auto b = view_of_.find(v);
      if (b == view_of_.end()) continue;
      std::set<int>& bases = detached_[merged];
      for (const Scope* s : where)
        for (const auto& [src, version] : s->vars)
          if (version == b->second) bases.insert(src);
    }
  }

  // The view call `call` on the base `base`.
  ExprPtr view_call(const Expr& call, int base) const {
    ExprPtr c = ir::clone(call);
    c->args[0] = ir::var_ref(*out_, base);
    return c;
  }

  // The base `base` of view `old` after the view became `now`: base + adjoint(now - old).
  int write_back(int old, int now, int base, const Expr& at, std::vector<ir::StmtPtr>& out) {
    const Expr& call = *view_call_.at(old);
    const OpView v = view_of_call(call);
    const std::string* adjoint = nullptr;  // the view op's reverse rule for its base
    // (a write into an expanded view overlaps itself: the runtime refuses it, as PyTorch does)
    const ops::OpId view = ops::id_of(v.op);
    if (v.rule != nullptr && view != ops::expand && view != ops::expand_as && view != ops::broadcast_to)
      if (auto f = v.rule->vjp.find("self"); f != v.rule->vjp.end()) adjoint = &f->second;
    if (adjoint == nullptr) {
      const std::string shown = declared_name(out_->var(base).name);  // none for a temporary
      fail(at, "in-place '" + at.op + "' writes into a view" + (shown.empty() ? "" : " of '" + shown + "'") +
                   " made by '" + call.op + "', which cannot be differentiated; clone() the view first");
      return base;
    }
    const auto emit = [&](const std::string& name, const std::string& text, const FormulaEnv& env) {
      FormulaResult r = instantiate(text, env, resolver_);
      if (!r.error.empty()) {
        fail(at, "internal error: writing into a view of '" + out_->var(base).name + "': " + r.error);
        return base;
      }
      const int id = new_tensor(name);
      StmtPtr d = ir::decl(id, std::move(r.expr));
      d->range = at.range;
      out.push_back(std::move(d));
      return id;
    };
    ExprPtr now_ref = ir::var_ref(*out_, now), old_ref = ir::var_ref(*out_, old);
    const int change = emit(out_->var(old).name + "_change", "a - b", {{"a", now_ref.get()}, {"b", old_ref.get()}});
    std::vector<ExprPtr> keep;
    FormulaEnv env;
    if (std::string error = formula_env(call, v, resolver_, keep, env); !error.empty()) {
      fail(at, "internal error: writing into a view of '" + out_->var(base).name + "': " + error);
      return base;
    }
    ExprPtr change_ref = ir::var_ref(*out_, change), base_ref = ir::var_ref(*out_, base);
    env["grad"] = change_ref.get();
    const int placed = emit(out_->var(base).name + "_write", *adjoint, env);
    ExprPtr placed_ref = ir::var_ref(*out_, placed);
    return emit(out_->var(base).name, "a + b", {{"a", base_ref.get()}, {"b", placed_ref.get()}});
  }

  // A tensor-valued expression as a version in out_ (the statements computing it appended to out).
  int value(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out, const std::string& name) {
    if (!ok_) return 0;
    switch (e.kind) {
      case ExprKind::VarRef:
        if (auto it = scope.vars.find(e.var); it != scope.vars.end()) {
          if (it->second != kUnset) return it->second;
          fail(e, "'" + scope.fn->var(e.var).name + "' may be read before it has a value here (not every path gives "
                  "it one); initialize it where it is declared");
          return 0;
        }
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
        if (ir::is_tape_op(e)) {  // a reverse pass's stored loop trip, read back
          ExprPtr load = tape_op(e, scope, out);
          const int id = new_tensor(name.empty() ? "t" : name);
          out.push_back(ir::decl(id, std::move(load)));
          return id;
        }
        fail(e, e.kind == ExprKind::Conditional
                    ? "a '?:' that chooses between tensors where it is written to, or inside a side of a '?:' on "
                      "numbers, cannot be differentiated yet; use an if/else instead"
                    : "this expression on tensors cannot be differentiated yet; compute it with fg ops");
        return 0;
    }
    if (e.form == ir::CallForm::User && !resolver_.has_custom_rule(e.callee)) {
      std::vector<int> results = inline_call(e, scope, out);
      if (ok_ && results.size() != 1) fail(e, "'" + e.op + "' returns a tuple here; take its elements with std::get");
      return ok_ ? results[0] : 0;
    }
    if (is_list_element(e)) return list_element(e, scope, out, name);
    if (const std::string* spec = e.form == ir::CallForm::External && e.callee != nullptr
                                      ? resolver_.generated(e.callee->getNameAsString())
                                      : nullptr) {
      fail(e, "'" + e.callee->getNameAsString() + "' is what this file's spec '" + *spec +
                  "' generates, which funcgen cannot differentiate again from inside another function yet; "
                  "nest the transforms in one spec of the function they start from (jacrev(jacrev(f)), hessian(f), "
                  "jvp(grad(f))), or call that function here");
      return 0;
    }
    if (e.form == ir::CallForm::External && ops::id(e) == ops::assign_operator && !e.args.empty() && e.arg(0).type == ir::Type::Tensor) {
      fail(e, "assigning a tensor inside an expression cannot be differentiated; assign it in a statement of its own");
      return 0;
    }
    if (e.form == ir::CallForm::External) {
      fail(e, e.op.rfind("operator", 0) == 0  // (an External function's C++ name, not an op)
                  ? "calling an object ('" + e.op + "' of a functor, std::function or container) cannot be "
                    "differentiated: funcgen sees only fg ops and functions defined in this file; call such a function"
                  : "calls of '" + e.op + "' cannot be differentiated: funcgen sees only fg ops and functions whose "
                    "body is in this file or a header it includes, and this one is only declared; define it there, or "
                    "give it a reverse rule: a function annotated FUNCGEN(\"custom_vjp(" +
                    (e.callee != nullptr ? e.callee->getNameAsString() : e.op) + ")\")");
      return 0;
    }
    if (is_inplace(e)) return inplace(e, scope, out);
    if (const Rule* rule = e.form == ir::CallForm::Operator || e.form == ir::CallForm::User ? nullptr : find_rule(e.op);
        rule != nullptr && (!rule->decompositions.empty() || !rule->no_decomposition.empty()))
      return decompose(e, *rule, scope, out, name);
    for (const auto& a : e.args)
      if (e.form != ir::CallForm::Vmapped && a->kind == ExprKind::VarRef && a->type == ir::Type::TensorList) {
        fail(*a, "'" + e.op + "' of the whole vector '" + scope.fn->var(a->var).name + "' cannot be differentiated "
                 "yet: funcgen differentiates a vector where its elements are read; read them (" +
                 scope.fn->var(a->var).name + "[i]) and combine those, or " + e.op + " the vector in the function "
                 "that fills it with push_back (held stacked there)");
        return 0;
      }
    ExprPtr call = ir::clone(e);
    call->args.clear();
    for (const auto& a : e.args) call->args.push_back(argument(*a, scope, out));
    if (!ok_) return 0;
    const int self = !call->args.empty() && call->args[0]->kind == ExprKind::VarRef ? call->args[0]->var : -1;
    const int id = new_tensor(name.empty() ? "t" : name);
    if (self >= 0 && is_view_op(e.op)) {
      view_of_[id] = self;
      view_call_[id] = ir::clone(*call);
    }
    if (self >= 0 && ops::info(e).may_alias) sometimes_aliased_[id] = ops::id(e);  // (views.def)
    StmtPtr d = ir::decl(id, std::move(call));
    d->range = e.range;
    out.push_back(std::move(d));
    return id;
  }

  // `ws[i]` on a list parameter (a std::vector<fg::Tensor> read at run-time indices).
  static bool is_list_element(const Expr& e) {
    return ir::is_element(e) && e.arg(0).kind == ExprKind::VarRef;
  }

  // The element is read like a stored loop trip (tape_at): reverse mode adds its gradient to the
  // list's list of gradients at the same index (tape_add), forward mode reads the list of tangents.
  int list_element(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out, const std::string& name) {
    auto list = scope.vars.find(e.arg(0).var);
    if (list == scope.vars.end() || list->second < 0 ||
        (out_->var(list->second).param_index < 0 && lists_.count(list->second) == 0)) {
      fail(e, "reading this vector of tensors cannot be differentiated yet: funcgen differentiates the vectors a "
              "function is passed and local ones declared empty or with braces and filled with push_back");
      return 0;
    }
    // The index as it is now, in a variable of its own: the reverse pass reads it back per trip
    // (a counter declared outside the loop, or changed after the read, has moved on by then).
    const int at = held(scalar(e.arg(1), scope, out), "index", ir::Type::Int, "const int64_t", out);
    const int id = new_tensor(name.empty() ? out_->var(list->second).name + "_item" : name);
    from_list_.insert(id);
    StmtPtr d = ir::decl(id, ir::tape_op(*out_, ir::kTapeAt, {list->second, at}, ir::Type::Tensor));
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
    if (e.kind == ExprKind::Call && (ops::id(e) == ops::max || ops::id(e) == ops::min) && e.args.size() >= 2 &&
        e.args[0]->type == ir::Type::Tensor && (e.form == ir::CallForm::Method || e.form == ir::CallForm::Free))
      return extreme_along(e, scope, out);
    fail(e, "this tuple of tensors cannot be differentiated yet (ops that return several tensors have no "
            "derivative rules)");
    return {};
  }

  // `name = <formula>` as a statement of its own (an op of the derivative's IR, so it has rules).
  int emit_formula(const std::string& name, const std::string& formula, const FormulaEnv& env, const Expr& at,
                   std::vector<ir::StmtPtr>& out) {
    FormulaResult r = instantiate(formula, env, resolver_);
    if (!r.expr) {
      fail(at, "internal error: '" + formula + "': " + r.error);
      return 0;
    }
    r.expr->range = at.range;
    const int id = new_tensor(name);
    StmtPtr d = ir::decl(id, std::move(r.expr));
    d->range = at.range;
    out.push_back(std::move(d));
    return id;
  }

  // An op with FG_DECOMPOSE rows (layer_norm, dropout, ...) as the steps of the first row whose
  // guard holds, each formula made into statements of one op each: AD then differentiates ops
  // that have rules, at every order, and their forward computes what the op computes.
  int decompose(const Expr& e, const Rule& rule, Scope& scope, std::vector<ir::StmtPtr>& out, const std::string& name) {
    ExprPtr call = ir::clone(e);
    call->args.clear();
    for (const auto& a : e.args) call->args.push_back(argument(*a, scope, out));
    if (!ok_) return 0;
    const OpView v = view_of_call(*call);
    std::vector<ExprPtr> keep;
    FormulaEnv env;
    if (std::string err = formula_env(*call, v, resolver_, keep, env); !err.empty()) {
      fail(e, "internal error: " + err);
      return 0;
    }
    std::set<std::string> given;
    for (size_t i = 0; i < v.params.size(); ++i) given.insert(v.params[i]);
    // Optional tensors left out: {} (a default, or written), or std::nullopt where a tensor goes.
    absent_.clear();
    bool_params_.clear();
    if (call->callee != nullptr)
      for (const clang::ParmVarDecl* p : call->callee->parameters())
        if (p->getType()->isBooleanType()) bool_params_.insert(p->getNameAsString());
    for (const std::string& param : tensor_params(*call))
      if (auto it = env.find(param); it != env.end() && ir::is_absent(*it->second)) absent_.insert(param);
    for (size_t i = 0; i < call->args.size() && i < call->param_types.size(); ++i)
      if (call->param_types[i] == ir::Type::Tensor && call->args[i]->type != ir::Type::Tensor && !ir::is_absent(*call->args[i])) {
        fail(e.arg(i), "'" + e.op + "' is differentiated with its '" + v.params[i] + "' as a tensor or left out; "
                       "pass an fg::Tensor (or {} for none), not this optional value");
        return 0;
      }
    defaults_.clear();
    for (const OpParam& p : rule.params)
      if (!p.default_value.empty()) defaults_[p.name] = p.default_value;
    const Rule::Decomposition* row = nullptr;
    for (const auto& d : rule.decompositions) {
      const std::optional<bool> holds = guard_holds(d.guard, env, given);
      if (!holds) {
        fail(e, "'" + e.op + "' is differentiated in one of two forms chosen by " + undecided_ + ", which must be "
                "a literal true or false here; write the call in each branch of an if/else on it");
        return 0;
      }
      if (*holds) {
        row = &d;
        break;
      }
    }
    if (row == nullptr) {
      fail(e, rule.no_decomposition.empty() ? "'" + e.op + "' cannot be differentiated with these arguments"
                                            : rule.no_decomposition);
      return 0;
    }
    int last = 0;
    for (const Rule::Step& st : row->steps) {
      const std::string& step = st.name;
      const std::string& formula = st.formula;
      const std::optional<bool> wanted = guard_holds(st.guard, env, given);
      if (!wanted) {
        fail(e, "'" + e.op + "' is differentiated in a form chosen by " + undecided_ + ", which must be a literal "
                "true or false here; write the call in each branch of an if/else on it");
        return 0;
      }
      if (!*wanted || names_absent(formula)) {  // (skipped, or on an absent weight: the value so far)
        if (last != 0) bind_step(step, ir::var_ref(*out_, last), keep, env);
        continue;
      }
      FormulaResult r = instantiate(formula, env, resolver_);
      if (!r.expr) {
        fail(e, "internal error: '" + formula + "': " + r.error);
        return 0;
      }
      if (r.expr->type != ir::Type::Tensor) {  // a number or a shape, used where the steps name it
        bind_step(step, std::move(r.expr), keep, env);
        continue;
      }
      const bool final = &st == &row->steps.back();
      last = emit_tree(final && !name.empty() ? name : step, std::move(r.expr), e, out);
      bind_step(step, ir::var_ref(*out_, last), keep, env);
    }
    if (last == 0) fail(e, "internal error: the decomposition of '" + e.op + "' computed no tensor");
    return last;
  }

  static bool names(const std::string& formula, const std::string& word) {
    for (size_t at = formula.find(word); at != std::string::npos; at = formula.find(word, at + 1)) {
      const auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
      const bool before = at > 0 && (ident(formula[at - 1]) || formula[at - 1] == '.' || formula[at - 1] == ':');
      const bool after = at + word.size() < formula.size() && ident(formula[at + word.size()]);
      if (!before && !after) return true;
    }
    return false;
  }
  // The parameters of the call's op that are tensors (optional ones included), by its declaration.
  static std::vector<std::string> tensor_params(const Expr& call) {
    std::vector<std::string> out;
    if (call.callee == nullptr) return out;
    for (const clang::ParmVarDecl* p : call.callee->parameters())
      if (ir_type_of(p->getType()) == ir::Type::Tensor) out.push_back(p->getNameAsString());
    return out;
  }
  bool names_absent(const std::string& formula) const {
    for (const std::string& param : absent_)
      if (names(formula, param)) return true;
    return false;
  }
  std::set<std::string> absent_;  // the decomposed call's optional tensors left out
  void bind_step(const std::string& step, ExprPtr x, std::vector<ExprPtr>& keep, FormulaEnv& env) {
    keep.push_back(std::move(x));
    env[step] = keep.back().get();
  }

  // A row's guard: words `p` (a literal true, a tensor given, or a number given other than its
  // FG_PARAMS default: dropout_p=0.0 draws no mask, padding_idx=0 is a padding row) and `!p`, all
  // holding;
  // nullopt when a flag is not a literal (undecided_ names it).
  std::optional<bool> guard_holds(const std::string& guard, const FormulaEnv& env, const std::set<std::string>& given) {
    std::istringstream words(guard);
    std::string w;
    bool holds = true, decided = true;
    while (words >> w) {
      const bool negated = w[0] == '!';
      const std::string param = negated ? w.substr(1) : w;
      auto it = env.find(param);
      bool value = false;
      if (it == env.end()) {
        value = false;
      } else if (bool_params_.count(param) != 0 || it->second->type == ir::Type::Bool) {
        // A flag: true, false, or an integer literal (0 is false), as the bool parameter takes it.
        const std::string& text = it->second->text;
        const bool literal = it->second->kind == ExprKind::Opaque &&
                             (text == "true" || text == "false" || text.find_first_not_of("0123456789") == std::string::npos);
        if (!literal || text.empty()) {
          decided = false;
          undecided_ = "'" + param + "'";
          continue;
        }
        value = text == "true" || (text != "false" && text.find_first_not_of('0') != std::string::npos);
      } else {
        value = absent_.count(param) == 0 && (it->second->type == ir::Type::Tensor || given.count(param) != 0) &&
                !at_default(param, *it->second);
      }
      holds &= value != negated;
    }
    if (!holds) return false;
    if (!decided) return std::nullopt;
    return true;
  }
  // Whether a number argument is written as its parameter's default (the same literal value).
  bool at_default(const std::string& param, const Expr& e) const {
    auto it = defaults_.find(param);
    if (it == defaults_.end() || e.kind != ExprKind::Opaque || e.text.empty()) return false;
    const auto number = [](const std::string& t, double& v) {
      char* end = nullptr;
      v = std::strtod(t.c_str(), &end);
      return end != t.c_str() && (*end == '\0' || ((*end == 'f' || *end == 'F') && end[1] == '\0'));
    };
    double a = 0, b = 0;
    if (number(e.text, a) && number(it->second, b)) return a == b;
    return e.text == it->second;
  }
  std::map<std::string, std::string> defaults_;  // the decomposed op's FG_PARAMS defaults
  std::string undecided_;
  std::set<std::string> bool_params_;  // the decomposed call's bool parameters (its flags)

  // `name = <formula>` as statements of one tensor op each: the tensor-valued calls inside the
  // formula first, each in a variable of its own.
  int emit_tree(const std::string& name, ExprPtr x, const Expr& at, std::vector<ir::StmtPtr>& out) {
    atomize(*x, at, out);
    x->range = at.range;
    const int id = new_tensor(name);
    StmtPtr d = ir::decl(id, std::move(x));
    d->range = at.range;
    out.push_back(std::move(d));
    return id;
  }
  void atomize(Expr& x, const Expr& at, std::vector<ir::StmtPtr>& out) {
    for (auto& a : x.args) {
      if (a->kind == ExprKind::Call && a->type == ir::Type::Tensor)
        a = ir::var_ref(*out_, emit_tree("t", std::move(a), at, out));
      else
        atomize(*a, at, out);
    }
  }

  // (values, indices) = x.max(dim, keepdim) as ops with rules: the indices (argmax, a constant of
  // the derivative), and the values gathered at them, so that the gradient goes to the selected
  // element only, as torch's does (amax would split it among ties).
  std::vector<int> extreme_along(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    const std::string arg = ops::id(e) == ops::max ? "fg::argmax" : "fg::argmin";
    const int x = value(e.arg(0), scope, out, "");
    ExprPtr self = ir::var_ref(*out_, x), dim = scalar(e.arg(1), scope, out);
    ExprPtr keepdim = e.args.size() > 2 ? scalar(e.arg(2), scope, out) : ir::opaque("false", ir::Type::Bool);
    if (!ok_) return {};
    const auto emit = [&](const std::string& name, const std::string& formula, FormulaEnv env) {
      env["x"] = self.get();
      env["dim"] = dim.get();
      env["keepdim"] = keepdim.get();
      return emit_formula(name, formula, env, e, out);
    };
    const int kept = emit("selected", arg + "(x, dim, true)", {});
    ExprPtr kept_ref = ir::var_ref(*out_, kept);
    const int picked = emit("picked", "x.gather(dim, i)", {{"i", kept_ref.get()}});
    ExprPtr picked_ref = ir::var_ref(*out_, picked);
    const int values = emit("values", "p.sum({dim}, keepdim)", {{"p", picked_ref.get()}});
    const int indices = emit("indices", arg + "(x, dim, keepdim)", {});
    if (!ok_) return {};
    return {values, indices};
  }

  // An argument of an op: atom(), and a number that reads a variable the function changes (`x[k + 1]`
  // in `while (k < n) { ...; ++k; }`) in a variable of its own, as it is here: the derivative code
  // reads it later (per trip of a loop's reverse pass, or after the function changed it).
  ExprPtr argument(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    ExprPtr x = atom(e, scope, out);
    if (!ok_ || !ir::is_scalar(e.type) || e.type == ir::Type::Other) return x;
    const std::set<std::string>& changed = changed_names(*scope.fn);
    std::string name;
    for (const std::string& n : ir::names_in(*scope.fn, e))
      if (changed.count(n) != 0) name = n;
    if (name.empty()) return x;
    const char* cxx = e.type == ir::Type::Int ? "const int64_t" : e.type == ir::Type::Float ? "const double" : "const bool";
    return ir::var_ref(*out_, held(std::move(x), plain_name(name) + "_value", e.type, cxx, out));
  }

  // The numbers `fn` changes after their declaration (assigned, incremented, written by C++ kept as
  // text), but a for loop's own counter stepped by its header (the reverse pass stores it per trip).
  const std::set<std::string>& changed_names(const ir::Function& fn) {
    auto it = changed_.find(&fn);
    if (it != changed_.end()) return it->second;
    std::set<std::string>& names = changed_[&fn];
    const auto writes = [&](const Expr& e) {
      ir::for_each_expr(e, [&](const Expr& x) {
        for (int w : x.writes) names.insert(fn.var(w).name);
        const bool steps = x.kind == ExprKind::Unary && (x.text == "++" || x.text == "--");
        const bool assigns = x.kind == ExprKind::Binary && !x.text.empty() && x.text.back() == '=' &&
                             x.text != "==" && x.text != "!=" && x.text != "<=" && x.text != ">=";
        if ((steps || assigns) && !x.args.empty()) {
          const std::set<std::string> target = ir::names_in(fn, x.arg(0));
          names.insert(target.begin(), target.end());
        }
        if (x.kind == ExprKind::Opaque && (x.text.find("++") != std::string::npos || x.text.find("--") != std::string::npos ||
                                           x.text.find('=') != std::string::npos)) {
          const std::set<std::string> all = ir::names_in(fn, x);  // (conservative: every name of the text)
          names.insert(all.begin(), all.end());
        }
      });
    };
    std::function<void(const std::vector<ir::StmtPtr>&)> walk = [&](const std::vector<ir::StmtPtr>& body) {
      for (const auto& st : body) {
        if (st->kind == StmtKind::Assign && st->var >= 0 && ir::is_scalar(fn.var(st->var).type))
          names.insert(fn.var(st->var).name);
        for (int w : st->writes) names.insert(fn.var(w).name);
        if (st->kind == StmtKind::Opaque) {  // C++ kept as text may change any name it mentions
          Expr text;
          text.kind = ExprKind::Opaque;
          text.text = st->text;
          const std::set<std::string> all = ir::names_in(fn, text);
          names.insert(all.begin(), all.end());
        }
        if (st->expr) writes(*st->expr);
        if (st->step && st->kind != StmtKind::For) writes(*st->step);
        if (st->step && st->kind == StmtKind::For) {  // its own counter is stored per trip; others not
          std::set<std::string> own;
          for (const auto& i : st->init)
            if (i->var >= 0) own.insert(fn.var(i->var).name);
          const std::set<std::string> before = names;
          writes(*st->step);
          for (const std::string& n : own)
            if (before.count(n) == 0) names.erase(n);
        }
        walk(st->init);
        walk(st->body);
        walk(st->else_body);
      }
    };
    walk(fn.body);
    return names;
  }
  std::map<const ir::Function*, std::set<std::string>> changed_;

  // An argument: tensors become the VarRef of their version, everything else is kept.
  ExprPtr atom(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    if (e.type == ir::Type::Tensor && e.kind == ExprKind::Opaque && e.reads.empty() && !ir::is_tape_op(e))
      return ir::clone(e);  // `{}` for an optional tensor argument: no tensor, a constant of every derivative
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

  // The list a helper that builds one returns (`states(x, n)`), its body inlined; -1 where `e` is
  // not such a call (or failed).
  int inlined_list(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    if (e.kind != ExprKind::Call || e.type != ir::Type::TensorList || helper_of(e) == nullptr) return -1;
    const std::vector<int> results = inline_call(e, scope, out);
    if (!ok_) return -1;
    if (results.size() != 1 || lists_.count(results[0]) == 0) {
      fail(e, "internal error: a helper's vector of tensors without its list");
      return -1;
    }
    return results[0];
  }

  // `fg::Tensor name;`: an empty tensor, as a variable that a list can hold.
  int undefined_tensor(const std::string& name, std::vector<ir::StmtPtr>& out) {
    const int id = ir::add_var(*out_, claim(plain_name(name)), ir::Type::Tensor, "fg::Tensor");
    out.push_back(ir::decl(id, nullptr));
    return id;
  }

  // A tape operation on the current versions of its operands (its text names them).
  ExprPtr tape_op(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    const auto at = remap(scope);
    std::vector<int> operands;
    for (int r : e.reads) {
      operands.push_back(at(r));
      if (operands.back() == kUnset && scope.fn->var(r).type == ir::Type::Tensor)  // an empty tensor pushed (`h(n)`)
        operands.back() = undefined_tensor(scope.fn->var(r).name, out);
      if (operands.back() < 0) {
        fail(e, "internal error: a stored loop trip without its value");
        return ir::opaque("0", e.type);
      }
    }
    ExprPtr x = ir::tape_op(*out_, e.op, operands, e.type);
    x->range = e.range;
    return x;
  }

  // A non-tensor expression: copied, with the tensors it reads (x.size(0)) as their versions.
  ExprPtr scalar(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    if (e.type == ir::Type::Tensor) return atom(e, scope, out);
    if (e.kind == ExprKind::Opaque && e.op == ir::kListSize && !in_trip_expr_) return list_size(e, scope, out);
    // `a && b` is `a ? b : false`, `a || b` is `a ? true : b`
    if (e.kind == ExprKind::Binary && e.text == "&&" && ir::computes_tensors(e.arg(1)))
      return scalar_choice(e, e.arg(0), &e.arg(1), nullptr, scope, out);
    if (e.kind == ExprKind::Binary && e.text == "||" && ir::computes_tensors(e.arg(1)))
      return scalar_choice(e, e.arg(0), nullptr, &e.arg(1), scope, out);
    if (e.kind == ExprKind::Conditional && ir::is_scalar(e.type) &&
        (ir::computes_tensors(e.arg(1)) || ir::computes_tensors(e.arg(2))))
      return scalar_choice(e, e.arg(0), &e.arg(1), &e.arg(2), scope, out);
    if (e.kind == ExprKind::Call && e.form == ir::CallForm::User) {
      // A helper that computes a number is called as it is (it is not differentiated), unless
      // must_inline says otherwise.
      if (const ir::Function* callee = helper_of(e); callee != nullptr && must_inline(e, *callee)) {
        std::vector<int> results = inline_call(e, scope, out);
        return ok_ && results.size() == 1 ? ir::var_ref(*out_, results[0]) : ir::opaque("0", e.type);
      }
      if (!e.packing.empty() && takes_structure_by_reference(*e.callee))  // (rebuilt as a temporary)
        fail(e, "'" + e.op + "' takes a structure by non-const reference and returns a number, which cannot be "
                "differentiated yet; take the structure by const reference");
      ExprPtr c = ir::clone(e, remap(scope));
      c->args.clear();
      for (const auto& a : e.args) c->args.push_back(atom(*a, scope, out));
      return c;
    }
    if (ir::is_tape_op(e)) return tape_op(e, scope, out);
    auto x = ir::clone(e, remap(scope));
    if (e.kind == ExprKind::Opaque) {
      x->text = cxx::replace_identifiers(x->text, scope.renames);
      return x;
    }
    x->args.clear();
    for (const auto& a : e.args) x->args.push_back(atom(*a, scope, out));
    return x;
  }

  // `cond ? when_true : when_false` on numbers whose sides compute tensors, as an if/else: only the
  // chosen side's are computed, as in C++ (`i < n ? x[i].item<double>() : 0.0`, `i < n &&
  // x[i].item<double>() > 0` must not read x[i] where i == n). A side without an expression is
  // the constant `&&`/`||` gives there.
  ExprPtr scalar_choice(const Expr& e, const Expr& cond, const Expr* when_true, const Expr* when_false, Scope& scope,
                        std::vector<ir::StmtPtr>& out) {
    const int taken = ir::add_var(*out_, claim("taken"), ir::Type::Bool, "const bool");
    out.push_back(ir::decl(taken, scalar(cond, scope, out)));
    const char* cxx = e.type == ir::Type::Int ? "int64_t" : e.type == ir::Type::Float ? "double" : "bool";
    const int value = ir::add_var(*out_, claim("chosen"), e.type, cxx);
    out.push_back(ir::decl(value, nullptr));
    auto st = std::make_unique<Stmt>();
    st->kind = StmtKind::If;
    st->range = e.range;
    st->expr = ir::var_ref(*out_, taken);
    st->has_else = true;
    const std::map<int, int> before = scope.vars;
    const Expr* sides[2] = {when_true, when_false};
    for (int k = 0; k < 2; ++k) {
      std::vector<ir::StmtPtr>& body = k == 0 ? st->body : st->else_body;
      ExprPtr v = sides[k] != nullptr ? scalar(*sides[k], scope, body) : ir::opaque(k == 0 ? "true" : "false", e.type);
      body.push_back(ir::assign(value, std::move(v)));
    }
    if (scope.vars != before) {
      fail(e, "a side of this '" + std::string(e.kind == ExprKind::Conditional ? "?:" : e.text) + "' changes tensors, "
              "which cannot be differentiated yet; change them before it");
      return ir::var_ref(*out_, value);
    }
    out.push_back(std::move(st));
    return ir::var_ref(*out_, value);
  }

  // Whether a call that computes no tensor (a number, or nothing) is inlined rather than printed as
  // written: where the callee changes what it is passed (or may, writing in place through a copy),
  // so that the caller's derivative code sees the change; where it is a lambda's call, or passes a
  // lambda to a helper (printed, a lambda called by name would read the tensors it captured where it
  // was defined, each version being a variable of its own here; one a helper was passed is not in
  // scope where the helper is inlined).
  bool must_inline(const Expr& call, const ir::Function& callee) {
    return changes_arguments(callee) || writes_in_place(callee.body) || ir::is_lambda_call(call) ||
           ir::passes_lambda(call);
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
    const ir::Function* callee = module_.find(e.callee, e.absent);
    if (callee == nullptr) {
      ok_ = false;  // its lowering failed, reported there
      return {};
    }
    callee = &structured_control_flow(*callee, single_returns_);  // ?:, switches, jumps and returns as ifs
    Scope inner;
    inner.fn = callee;
    inner.helper = true;
    std::vector<ExprPtr> results;
    inner.results = &results;
    std::map<int, int> entry;  // tensor parameter -> the version it was passed
    for (size_t i = 0; i < callee->params.size() && i < e.args.size(); ++i) {
      const ir::Var& p = callee->var(callee->params[i]);
      if (p.type == ir::Type::Tensor) {
        const bool unset = e.arg(i).kind == ExprKind::VarRef && scope.vars.count(e.arg(i).var) != 0 &&
                           scope.vars.at(e.arg(i).var) == kUnset;
        if (unset && by_reference(p)) {  // `fg::Tensor y; compute_into(y, x);`: an output parameter
          inner.vars[p.id] = entry[p.id] = kUnset;
          continue;
        }
        inner.vars[p.id] = entry[p.id] = value(e.arg(i), scope, out, p.name);
        continue;
      }
      if (p.type == ir::Type::TensorList && e.arg(i).kind == ExprKind::VarRef &&
          scope.vars.count(e.arg(i).var) != 0) {  // a list parameter passed on: the same list
        inner.vars[p.id] = scope.vars.at(e.arg(i).var);
        if (p.name != out_->var(inner.vars[p.id]).name) inner.renames[p.name] = out_->var(inner.vars[p.id]).name;
        continue;
      }
      if (by_reference(p)) {  // `int64_t& n`: the caller's variable itself, as C++ binds it
        const Expr& a = e.arg(i);
        const int src = a.kind == ExprKind::VarRef ? a.var
                        : a.kind == ExprKind::Opaque && a.reads.size() == 1 && a.text == scope.fn->var(a.reads[0]).name
                            ? a.reads[0]  // a scalar variable, kept as its text
                            : -1;
        if (src < 0 || scope.vars.count(src) == 0) {
          fail(e.arg(i), "'" + e.op + "' takes '" + p.name + "' by reference, which cannot be differentiated where it "
                         "is passed something other than a variable; pass it a variable");
          return {};
        }
        inner.vars[p.id] = scope.vars.at(src);
        if (p.name != out_->var(inner.vars[p.id]).name) inner.renames[p.name] = out_->var(inner.vars[p.id]).name;
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
    avoid_text_names(*callee);
    active_.insert(e.callee);
    body(callee->body, inner, out);
    active_.erase(e.callee);
    if (!ok_) return {};
    if (!inner.returned && callee->return_type != ir::Type::Void) {
      fail(e, "'" + e.op + "' must end in a return of its tensors to be differentiated");
      return {};
    }
    carry_back(e, *callee, entry, inner, scope, out);
    std::vector<int> ids;
    for (const auto& r : results) ids.push_back(r->var);
    return ids;
  }

  // What a helper did to the tensors it was passed, in its caller: a write in place (`h.mul_(2)`, into
  // `h` or a view of it) is seen by every variable that shares the memory, as in C++; a new value
  // assigned to a non-const reference parameter (`void step(fg::Tensor& h) { h = ...; }`) by the
  // variable passed. `entry`: the version each tensor parameter was passed.
  void carry_back(const Expr& call, const ir::Function& callee, const std::map<int, int>& entry, const Scope& inner,
                  Scope& scope, std::vector<ir::StmtPtr>& out) {
    for (size_t i = 0; i < callee.params.size() && i < call.args.size() && ok_; ++i) {
      const ir::Var& p = callee.var(callee.params[i]);
      auto was = entry.find(p.id);
      if (was == entry.end() || inner.vars.at(p.id) == was->second) continue;
      const int now = inner.vars.at(p.id);
      const bool in_place = overwritten_.count(was->second) != 0, rebound = assigns(callee, p.id);
      if (in_place && rebound) {
        fail(call, "'" + call.op + "' both assigns its parameter '" + p.name + "' and writes into it in place, which "
                   "cannot be differentiated yet: its caller sees the write but not the assignment; return the new "
                   "value from '" + call.op + "' instead");
        return;
      }
      if (in_place) {
        written_back(was->second, now, call, scope, out);
      } else if (rebound && by_reference(p)) {
        if (call.arg(i).kind != ExprKind::VarRef) {
          fail(call.arg(i), "'" + call.op + "' assigns its reference parameter '" + p.name + "', which cannot be "
                            "differentiated where it is passed an element of a tuple or another expression; pass it "
                            "a variable");
          return;
        }
        scope.vars[call.arg(i).var] = now;
      }
    }
  }

  // The caller's variables that held `old` (or a view of it, or its base) after a write made it `now`.
  void written_back(int old, int now, const Expr& at, Scope& scope, std::vector<ir::StmtPtr>& out) {
    for (auto& [src, version] : scope.vars)
      if (version == old) version = now;
    views_again(old, now, at, scope, out);
    auto b = view_of_.find(old);
    if (b == view_of_.end()) return;
    auto b_now = view_of_.find(now);
    if (b_now == view_of_.end()) {
      fail(at, "'" + at.op + "' writes in place into a view of a tensor it is passed under an 'if' or in a loop, "
               "which cannot be differentiated yet; pass the tensor itself, or write into it in the caller");
      return;
    }
    if (b_now->second != b->second) written_back(b->second, b_now->second, at, scope, out);
  }

  static bool returns_inside(const Stmt& s) {
    bool found = false;
    ir::for_each_stmt(s.body, [&](const Stmt& t) { found = found || t.kind == StmtKind::Return || has_return(t.ast); });
    ir::for_each_stmt(s.else_body, [&](const Stmt& t) { found = found || t.kind == StmtKind::Return || has_return(t.ast); });
    return found;
  }

  static bool has_return(const clang::Stmt* s) {
    if (s == nullptr || llvm::isa<clang::LambdaExpr>(s)) return false;
    if (llvm::isa<clang::ReturnStmt>(s)) return true;
    return std::any_of(s->child_begin(), s->child_end(), [](const clang::Stmt* c) { return has_return(c); });
  }

  static bool takes_structure_by_reference(const clang::FunctionDecl& fn) {
    return std::any_of(fn.param_begin(), fn.param_end(), [](const clang::ParmVarDecl* p) {
      const clang::QualType t = p->getType();
      return t->isLValueReferenceType() && !t.getNonReferenceType().isConstQualified() &&
             t.getNonReferenceType()->getAsCXXRecordDecl() != nullptr;
    });
  }

  // A parameter whose assignment its caller sees (`fg::Tensor& h`; a leaf of a `State& s`).
  static bool by_reference(const ir::Var& p) {
    const auto* decl = llvm::dyn_cast_or_null<clang::ParmVarDecl>(p.decl);
    return decl != nullptr && decl->getType()->isLValueReferenceType() &&
           !decl->getType().getNonReferenceType().isConstQualified();
  }

  // Whether `fn` assigns its variable `var`, itself or through a helper's reference parameter.
  bool assigns(const ir::Function& fn, int var, int depth = 0) {
    bool found = false;
    ir::for_each_stmt(fn.body, [&](const Stmt& st) {
      found = found || ((st.kind == StmtKind::Assign || st.kind == StmtKind::Decl) && st.var == var) ||
              (st.kind == StmtKind::Bind && std::count(st.vars.begin(), st.vars.end(), var) != 0);
      if (!found && st.expr && depth < 16)
        ir::for_each_expr(*st.expr, [&](const Expr& e) { found = found || passes_to_assigned(e, var, depth); });
    });
    return found;
  }

  // Whether the call `e` passes `var` to a reference parameter that its helper assigns.
  bool passes_to_assigned(const Expr& e, int var, int depth) {
    const ir::Function* callee = helper_of(e);
    for (size_t i = 0; callee != nullptr && i < callee->params.size() && i < e.args.size(); ++i)
      if (e.arg(i).kind == ExprKind::VarRef && e.arg(i).var == var &&
          by_reference(callee->var(callee->params[i])) && assigns(*callee, callee->params[i], depth + 1))
        return true;
    return false;
  }

  // Whether a helper changes what it is passed: writes in place (anywhere: through a copy, a tensor
  // it is passed may be written), or assigns a reference parameter.
  bool changes_arguments(const ir::Function& fn, int depth = 0) {
    for (int p : fn.params)
      if (by_reference(fn.var(p)) && assigns(fn, p)) return true;
    bool found = false;  // a write in place into a parameter, a view of one, or through a helper passed one
    const auto is_param = [&](const Expr& x) {
      const Expr* root = &x;
      while (root->kind == ExprKind::Call && !root->args.empty()) root = root->args[0].get();
      return root->kind == ExprKind::VarRef && std::count(fn.params.begin(), fn.params.end(), root->var) != 0;
    };
    ir::for_each_stmt(fn.body, [&](const Stmt& st) {
      if (st.expr && !found)
        ir::for_each_expr(*st.expr, [&](const Expr& e) {
          if (found) return;
          if (is_inplace(e)) found = is_param(*e.args[0]);
          else if (e.op == ir::kListSet && ir::is_tape_op(e))  // `v[i] = y` on a list parameter (by reference)
            found = std::count(fn.params.begin(), fn.params.end(), e.reads[0]) != 0;
          else if (const ir::Function* callee = depth < 16 ? helper_of(e) : nullptr)
            found = std::any_of(e.args.begin(), e.args.end(), [&](const ExprPtr& a) { return is_param(*a); }) &&
                    changes_arguments(*callee, depth + 1);
        });
    });
    return found;
  }

  // The helper that `e` calls (lowered), or nullptr.
  const ir::Function* helper_of(const Expr& e) {
    if (e.kind != ExprKind::Call || e.form != ir::CallForm::User || e.callee == nullptr || resolver_.has_custom_rule(e.callee))
      return nullptr;
    return module_.find(e.callee, e.absent);
  }

  // Whether `body`, or a helper it calls, writes a tensor in place.
  bool writes_in_place(const std::vector<ir::StmtPtr>& body, int depth = 0) {
    bool found = false;
    ir::for_each_stmt(body, [&](const Stmt& st) {
      if (st.expr && !found)
        ir::for_each_expr(*st.expr, [&](const Expr& e) {
          const ir::Function* callee = depth < 16 ? helper_of(e) : nullptr;
          found = found || is_inplace(e) || (callee != nullptr && writes_in_place(callee->body, depth + 1));
        });
    });
    return found;
  }

  std::set<int> from_list_;  // versions read from a list parameter (ws[i])
  std::set<int> overwritten_;  // versions written in place (their memory holds a newer one)
  const ir::Module& module_;
  Reporter& reporter_;
  std::string what_;
  const OpResolver& resolver_;
  std::unique_ptr<ir::Function> out_;
  std::set<std::string> declared_;  // the names of the source function's variables, as the user wrote them
  std::set<std::string> names_, emitted_;
  std::set<std::string> text_names_;  // what fn's C++ text names besides its locals (globals, functions)
  std::map<int, int> view_of_;        // version -> the version it is a view of
  std::map<int, ExprPtr> view_call_;  // version -> the view call that made it
  std::map<int, std::set<int>> detached_;  // a merged or carried view -> the source vars of its base
  std::map<int, ops::OpId> sometimes_aliased_;  // version -> the op that made it (views.def's FG_MAY_ALIAS)
  std::set<const clang::FunctionDecl*> active_;
  std::vector<std::unique_ptr<ir::Function>> single_returns_;  // helpers with their control flow structured
  bool ok_ = true;
};

}  // namespace

std::unique_ptr<ir::Function> normalize(const ir::Function& fn, const ir::Module& module, Reporter& reporter,
                                        const std::string& what, const OpResolver& resolver) {
  std::vector<std::unique_ptr<ir::Function>> owned;
  const ir::Function& src = structured_control_flow(fn, owned);  // ?:, switches, jumps and returns as ifs
  return Normalizer(module, reporter, what, resolver).run(src);
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
