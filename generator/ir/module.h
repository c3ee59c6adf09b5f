// The lowered functions of a spec's call graph, which the passes look up where they meet a call of
// a user's helper: the pipeline lowers them before the passes run (pipeline/callees.h), so that
// the passes take IR and give IR and never call back into the front end.
#pragma once

#include <clang/AST/Decl.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace funcgen::ir {

class Module {
 public:
  // The function a Call of form User names by `callee` and `absent` (the std::optional parameters
  // that hold no tensor there), as lowered; nullptr when its lowering failed (reported there).
  const Function* find(const clang::FunctionDecl* callee, const std::vector<std::string>& absent = {}) const;
  bool contains(const clang::FunctionDecl* callee, const std::vector<std::string>& absent) const;
  // Records the lowering of `callee` for `absent` (nullptr: it failed). The functions are owned by
  // whoever lowered them and outlive the module.
  void add(const clang::FunctionDecl* callee, const std::vector<std::string>& absent, const Function* fn);

 private:
  using Key = std::pair<const clang::FunctionDecl*, std::vector<std::string>>;
  static Key key(const clang::FunctionDecl* callee, const std::vector<std::string>& absent);
  std::map<Key, const Function*> functions_;
};

}  // namespace funcgen::ir
