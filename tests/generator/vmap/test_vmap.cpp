// vmap correctness: every function that funcgen generated from vmap_functions.cpp is compared with
// torch.func's mental model of vmap, a loop of calls of the ORIGINAL function over the batch:
//
//   vmap(f, in_dims, out_dims)(args) == stack([f(args sliced at i) for i in range(batch)], out_dims)
//
// computed here with fg::select / fg::stack on the unbatched function (two loops for vmap(vmap(f))).
// Randomness is checked by its contract ('same': equal across the batch; 'different': not), and the
// errors of the generated code by their messages.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "vmap_functions.funcgen.h"
#include "vmap_functions.h"

namespace {

using Dim = std::optional<int64_t>;
constexpr std::nullopt_t None = std::nullopt;

// One vmap level, outermost first: an in_dim per argument of the function (None for scalars) and
// an out_dim per output (a single entry applies to every output), as in the FUNCGEN spec.
struct Level {
  std::vector<Dim> in_dims;
  std::vector<Dim> out_dims = {0};

  Dim out_dim(size_t j) const { return out_dims.size() == 1 ? out_dims[0] : out_dims.at(j); }
};

// ------------------------------------------------------------------ outputs as a list

std::vector<fg::Tensor> outputs(const fg::Tensor& t) { return {t}; }

template <typename... T>
std::vector<fg::Tensor> outputs(const std::tuple<T...>& t) {
  return std::apply([](const auto&... o) { return std::vector<fg::Tensor>{o...}; }, t);
}

// ------------------------------------------------------------------ arguments

// Tensors are cloned so that in-place functions write into copies of their own; scalars are copied.
fg::Tensor clone_arg(const fg::Tensor& t) { return t.clone(); }
template <typename T>
T clone_arg(const T& v) {
  return v;
}

// The i-th example of one argument along `dim` (unmapped arguments and scalars are passed whole).
fg::Tensor example_of(const fg::Tensor& t, Dim dim, int64_t i) { return dim ? t.select(*dim, i) : t; }
template <typename T>
T example_of(const T& v, Dim, int64_t) {
  return v;
}

std::optional<int64_t> batch_of(const fg::Tensor& t, Dim dim) {
  if (!dim) return std::nullopt;
  return t.size(*dim);
}
template <typename T>
std::optional<int64_t> batch_of(const T&, Dim) {
  return std::nullopt;
}

template <typename Tuple, size_t... I>
int64_t batch_size(const Tuple& args, const Level& level, std::index_sequence<I...>) {
  std::optional<int64_t> batch;
  ((batch = batch ? batch : batch_of(std::get<I>(args), level.in_dims.at(I))), ...);
  if (!batch) ADD_FAILURE() << "a vmap level maps no argument";
  return batch.value_or(0);
}

template <typename Tuple, size_t... I>
Tuple examples(const Tuple& args, const Level& level, int64_t i, std::index_sequence<I...>) {
  return Tuple(example_of(std::get<I>(args), level.in_dims.at(I), i)...);
}

// ------------------------------------------------------------------ the loop of unbatched calls

// vmap's definition: for each batch index of level k, call the function (or the inner levels) on
// the examples and stack each output along its out_dim. An output with out_dim None must be the
// same for every example; it is returned as it is.
template <typename F, typename Tuple>
std::vector<fg::Tensor> loop_reference(F&& f, const std::vector<Level>& levels, size_t k, const Tuple& args) {
  if (k == levels.size()) return outputs(std::apply(f, args));
  constexpr size_t n = std::tuple_size_v<Tuple>;
  const Level& level = levels[k];
  EXPECT_EQ(level.in_dims.size(), n) << "in_dims of level " << k << " need one entry per argument";
  const int64_t batch = batch_size(args, level, std::make_index_sequence<n>());
  std::vector<std::vector<fg::Tensor>> per_example;
  for (int64_t i = 0; i < batch; ++i)
    per_example.push_back(loop_reference(f, levels, k + 1, examples(args, level, i, std::make_index_sequence<n>())));
  std::vector<fg::Tensor> stacked;
  for (size_t j = 0; j < per_example.at(0).size(); ++j) {
    std::vector<fg::Tensor> items;
    for (const auto& e : per_example) items.push_back(e[j]);
    if (const Dim d = level.out_dim(j)) {
      stacked.push_back(fg::stack(items, *d));
    } else {
      for (const auto& item : items)
        EXPECT_TRUE(fg::equal(item, items[0])) << "output " << j << " has out_dims=None but depends on the batch";
      stacked.push_back(items[0]);
    }
  }
  return stacked;
}

std::string shape(const fg::Tensor& t) {
  std::ostringstream os;
  os << "[";
  for (int64_t d = 0; d < t.dim(); ++d) os << (d ? ", " : "") << t.size(d);
  return os.str() + "]";
}

// Same shape, same dtype, same values (to a tolerance for floating point).
::testing::AssertionResult same_tensor(const fg::Tensor& actual, const fg::Tensor& expected) {
  const double tol = expected.dtype() == fg::kDouble ? 1e-9 : 1e-5;
  if (actual.sizes() != expected.sizes())
    return ::testing::AssertionFailure() << "shape " << shape(actual) << ", expected " << shape(expected);
  if (actual.dtype() != expected.dtype())
    return ::testing::AssertionFailure() << "dtype " << actual.dtype() << ", expected " << expected.dtype();
  const bool close = actual.is_floating_point() ? fg::allclose(actual, expected, tol, tol) : fg::equal(actual, expected);
  if (!close) return ::testing::AssertionFailure() << "values differ:\n" << actual << "\nexpected\n" << expected;
  return ::testing::AssertionSuccess();
}

template <typename T>
void check_arg_after(const T&, const T&, size_t) {}
void check_arg_after(const fg::Tensor& actual, const fg::Tensor& expected, size_t i) {
  EXPECT_TRUE(same_tensor(actual, expected)) << "argument " << i << " after the call (in-place writes)";
}

// The generic check: `generated` (funcgen's vmap of `original` as `levels` say, outermost level
// first) against the loop of calls of `original`, on copies of the same arguments. Arguments
// written in place must end up the same too.
template <typename G, typename F, typename... Args>
void check_vmap(G&& generated, F&& original, const std::vector<Level>& levels, const Args&... args) {
  std::tuple<Args...> for_reference(clone_arg(args)...);
  std::tuple<Args...> for_generated(clone_arg(args)...);
  const std::vector<fg::Tensor> expected = loop_reference(original, levels, 0, for_reference);
  std::vector<fg::Tensor> actual;
  try {
    actual = outputs(std::apply(generated, for_generated));
  } catch (const fg::Error& e) {
    FAIL() << "the generated function threw: " << e.what();
  }
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t j = 0; j < actual.size(); ++j) EXPECT_TRUE(same_tensor(actual[j], expected[j])) << "output " << j;
  std::apply(
      [&](const auto&... a) {
        std::apply(
            [&](const auto&... e) {
              size_t i = 0;
              (check_arg_after(a, e, i++), ...);
            },
            for_reference);
      },
      for_generated);
}

// Shorthands for the levels of the common specs.
Level L(std::vector<Dim> in_dims, std::vector<Dim> out_dims = {0}) { return Level{std::move(in_dims), std::move(out_dims)}; }

