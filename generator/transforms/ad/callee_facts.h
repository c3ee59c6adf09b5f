// What the normalizer (anf.h) needs to know of the helpers a function calls and of its statements:
// whether a call is inlined, what a helper changes of what it is passed, what a loop assigns.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/module.h"
#include "ops/derivative_rules.h"
#include "transforms/ad/normal_form.h"

namespace funcgen::ad::anf {

class CalleeFacts {
 public:
  CalleeFacts(const ir::Module& module, const OpResolver& resolver) : module_(module), resolver_(resolver) {}
  const ir::Module& module() const { return module_; }

  // Whether a call that computes no tensor (a number, or nothing) is inlined rather than printed as
  // written: where the callee changes what it is passed (or may, writing in place through a copy),
  // so that the caller's derivative code sees the change; where it is a lambda's call, or passes a
  // lambda to a helper (printed, a lambda called by name would read the tensors it captured where it
  // was defined, each version being a variable of its own here; one a helper was passed is not in
  // scope where the helper is inlined).
  bool must_inline(const Expr& call, const ir::Function& callee);
  // The helper that `e` calls (lowered), or nullptr.
  const ir::Function* helper_of(const Expr& e);
  // Whether a helper changes what it is passed: writes in place (anywhere: through a copy, a tensor
  // it is passed may be written), or assigns a reference parameter.
  bool changes_arguments(const ir::Function& fn, int depth = 0);
  // Whether `body`, or a helper it calls, writes a tensor in place.
  bool writes_in_place(const std::vector<ir::StmtPtr>& body, int depth = 0);
  // Whether `fn` assigns its variable `var`, itself or through a helper's reference parameter.
  bool assigns(const ir::Function& fn, int var, int depth = 0);
  // The tensors a loop body assigns (its loop-carried values, when they exist before it).
  // The tensors `b` assigns or writes in place into `out`; whether it writes any in place.
  // A helper's call counts as what it does to the variables it is passed (carry_back).
  bool assigned_tensors(const std::vector<ir::StmtPtr>& b, const ir::Function& fn, std::set<int>& out);
  // The numbers `fn` changes after their declaration (assigned, incremented, written by C++ kept as
  // text), but a for loop's own counter stepped by its header (the reverse pass stores it per trip).
  const std::set<std::string>& changed_names(const ir::Function& fn);
  // A parameter whose assignment its caller sees (`fg::Tensor& h`; a leaf of a `State& s`).
  static bool by_reference(const ir::Var& p);
  // Whether `fn` takes a structure by non-const reference.
  static bool takes_structure_by_reference(const clang::FunctionDecl& fn);
  // Whether the branches of `s` return (a return statement, or one in C++ kept as text).
  static bool returns_inside(const Stmt& s);
  // Whether the C++ `s` returns (a lambda's returns are its own).
  static bool has_return(const clang::Stmt* s);
  // A break or continue in `s` that leaves the loop around `s` (not one of a loop or switch inside).
  static const Stmt* leaves_loop(const Stmt& s, bool in_switch = false);

 private:
  // Whether the call `e` passes `var` to a reference parameter that its helper assigns.
  bool passes_to_assigned(const Expr& e, int var, int depth);

  const ir::Module& module_;
  const OpResolver& resolver_;
  std::map<const ir::Function*, std::set<std::string>> changed_;
};

}  // namespace funcgen::ad::anf
