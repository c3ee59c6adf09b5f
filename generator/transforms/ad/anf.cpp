#include "transforms/ad/anf.h"

#include <functional>
#include <map>
#include <set>

#include <clang/AST/ExprCXX.h>

#include "ir/cxx_text.h"
#include "ir/build.h"
#include "ir/types.h"
#include "ops/inplace.h"
#include "ops/registry.h"
#include "transforms/ad/callee_facts.h"
#include "transforms/ad/control_flow.h"
#include "transforms/ad/decompose.h"
#include "transforms/ad/functionalize.h"
#include "transforms/ad/inline_calls.h"
#include "transforms/ad/normal_form.h"
#include "transforms/ad/returns.h"

namespace funcgen::ad {

namespace anf {
namespace {

// Statements and expressions in A-normal form, into the NormalForm's function; the parts it is
// made of normalize what is specific to each (control flow, in-place writes, decompositions,
// inlined helpers) and call back into it for the statements and expressions inside theirs.
class Normalizer : public NormalForm, public Statements {
 public:
  Normalizer(const ir::Module& module, Reporter& reporter, std::string what, const OpResolver& resolver)
      : NormalForm(reporter, std::move(what), resolver),
        facts_(module, resolver),
        fz_(*this),
        decomposer_(*this),
        control_(*this, *this, fz_, facts_),
        inliner_(*this, *this, fz_, facts_) {}

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
    inliner_.enter(src);
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
  std::set<int> lists_;  // out_'s local vectors of tensors (tapes pushed to with ir::kListPush)
  CalleeFacts facts_;
  Functionalizer fz_;
  Decomposer decomposer_;
  ControlFlow control_;
  Inliner inliner_;

  std::function<int(int)> remap(Scope& scope) {
    return [&scope, this](int id) {
      auto it = scope.vars.find(id);
      if (it != scope.vars.end()) return it->second;
      fail(clang::SourceLocation(), "internal error: a variable was used before its definition: " + scope.fn->var(id).name);
      return 0;
    };
  }