fg::Tensor rnd(std::vector<int64_t> shape) { return fg::randn(shape, fg::kDouble); }

// Integers in [0, high) as int64 (class targets, indices).
fg::Tensor randint(int64_t high, std::vector<int64_t> shape) {
  return (fg::rand(shape, fg::kDouble) * static_cast<double>(high)).to(fg::kLong).clamp(0, high - 1);
}

class Vmap : public ::testing::Test {
 protected:
  void SetUp() override { fg::manual_seed(20240601); }
};

// ------------------------------------------------------------------ element-wise

TEST_F(Vmap, UnaryChain) {
  check_vmap(vt::unary_chain_v0, vt::unary_chain, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::unary_chain_v0, vt::unary_chain, {L({0})}, rnd({5}));  // logical scalars
  check_vmap(vt::unary_chain_v1, vt::unary_chain, {L({1})}, rnd({3, 5, 4}));
  check_vmap(vt::unary_chain_vm1, vt::unary_chain, {L({-1}, {-1})}, rnd({3, 4, 5}));
  check_vmap(vt::unary_chain_o1, vt::unary_chain, {L({0}, {1})}, rnd({5, 3, 4}));
  check_vmap(vt::unary_chain_vv, vt::unary_chain, {L({1}, {1}), L({0})}, rnd({2, 3, 4, 5}));
  check_vmap(vt::unary_chain_vvm1, vt::unary_chain, {L({-1}, {-1}), L({-1}, {-1})}, rnd({3, 4, 2, 5}));
}

TEST_F(Vmap, BinaryBroadcasting) {
  // Batched operands of different logical ranks broadcast as the examples do.
  check_vmap(vt::binary_ops_v00, vt::binary_ops, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 4}));
  check_vmap(vt::binary_ops_v00, vt::binary_ops, {L({0, 0})}, rnd({5, 4}), rnd({5, 3, 1}));
  // An unbatched operand of higher rank than the batched one.
  check_vmap(vt::binary_ops_v0n, vt::binary_ops, {L({0, None})}, rnd({5, 4}), rnd({3, 4}));
  check_vmap(vt::binary_ops_v0n, vt::binary_ops, {L({0, None})}, rnd({5, 3, 4}), rnd({4}));
  check_vmap(vt::binary_ops_v0n, vt::binary_ops, {L({0, None})}, rnd({5}), rnd({2, 3, 4}));
  check_vmap(vt::binary_ops_vn1, vt::binary_ops, {L({None, 1})}, rnd({3, 4}), rnd({4, 5}));
  check_vmap(vt::binary_ops_vn1, vt::binary_ops, {L({None, 1})}, rnd({2, 3, 4}), rnd({3, 5, 1}));
  check_vmap(vt::binary_ops_v1m1, vt::binary_ops, {L({1, -1}, {-1})}, rnd({3, 5, 4}), rnd({3, 4, 5}));
}

TEST_F(Vmap, BinaryNested) {
  // vmap(vmap(f, in_dims=(0, None)), in_dims=(None, 0)): all pairs of x and y examples.
  check_vmap(vt::binary_ops_vv, vt::binary_ops, {L({None, 0}), L({0, None})}, rnd({3, 4}), rnd({2, 4}));
  check_vmap(vt::binary_ops_vv, vt::binary_ops, {L({None, 0}), L({0, None})}, rnd({3, 2, 4}), rnd({2, 4}));
  check_vmap(vt::binary_ops_vv01, vt::binary_ops, {L({0, 1}), L({1, 0}, {1})}, rnd({3, 4, 2, 5}), rnd({2, 3, 5}));
}

TEST_F(Vmap, ChunkSize) {
  check_vmap(vt::binary_ops_c1, vt::binary_ops, {L({0, None})}, rnd({5, 3, 4}), rnd({3, 4}));
  check_vmap(vt::binary_ops_c2, vt::binary_ops, {L({0, 1})}, rnd({5, 3, 4}), rnd({4, 5}));
  check_vmap(vt::binary_ops_c2, vt::binary_ops, {L({0, 1})}, rnd({4, 3, 4}), rnd({4, 4}));
  check_vmap(vt::binary_ops_c2, vt::binary_ops, {L({0, 1})}, rnd({1, 3}), rnd({3, 1}));
  check_vmap(vt::binary_ops_c100, vt::binary_ops, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 3, 4}));
  // The inner level of a nested vmap runs in chunks.
  check_vmap(vt::binary_ops_vv_c2, vt::binary_ops, {L({1, None}), L({0, 0})}, rnd({5, 4, 3}), rnd({5, 3}));
}

TEST_F(Vmap, ScalarOperands) {
  check_vmap(vt::scalar_operands_v0, vt::scalar_operands, {L({0, None})}, rnd({5, 3}), 0.7);
  check_vmap(vt::scalar_operands_v1, vt::scalar_operands, {L({1, None})}, rnd({3, 5, 2}), -1.25);
}

TEST_F(Vmap, WhereClamp) {
  check_vmap(vt::where_clamp_v00, vt::where_clamp, {L({0, 0, None, None})}, rnd({5, 3, 4}), rnd({5, 3, 4}), -0.3, 0.4);
  check_vmap(vt::where_clamp_v00, vt::where_clamp, {L({0, 0, None, None})}, rnd({5, 4}), rnd({5, 3, 4}), -0.3, 0.4);
  check_vmap(vt::where_clamp_v0n, vt::where_clamp, {L({0, None, None, None})}, rnd({5, 4}), rnd({3, 4}), 0.0, 1.0);
  check_vmap(vt::where_clamp_vn0, vt::where_clamp, {L({None, 0, None, None})}, rnd({3, 4}), rnd({5, 4}), -1.0, 0.0);
}

TEST_F(Vmap, Comparisons) {
  check_vmap(vt::compare_ops_v0n, vt::compare_ops, {L({0, None})}, rnd({5, 4}), rnd({3, 4}));
  check_vmap(vt::compare_ops_vn0, vt::compare_ops, {L({None, 0})}, rnd({3, 4}), rnd({5, 1, 4}));
}

// ------------------------------------------------------------------ reductions

TEST_F(Vmap, ReduceAll) {
  check_vmap(vt::reduce_all_v0, vt::reduce_all, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::reduce_all_v0, vt::reduce_all, {L({0})}, rnd({5}));
  check_vmap(vt::reduce_all_v1, vt::reduce_all, {L({1})}, rnd({3, 5, 4}));
  check_vmap(vt::reduce_all_vv, vt::reduce_all, {L({-1}), L({0})}, rnd({2, 3, 4, 5}));
}

TEST_F(Vmap, ReduceDims) {
  check_vmap(vt::reduce_dims_v0, vt::reduce_dims, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::reduce_dims_v2, vt::reduce_dims, {L({2}, {1})}, rnd({3, 4, 5}));
  check_vmap(vt::reduce_keepdim_v0, vt::reduce_keepdim, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::reduce_keepdim_vm1, vt::reduce_keepdim, {L({-1}, {2})}, rnd({3, 4, 5}));
}

