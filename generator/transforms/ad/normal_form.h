// What the parts of the normalizer (anf.h) share: the function it makes, its names and its
// errors, the scope of versions a body is normalized in, and the normalizer's own entry points
// that the parts normalize the statements inside theirs with.
#pragma once

#include <clang/Basic/SourceLocation.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "diag/reporter.h"
#include "ir/build.h"
#include "ir/ir.h"
#include "ops/derivative_rules.h"

namespace funcgen::ad::anf {

using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;
using ir::Stmt;
using ir::StmtKind;
using ir::StmtPtr;

struct Scope {
  const ir::Function* fn = nullptr;
  std::map<int, int> vars;                     // source var -> current version in out_
  std::map<int, std::vector<int>> tuples;      // source tuple var -> the versions of its elements
  std::map<std::string, std::string> renames;  // source name -> out_ name, for C++ text
  std::vector<ExprPtr>* results = nullptr;     // null inside control flow: no return there
  bool returned = false;
  const char* inside = nullptr;  // the control flow statement the scope is in ("an 'if'")
  bool in_loop = false;          // break/continue would skip the loop's bookkeeping
  bool helper = false;           // a helper's body, inlined
};

// A tensor declared without a value, before its first assignment.
inline constexpr int kUnset = -2;

// x.op_(args), also on a view made in place (`y.select(0, i).copy_(v)`).
bool is_inplace(const ir::Expr& e);

class NormalForm {
 public:
  NormalForm(Reporter& reporter, std::string what, const OpResolver& resolver)
      : reporter_(reporter), what_(std::move(what)), resolver_(resolver) {}

  bool ok() const { return ok_; }
  void failed() { ok_ = false; }  // (reported before, by the lowering)
  void fail(clang::SourceLocation loc, const std::string& message) {
    if (!ok_) return;
    ok_ = false;
    reporter_.report("unsupported", loc, message);
  }
  void fail(const ir::Expr& e, const std::string& message) { fail(e.range.getBegin(), message); }
  ir::Function& out() { return *out_; }
  const std::string& what() const { return what_; }
  const OpResolver& resolver() const { return resolver_; }
  void add_name(const std::string& name) { names_.insert(name); }
  bool in_trip_expr() const { return in_trip_expr_; }
  void set_in_trip_expr(bool in) { in_trip_expr_ = in; }

  // A name for a new variable of out_: `base` the first time, then base_1, base_2, ... (never a
  // name of the source functions, which their C++ text may use).
  std::string claim(const std::string& base);
  // The names fn's text uses that are not its locals': a global `trips` the body reads must not
  // be hidden by a loop counter named so.
  void avoid_text_names(const ir::Function& fn);
  // The name the user declared that version `name` (y, y_1, y_1_2) is of, or "" for a temporary.
  std::string declared_name(std::string name) const;
  // `const <cxx> base = value;` appended to `out`: a number as it is here, which derivative code
  // reads later (per trip of a loop's reverse pass, or after the function changed it). Its id.
  int held(ExprPtr value, const std::string& base, ir::Type type, const std::string& cxx,
           std::vector<ir::StmtPtr>& out);
  // A name the lowering made (`v_item__`) without its mark: one value of the derivative code.
  static std::string plain_name(const std::string& name);
  // `name = <formula>` as a statement of its own (an op of the derivative's IR, so it has rules).
  int emit_formula(const std::string& name, const std::string& formula, const FormulaEnv& env, const Expr& at,
                   std::vector<ir::StmtPtr>& out);
  // A new version of a tensor: the source's name for the first one, then name_1, ...
  int new_tensor(const std::string& base) { return ir::add_var(*out_, claim(base), ir::Type::Tensor, "fg::Tensor"); }

 protected:
  Reporter& reporter_;
  std::string what_;
  const OpResolver& resolver_;
  std::unique_ptr<ir::Function> out_;
  std::set<std::string> declared_;  // the names of the source function's variables, as the user wrote them
  std::set<std::string> names_, emitted_;
  std::set<std::string> text_names_;  // what fn's C++ text names besides its locals (globals, functions)
  bool in_trip_expr_ = false;         // normalizing a loop's condition or step
  bool ok_ = true;
};

// The normalizer's own: what the parts call to normalize the statements and expressions in theirs.
class Statements {
 public:
  virtual void body(const std::vector<ir::StmtPtr>& stmts, Scope& scope, std::vector<ir::StmtPtr>& out) = 0;
  virtual void statement(const ir::Stmt& s, Scope& scope, std::vector<ir::StmtPtr>& out) = 0;
  // A tensor-valued expression as a version in out (the statements computing it appended to out).
  virtual int value(const ir::Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out, const std::string& name) = 0;
  // A non-tensor expression: copied, with the tensors it reads as their versions.
  virtual ir::ExprPtr scalar(const ir::Expr& e, Scope& scope, std::vector<ir::StmtPtr>& out) = 0;

 protected:
  ~Statements() = default;
};

}  // namespace funcgen::ad::anf
