// Lowers a C++ function definition from the Clang AST to funcgen's IR (ir/ir.h). Constructs that
// the IR cannot express are reported as funcgen-unsupported errors at the construct.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "diag/reporter.h"
#include "frontend/pytree.h"
#include "ir/ir.h"
#include "ir/types.h"

namespace funcgen {

// The structures of a lowered function's signature (frontend/pytree.h): the tree of each parameter
// that holds tensors inside a structure, and of a structured result; their leaves name the flat
// function's variables.
struct StructuredSignature {
  std::vector<std::optional<pytree::Tree>> params;  // one per C++ parameter
  std::optional<pytree::Tree> result;
  bool structured() const;
};

// Which std::optional<fg::Tensor> parameters (or fields of parameters) of `fn` hold no tensor, by
// their access paths ("b", "p.bias", "self.bias"): a function that takes optionals is lowered once
// per combination, with `if (b)` known in each (pytree.h).
struct Presence {
  const clang::FunctionDecl* fn = nullptr;
  std::set<std::string> absent;
};

// Lowers functions on demand and keeps them (helpers are lowered once, however often called).
class Lowering {
 public:
  Lowering(clang::ASTContext& context, Reporter& reporter, Presence presence = {})
      : context_(context), reporter_(reporter), presence_(std::move(presence)) {}
  // nullptr when the function could not be lowered (the errors were reported). A helper that takes
  // optionals is lowered once per call pattern: `absent` names those that hold no tensor (the
  // function that Presence names is lowered with its own). A recursive helper is lowered once per
  // pattern of constant arguments too (`constants`: frontend/lower/recursion.h).
  const ir::Function* lower(const clang::FunctionDecl* fn, const std::vector<std::string>& absent = {},
                            const ir::Constants& constants = {});
  // The structures of a function lowered with success.
  const StructuredSignature& signature(const clang::FunctionDecl* fn, const std::vector<std::string>& absent = {},
                                       const ir::Constants& constants = {}) const;
  // Whether `fn` can call itself (directly or through other functions of the file).
  bool recursive(const clang::FunctionDecl* fn);
  const Presence& presence() const { return presence_; }

 private:
  clang::ASTContext& context_;
  Reporter& reporter_;
  Presence presence_;
  using Key = std::tuple<const clang::FunctionDecl*, std::vector<std::string>, ir::Constants>;
  Key key(const clang::FunctionDecl* fn, const std::vector<std::string>& absent, const ir::Constants& constants) const;
  std::map<Key, std::unique_ptr<ir::Function>> done_;
  std::map<Key, StructuredSignature> signatures_;
  std::set<Key> failed_;
  std::multiset<const clang::FunctionDecl*> lowering_;  // in progress: a recursion through structures
  std::map<const clang::FunctionDecl*, bool> recursive_;
};

}  // namespace funcgen