TEST_F(Vmap, MaxWithDim) {
  check_vmap(vt::max_dim_get_v0, vt::max_dim_get, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::max_dim_get_v1, vt::max_dim_get, {L({1}, {1, 0})}, rnd({3, 5, 4}));
  check_vmap(vt::max_dim_bind_v0, vt::max_dim_bind, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::max_dim_bind_vm1, vt::max_dim_bind, {L({-1}, {-1, 0})}, rnd({3, 4, 5}));
  check_vmap(vt::argmax_fn_v0, vt::argmax_fn, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::argmax_fn_v1, vt::argmax_fn, {L({1}, {0, 1})}, rnd({3, 5, 4}));
}

TEST_F(Vmap, LogsumexpNormSoftmax) {
  check_vmap(vt::logsumexp_norm_v0, vt::logsumexp_norm, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::logsumexp_norm_v1, vt::logsumexp_norm, {L({1})}, rnd({3, 5, 4}));
  check_vmap(vt::softmaxes_v0, vt::softmaxes, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::softmaxes_v1, vt::softmaxes, {L({1}, {2})}, rnd({3, 5, 4}));
  check_vmap(vt::softmaxes_vv, vt::softmaxes, {L({0}), L({1})}, rnd({2, 3, 5, 4}));
}

// ------------------------------------------------------------------ views

TEST_F(Vmap, TransposePermute) {
  check_vmap(vt::transpose_t_v0, vt::transpose_t, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::transpose_t_v1, vt::transpose_t, {L({1}, {1})}, rnd({3, 5, 4}));
  check_vmap(vt::permute_fn_v0, vt::permute_fn, {L({0})}, rnd({5, 2, 3, 4}));
  check_vmap(vt::permute_fn_vm1, vt::permute_fn, {L({-1}, {-1})}, rnd({2, 3, 4, 5}));
  check_vmap(vt::movedim_fn_v0, vt::movedim_fn, {L({0})}, rnd({5, 2, 3, 4}));
  check_vmap(vt::movedim_fn_v1, vt::movedim_fn, {L({1}, {2})}, rnd({2, 5, 3, 4}));
}

TEST_F(Vmap, SqueezeUnsqueeze) {
  check_vmap(vt::squeeze_unsqueeze_v0, vt::squeeze_unsqueeze, {L({0})}, rnd({5, 3, 1, 4}));
  // A batch of one: squeeze() must not drop the batch dim.
  check_vmap(vt::squeeze_unsqueeze_v0, vt::squeeze_unsqueeze, {L({0})}, rnd({1, 3, 1, 4}));
  check_vmap(vt::squeeze_unsqueeze_v2, vt::squeeze_unsqueeze, {L({2}, {1, 0})}, rnd({3, 1, 5, 4}));
  check_vmap(vt::squeeze_unsqueeze_v2, vt::squeeze_unsqueeze, {L({2}, {1, 0})}, rnd({3, 1, 1, 4}));
}

TEST_F(Vmap, SelectSliceNarrowDiagonal) {
  check_vmap(vt::select_index_v0, vt::select_index, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::select_index_v1, vt::select_index, {L({1})}, rnd({3, 5, 4}));
  check_vmap(vt::slice_narrow_v0, vt::slice_narrow, {L({0})}, rnd({5, 6, 4}));
  check_vmap(vt::slice_narrow_v1, vt::slice_narrow, {L({1}, {-1})}, rnd({6, 5, 4}));
  check_vmap(vt::diagonal_fn_v0, vt::diagonal_fn, {L({0})}, rnd({5, 4, 4}));
  check_vmap(vt::diagonal_fn_vm1, vt::diagonal_fn, {L({-1})}, rnd({4, 4, 5}));
}

TEST_F(Vmap, FlattenViewReshapeExpand) {
  check_vmap(vt::flatten_reshape_v0, vt::flatten_reshape, {L({0})}, rnd({5, 2, 3, 4}));
  check_vmap(vt::flatten_reshape_v1, vt::flatten_reshape, {L({1}, {1, 0, -1})}, rnd({2, 5, 3, 4}));
  check_vmap(vt::view_fn_v0, vt::view_fn, {L({0})}, rnd({5, 2, 3, 4}));
  check_vmap(vt::view_fn_vv, vt::view_fn, {L({0}), L({0})}, rnd({3, 5, 2, 3, 4}));
  check_vmap(vt::expand_fn_v0, vt::expand_fn, {L({0})}, rnd({5, 3, 1}));
  check_vmap(vt::expand_fn_v1, vt::expand_fn, {L({1}, {0, 1})}, rnd({3, 5, 1}));
}

// ------------------------------------------------------------------ in place

TEST_F(Vmap, InPlaceOnBatchedArguments) {
  // y.add_(x) on a batched y writes into the caller's tensor, as torch.func does.
  check_vmap(vt::add_into_v00, vt::add_into, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 3, 4}));
  check_vmap(vt::add_into_v00, vt::add_into, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 4}));
  check_vmap(vt::add_into_v0n, vt::add_into, {L({0, None})}, rnd({5, 3, 4}), rnd({4}));
  check_vmap(vt::add_into_v1m1, vt::add_into, {L({1, -1}, {1})}, rnd({3, 5, 4}), rnd({3, 4, 5}));
  check_vmap(vt::plus_assign_v00, vt::plus_assign, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 3, 4}));
  check_vmap(vt::plus_assign_v0n, vt::plus_assign, {L({0, None})}, rnd({5, 3, 4}), rnd({3, 4}));
}

TEST_F(Vmap, InPlaceOnBatchedLocals) {
  check_vmap(vt::inplace_local_v00, vt::inplace_local, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 3, 4}));
  check_vmap(vt::inplace_local_v0n, vt::inplace_local, {L({0, None})}, rnd({5, 3, 4}), rnd({4}));
  check_vmap(vt::inplace_local_vn0, vt::inplace_local, {L({None, 0})}, rnd({3, 4}), rnd({5, 3, 4}));
  check_vmap(vt::zero_fill_v0, vt::zero_fill, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::zero_fill_v1, vt::zero_fill, {L({1})}, rnd({3, 5, 4}));
}

TEST_F(Vmap, FusedRunsReadWhatTheCodeReads) {
  check_vmap(vt::write_then_read_v0, vt::write_then_read, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::copy_through_reference_v0, vt::copy_through_reference, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 3, 4}));
  check_vmap(vt::out_variant_write_v0, vt::out_variant_write, {L({0, None})}, rnd({5, 3, 4}), rnd({3, 4}));
  check_vmap(vt::reassigned_unread_v0, vt::reassigned_unread, {L({0})}, rnd({5, 3, 4}));
}

TEST_F(Vmap, DiagonalCopyWritesThrough) {
  // The torch.func documentation's diag_embed: new_zeros + diagonal().copy_(v).
  check_vmap(vt::diag_embed_copy_v0, vt::diag_embed_copy, {L({0})}, rnd({5, 4}));
  check_vmap(vt::diag_embed_copy_v1, vt::diag_embed_copy, {L({1}, {2})}, rnd({4, 5}));
  const fg::Tensor vecs = fg::tensor({{0.0, 1.0, 2.0}, {3.0, 4.0, 5.0}});
  const fg::Tensor out = vt::diag_embed_copy_v0(vecs);
  EXPECT_TRUE(same_tensor(out.select(0, 1), fg::tensor({{3.0, 0.0, 0.0}, {0.0, 4.0, 0.0}, {0.0, 0.0, 5.0}})));
}