  void body(const std::vector<ir::StmtPtr>& stmts, Scope& scope, std::vector<ir::StmtPtr>& out) override {
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
    fz_.pushed(value, list);
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

  void statement(const Stmt& s, Scope& scope, std::vector<ir::StmtPtr>& out) override {
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
        if (const ir::Function* callee = facts_.helper_of(*s.expr);  // its result unused: called for what it changes
            callee != nullptr && facts_.must_inline(*s.expr, *callee)) {
          inliner_.inline_call(*s.expr, scope, out);
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
        if (e->op == ir::kListSet && ir::is_tape_op(*e)) fz_.pushed(e->reads.back(), e->reads[0]);
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
        if (scope.helper && facts_.has_return(s.ast)) {  // C++ text that would return from the caller
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
          control_.leaving_loop(s);
          return;
        }
        out.push_back(ir::clone(s, remap(scope)));
        return;
      default:
        if (!computes_tensors(s, fn)) {  // scalar control flow (counting, indices) is kept as it is
          if (const Stmt* jump = scope.in_loop ? facts_.leaves_loop(s) : nullptr) {
            control_.leaving_loop(*jump);
            return;
          }
          if (scope.helper && facts_.returns_inside(s)) {  // `if (m <= 0) return;` of a helper inlined here
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
        if (s.kind == StmtKind::If) control_.branch(s, scope, out);
        else if (s.kind == StmtKind::Switch)  // the others are chains of ifs by now (returns.h)
          // (returns.cpp turns every other switch into a chain of ifs)
          fail(s.range.getBegin(), "a 'break' of this switch inside a statement on scalars that funcgen keeps as "
                                   "C++ (an 'if' with an initializer, say) cannot be differentiated yet; declare the "
                                   "scalar before the 'if'");
        else control_.loop(s, scope, out);
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

  // x.op_(args) as x = x.op(args): a new version of x (and of what shares x's memory: written()).
  int inplace(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    const bool named = e.args[0]->kind == ExprKind::VarRef;
    const int src = named ? e.args[0]->var : -1;
    const int self = named ? scope.vars.at(src) : value(*e.args[0], scope, out, "view");  // a view written at once
    if (!ok_ || !fz_.writable(e, self, src, scope)) return self;
    std::vector<ExprPtr> args;
    for (size_t i = 1; i < e.args.size(); ++i) args.push_back(atom(*e.args[i], scope, out));
    const int id = fz_.functional(e, self, std::move(args), out);
    if (named) scope.vars[src] = id;
    fz_.written(self, id, e, scope, out);
    return id;
  }

  // A tensor-valued expression as a version in out_ (the statements computing it appended to out).
  int value(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out, const std::string& name) override {
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
      std::vector<int> results = inliner_.inline_call(e, scope, out);
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
    if (self >= 0) fz_.made(id, self, e, *call);
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
    fz_.read_from_list(id);
    StmtPtr d = ir::decl(id, ir::tape_op(*out_, ir::kTapeAt, {list->second, at}, ir::Type::Tensor));
    d->range = e.range;
    out.push_back(std::move(d));
    return id;
  }

  std::vector<int> tuple_value(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) {
    if (e.kind == ExprKind::VarRef) {
      if (auto it = scope.tuples.find(e.var); it != scope.tuples.end()) return it->second;
    } else if (e.kind == ExprKind::Call && e.form == ir::CallForm::User) {
      return inliner_.inline_call(e, scope, out);
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

  // An op with FG_DECOMPOSE rows (layer_norm, dropout, ...) as the steps of the first row whose
  // guard holds, each formula made into statements of one op each: AD then differentiates ops
  // that have rules, at every order, and their forward computes what the op computes.
  int decompose(const Expr& e, const Rule& rule, Scope& scope, std::vector<ir::StmtPtr>& out, const std::string& name) {
    ExprPtr call = ir::clone(e);
    call->args.clear();
    for (const auto& a : e.args) call->args.push_back(argument(*a, scope, out));
    if (!ok_) return 0;
    return decomposer_.run(e, *call, rule, out, name);
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
    const std::set<std::string>& changed = facts_.changed_names(*scope.fn);
    std::string name;
    for (const std::string& n : ir::names_in(*scope.fn, e))
      if (changed.count(n) != 0) name = n;
    if (name.empty()) return x;
    const char* cxx = e.type == ir::Type::Int ? "const int64_t" : e.type == ir::Type::Float ? "const double" : "const bool";
    return ir::var_ref(*out_, held(std::move(x), plain_name(name) + "_value", e.type, cxx, out));
  }

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
    if (e.kind != ExprKind::Call || e.type != ir::Type::TensorList || facts_.helper_of(e) == nullptr) return -1;
    const std::vector<int> results = inliner_.inline_call(e, scope, out);
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
  ExprPtr scalar(const Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) override {
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
      if (const ir::Function* callee = facts_.helper_of(e); callee != nullptr && facts_.must_inline(e, *callee)) {
        std::vector<int> results = inliner_.inline_call(e, scope, out);
        return ok_ && results.size() == 1 ? ir::var_ref(*out_, results[0]) : ir::opaque("0", e.type);
      }
      if (!e.packing.empty() && facts_.takes_structure_by_reference(*e.callee))  // (rebuilt as a temporary)
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
};

}  // namespace
}  // namespace anf

std::unique_ptr<ir::Function> normalize(const ir::Function& fn, const ir::Module& module, Reporter& reporter,
                                        const std::string& what, const OpResolver& resolver) {
  std::vector<std::unique_ptr<ir::Function>> owned;
  const ir::Function& src = structured_control_flow(fn, owned);  // ?:, switches, jumps and returns as ifs
  return anf::Normalizer(module, reporter, what, resolver).run(src);
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
