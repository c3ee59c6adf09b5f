// Functionalization, for the normalizer (anf.h): in-place writes as new versions.
// Tensors share memory as libtorch's do: a copy (`fg::Tensor z = y;`) and a view (`y.select(0, 0)`)
// see writes into y, and a write into a view writes into its base. As PyTorch's functionalization
// does, a write makes new versions of all of them: the variables that held the written version
// hold the new one; the base of a view becomes base + the view op's adjoint applied to the
// change (its reverse-mode rule: select_backward, a reshape, an inverse permutation), and the
// views of a changed tensor are taken again from its new version.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ops/registry.h"
#include "transforms/ad/normal_form.h"

namespace funcgen::ad::anf {

class Functionalizer {
 public:
  explicit Functionalizer(NormalForm& form) : form_(form) {}

  // The new version `id` that `call` made of its first argument `self` (the op `e` as written):
  // a view of it, or what may share its memory.
  void made(int id, int self, const Expr& e, const Expr& call);
  void read_from_list(int id) { from_list_.insert(id); }  // ws[i] of a list parameter
  void pushed(int version, int list) { pushed_[version] = list; }
  bool overwritten(int version) const { return overwritten_.count(version) != 0; }

  // Whether the in-place `e` may write into version `self` (`src`: the variable that holds it, -1
  // for a view written where it is taken) and into what it is a view of; reported where not.
  bool writable(const Expr& e, int self, int src, const Scope& scope);
  // `e` (x.op_(args)) as x = x.op(args) on version `self`, `args` being its other arguments as
  // atoms: the new version, declared in `out` (written() then says what else it changed).
  int functional(const Expr& e, int self, std::vector<ExprPtr> args, std::vector<ir::StmtPtr>& out);
  // Version `old` became `now` through the write `at`.
  void written(int old, int now, const Expr& at, Scope& scope, std::vector<ir::StmtPtr>& out);
  // The caller's variables that held `old` (or a view of it, or its base) after a write made it `now`.
  void written_back(int old, int now, const Expr& at, Scope& scope, std::vector<ir::StmtPtr>& out);
  // `merged` (an if's merged or a loop's carried variable) takes the value of `incoming`: where one
  // is a view, `merged` is one too, but no longer tied to its base (writes would not reach it):
  // it remembers the variables that held the base (in the scopes `where`), for a clear error.
  void detach(int merged, const std::vector<int>& incoming, const std::vector<const Scope*>& where);
  // An in-place write in a loop body into a variable that the body also pushes onto a list: on the
  // next trip it writes into the tensor the list holds (written() sees only later writes into the
  // same version). Null when there is none.
  static const Expr* written_after_push(const std::vector<ir::StmtPtr>& body);
  // The error for an in-place write into a tensor a list holds (`list`: its name, "" when not known).
  static std::string held_by_list(const std::string& op, const std::string& list);

 private:
  // A variable that holds `version`, for errors (the version's own name where none does).
  std::string shown_name(int version, const Scope& scope) const;
  // The views of `old` that variables hold, taken again from `now` (and their views, from those).
  void views_again(int old, int now, const Expr& at, Scope& scope, std::vector<ir::StmtPtr>& out);
  // The view call `call` on the base `base`.
  ExprPtr view_call(const Expr& call, int base) const;
  // The base `base` of view `old` after the view became `now`: base + adjoint(now - old).
  int write_back(int old, int now, int base, const Expr& at, std::vector<ir::StmtPtr>& out);

  NormalForm& form_;
  std::map<int, int> pushed_;                   // a version pushed onto a local list -> the list
  std::set<int> from_list_;                     // versions read from a list parameter (ws[i])
  std::set<int> overwritten_;                   // versions written in place (their memory holds a newer one)
  std::map<int, int> view_of_;                  // version -> the version it is a view of
  std::map<int, ExprPtr> view_call_;            // version -> the view call that made it
  std::map<int, std::set<int>> detached_;       // a merged or carried view -> the source vars of its base
  std::map<int, ops::OpId> sometimes_aliased_;  // version -> the op that made it (views.def's FG_MAY_ALIAS)
};

}  // namespace funcgen::ad::anf