TEST_F(Vmap, NewFactories) {
  check_vmap(vt::new_factories_v0, vt::new_factories, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::new_factories_v1, vt::new_factories, {L({1}, {1})}, rnd({3, 5, 4}));
}

// ------------------------------------------------------------------ linear algebra

TEST_F(Vmap, MatmulAllRankCombinations) {
  const std::vector<std::vector<int64_t>> a_shapes = {{4}, {3, 4}, {2, 3, 4}};
  const std::vector<std::vector<int64_t>> b_shapes = {{4}, {4, 5}, {2, 4, 5}};
  auto with = [](std::vector<int64_t> s, size_t at, int64_t n) {
    s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), n);
    return s;
  };
  for (const auto& as : a_shapes) {
    for (const auto& bs : b_shapes) {
      SCOPED_TRACE("a " + std::to_string(as.size()) + "-D, b " + std::to_string(bs.size()) + "-D");
      check_vmap(vt::matmul_fn_v00, vt::matmul_fn, {L({0, 0})}, rnd(with(as, 0, 3)), rnd(with(bs, 0, 3)));
      check_vmap(vt::matmul_fn_v0n, vt::matmul_fn, {L({0, None})}, rnd(with(as, 0, 3)), rnd(bs));
      check_vmap(vt::matmul_fn_vn0, vt::matmul_fn, {L({None, 0})}, rnd(as), rnd(with(bs, 0, 3)));
      check_vmap(vt::matmul_fn_vm1, vt::matmul_fn, {L({-1, 0}, {-1})}, rnd(with(as, as.size(), 3)),
                 rnd(with(bs, 0, 3)));
      check_vmap(vt::matmul_fn_vv, vt::matmul_fn, {L({None, 0}), L({0, None})}, rnd(with(as, 0, 3)),
                 rnd(with(bs, 0, 2)));
      check_vmap(vt::matmul_method_v00, vt::matmul_method, {L({0, 0})}, rnd(with(as, 0, 3)), rnd(with(bs, 0, 3)));
    }
  }
}

TEST_F(Vmap, MmMvDotOuterBmm) {
  check_vmap(vt::mm_fn_v00, vt::mm_fn, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 4, 2}));
  check_vmap(vt::mm_fn_v0n, vt::mm_fn, {L({0, None})}, rnd({5, 3, 4}), rnd({4, 2}));
  check_vmap(vt::mm_fn_vn1, vt::mm_fn, {L({None, 1})}, rnd({3, 4}), rnd({4, 5, 2}));
  check_vmap(vt::mv_fn_v00, vt::mv_fn, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 4}));
  check_vmap(vt::mv_fn_v0n, vt::mv_fn, {L({0, None})}, rnd({5, 3, 4}), rnd({4}));
  check_vmap(vt::mv_fn_vn0, vt::mv_fn, {L({None, 0})}, rnd({3, 4}), rnd({5, 4}));
  check_vmap(vt::dot_fn_v00, vt::dot_fn, {L({0, 0})}, rnd({5, 4}), rnd({5, 4}));
  check_vmap(vt::dot_fn_v0n, vt::dot_fn, {L({0, None})}, rnd({5, 4}), rnd({4}));
  check_vmap(vt::dot_fn_vv, vt::dot_fn, {L({0, None}), L({None, 0})}, rnd({5, 4}), rnd({3, 4}));
  check_vmap(vt::outer_fn_v00, vt::outer_fn, {L({0, 0})}, rnd({5, 3}), rnd({5, 4}));
  check_vmap(vt::outer_fn_vn0, vt::outer_fn, {L({None, 0}, {2})}, rnd({3}), rnd({5, 4}));
  check_vmap(vt::bmm_fn_v00, vt::bmm_fn, {L({0, 0})}, rnd({5, 2, 3, 4}), rnd({5, 2, 4, 3}));
  check_vmap(vt::bmm_fn_v0n, vt::bmm_fn, {L({0, None})}, rnd({5, 2, 3, 4}), rnd({2, 4, 3}));
  check_vmap(vt::bmm_fn_vn1, vt::bmm_fn, {L({None, 1})}, rnd({2, 3, 4}), rnd({2, 5, 4, 3}));
}

TEST_F(Vmap, Linear) {
  // x [N, D] or [D], w [H, D], b [H].
  check_vmap(vt::linear_fn_vx, vt::linear_fn, {L({0, None, None})}, rnd({5, 3, 4}), rnd({6, 4}), rnd({6}));
  check_vmap(vt::linear_fn_vx, vt::linear_fn, {L({0, None, None})}, rnd({5, 4}), rnd({6, 4}), rnd({6}));
  check_vmap(vt::linear_fn_vw, vt::linear_fn, {L({None, 0, 0})}, rnd({3, 4}), rnd({5, 6, 4}), rnd({5, 6}));
  check_vmap(vt::linear_fn_vall, vt::linear_fn, {L({1, 0, 0})}, rnd({3, 5, 4}), rnd({5, 6, 4}), rnd({5, 6}));
  check_vmap(vt::linear_fn_vb, vt::linear_fn, {L({None, None, 0})}, rnd({3, 4}), rnd({6, 4}), rnd({5, 6}));
  check_vmap(vt::linear_fn_vv, vt::linear_fn, {L({None, 0, 0}), L({0, None, None})}, rnd({2, 3, 4}), rnd({5, 6, 4}),
             rnd({5, 6}));
  // conv_fn: x [N, 4, 5, 4], w [6, 2, 3, 3] (groups 2), b [6]
  check_vmap(vt::conv_fn_vx, vt::conv_fn, {L({0, None, None})}, rnd({3, 2, 4, 5, 4}), rnd({6, 2, 3, 3}), rnd({6}));
  check_vmap(vt::conv_fn_vx, vt::conv_fn, {L({0, None, None})}, rnd({3, 4, 5, 4}), rnd({6, 2, 3, 3}), rnd({6}));
  check_vmap(vt::conv_fn_vw, vt::conv_fn, {L({None, 0, None})}, rnd({2, 4, 5, 4}), rnd({3, 6, 2, 3, 3}), rnd({6}));
  check_vmap(vt::conv_fn_vall, vt::conv_fn, {L({1, 0, 0})}, rnd({2, 3, 4, 5, 4}), rnd({3, 6, 2, 3, 3}), rnd({3, 6}));
  check_vmap(vt::conv_fn_vb, vt::conv_fn, {L({None, None, 0})}, rnd({4, 5, 4}), rnd({6, 2, 3, 3}), rnd({3, 6}));
  check_vmap(vt::conv_fn_vv, vt::conv_fn, {L({None, 0, 0}), L({0, None, None})}, rnd({2, 1, 4, 5, 4}),
             rnd({3, 6, 2, 3, 3}), rnd({3, 6}));
  check_vmap(vt::conv1d_unbatched_vx, vt::conv1d_unbatched, {L({1, None})}, rnd({3, 4, 7}), rnd({5, 3, 3}));
  check_vmap(vt::conv1d_unbatched_vw, vt::conv1d_unbatched, {L({None, 0})}, rnd({3, 7}), rnd({4, 5, 3, 3}));
  check_vmap(vt::conv_transpose_fn_vx, vt::conv_transpose_fn, {L({0, None})}, rnd({3, 2, 4, 3, 3}), rnd({4, 3, 2, 2}));
  check_vmap(vt::conv_transpose_fn_vw, vt::conv_transpose_fn, {L({None, 0})}, rnd({4, 3, 3}), rnd({2, 4, 3, 2, 2}));
  check_vmap(vt::conv_transpose_fn_vv, vt::conv_transpose_fn, {L({0, None}), L({None, 0})}, rnd({2, 1, 4, 3, 3}),
             rnd({3, 4, 3, 2, 2}));
  check_vmap(vt::linear_nobias_vx, vt::linear_nobias, {L({0, None})}, rnd({5, 3, 4}), rnd({6, 4}));
  check_vmap(vt::linear_nobias_vw, vt::linear_nobias, {L({None, 0})}, rnd({3, 4}), rnd({5, 6, 4}));
}

