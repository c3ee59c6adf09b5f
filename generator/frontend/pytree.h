// torch.func's pytrees in C++: parameters and results that hold tensors inside structures (a user
// aggregate, std::tuple, std::pair, std::array, std::vector, std::map<std::string, ...>).
//
// funcgen transforms functions of tensors. A function with structured parameters is lowered flat:
// each leaf (a tensor, or a scalar field passed through) is a parameter of its own, each use of
// `p.w1`, `std::get<0>(t)`, `ws[2]` or `params.at("fc1.weight")` reads that leaf, and a structured
// result is returned as the tuple of its leaves. The transforms see a function of tensors; the entry
// point that the user calls unpacks the structures and packs the results back into them, in the
// structures torch.func returns (a gradient w.r.t. a `Params` is a `Params`).
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Type.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace funcgen::pytree {

struct Tree {
  enum class Kind {
    Tensor,  // fg::Tensor: a leaf that transforms map and differentiate
    Scalar,  // any other value inside a structure (an int, a double, a string): passed through
    Record,  // a user aggregate: children are its fields, `keys` their names
    Tuple,   // std::tuple or std::pair (keys "first", "second" for a pair)
    Array,   // std::array<T, N>
    Vector,  // std::vector<fg::Tensor>: the elements the function reads, 0..n-1
    Map,     // std::map<std::string, fg::Tensor>: the keys the function reads, sorted
    // std::optional<fg::Tensor>: one child where it holds a tensor, none where it holds none.
    // funcgen specializes a function on which of its optionals hold tensors (`if (b)` is known
    // in each), as JAX specializes on a pytree's structure, and dispatches at the call.
    Optional,
  };
  Kind kind = Kind::Tensor;
  std::string cxx_type;           // as generated code spells it ("golden::Params", "fg::Tensor")
  std::vector<std::string> keys;  // Record: field names; Tuple of a pair: first, second; Map: keys
  std::vector<Tree> children;
  // Scalar leaves of derivative results: the user's value they are copied from ("p.n_layers").
  std::string source;
  bool passed = true;  // a parameter of the flat function (a tangent's scalar leaves are not)
  ir::Type scalar_type = ir::Type::Other;  // Scalar: the IR type of its value
  int var = -1;  // the lowering's: the leaf's variable in the flat function
  // Array: a local std::vector whose length its declaration fixes, held element by element
  // (frontend/lower/local_structures.cpp's find_fixed).
  bool fixed = false;

  bool is_leaf() const { return kind == Kind::Tensor || kind == Kind::Scalar; }
  bool is_pair() const { return kind == Kind::Tuple && !keys.empty(); }
  // Tensor leaves below (1 for a Tensor leaf).
  size_t tensors() const;
  // Leaves below in order (tensors and scalars).
  void leaves(std::vector<const Tree*>& out) const;
  void leaves(std::vector<Tree*>& out);
};

// The C++ expression for child `i` of `t`, the structure `root` holds (`(*b)` for an optional).
std::string access(const Tree& t, size_t i, const std::string& root);
// Every leaf's access expression from `root`, in order; with `passed_only`, the leaves that are
// parameters of the flat function (a tangent's scalars are not).
std::vector<std::string> leaf_accesses(const Tree& t, const std::string& root, bool passed_only = false);
// The C++ expression that builds `t` of the given leaf expressions (leaves take them in order;
// scalar leaves with a `source` are copied from it).
std::string build(const Tree& t, const std::vector<std::string>& tensors, size_t& next);
// Whether the tree is more than a tensor or a flat tuple of tensors (what funcgen transforms as is).
bool is_structured(const Tree& t);
// A tuple of trees (what a transform returns for several values).
Tree tuple_of(std::vector<Tree> items);
// The optionals of `t` (`root` holds it) by their access paths ("b", "p.bias"), in order, and
// whether each holds a tensor in this specialization.
std::vector<std::pair<std::string, bool>> optionals(const Tree& t, const std::string& root);
std::vector<std::string> optional_paths(const Tree& t, const std::string& root);

// The tree of a C++ type that holds tensors inside structures; nullopt for fg::Tensor, a flat
// std::tuple of tensors, types without tensors, and types funcgen cannot see into (`why` says
// which part and what to do). Vectors and maps come back without children: their leaves are the
// elements a function reads.
std::optional<Tree> tree_of(clang::QualType type, const clang::ASTContext& context, std::string* why = nullptr);
// A parameter's structure: as tree_of, and a std::tuple of tensors too. (A result of that type is
// a tuple of outputs, each transformed as one; a parameter of it a structure whose leaves are its
// elements, as a std::pair's.)
std::optional<Tree> parameter_tree_of(clang::QualType type, const clang::ASTContext& context, std::string* why = nullptr);
// A member function's object: as tree_of, and a class of only numbers too (`Scaler{2.0}`, a
// functor's constants): a record of scalar leaves, passed through as torch.func passes non-tensors.
std::optional<Tree> object_tree_of(clang::QualType type, const clang::ASTContext& context, std::string* why = nullptr);

// The tree of a local std::vector of `n` elements held element by element: an Array (`fixed`) of
// its element's tree (a tensor, or a structure of them); nullopt where the element is neither.
std::optional<Tree> fixed_vector_tree(clang::QualType vector, size_t n, const clang::ASTContext& context);

}  // namespace funcgen::pytree
