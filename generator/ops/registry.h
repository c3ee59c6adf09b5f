// Op facts in one registry (issue 42): an op's identity (`OpId`) and what the transforms ask about
// it (`OpInfo`), both derived from the rows of templates/*.def, so that no code outside
// generator/ops/ compares op names as strings (tests/generator/op_names_only_in_ops.sh keeps it so).
//
// The ids: every name that some row of batching_rules.def, derivatives.def, inplace.def, views.def
// or fused.def names, plus the few ops the transforms name that have no row (kSpecialOps). An op
// is its first row: its id is that row's position in kOpNames, so the constants below are computed
// by the compiler from the rows and a constant whose op has no row does not compile. Names that no
// row lists (the user's functions, `add_`, `sum_out`) get ids at run time, after the rows' ones.
//
// This header includes the .def files: a new row recompiles the files that name ops by id (the
// transforms and checks), not the whole tool.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ops/batching_rules.h"

namespace funcgen::ir {
struct Expr;
}

namespace funcgen::ad {
struct Rule;
}

namespace funcgen::ops {

enum class OpId : uint32_t { Unknown = 0 };

namespace detail {

// Ops that the transforms name and no row lists.
#define FG_SPECIAL_OPS(X) \
  X("operator=")  /* a tensor assigned inside an expression (lower.cpp's `operator` + the operator) */

// Every row's op name, in the order of the files; index 0 is Unknown.
inline constexpr std::string_view kOpNames[] = {
    "",
#define FG_VMAP(op, rule, params) #op,
#include "batching_rules.def"
#undef FG_VMAP
#define FG_PARAMS(op, spec) #op,
#define FG_VJP(op, input, formula) #op,
#define FG_JVP(op, input, formula) #op,
#define FG_BROADCASTS(op) #op,
#define FG_CONSTANT(op) #op,
#define FG_SHAPE_ONLY(op, input) #op,
#define FG_FROM_EQUATION(op) #op,
#define FG_AUTO_ELEMENT_WISE(op) #op,
#define FG_DECOMPOSE(op, guard, steps) #op,
#define FG_NO_DECOMPOSITION(op, message) #op,
#include "derivatives.def"
#undef FG_NO_DECOMPOSITION
#undef FG_DECOMPOSE
#undef FG_AUTO_ELEMENT_WISE
#undef FG_FROM_EQUATION
#undef FG_SHAPE_ONLY
#undef FG_CONSTANT
#undef FG_BROADCASTS
#undef FG_JVP
#undef FG_VJP
#undef FG_PARAMS
#define FG_INPLACE(op, partner, kind) #op, #partner,
#define FG_WRITES(op, params, when, source) #op,
#include "inplace.def"
#undef FG_WRITES
#undef FG_INPLACE
#define FG_VIEW(op) #op,
#define FG_MAY_ALIAS(op) #op,
#include "views.def"
#undef FG_MAY_ALIAS
#undef FG_VIEW
#define FG_FUSED_UNARY(op, kind) #op,
#define FG_FUSED_BINARY(op, kind) #op,
#include "fused.def"
#undef FG_FUSED_BINARY
#undef FG_FUSED_UNARY
#define FG_SPECIAL(name) name,
    FG_SPECIAL_OPS(FG_SPECIAL)
#undef FG_SPECIAL
};
inline constexpr uint32_t kRowCount = sizeof(kOpNames) / sizeof(kOpNames[0]);

// Not constexpr: a constant whose name no row lists reaches it, and does not compile.
OpId no_row_names_this_op();
// The id of a name some row lists, as the compiler evaluates it for the constants below.
constexpr OpId listed(std::string_view name) {
  for (uint32_t i = 1; i < kRowCount; ++i)
    if (kOpNames[i] == name) return static_cast<OpId>(i);
  return no_row_names_this_op();
}

}  // namespace detail

// The id of an op name (the IR's Expr::op: "mul", "ad::sum_to", "add_"); never Unknown for a
// non-empty name.
OpId id_of(std::string_view name);
// The id of a call's op, from its name alone (as the string comparisons it replaces: a user's
// function named `sum` has sum's id; compare `form` first where that matters).
OpId id(const ir::Expr& e);
const std::string& name_of(OpId id);

// What the transforms ask about an op, read from its rows.
struct OpInfo {
  OpId id = OpId::Unknown;
  std::string name;
  bool listed = false;     // some row names it
  OpRule batching;         // batching_rules.def (rule None: no row; `add_` is add's row in place)
  const ad::Rule* derivative = nullptr;  // derivatives.def's rows, or nullptr
  bool view = false;       // views.def: returns a view of its first argument
  bool may_alias = false;  // views.def's FG_MAY_ALIAS: returns its input's memory only sometimes
  bool writes_arguments = false;  // in place, out=, FG_WRITES, or unnamed (ops/inplace.h)
  bool fused_unary = false, fused_binary = false;  // fused.def: fg::Fused runs it
  bool broadcasts = false;  // FG_BROADCASTS
  bool constant = false;    // FG_CONSTANT: not differentiable
  std::string out_functional;  // an out= op (batching rule Out, `add_out`): its functional op, `add`
  bool random() const { return batching.rule == BatchRule::Random; }
  bool reduction() const { return batching.rule == BatchRule::Reduce; }
  bool fused() const { return fused_unary || fused_binary; }
  // An fg::ad helper of derivative code (vmap batches it by fg::vmap::ad::<op>).
  bool ad_helper() const { return name.rfind("ad::", 0) == 0; }
  // The name ends in '_': an in-place op (the form of the op without it, or a row of inplace.def).
  bool inplace_form() const { return !name.empty() && name.back() == '_'; }
};
const OpInfo& info(OpId id);
const OpInfo& info(const ir::Expr& e);

// The ops the transforms name (their own ids: a switch can name them, a typo does not compile).
// Named as the op, with `ad_` for fg::ad's helpers and a word for the special ops.
#define FG_OP_ID(id, name) inline constexpr OpId id = detail::listed(name);
FG_OP_ID(add, "add")
FG_OP_ID(mul, "mul")
FG_OP_ID(sum, "sum")
FG_OP_ID(mean, "mean")
FG_OP_ID(amax, "amax")
FG_OP_ID(amin, "amin")
FG_OP_ID(max, "max")
FG_OP_ID(min, "min")
FG_OP_ID(argmax, "argmax")
FG_OP_ID(argmin, "argmin")
FG_OP_ID(norm, "norm")
FG_OP_ID(var, "var")
FG_OP_ID(std_, "std")
FG_OP_ID(squeeze, "squeeze")
FG_OP_ID(size, "size")
FG_OP_ID(sizes, "sizes")
FG_OP_ID(dim, "dim")
FG_OP_ID(ndimension, "ndimension")
FG_OP_ID(numel, "numel")
FG_OP_ID(t, "t")
FG_OP_ID(permute, "permute")
FG_OP_ID(expand, "expand")
FG_OP_ID(expand_as, "expand_as")
FG_OP_ID(broadcast_to, "broadcast_to")
FG_OP_ID(cat, "cat")
FG_OP_ID(stack, "stack")
FG_OP_ID(einsum, "einsum")
FG_OP_ID(matmul, "matmul")
FG_OP_ID(randn, "randn")
FG_OP_ID(rand, "rand")
FG_OP_ID(randn_like, "randn_like")
FG_OP_ID(rand_like, "rand_like")
FG_OP_ID(bernoulli, "bernoulli")
FG_OP_ID(dropout, "dropout")
FG_OP_ID(dropout_mask, "dropout_mask")
FG_OP_ID(feature_dropout, "feature_dropout")
FG_OP_ID(feature_dropout_mask, "feature_dropout_mask")
FG_OP_ID(item, "item")
FG_OP_ID(is_nonzero, "is_nonzero")
FG_OP_ID(zeros, "zeros")
FG_OP_ID(ones, "ones")
FG_OP_ID(empty, "empty")
FG_OP_ID(full, "full")
FG_OP_ID(scaled_dot_product_attention, "scaled_dot_product_attention")
FG_OP_ID(ad_sum_to, "ad::sum_to")
FG_OP_ID(ad_add_gradients, "ad::add_gradients")
FG_OP_ID(ad_zero_gradient, "ad::zero_gradient")
FG_OP_ID(ad_grad_seed, "ad::grad_seed")
FG_OP_ID(ad_checked, "ad::checked")
FG_OP_ID(ad_basis_matmul, "ad::basis_matmul")
FG_OP_ID(ad_matmul_basis, "ad::matmul_basis")
FG_OP_ID(detach, "detach")
FG_OP_ID(assign_operator, "operator=")
#undef FG_OP_ID

}  // namespace funcgen::ops