TEST_F(Vmap, Layers) {
  // norms: x [2, 4, 4] ([N, C, L]), w and b [4]
  check_vmap(vt::norms_vx, vt::norms, {L({0, None, None})}, rnd({3, 2, 4, 4}), rnd({4}), rnd({4}));
  check_vmap(vt::norms_vw, vt::norms, {L({None, 0, 0})}, rnd({2, 4, 4}), rnd({3, 4}), rnd({3, 4}));
  check_vmap(vt::norms_vv, vt::norms, {L({None, 0, 0}), L({0, None, None})}, rnd({2, 2, 4, 4}), rnd({3, 4}),
             rnd({3, 4}));
  {  // (the loop would update the running statistics once per example: compare the outputs only)
    const fg::Tensor x = rnd({2, 4, 4}), w = rnd({3, 4});
    const fg::Tensor out = vt::norm_stats_vw(x, w, fg::zeros({4}, fg::kDouble), fg::ones({4}, fg::kDouble));
    for (int64_t k = 0; k < 3; ++k)
      EXPECT_TRUE(fg::allclose(out[k], vt::norm_stats(x, w[k], fg::zeros({4}, fg::kDouble), fg::ones({4}, fg::kDouble)),
                               1e-12, 1e-12));
  }
  // attention: q [3, 4], k [5, 4], v [5, 2]
  check_vmap(vt::attention_vq, vt::attention, {L({0, None, None})}, rnd({2, 3, 4}), rnd({5, 4}), rnd({5, 2}));
  check_vmap(vt::attention_vkv, vt::attention, {L({None, 0, 0})}, rnd({3, 4}), rnd({2, 5, 4}), rnd({2, 5, 2}));
  check_vmap(vt::attention_vv, vt::attention, {L({None, 0, 0}), L({0, None, None})}, rnd({2, 3, 4}), rnd({3, 5, 4}),
             rnd({3, 5, 2}));
  // layers: x [3, 4], table [6, 4]
  check_vmap(vt::layers_vx, vt::layers, {L({0, None})}, rnd({5, 3, 4}), rnd({6, 4}));
  check_vmap(vt::layers_vw, vt::layers, {L({None, 0})}, rnd({3, 4}), rnd({5, 6, 4}));
  check_vmap(vt::layers_v00, vt::layers, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 6, 4}));
  check_vmap(vt::losses_vx, vt::losses, {L({0, None})}, rnd({5, 3, 4}), rnd({3, 4}));
  check_vmap(vt::losses_v00, vt::losses, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 3, 4}));
  check_vmap(vt::pieces_v, vt::pieces, {L({0})}, rnd({3, 5, 4}));
}

TEST_F(Vmap, Einsum) {
  check_vmap(vt::einsum_fn_v00, vt::einsum_fn, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 4, 5}));
  check_vmap(vt::einsum_fn_v0n, vt::einsum_fn, {L({0, None})}, rnd({5, 3, 4}), rnd({4, 5}));
  check_vmap(vt::einsum_fn_vn1, vt::einsum_fn, {L({None, 1})}, rnd({3, 4}), rnd({4, 2, 5}));
  check_vmap(vt::einsum_fn_vv, vt::einsum_fn, {L({None, 0}), L({0, None})}, rnd({2, 3, 4}), rnd({5, 4, 5}));
}

// ------------------------------------------------------------------ joining and indexing

TEST_F(Vmap, CatStack) {
  check_vmap(vt::cat_stack_v00, vt::cat_stack, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 3, 4}));
  check_vmap(vt::cat_stack_v0n, vt::cat_stack, {L({0, None})}, rnd({5, 3, 4}), rnd({3, 4}));
  check_vmap(vt::cat_stack_vn1, vt::cat_stack, {L({None, 1}, {1})}, rnd({3, 4}), rnd({3, 5, 4}));
  check_vmap(vt::cat_stack_vv, vt::cat_stack, {L({None, 0}), L({0, None})}, rnd({2, 3, 4}), rnd({5, 3, 4}));
}

TEST_F(Vmap, IndexSelectGather) {
  check_vmap(vt::index_ops_v00, vt::index_ops, {L({0, 0})}, rnd({5, 5, 4}), randint(4, {5, 3}));
  check_vmap(vt::index_ops_v0n, vt::index_ops, {L({0, None})}, rnd({5, 5, 4}), randint(4, {3}));
  check_vmap(vt::index_ops_vn0, vt::index_ops, {L({None, 0})}, rnd({5, 4}), randint(4, {5, 3}));
  check_vmap(vt::index_ops_v1n, vt::index_ops, {L({1, None}, {1})}, rnd({5, 2, 4}), randint(4, {3}));
  check_vmap(vt::gather_fn_v00, vt::gather_fn, {L({0, 0})}, rnd({5, 3, 4}), randint(3, {5, 3, 2}));
  check_vmap(vt::gather_fn_v0n, vt::gather_fn, {L({0, None})}, rnd({5, 3, 4}), randint(3, {3, 2}));
  check_vmap(vt::gather_fn_vn0, vt::gather_fn, {L({None, 0})}, rnd({3, 4}), randint(3, {5, 3, 2}));
  check_vmap(vt::index_ops_vv, vt::index_ops, {L({None, 0}), L({0, None})}, rnd({2, 5, 4}), randint(4, {5, 3}));
  check_vmap(vt::gather_fn_vv, vt::gather_fn, {L({0, None}), L({None, 0})}, rnd({2, 3, 4}), randint(3, {5, 3, 2}));
}

// ------------------------------------------------------------------ losses and a model

TEST_F(Vmap, Losses) {
  check_vmap(vt::mse_fn_v00, vt::mse_fn, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 3, 4}));
  check_vmap(vt::mse_fn_v0n, vt::mse_fn, {L({0, None})}, rnd({5, 3, 4}), rnd({3, 4}));
  check_vmap(vt::mse_fn_vn1, vt::mse_fn, {L({None, 1})}, rnd({3, 4}), rnd({3, 5, 4}));
  // logits [N, C], targets [N] in [0, C).
  check_vmap(vt::nll_fn_v00, vt::nll_fn, {L({0, 0})}, rnd({5, 4, 3}), randint(3, {5, 4}));
  check_vmap(vt::nll_fn_v0n, vt::nll_fn, {L({0, None})}, rnd({5, 4, 3}), randint(3, {4}));
  check_vmap(vt::nll_fn_vn0, vt::nll_fn, {L({None, 0})}, rnd({4, 3}), randint(3, {5, 4}));
  check_vmap(vt::nll_fn_vv, vt::nll_fn, {L({None, 0}), L({0, None})}, rnd({2, 4, 3}), randint(3, {5, 4}));
  check_vmap(vt::cross_entropy_fn_v00, vt::cross_entropy_fn, {L({0, 0})}, rnd({5, 4, 3}), randint(3, {5, 4}));
  check_vmap(vt::cross_entropy_fn_v0n, vt::cross_entropy_fn, {L({0, None})}, rnd({5, 4, 3}), randint(3, {4}));
  check_vmap(vt::cross_entropy_fn_vn0, vt::cross_entropy_fn, {L({None, 0})}, rnd({4, 3}), randint(3, {5, 4}));
}

