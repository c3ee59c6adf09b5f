// The lowered functions of a spec's call graph, which the passes look up where they meet a call of
// a user's helper: the pipeline lowers them before the passes run (pipeline/callees.h), so that
// the passes take IR and give IR and never call back into the front end.
#pragma once

#include <clang/AST/Decl.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "ir/ir.h"

namespace funcgen::ir {

class Module {
 public:
  // The function a Call of form User names by `callee`, `absent` (the std::optional parameters
  // that hold no tensor there) and `constants` (its constant arguments, where it recurses), as
  // lowered; nullptr when its lowering failed (reported there).
  const Function* find(const clang::FunctionDecl* callee, const std::vector<std::string>& absent = {},
                       const Constants& constants = {}) const;
  const Function* find(const Expr& call) const { return find(call.callee, call.absent, call.constants); }
  bool contains(const clang::FunctionDecl* callee, const std::vector<std::string>& absent,
                const Constants& constants = {}) const;
  bool contains(const Expr& call) const { return contains(call.callee, call.absent, call.constants); }
  // Records the lowering of `callee` for `absent` and `constants` (nullptr: it failed). The
  // functions are owned by whoever lowered them and outlive the module.
  void add(const clang::FunctionDecl* callee, const std::vector<std::string>& absent, const Function* fn,
           const Constants& constants = {});
  // How many levels of `callee` (lowerings for constant arguments) it holds.
  size_t levels(const clang::FunctionDecl* callee) const;

 private:
  using Key = std::tuple<const clang::FunctionDecl*, std::vector<std::string>, Constants>;
  static Key key(const clang::FunctionDecl* callee, const std::vector<std::string>& absent, const Constants& constants);
  std::map<Key, const Function*> functions_;
};

// The user's functions up a call chain, as a pass walks into the helpers. A call of one of them
// is a recursion, which the passes follow only where it unfolds: where the call's constant
// arguments make it a level of its own, one that is not on the chain and that the pipeline lowered
// (it lowers at most kMaxUnfolding levels of one function). Any other recursion is reported at
// its call.
class CallChain {
 public:
  static constexpr size_t kMaxUnfolding = 64;
  // Whether `call` (of form User) calls a function on the chain.
  bool reenters(const Expr& call) const;
  // Whether it recurses in a way that does not unfold: without constant arguments, to a level
  // on the chain (it would not end), or to one that `module` lacks (past the limit).
  bool recursive(const Expr& call, const Module& module) const;
  // The same before the module holds the levels (pipeline/callees.cpp).
  bool endless(const Expr& call) const;
  void enter(const Function& fn) { frames_.emplace_back(fn.decl, fn.constants); }
  void enter(const clang::FunctionDecl* fn, const Constants& constants) { frames_.emplace_back(definition(fn), constants); }
  void leave() { frames_.pop_back(); }

 private:
  static const clang::FunctionDecl* definition(const clang::FunctionDecl* fn) {
    return fn != nullptr && fn->getDefinition() != nullptr ? fn->getDefinition() : fn;
  }
  std::vector<std::pair<const clang::FunctionDecl*, Constants>> frames_;
};

// The advice of a diagnostic at a recursive call that does not unfold (`done`: "differentiated").
std::string recursion_advice(const std::string& done);

}  // namespace funcgen::ir