TEST_F(Vmap, MlpPerExampleAndEnsemble) {
  // w1 [H, D], b1 [H], w2 [C, H], b2 [C], x [N, D], target [N].
  const int64_t M = 3, B = 7, H = 6, D = 4, C = 3, N = 5;
  const fg::Tensor w1 = rnd({H, D}), b1 = rnd({H}), w2 = rnd({C, H}), b2 = rnd({C});
  const fg::Tensor ws1 = rnd({M, H, D}), bs1 = rnd({M, H}), ws2 = rnd({M, C, H}), bs2 = rnd({M, C});
  const fg::Tensor x = rnd({N, D}), t = randint(C, {N});
  const fg::Tensor xs = rnd({B, N, D}), ts = randint(C, {B, N});
  check_vmap(vt::mlp_loss_per_example, vt::mlp_loss, {L({None, None, None, None, 0, 0})}, w1, b1, w2, b2, xs, ts);
  check_vmap(vt::mlp_loss_ensemble, vt::mlp_loss, {L({0, 0, 0, 0, None, None})}, ws1, bs1, ws2, bs2, x, t);
  check_vmap(vt::mlp_loss_ensemble_per_example, vt::mlp_loss,
             {L({0, 0, 0, 0, None, None}), L({None, None, None, None, 0, 0})}, ws1, bs1, ws2, bs2, xs, ts);
  check_vmap(vt::mlp_loss_chunked, vt::mlp_loss, {L({None, None, None, None, 0, 0})}, w1, b1, w2, b2, xs, ts);
}

// ------------------------------------------------------------------ user functions and control flow

TEST_F(Vmap, HelperFunctions) {
  check_vmap(vt::calls_helpers_v00, vt::calls_helpers, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 3, 4}));
  check_vmap(vt::calls_helpers_v0n, vt::calls_helpers, {L({0, None})}, rnd({5, 3, 4}), rnd({3, 4}));
  check_vmap(vt::calls_helpers_vv, vt::calls_helpers, {L({0, None}), L({None, 0})}, rnd({3, 3, 4}), rnd({2, 3, 4}));
}

TEST_F(Vmap, ControlFlowOnShapes) {
  check_vmap(vt::custom_dot_v0, vt::custom_dot, {L({0})}, rnd({5, 4}));
  check_vmap(vt::custom_dot_v0, vt::custom_dot, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::custom_dot_v1, vt::custom_dot, {L({1})}, rnd({4, 5}));
  check_vmap(vt::loop_accumulate_v0, vt::loop_accumulate, {L({0, None})}, rnd({5, 3, 4}), 2);
  check_vmap(vt::loop_accumulate_v0, vt::loop_accumulate, {L({0, None})}, rnd({5, 4, 2}), 0);
  check_vmap(vt::loop_accumulate_v1, vt::loop_accumulate, {L({1, None}, {1})}, rnd({3, 5, 4}), 3);
}

TEST_F(Vmap, AccumulatorStartingUnbatched) {
  check_vmap(vt::factory_accumulator_v0, vt::factory_accumulator, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::factory_accumulator_v1, vt::factory_accumulator, {L({1})}, rnd({3, 5, 4}));
}

// ------------------------------------------------------------------ tuples and scalars

TEST_F(Vmap, TupleOutDims) {
  check_vmap(vt::pair_fn_v00, vt::pair_fn, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 3, 4}));
  check_vmap(vt::pair_fn_o01, vt::pair_fn, {L({0, 0}, {0, 1})}, rnd({5, 3, 4}), rnd({5, 3, 4}));
  check_vmap(vt::pair_fn_om10, vt::pair_fn, {L({1, 0}, {-1, 0})}, rnd({3, 5, 4}), rnd({5, 3, 4}));
  // The second output depends on y only: out_dims None returns it unbatched, out_dims 0 expands it.
  check_vmap(vt::pair_fn_v0n, vt::pair_fn, {L({0, None}, {0, None})}, rnd({5, 3, 4}), rnd({3, 4}));
  check_vmap(vt::pair_fn_v0n_o00, vt::pair_fn, {L({0, None}, {0, 0})}, rnd({5, 3, 4}), rnd({3, 4}));
  check_vmap(vt::pair_fn_vv, vt::pair_fn, {L({None, 0}, {1, 0}), L({0, None}, {0, None})}, rnd({3, 3, 4}),
             rnd({2, 3, 4}));
  check_vmap(vt::pair_fn_c2, vt::pair_fn, {L({0, 0}, {1, 0})}, rnd({5, 3, 4}), rnd({5, 3, 4}));
  // A spec over an earlier spec: vmap(pair_fn_o01, in_dims=1) = vmap(vmap(pair_fn, out_dims=(0, 1)), in_dims=1).
  check_vmap(vt::pair_fn_again, vt::pair_fn, {L({1, 1}), L({0, 0}, {0, 1})}, rnd({2, 5, 3, 4}), rnd({2, 5, 3, 4}));
}

TEST_F(Vmap, ScalarParameters) {
  check_vmap(vt::scale_select_v0, vt::scale_select, {L({0, None, None})}, rnd({5, 3, 4}), 1.5, 2);
  check_vmap(vt::scale_select_all0, vt::scale_select, {L({0, None, None})}, rnd({5, 3, 4}), -0.5, 0);
  check_vmap(vt::scale_select_v1, vt::scale_select, {L({1, None, None}, {-1})}, rnd({3, 5, 4}), 2.0, 1);
}

// ------------------------------------------------------------------ more ops and patterns

TEST_F(Vmap, DimsFromScalarParameters) {
  check_vmap(vt::dims_from_params_v0, vt::dims_from_params, {L({0, None, None})}, rnd({5, 3, 4}), 1, int64_t{0});
  check_vmap(vt::dims_from_params_v0, vt::dims_from_params, {L({0, None, None})}, rnd({5, 3, 4}), -1, int64_t{-2});
  check_vmap(vt::dims_from_params_v1, vt::dims_from_params, {L({1, None, None}, {-1})}, rnd({3, 5, 4}), 0,
             int64_t{1});
}

TEST_F(Vmap, MiscOps) {
  check_vmap(vt::misc_ops_v0, vt::misc_ops, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::misc_ops_v1, vt::misc_ops, {L({1}, {1})}, rnd({3, 5, 4}));
}

TEST_F(Vmap, ScatterAdd) {
  check_vmap(vt::scatter_fn_v00, vt::scatter_fn, {L({0, 0, 0})}, rnd({5, 3, 4}), randint(4, {5, 3, 2}), rnd({5, 3, 2}));
  check_vmap(vt::scatter_fn_v0nn, vt::scatter_fn, {L({0, None, None})}, rnd({5, 3, 4}), randint(4, {3, 2}),
             rnd({3, 2}));
  check_vmap(vt::scatter_fn_vn0n, vt::scatter_fn, {L({None, 0, None})}, rnd({3, 4}), randint(4, {5, 3, 2}),
             rnd({3, 2}));
  check_vmap(vt::scatter_fn_vnn0, vt::scatter_fn, {L({None, None, 0})}, rnd({3, 4}), randint(4, {3, 2}),
             rnd({5, 3, 2}));
  check_vmap(vt::scatter_fn_vv, vt::scatter_fn, {L({None, 0, 0}), L({0, None, None})}, rnd({2, 3, 4}),
             randint(4, {5, 3, 2}), rnd({5, 3, 2}));
}

TEST_F(Vmap, PerExampleFallback) {
  check_vmap(vt::fallback_fn_v00, vt::fallback_fn, {L({0, 0})}, rnd({5, 3, 1}), rnd({5, 3, 4}));
  check_vmap(vt::fallback_fn_v0n, vt::fallback_fn, {L({0, None})}, rnd({5, 1, 4}), rnd({3, 4}));
}

TEST_F(Vmap, UnseenFunctionsRunPerExample) {
  // unseen_split returns a tuple and reduces over its first dim; unseen_record returns nothing.
  check_vmap(vt::uses_unseen_v0, vt::uses_unseen, {L({0})}, rnd({5, 3, 4}));
  check_vmap(vt::uses_unseen_v1, vt::uses_unseen, {L({1}, {1})}, rnd({3, 5, 4}));
  const int64_t before = vt::unseen_records();
  vt::uses_unseen_v0(rnd({6, 3, 4}));
  EXPECT_EQ(vt::unseen_records() - before, 6) << "a function returning void runs once per example";
}

TEST_F(Vmap, OutputsThatDependOnNoMappedInput) {
  check_vmap(vt::const_out_v0, vt::const_out, {L({0})}, rnd({5, 3}));
  check_vmap(vt::const_out_v0_none, vt::const_out, {L({0}, {0, None})}, rnd({5, 3}));
  // A branch that returns a value that is not batched still returns one value per example.
  check_vmap(vt::branch_return_v0n, vt::branch_return, {L({0, None, None})}, rnd({5, 3, 4}), rnd({3, 4}), 1);
  check_vmap(vt::branch_return_v0n, vt::branch_return, {L({0, None, None})}, rnd({5, 3, 4}), rnd({3, 4}), 0);
  check_vmap(vt::branch_assign_v0n, vt::branch_assign, {L({0, None, None})}, rnd({5, 3, 4}), rnd({3, 4}), 1);
  check_vmap(vt::branch_assign_v0n, vt::branch_assign, {L({0, None, None})}, rnd({5, 3, 4}), rnd({3, 4}), 0);
}

TEST_F(Vmap, HelpersReturningTuplesAndWritingArguments) {
  check_vmap(vt::tuple_helper_v0, vt::tuple_helper, {L({0, 0})}, rnd({5, 3, 4}), rnd({5, 4}));
  check_vmap(vt::tuple_helper_v0n, vt::tuple_helper, {L({0, None})}, rnd({5, 3, 4}), rnd({4}));
  check_vmap(vt::tuple_helper_vn0, vt::tuple_helper, {L({None, 0})}, rnd({3, 4}), rnd({5, 4}));
}

TEST_F(Vmap, TuplesWithDifferentlyBatchedElements) {
  check_vmap(vt::mixed_tuples_v0n, vt::mixed_tuples, {L({0, None})}, rnd({5, 3, 4}), rnd({3, 4}));
  check_vmap(vt::mixed_tuples_vn0, vt::mixed_tuples, {L({None, 0})}, rnd({3, 4}), rnd({5, 3, 4}));
}

TEST_F(Vmap, ParameterGivenABatchedValue) {
  check_vmap(vt::reassign_param_vn0, vt::reassign_param, {L({None, 0})}, rnd({3, 4}), rnd({5, 3, 4}));
  check_vmap(vt::reassign_param_v0n, vt::reassign_param, {L({0, None})}, rnd({5, 3, 4}), rnd({3, 4}));
}

TEST_F(Vmap, ScalarControlFlowChoosingBatchedOrNot) {
  for (int n = 0; n < 4; ++n) {
    SCOPED_TRACE("n = " + std::to_string(n));
    check_vmap(vt::choices_v0n, vt::choices, {L({0, None, None, None})}, rnd({5, 3, 4}), rnd({3, 4}), rnd({2}), n);
    check_vmap(vt::choices_vn0, vt::choices, {L({None, 0, None, None})}, rnd({3, 4}), rnd({5, 3, 4}), rnd({2}), n);
  }
}

TEST_F(Vmap, TripleNesting) {
  // vmap(vmap(vmap(f, (0, None)), (None, 0)), (1, 1)): x [3, Bx0, 2, 4] -> level 0 at dim 1, level 2 at dim 0.
  check_vmap(vt::binary_ops_vvv, vt::binary_ops, {L({1, 1}), L({None, 0}), L({0, None})}, rnd({2, 3, 4}),
             rnd({5, 3, 4}));
  check_vmap(vt::binary_ops_vvv, vt::binary_ops, {L({1, 1}), L({None, 0}), L({0, None})}, rnd({2, 3, 4, 1}),
             rnd({5, 3, 1, 4}));
}

TEST_F(Vmap, ChunkingWithUnbatchedOutputsAndOuterLevels) {
  check_vmap(vt::pair_fn_v0n_c2, vt::pair_fn, {L({0, None}, {0, None})}, rnd({5, 3, 4}), rnd({3, 4}));
  check_vmap(vt::pair_fn_outer_c2, vt::pair_fn, {L({None, 0}), L({0, None}, {0, None})}, rnd({2, 3, 4}),
             rnd({5, 3, 4}));
}

TEST_F(Vmap, Float32KeepsItsDtype) {
  const fg::Tensor x = fg::randn({5, 3, 4}), y = fg::randn({4});
  check_vmap(vt::binary_ops_v0n, vt::binary_ops, {L({0, None})}, x, y);
  check_vmap(vt::softmaxes_v0, vt::softmaxes, {L({0})}, x);
  check_vmap(vt::matmul_fn_v0n, vt::matmul_fn, {L({0, None})}, x, fg::randn({4, 2}));
  EXPECT_EQ(vt::binary_ops_v0n(x, y).dtype(), fg::kFloat);
}

// ------------------------------------------------------------------ randomness

// Whether every example (slice along dim 0, or along dims 0 and 1 when two levels are given)
// equals the first; and whether all examples differ pairwise.
std::vector<fg::Tensor> examples_of(const fg::Tensor& t, int levels) {
  std::vector<fg::Tensor> out;
  for (int64_t i = 0; i < t.size(0); ++i) {
    if (levels == 1) {
      out.push_back(t.select(0, i));
    } else {
      for (int64_t j = 0; j < t.size(1); ++j) out.push_back(t.select(0, i).select(0, j));
    }
  }
  return out;
}
bool all_same(const fg::Tensor& t, int levels = 1) {
  const auto ex = examples_of(t, levels);
  for (const auto& e : ex)
    if (!fg::equal(e, ex[0])) return false;
  return true;
}
bool all_different(const fg::Tensor& t, int levels = 1) {
  const auto ex = examples_of(t, levels);
  for (size_t i = 0; i < ex.size(); ++i)
    for (size_t j = i + 1; j < ex.size(); ++j)
      if (fg::equal(ex[i], ex[j])) return false;
  return true;
}

TEST_F(Vmap, RandomnessSame) {
  const fg::Tensor x = fg::zeros({5, 7}, fg::kDouble);
  const fg::Tensor noise = vt::add_noise_same(x);
  EXPECT_EQ(noise.sizes(), x.sizes());
  EXPECT_TRUE(all_same(noise));
  EXPECT_FALSE(fg::equal(noise, x));
  const fg::Tensor fresh = vt::add_fresh_noise_same(x);
  EXPECT_EQ(fresh.sizes(), x.sizes());
  EXPECT_TRUE(all_same(fresh));
  const fg::Tensor ones = fg::ones({6, 64}, fg::kDouble);
  const fg::Tensor dropped = vt::dropout_fn_same(ones);
  EXPECT_EQ(dropped.sizes(), ones.sizes());
  EXPECT_TRUE(all_same(dropped));
  // Every element is dropped (0) or scaled by 1 / (1 - p) = 2.
  EXPECT_TRUE(fg::equal((dropped == 0.0).to(fg::kDouble) + (dropped == 2.0).to(fg::kDouble), fg::ones_like(dropped)));
  EXPECT_FALSE(fg::equal(dropped, ones));
}

TEST_F(Vmap, RandomnessDifferent) {
  const fg::Tensor x = fg::zeros({5, 7}, fg::kDouble);
  const fg::Tensor noise = vt::add_noise_different(x);
  EXPECT_EQ(noise.sizes(), x.sizes());
  EXPECT_TRUE(all_different(noise));
  const fg::Tensor fresh = vt::add_fresh_noise_different(x);
  EXPECT_EQ(fresh.sizes(), x.sizes());
  EXPECT_TRUE(all_different(fresh));
  const fg::Tensor ones = fg::ones({6, 64}, fg::kDouble);
  const fg::Tensor dropped = vt::dropout_fn_different(ones);
  EXPECT_EQ(dropped.sizes(), ones.sizes());
  EXPECT_TRUE(all_different(dropped));
  const fg::Tensor xx = fg::zeros({3, 4, 6}, fg::kDouble);
  const fg::Tensor nested = vt::add_noise_vv_different(xx);
  EXPECT_EQ(nested.sizes(), xx.sizes());
  EXPECT_TRUE(all_different(nested, 2));
}

TEST_F(Vmap, DropoutInEvaluationNeedsNoRandomness) {
  check_vmap(vt::eval_dropout_v, vt::eval_dropout, {L({0})}, rnd({5, 3, 4}));
}

TEST_F(Vmap, RandomnessWithBernoulliAndChunks) {
  const fg::Tensor p = fg::full({6, 64}, 0.5, fg::kDouble);
  const fg::Tensor same = vt::bernoulli_fn_same(p);
  EXPECT_EQ(same.sizes(), p.sizes());
  EXPECT_TRUE(all_same(same));
  const fg::Tensor different = vt::bernoulli_fn_different(p);
  EXPECT_EQ(different.sizes(), p.sizes());
  EXPECT_TRUE(all_different(different));
  // Chunks draw their own values under 'different' and share one draw under 'same'.
  const fg::Tensor x = fg::zeros({5, 7}, fg::kDouble);
  const fg::Tensor chunked_different = vt::add_noise_different_c2(x);
  EXPECT_EQ(chunked_different.sizes(), x.sizes());
  EXPECT_TRUE(all_different(chunked_different));
  const fg::Tensor chunked_same = vt::add_noise_same_c2(x);
  EXPECT_EQ(chunked_same.sizes(), x.sizes());
  EXPECT_TRUE(all_same(chunked_same));
}

TEST_F(Vmap, RandomnessIsReproducibleUnderManualSeed) {
  const fg::Tensor x = fg::zeros({5, 7}, fg::kDouble);
  fg::manual_seed(7);
  const fg::Tensor a = vt::add_noise_different(x);
  fg::manual_seed(7);
  const fg::Tensor b = vt::add_noise_different(x);
  EXPECT_TRUE(fg::equal(a, b));
}

// ------------------------------------------------------------------ errors

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const fg::Error& e) {
    return e.what();
  }
  return "(no fg::Error thrown)";
}

// The reference does not come from the generated code: a wrong out_dim or a different function fails.
TEST_F(Vmap, HarnessCatchesMismatches) {
  EXPECT_NONFATAL_FAILURE(check_vmap(vt::unary_chain_o1, vt::unary_chain, {L({0})}, rnd({5, 3, 4})), "shape");
  EXPECT_NONFATAL_FAILURE(check_vmap(vt::softmaxes_v0, vt::unary_chain, {L({0})}, rnd({5, 3, 4})), "values differ");
  // Same output, but the reference does not write into its argument as add_into does.
  EXPECT_NONFATAL_FAILURE(check_vmap(vt::add_into_v00, [](fg::Tensor y, const fg::Tensor& x) { return y + x; },
                                     {L({0, 0})}, rnd({5, 3}), rnd({5, 3})),
                          "after the call");
}

TEST_F(Vmap, MismatchedBatchSizesNameTheFunction) {
  const std::string msg = error_of([] { vt::binary_ops_v00(rnd({3, 4}), rnd({4, 4})); });
  EXPECT_NE(msg.find("binary_ops_v00"), std::string::npos) << msg;
  EXPECT_NE(msg.find("same size in the mapped dimension"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'y'"), std::string::npos) << msg;
  // The inner level of a nested vmap checks its own sizes.
  const std::string inner = error_of([] { vt::binary_ops_vv01(rnd({3, 4, 2, 5}), rnd({4, 3, 5})); });
  EXPECT_NE(inner.find("binary_ops_vv01"), std::string::npos) << inner;
  EXPECT_NE(inner.find("same size in the mapped dimension"), std::string::npos) << inner;
  // Chunked and unchunked check the same way.
  const std::string chunked = error_of([] { vt::binary_ops_c2(rnd({5, 3}), rnd({3, 4})); });
  EXPECT_NE(chunked.find("binary_ops_c2"), std::string::npos) << chunked;
}

TEST_F(Vmap, InDimOutOfRange) {
  const std::string msg = error_of([] { vt::unary_chain_v1(rnd({3})); });
  EXPECT_NE(msg.find("unary_chain_v1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("in_dim 1 of argument 'x' is out of range"), std::string::npos) << msg;
  const std::string neg = error_of([] { vt::unary_chain_vm1(fg::scalar_tensor(1.0, fg::kDouble)); });
  EXPECT_NE(neg.find("unary_chain_vm1"), std::string::npos) << neg;
}

TEST_F(Vmap, OutDimOutOfRange) {
  const std::string msg = error_of([] { vt::unary_chain_bad_out(rnd({3, 4})); });
  EXPECT_NE(msg.find("unary_chain_bad_out"), std::string::npos) << msg;
  EXPECT_NE(msg.find("out_dim"), std::string::npos) << msg;
}

}  // namespace
