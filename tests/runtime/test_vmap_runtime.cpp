// fg::vmap, the run-time batching rules of funcgen's generated vmap code: every rule against the
// loop-of-unbatched definition. Operands are batched at the level masks 0b0, 0b1, 0b10 and 0b11
// (level 0 of size 3, level 1 of size 2); for every example index the logical slice of the rule's
// result must equal the plain fg op applied to the operands' slices (operands unbatched at a level
// are shared by its examples). Also the entry/exit helpers, their exact error messages, alignment,
// the fallback, chunking and randomness='same'.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "funcgen/runtime/ops.h"
#include "funcgen/runtime/random.h"
#include "funcgen/runtime/vmap.h"

namespace {

using fg::IntArrayRef;
using fg::Reduction;
using fg::Tensor;
using fg::TensorOptions;
using fg::vmap::Batched;
using fg::vmap::Levels;

using Shape = std::vector<int64_t>;
using Ref = std::function<Tensor(const std::vector<Tensor>&)>;

constexpr int64_t kLevelSize[2] = {3, 2};  // batch size of vmap level 0 and level 1
constexpr Levels kMasks[] = {0b0, 0b1, 0b10, 0b11};

Shape batch_sizes(Levels levels) {
  Shape s;
  for (int l = 0; l < 2; ++l)
    if (levels & (1u << l)) s.push_back(kLevelSize[l]);
  return s;
}

Shape physical(Levels levels, const Shape& logical) {
  Shape s = batch_sizes(levels);
  s.insert(s.end(), logical.begin(), logical.end());
  return s;
}

// A random operand batched at `levels` with the given logical shape (float64).
Batched rnd(Levels levels, const Shape& logical) {
  return {fg::randn(physical(levels, logical), TensorOptions(fg::kDouble)), levels};
}

// As rnd, but laid out with every dim reversed in memory (a non-contiguous view).
Batched rnd_strided(Levels levels, const Shape& logical) {
  Shape p = physical(levels, logical);
  Shape rev(p.rbegin(), p.rend());
  Shape order;
  for (int64_t i = static_cast<int64_t>(p.size()) - 1; i >= 0; --i) order.push_back(i);
  return {fg::randn(rev, TensorOptions(fg::kDouble)).permute(order), levels};
}

// Random int64 class indices in [0, hi).
Batched rint(Levels levels, const Shape& logical, int64_t hi) {
  Tensor u = fg::rand(physical(levels, logical), TensorOptions(fg::kDouble));
  return {(u * static_cast<double>(hi)).to(fg::kLong).clamp_max(hi - 1), levels};
}

// The logical slice of b for example (i0, i1).
Tensor slice(const Batched& b, int64_t i0, int64_t i1) {
  Tensor s = b.value;
  if (b.levels & 0b1) s = s.select(0, i0);
  if (b.levels & 0b10) s = s.select(0, i1);
  return s;
}

std::string levels_name(Levels l) { return "0b" + std::to_string((l >> 1) & 1) + std::to_string(l & 1); }

std::string shape_name(IntArrayRef s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// The loop-of-unbatched check: `got` must be batched at `want`, and every example's slice must
// equal ref(the operands' slices), same shape and dtype.
void expect_per_example(const Batched& got, Levels want, const std::vector<Batched>& ops, const Ref& ref,
                        double rtol = 1e-7, double atol = 1e-10) {
  ASSERT_EQ(got.levels, want);
  ASSERT_TRUE(got.value.defined());
  ASSERT_GE(got.value.dim(), fg::vmap::nbatch(want));
  for (size_t i = 0; i < batch_sizes(want).size(); ++i) ASSERT_EQ(got.value.size(i), batch_sizes(want)[i]);
  for (int64_t i0 = 0; i0 < ((want & 1) ? kLevelSize[0] : 1); ++i0) {
    for (int64_t i1 = 0; i1 < ((want & 2) ? kLevelSize[1] : 1); ++i1) {
      std::vector<Tensor> args;
      for (const Batched& op : ops) args.push_back(op.value.defined() ? slice(op, i0, i1) : Tensor());
      const Tensor expected = ref(args);
      const Tensor actual = slice(got, i0, i1);
      SCOPED_TRACE("example (" + std::to_string(i0) + ", " + std::to_string(i1) + ")");
      ASSERT_EQ(shape_name(actual.sizes()), shape_name(expected.sizes()));
      ASSERT_EQ(actual.dtype(), expected.dtype());
      if (fg::isFloatingType(expected.dtype()))
        EXPECT_TRUE(fg::allclose(actual, expected, rtol, atol, /*equal_nan=*/true))
            << "got\n" << actual << "\nexpected\n" << expected;
      else
        EXPECT_TRUE(fg::equal(actual, expected)) << "got\n" << actual << "\nexpected\n" << expected;
    }
  }
}

template <typename F>
void expect_error(F&& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "expected fg::Error \"" << message << "\"";
  } catch (const fg::Error& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

template <typename F>
void expect_error_prefix(F&& f, const std::string& prefix) {
  try {
    f();
    ADD_FAILURE() << "expected fg::Error starting \"" << prefix << "\"";
  } catch (const fg::Error& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, prefix.size()), prefix) << e.what();
  }
}

bool shares_storage(const Tensor& a, const Tensor& b) {
  return a.unsafeGetTensorImpl()->storage == b.unsafeGetTensorImpl()->storage;
}

class VmapTest : public ::testing::Test {
 protected:
  void SetUp() override { fg::manual_seed(1234); }
};

// ================================================================== entry and exit

TEST_F(VmapTest, MoveInMovesTheMappedDimToThePosition) {
  const Tensor x = fg::randn({3, 4, 5}, TensorOptions(fg::kDouble));
  for (int64_t in_dim : {0, 1, 2, -1, -2, -3}) {
    SCOPED_TRACE(in_dim);
    const Tensor r = fg::vmap::move_in(x, in_dim, 0, "f", "x");
    const int64_t d = in_dim < 0 ? in_dim + 3 : in_dim;
    ASSERT_EQ(r.size(0), x.size(d));
    EXPECT_TRUE(shares_storage(r, x));
    for (int64_t b = 0; b < x.size(d); ++b) EXPECT_TRUE(fg::equal(r.select(0, b), x.select(d, b)));
  }
  // Nested: x already has one outer batch dim (size 2) in front; in_dim counts after it.
  const Tensor y = fg::randn({2, 4, 3, 5}, TensorOptions(fg::kDouble));
  for (int64_t in_dim : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE("nested " + std::to_string(in_dim));
    const Tensor r = fg::vmap::move_in(y, in_dim, 1, "f", "y");
    const int64_t d = in_dim < 0 ? in_dim + 3 : in_dim;
    ASSERT_EQ(r.dim(), 4);
    ASSERT_EQ(r.size(0), 2);
    ASSERT_EQ(r.size(1), y.size(1 + d));
    for (int64_t o = 0; o < 2; ++o)
      for (int64_t b = 0; b < y.size(1 + d); ++b)
        EXPECT_TRUE(fg::equal(r.select(0, o).select(0, b), y.select(0, o).select(d, b)));
  }
}

TEST_F(VmapTest, MoveInErrors) {
  const Tensor x = fg::randn({3, 4});
  expect_error([&] { fg::vmap::move_in(x, 2, 0, "f", "x"); },
               "fg::vmap: f: in_dim 2 of argument 'x' is out of range for a tensor of shape [3, 4]");
  expect_error([&] { fg::vmap::move_in(x, -3, 0, "g", "inp"); },
               "fg::vmap: g: in_dim -3 of argument 'inp' is out of range for a tensor of shape [3, 4]");
  // Nested: the shape named is the one the mapped function sees at this level.
  expect_error([&] { fg::vmap::move_in(x, 1, 1, "f", "x"); },
               "fg::vmap: f: in_dim 1 of argument 'x' is out of range for a tensor of shape [4]");
  expect_error([&] { fg::vmap::move_in(fg::scalar_tensor(1.0), 0, 0, "f", "s"); },
               "fg::vmap: f: in_dim 0 of argument 's' is out of range for a tensor of shape []");
}

TEST_F(VmapTest, BatchSize) {
  const Tensor x = fg::randn({3, 5}), y = fg::randn({5, 3}), z = fg::randn({4, 5});
  EXPECT_EQ(fg::vmap::batch_size("f", {{"x", &x, 0}}), 3);
  EXPECT_EQ(fg::vmap::batch_size("f", {{"x", &x, 0}, {"y", &y, 1}}), 3);
  EXPECT_EQ(fg::vmap::batch_size("f", {{"x", &x, 1}, {"y", &y, 0}}), 5);
  expect_error([&] { fg::vmap::batch_size("f", {{"x", &x, 0}, {"y", &z, 0}}); },
               "fg::vmap: f: expected all tensors to have the same size in the mapped dimension, got sizes 3 for "
               "argument 'x' and 4 for argument 'y'");
  expect_error([&] { fg::vmap::batch_size("h", {{"a", &x, 0}, {"b", &y, 1}, {"c", &z, 0}}); },
               "fg::vmap: h: expected all tensors to have the same size in the mapped dimension, got sizes 3 for "
               "argument 'a' and 4 for argument 'c'");
  expect_error_prefix([&] { fg::vmap::batch_size("f", {}); }, "fg::vmap: f: ");
}

TEST_F(VmapTest, MappedVectorsOfTensors) {
  const std::vector<Tensor> ws{fg::randn({2, 3}), fg::randn({4, 5, 3})}, bad{fg::randn({3}), fg::randn({2})};
  const Tensor x = fg::randn({3, 7});
  const std::vector<Tensor> moved = fg::vmap::move_in(ws, -1, 0, "f", "ws");  // the 3 to the front
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(moved[0].sizes(), fg::IntArrayRef({3, 2}));
  EXPECT_EQ(moved[1].sizes(), fg::IntArrayRef({3, 4, 5}));
  EXPECT_EQ(fg::vmap::batch_size("f", {{"x", &x, 0}, {"ws", nullptr, 0, &moved}}), 3);
  expect_error([&] { fg::vmap::move_in(ws, 2, 0, "f", "ws"); },
               "fg::vmap: f: in_dim 2 of argument 'ws[0]' is out of range for a tensor of shape [2, 3]");
  expect_error([&] { fg::vmap::batch_size("f", {{"x", &x, 0}, {"bad", nullptr, 0, &bad}}); },
               "fg::vmap: f: expected all tensors to have the same size in the mapped dimension, got sizes 3 for "
               "argument 'x' and 2 for argument 'bad[1]'");
  const std::vector<Tensor> none;
  expect_error([&] { fg::vmap::batch_size("f", {{"ws", nullptr, 0, &none}}); },
               "fg::vmap: f: the mapped vectors are empty, so no argument gives the batch size");
}

TEST_F(VmapTest, MoveOut) {
  const Tensor x = fg::randn({3, 4, 5}, TensorOptions(fg::kDouble));  // batch 3, per-example [4, 5]
  for (int64_t out_dim : {0, 1, 2, -1, -2, -3}) {
    SCOPED_TRACE(out_dim);
    const Tensor r = fg::vmap::move_out(x, 0, out_dim, "f");
    EXPECT_TRUE(shares_storage(r, x));
    for (int64_t b = 0; b < 3; ++b) EXPECT_TRUE(fg::equal(r.select(out_dim, b), x.select(0, b)));
  }
  // Nested: an outer batch dim (size 2) stays in front.
  const Tensor y = fg::randn({2, 3, 4, 5}, TensorOptions(fg::kDouble));
  for (int64_t out_dim : {0, 1, 2, -1}) {
    SCOPED_TRACE("nested " + std::to_string(out_dim));
    const Tensor r = fg::vmap::move_out(y, 1, out_dim, "f");
    ASSERT_EQ(r.size(0), 2);
    for (int64_t o = 0; o < 2; ++o)
      for (int64_t b = 0; b < 3; ++b) EXPECT_TRUE(fg::equal(r.select(0, o).select(out_dim, b), y[o][b]));
  }
  expect_error([&] { fg::vmap::move_out(x, 0, 3, "f"); },
               "fg::vmap: f: out_dim 3 is out of range for an output of shape [4, 5] (expected to be in range "
               "[-3, 2])");
  expect_error([&] { fg::vmap::move_out(y, 1, -4, "g"); },
               "fg::vmap: g: out_dim -4 is out of range for an output of shape [4, 5] (expected to be in range "
               "[-3, 2])");
}

TEST_F(VmapTest, Materialize) {
  for (Levels have : kMasks) {
    for (Levels all : kMasks) {
      if ((have & ~all) != 0) continue;
      SCOPED_TRACE(levels_name(have) + " -> " + levels_name(all));
      const Batched x = rnd(have, {4, 5});
      const Tensor m = fg::vmap::materialize(x.value, have, all, batch_sizes(all));
      ASSERT_EQ(shape_name(m.sizes()), shape_name(physical(all, {4, 5})));
      EXPECT_TRUE(shares_storage(m, x.value));
      expect_per_example({m, all}, all, {x}, [](const std::vector<Tensor>& v) { return v[0]; });
    }
  }
  expect_error_prefix([] { fg::vmap::materialize(fg::randn({3, 4}), 0b10, 0b01, {3}); }, "fg::vmap: materialize: ");
  expect_error_prefix([] { fg::vmap::materialize(fg::randn({3, 4}), 0b01, 0b11, {3}); }, "fg::vmap: materialize: ");
}

// ================================================================== alignment and queries

TEST_F(VmapTest, AlignAndAddLevels) {
  const Batched a = rnd(0b01, {4});        // [3, 4]
  const Batched b = rnd(0b10, {5, 4});     // [2, 5, 4]
  const Batched c = rnd(0b00, {4});        // [4]
  const std::vector<Tensor> v = fg::vmap::align(std::vector<Batched>{a, b, c});
  EXPECT_EQ(shape_name(v[0].sizes()), "[3, 1, 1, 4]");
  EXPECT_EQ(shape_name(v[1].sizes()), "[1, 2, 5, 4]");
  EXPECT_EQ(shape_name(v[2].sizes()), "[4]");
  EXPECT_TRUE(v[2].is_same(c.value));
  EXPECT_TRUE(shares_storage(v[0], a.value));
  EXPECT_TRUE(shares_storage(v[1], b.value));
  // Broadcasting the aligned operands is the per-example sum.
  const Tensor sum = v[0] + v[1] + v[2];
  expect_per_example({sum, 0b11}, 0b11, {a, b, c},
                     [](const std::vector<Tensor>& x) { return x[0] + x[1] + x[2]; });
  // The array form.
  const std::array<Tensor, 2> p = fg::vmap::align({a, b});
  EXPECT_EQ(shape_name(p[0].sizes()), "[3, 1, 1, 4]");
  EXPECT_EQ(shape_name(p[1].sizes()), "[1, 2, 5, 4]");
  // The form generated code uses: a braced list of {value, levels} with structured bindings.
  auto [ga, gb] = fg::vmap::align({{a.value, 0b01}, {b.value, 0b10}});
  EXPECT_EQ(shape_name(ga.sizes()), "[3, 1, 1, 4]");
  EXPECT_EQ(shape_name(gb.sizes()), "[1, 2, 5, 4]");
  const std::array<Tensor, 3> q = fg::vmap::align({c, a, c});
  EXPECT_TRUE(q[0].is_same(c.value));
  EXPECT_EQ(shape_name(q[1].sizes()), "[3, 4]");

  const std::vector<Tensor> f = fg::vmap::align_full({a, b, c});
  EXPECT_EQ(shape_name(f[0].sizes()), "[3, 2, 1, 4]");
  EXPECT_EQ(shape_name(f[1].sizes()), "[3, 2, 5, 4]");
  EXPECT_EQ(shape_name(f[2].sizes()), "[3, 2, 1, 4]");
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(shares_storage(f[i], std::vector<Batched>{a, b, c}[i].value));
  expect_per_example({f[1], 0b11}, 0b11, {b}, [](const std::vector<Tensor>& x) { return x[0]; });
  expect_per_example({f[2].squeeze(2), 0b11}, 0b11, {c}, [](const std::vector<Tensor>& x) { return x[0]; });

  EXPECT_EQ(fg::vmap::union_levels({a, b, c}), 0b11u);
  EXPECT_EQ(fg::vmap::union_levels({a, c}), 0b01u);
  const Tensor al = fg::vmap::add_levels(b.value, 0b10, 0b11);
  EXPECT_EQ(shape_name(al.sizes()), "[1, 2, 5, 4]");
  EXPECT_EQ(shape_name(fg::vmap::add_levels(a.value, 0b01, 0b11).sizes()), "[3, 1, 4]");
  EXPECT_EQ(shape_name(fg::vmap::add_levels(c.value, 0, 0b11).sizes()), "[1, 1, 4]");
  expect_error_prefix([&] { fg::vmap::add_levels(a.value, 0b01, 0b10); }, "fg::vmap: add_levels: ");
}

TEST_F(VmapTest, DimsAndLogicalQueries) {
  EXPECT_EQ(fg::vmap::nbatch(0b101), 2);
  EXPECT_EQ(fg::vmap::dim(0, 2), 2);
  EXPECT_EQ(fg::vmap::dim(1, 2), 3);
  EXPECT_EQ(fg::vmap::dim(-1, 2), -1);
  EXPECT_EQ(fg::vmap::dims({0, -1, 2}, 1), (std::vector<int64_t>{1, -1, 3}));
  const Tensor x = fg::randn({3, 2, 4, 5});
  EXPECT_EQ(fg::vmap::batch_shape(x, 2, {7, -1}), (std::vector<int64_t>{3, 2, 7, -1}));
  EXPECT_EQ(fg::vmap::batch_shape(x, 0, {6}), (std::vector<int64_t>{6}));
  EXPECT_EQ(fg::vmap::with_batch({3, 2}, {5}), (std::vector<int64_t>{3, 2, 5}));
  EXPECT_EQ(fg::vmap::logical_dim(x, 1), 3);
  EXPECT_EQ(fg::vmap::logical_size(x, 2, 0), 4);
  EXPECT_EQ(fg::vmap::logical_size(x, 2, -1), 5);
  EXPECT_EQ(fg::vmap::logical_size(x, 1, -3), 2);
  EXPECT_EQ(fg::vmap::logical_numel(x, 2), 20);
  EXPECT_EQ(fg::vmap::logical_numel(x, 4), 1);
  EXPECT_EQ(shape_name(fg::vmap::logical_sizes(x, 1)), "[2, 4, 5]");
  EXPECT_EQ(shape_name(fg::vmap::logical_sizes(x, 4)), "[]");
  expect_error_prefix([&] { fg::vmap::logical_size(x, 2, 2); }, "fg::vmap: logical_size: ");
  expect_error_prefix([&] { fg::vmap::logical_size(x, 2, -3); }, "fg::vmap: logical_size: ");
}

// ================================================================== view rules

TEST_F(VmapTest, FlattenSqueezeTransposePermuteExpand) {
  for (Levels lv : kMasks) {
    const int64_t nb = fg::vmap::nbatch(lv);
    SCOPED_TRACE(levels_name(lv));
    for (const Shape& s : {Shape{}, Shape{4}, Shape{4, 5}, Shape{2, 1, 3}}) {
      SCOPED_TRACE(shape_name(s));
      const Batched x = rnd(lv, s);
      const Tensor f = fg::vmap::flatten_logical(x.value, nb);
      EXPECT_TRUE(shares_storage(f, x.value));
      expect_per_example({f, lv}, lv, {x}, [](const std::vector<Tensor>& v) { return v[0].flatten(); });
      const Tensor sq = fg::vmap::squeeze_logical(x.value, nb);
      expect_per_example({sq, lv}, lv, {x}, [](const std::vector<Tensor>& v) { return v[0].squeeze(); });
      if (s.size() <= 2) {
        const Tensor tt = fg::vmap::t(x.value, nb);
        expect_per_example({tt, lv}, lv, {x}, [](const std::vector<Tensor>& v) { return v[0].t(); });
      }
    }
    // Batch dims of size 1 survive squeeze_logical.
    const Tensor ones_batch = fg::randn(physical(0, {1, 1, 4, 1}));
    EXPECT_EQ(shape_name(fg::vmap::squeeze_logical(ones_batch, 2).sizes()), "[1, 1, 4]");

    const Batched y = rnd(lv, {2, 3, 4});
    for (const Shape& perm : {Shape{2, 0, 1}, Shape{1, 0, 2}, Shape{-1, 0, -2}}) {
      const Tensor p = fg::vmap::permute(y.value, nb, perm);
      EXPECT_TRUE(shares_storage(p, y.value));
      expect_per_example({p, lv}, lv, {y}, [&](const std::vector<Tensor>& v) { return v[0].permute(perm); });
    }
    expect_error_prefix([&] { fg::vmap::t(y.value, nb); }, "fg::vmap: t: ");
    expect_error_prefix([&] { fg::vmap::permute(y.value, nb, {0, 1}); }, "fg::vmap: permute: ");
    expect_error_prefix([&] { fg::vmap::permute(y.value, nb, {0, 1, 1}); }, "fg::vmap: permute: ");

    const Batched z = rnd(lv, {3, 1});
    for (const Shape& target : {Shape{3, 4}, Shape{-1, 4}, Shape{2, 3, 4}, Shape{5, 2, -1, 6}, Shape{3, 1}}) {
      const Tensor e = fg::vmap::expand(z.value, nb, target);
      EXPECT_TRUE(shares_storage(e, z.value));
      expect_per_example({e, lv}, lv, {z}, [&](const std::vector<Tensor>& v) { return v[0].expand(target); });
    }
    expect_error_prefix([&] { fg::vmap::expand(z.value, nb, {4, 4}); }, "fg::vmap: expand: ");
    expect_error_prefix([&] { fg::vmap::expand(z.value, nb, {-1, 3, 4}); }, "fg::vmap: expand: ");
    expect_error_prefix([&] { fg::vmap::expand(z.value, nb, {4}); }, "fg::vmap: expand: ");
  }
}

// ================================================================== linear algebra

TEST_F(VmapTest, MatmulAllRankCombinations) {
  // [a logical shape, b logical shape]: every torch.matmul case (1-D x 1-D, 2-D x 1-D, 1-D x 2-D,
  // 2-D x 2-D, N-D with 1-D/2-D on either side, and broadcasting logical batch dims).
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{4}, {4}},       {{3, 4}, {4}},    {{4}, {4, 5}},          {{3, 4}, {4, 5}},
      {{2, 3, 4}, {4}}, {{4}, {2, 4, 5}}, {{2, 3, 4}, {4, 5}},    {{3, 4}, {2, 4, 5}},
      {{2, 3, 4}, {2, 4, 5}}, {{2, 1, 3, 4}, {5, 4, 2}}, {{1, 3, 4}, {2, 4, 5}},
  };
  for (const auto& [sa, sb] : cases) {
    for (Levels la : kMasks) {
      for (Levels lb : kMasks) {
        for (bool strided : {false, true}) {
          SCOPED_TRACE(shape_name(sa) + " @ " + shape_name(sb) + " levels " + levels_name(la) + ", " +
                       levels_name(lb) + (strided ? " strided" : ""));
          const Batched a = strided ? rnd_strided(la, sa) : rnd(la, sa);
          const Batched b = strided ? rnd_strided(lb, sb) : rnd(lb, sb);
          expect_per_example(fg::vmap::matmul(a, b), la | lb, {a, b},
                             [](const std::vector<Tensor>& v) { return fg::matmul(v[0], v[1]); });
        }
      }
    }
  }
}

TEST_F(VmapTest, MatmulErrors) {
  expect_error([] { fg::vmap::matmul(rnd(0b1, {3, 4}), rnd(0, {5})); },
               "fg::vmap: matmul: logical shapes [3, 4] and [5] cannot be multiplied (4 != 5)");
  expect_error([] { fg::vmap::matmul(rnd(0b1, {}), rnd(0b1, {5})); },
               "fg::vmap: matmul: both arguments need at least 1 dimension, got logical shapes [] and [5]");
  // A logical batch mismatch comes from fg::matmul, with the logical shapes in front.
  expect_error_prefix([] { fg::vmap::matmul(rnd(0b1, {2, 3, 4}), rnd(0b10, {5, 4, 2})); },
                      "fg::vmap: matmul: self of logical shape [2, 3, 4] (batched at levels {0}), other of logical "
                      "shape [5, 4, 2] (batched at levels {1}): fg::matmul: ");
  expect_error_prefix([] { fg::vmap::mm(rnd(0b1, {3}), rnd(0, {3, 2})); }, "fg::vmap: mm: ");
  expect_error_prefix([] { fg::vmap::mv(rnd(0b1, {3, 2}), rnd(0, {3, 2})); }, "fg::vmap: mv: ");
  expect_error_prefix([] { fg::vmap::dot(rnd(0b1, {3}), rnd(0, {4})); }, "fg::vmap: dot: ");
  expect_error_prefix([] { fg::vmap::bmm(rnd(0b1, {2, 3, 4}), rnd(0, {3, 4, 5})); }, "fg::vmap: bmm: ");
  expect_error_prefix([] { fg::vmap::outer(rnd(0b1, {2, 3}), rnd(0, {3})); }, "fg::vmap: outer: ");
}

TEST_F(VmapTest, MmMvDotOuterBmm) {
  for (Levels la : kMasks) {
    for (Levels lb : kMasks) {
      SCOPED_TRACE(levels_name(la) + ", " + levels_name(lb));
      {
        const Batched a = rnd(la, {3, 4}), b = rnd(lb, {4, 5});
        expect_per_example(fg::vmap::mm(a, b), la | lb, {a, b},
                           [](const std::vector<Tensor>& v) { return fg::mm(v[0], v[1]); });
      }
      {
        const Batched a = rnd(la, {3, 4}), b = rnd(lb, {4});
        expect_per_example(fg::vmap::mv(a, b), la | lb, {a, b},
                           [](const std::vector<Tensor>& v) { return fg::mv(v[0], v[1]); });
      }
      {
        const Batched a = rnd(la, {6}), b = rnd(lb, {6});
        expect_per_example(fg::vmap::dot(a, b), la | lb, {a, b},
                           [](const std::vector<Tensor>& v) { return fg::dot(v[0], v[1]); });
      }
      {
        const Batched a = rnd(la, {3}), b = rnd(lb, {5});
        expect_per_example(fg::vmap::outer(a, b), la | lb, {a, b},
                           [](const std::vector<Tensor>& v) { return fg::outer(v[0], v[1]); });
      }
      {
        const Batched a = rnd_strided(la, {2, 3, 4}), b = rnd(lb, {2, 4, 5});
        expect_per_example(fg::vmap::bmm(a, b), la | lb, {a, b},
                           [](const std::vector<Tensor>& v) { return fg::bmm(v[0], v[1]); });
      }
    }
  }
}

TEST_F(VmapTest, Linear) {
  const std::vector<Shape> inputs = {{4}, {5, 4}, {2, 5, 4}};
  for (const Shape& xs : inputs) {
    for (const Shape& ws : {Shape{3, 4}, Shape{4}}) {
      // No bias, a [out] bias, a 0-d bias, a [1] bias.
      std::vector<std::optional<Shape>> biases = {std::nullopt, Shape{}, Shape{1}};
      biases.push_back(ws.size() == 2 ? Shape{3} : Shape{});
      for (const auto& bs : biases) {
        for (Levels lx : kMasks) {
          for (Levels lw : kMasks) {
            for (Levels lbias : kMasks) {
              if (!bs && lbias) continue;
              SCOPED_TRACE("x " + shape_name(xs) + " w " + shape_name(ws) + " b " +
                           (bs ? shape_name(*bs) : std::string("none")) + " levels " + levels_name(lx) + ", " +
                           levels_name(lw) + ", " + levels_name(lbias));
              const Batched x = rnd(lx, xs), w = rnd(lw, ws);
              const Batched b = bs ? rnd(lbias, *bs) : Batched{};
              expect_per_example(fg::vmap::linear(x, w, b), lx | lw | (bs ? lbias : 0), {x, w, b},
                                 [](const std::vector<Tensor>& v) {
                                   return fg::linear(v[0], v[1],
                                                     v[2].defined() ? std::optional<Tensor>(v[2]) : std::nullopt);
                                 });
            }
          }
        }
      }
    }
  }
  expect_error_prefix([] { fg::vmap::linear(rnd(0b1, {5, 4}), rnd(0, {3, 5}), Batched{}); }, "fg::vmap: linear: ");
}

TEST_F(VmapTest, Einsum) {
  struct Case {
    std::string eq;
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{3, 4}, {4, 5}}},
      {"i,i->", {{6}, {6}}},
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
      {"ij->ji", {{3, 4}}},
      {"ij,jk", {{3, 4}, {4, 5}}},            // implicit output: ik
      {"i,i", {{6}, {6}}},                     // implicit output: scalar
      {"ba,ca", {{3, 4}, {5, 4}}},             // implicit output sorted: bc
      {"...ij,...jk->...ik", {{2, 3, 4}, {2, 4, 5}}},
      {"...ij,jk", {{2, 3, 4}, {4, 5}}},       // implicit output with an ellipsis: ...ik
      {"ii->i", {{4, 4}}},
      {"i j , j k -> i k", {{3, 4}, {4, 5}}},  // whitespace
      {"ij,jk,kl->il", {{3, 4}, {4, 5}, {5, 2}}},
  };
  for (const Case& c : cases) {
    const size_t n = c.shapes.size();
    for (Levels m0 : kMasks) {
      for (Levels m1 : kMasks) {
        for (Levels m2 : {Levels{0}, Levels{0b11}}) {
          if (n < 2 && m1) continue;
          if (n < 3 && m2) continue;
          const Levels masks[3] = {m0, m1, m2};
          SCOPED_TRACE("\"" + c.eq + "\" levels " + levels_name(m0) + ", " + levels_name(m1) + ", " +
                       levels_name(m2));
          std::vector<Batched> ops;
          Levels all = 0;
          for (size_t i = 0; i < n; ++i) {
            ops.push_back(rnd(masks[i], c.shapes[i]));
            all |= masks[i];
          }
          const std::string eq = c.eq;
          expect_per_example(fg::vmap::einsum(eq, ops), all, ops,
                             [eq](const std::vector<Tensor>& v) { return fg::einsum(eq, v); });
        }
      }
    }
  }
  // Every letter but one used: two levels cannot get fresh letters.
  std::string many = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXY";
  expect_error_prefix([&] { fg::vmap::einsum(many + "->", {rnd(0b11, Shape(51, 1))}); }, "fg::vmap: einsum: ");
  expect_error_prefix([] { fg::vmap::einsum("ij,jk->ik", {rnd(0b1, {3, 4})}); }, "fg::vmap: einsum: ");
  expect_error_prefix([] { fg::vmap::einsum("ij,jk->ik", {rnd(0b1, {3, 4}), rnd(0, {5, 2})}); },
                      "fg::vmap: einsum: equation \"ij,jk->ik\" with logical shapes [3, 4], [5, 2]: fg::einsum: ");
}

// ================================================================== cat, stack, indexing

TEST_F(VmapTest, CatAndStack) {
  for (Levels m0 : kMasks) {
    for (Levels m1 : kMasks) {
      for (Levels m2 : kMasks) {
        SCOPED_TRACE(levels_name(m0) + ", " + levels_name(m1) + ", " + levels_name(m2));
        const Levels all = m0 | m1 | m2;
        for (int64_t d : {0, 1, -1, -2}) {
          SCOPED_TRACE("dim " + std::to_string(d));
          const int64_t w = d < 0 ? d + 2 : d;
          auto sized = [&](int64_t k) { return w == 0 ? Shape{k, 4} : Shape{4, k}; };
          const std::vector<Batched> parts = {rnd(m0, sized(2)), rnd_strided(m1, sized(3)), rnd(m2, sized(1))};
          expect_per_example(fg::vmap::cat(parts, d), all, parts,
                             [d](const std::vector<Tensor>& v) { return fg::cat(v, d); });
        }
        for (int64_t d : {0, 1, 2, -1, -3}) {
          SCOPED_TRACE("stack dim " + std::to_string(d));
          const std::vector<Batched> parts = {rnd(m0, {3, 4}), rnd(m1, {3, 4}), rnd_strided(m2, {3, 4})};
          expect_per_example(fg::vmap::stack(parts, d), all, parts,
                             [d](const std::vector<Tensor>& v) { return fg::stack(v, d); });
        }
      }
    }
  }
  // Logical 1-D empty tensors are skipped, as torch.cat does.
  const std::vector<Batched> with_empty = {rnd(0b1, {2, 4}), rnd(0, {0}), rnd(0b10, {3, 4})};
  expect_per_example(fg::vmap::cat(with_empty, 0), 0b11, with_empty,
                     [](const std::vector<Tensor>& v) { return fg::cat(v, 0); });
  expect_error_prefix([] { fg::vmap::cat({rnd(0b1, {2, 4}), rnd(0, {2, 5})}, 0); }, "fg::vmap: cat: ");
  expect_error_prefix([] { fg::vmap::cat({rnd(0b1, {2, 4}), rnd(0, {4})}, 0); }, "fg::vmap: cat: ");
  expect_error_prefix([] { fg::vmap::cat({rnd(0b1, {2, 4})}, 2); }, "fg::vmap: cat: ");
  expect_error_prefix([] { fg::vmap::stack({rnd(0b1, {2, 4}), rnd(0, {4, 2})}, 0); }, "fg::vmap: stack: ");
  expect_error_prefix([] { fg::vmap::stack({rnd(0b1, {2, 4})}, 3); }, "fg::vmap: stack: ");
}

TEST_F(VmapTest, IndexSelect) {
  for (Levels ls : kMasks) {
    for (Levels li : kMasks) {
      for (int64_t d : {0, 1, 2, -1}) {
        const int64_t w = d < 0 ? d + 3 : d;
        const Shape self_shape = {4, 5, 6};
        for (const Shape& idx_shape : {Shape{7}, Shape{}, Shape{0}}) {
          SCOPED_TRACE(levels_name(ls) + ", " + levels_name(li) + " dim " + std::to_string(d) + " index " +
                       shape_name(idx_shape));
          const Batched self = rnd_strided(ls, self_shape);
          const Batched index = rint(li, idx_shape, self_shape[w]);
          expect_per_example(fg::vmap::index_select(self, d, index), ls | li, {self, index},
                             [d](const std::vector<Tensor>& v) { return fg::index_select(v[0], d, v[1]); });
        }
      }
      // A logical 0-d self (the per-example path).
      const Batched s0 = rnd(ls, {});
      const Batched i0 = rint(li, {1}, 1);
      expect_per_example(fg::vmap::index_select(s0, 0, i0), ls | li, {s0, i0},
                         [](const std::vector<Tensor>& v) { return fg::index_select(v[0], 0, v[1]); });
    }
  }
  expect_error_prefix([] { fg::vmap::index_select(rnd(0b1, {4, 5}), 0, rint(0b1, {2, 2}, 4)); },
                      "fg::vmap: index_select: ");
  expect_error_prefix([] { fg::vmap::index_select(rnd(0b1, {4, 5}), 2, rint(0b1, {2}, 4)); },
                      "fg::vmap: index_select: ");
  // An index out of bounds for one example.
  Batched bad = rint(0b1, {2}, 4);
  bad.value.select(0, 2).fill_(int64_t{9});
  expect_error_prefix([&] { fg::vmap::index_select(rnd(0b10, {4, 5}), 0, bad); }, "fg::vmap: index_select: ");
}

TEST_F(VmapTest, Gather) {
  for (Levels ls : kMasks) {
    for (Levels li : kMasks) {
      for (int64_t d : {0, 1, -1}) {
        SCOPED_TRACE(levels_name(ls) + ", " + levels_name(li) + " dim " + std::to_string(d));
        const int64_t w = d < 0 ? d + 2 : d;
        const Shape self_shape = {4, 5};
        const Shape idx_shape = w == 0 ? Shape{6, 3} : Shape{3, 7};  // smaller in the other dim
        const Batched self = rnd(ls, self_shape);
        const Batched index = rint(li, idx_shape, self_shape[w]);
        expect_per_example(fg::vmap::gather(self, d, index), ls | li, {self, index},
                           [d](const std::vector<Tensor>& v) { return fg::gather(v[0], d, v[1]); });
      }
      const Batched s0 = rnd(ls, {}), i0 = rint(li, {}, 1);
      expect_per_example(fg::vmap::gather(s0, 0, i0), ls | li, {s0, i0},
                         [](const std::vector<Tensor>& v) { return fg::gather(v[0], 0, v[1]); });
    }
  }
  expect_error_prefix([] { fg::vmap::gather(rnd(0b1, {4, 5}), 0, rint(0b1, {4}, 4)); }, "fg::vmap: gather: ");
}

TEST_F(VmapTest, ScatterAdd) {
  for (Levels ls : kMasks) {
    for (Levels li : kMasks) {
      for (Levels lr : kMasks) {
        for (int64_t d : {0, -1}) {
          SCOPED_TRACE(levels_name(ls) + ", " + levels_name(li) + ", " + levels_name(lr) + " dim " +
                       std::to_string(d));
          const int64_t w = d < 0 ? d + 2 : d;
          const Shape self_shape = {4, 5};
          const Batched self = rnd(ls, self_shape);
          const Batched index = rint(li, {3, 4}, self_shape[w]);  // repeats are likely: they must add up
          const Batched src = rnd(lr, {3, 5});
          const Tensor before = self.value.clone();
          expect_per_example(fg::vmap::scatter_add(self, d, index, src), ls | li | lr, {self, index, src},
                             [d](const std::vector<Tensor>& v) { return fg::scatter_add(v[0], d, v[1], v[2]); });
          EXPECT_TRUE(fg::equal(self.value, before));  // functional: self is not written
        }
      }
    }
  }
}

// ================================================================== losses

const Reduction kReductions[] = {Reduction::None, Reduction::Mean, Reduction::Sum};

std::string reduction_name(Reduction r) {
  return r == Reduction::None ? "none" : r == Reduction::Mean ? "mean" : "sum";
}

TEST_F(VmapTest, MseLoss) {
  const std::vector<std::pair<Shape, Shape>> shapes = {{{}, {}}, {{5}, {5}}, {{3, 4}, {3, 4}}, {{3, 4}, {4}},
                                                        {{4}, {3, 4}}};
  for (const auto& [si, st] : shapes) {
    for (Levels li : kMasks) {
      for (Levels lt : kMasks) {
        for (Reduction r : kReductions) {
          SCOPED_TRACE(shape_name(si) + " vs " + shape_name(st) + " levels " + levels_name(li) + ", " +
                       levels_name(lt) + " " + reduction_name(r));
          const Batched input = rnd(li, si), target = rnd_strided(lt, st);
          expect_per_example(fg::vmap::mse_loss(input, target, r), li | lt, {input, target},
                             [r](const std::vector<Tensor>& v) { return fg::mse_loss(v[0], v[1], r); });
        }
      }
    }
  }
  expect_error_prefix([] { fg::vmap::mse_loss(rnd(0b1, {3}), rnd(0, {4}), Reduction::Mean); },
                      "fg::vmap: mse_loss: ");
}

// Random targets in [0, C) with some entries set to ignore_index.
Batched targets_with_ignored(Levels levels, const Shape& logical, int64_t C, int64_t ignore_index) {
  Batched t = rint(levels, logical, C);
  const Tensor drop = fg::rand(t.value.sizes(), TensorOptions(fg::kDouble)) < 0.25;
  t.value = fg::where(drop, fg::scalar_tensor(ignore_index, TensorOptions(fg::kLong)), t.value);
  return t;
}

TEST_F(VmapTest, NllLossAndCrossEntropy) {
  const int64_t C = 5;
  // [input logical shape, target logical shape]
  const std::vector<std::pair<Shape, Shape>> shapes = {{{C}, {}}, {{4, C}, {4}}, {{3, C, 2}, {3, 2}}};
  for (const auto& [si, st] : shapes) {
    for (int weight_kind = 0; weight_kind < 3; ++weight_kind) {  // none, shared, batched at 0b10
      for (Levels li : kMasks) {
        for (Levels lt : kMasks) {
          for (Reduction r : kReductions) {
            for (int64_t ignore : {int64_t{-100}, int64_t{2}}) {
              SCOPED_TRACE(shape_name(si) + " weight " + std::to_string(weight_kind) + " levels " +
                           levels_name(li) + ", " + levels_name(lt) + " " + reduction_name(r) + " ignore " +
                           std::to_string(ignore));
              const Batched logits = rnd(li, si);
              const Batched target = targets_with_ignored(lt, st, C, ignore);
              Batched weight;
              if (weight_kind == 1) weight = {fg::rand({C}, TensorOptions(fg::kDouble)) + 0.5, 0};
              if (weight_kind == 2) weight = {fg::rand({2, C}, TensorOptions(fg::kDouble)) + 0.5, 0b10};
              const Levels all = li | lt | weight.levels;
              const Batched logp = {fg::log_softmax(logits.value, -1 - static_cast<int64_t>(si.size() == 3)),
                                    li};
              auto opt = [](const Tensor& w) { return w.defined() ? std::optional<Tensor>(w) : std::nullopt; };
              expect_per_example(fg::vmap::nll_loss(logp, target, weight, r, ignore), all, {logp, target, weight},
                                 [&](const std::vector<Tensor>& v) {
                                   return fg::nll_loss(v[0], v[1], opt(v[2]), r, ignore);
                                 });
              expect_per_example(fg::vmap::cross_entropy(logits, target, weight, r, ignore), all,
                                 {logits, target, weight}, [&](const std::vector<Tensor>& v) {
                                   return fg::cross_entropy(v[0], v[1], opt(v[2]), r, ignore);
                                 });
            }
          }
        }
      }
    }
  }
  // Every target of one example ignored: mean is 0/0 = nan for that example only.
  Batched t = rint(0b1, {4}, C);
  t.value.select(0, 1).fill_(int64_t{-100});
  const Batched x = rnd(0, {4, C});
  expect_per_example(fg::vmap::nll_loss(x, t, Batched{}, Reduction::Mean, -100), 0b1, {x, t},
                     [](const std::vector<Tensor>& v) { return fg::nll_loss(v[0], v[1]); });
  EXPECT_TRUE(fg::isclose(fg::vmap::nll_loss(x, t, Batched{}, Reduction::Mean, -100).value.select(0, 1),
                          fg::scalar_tensor(std::nan(""), TensorOptions(fg::kDouble)), 1e-5, 1e-8, true)
                  .item<bool>());

  expect_error([] { fg::vmap::nll_loss(rnd(0b1, {4, C}), rint(0b1, {3}, C), Batched{}, Reduction::Mean, -100); },
               "fg::vmap: nll_loss: expected a target of logical shape [4] for an input of logical shape [4, 5], "
               "got [3]");
  Batched oob = rint(0b1, {4}, C);
  oob.value.select(0, 2).select(0, 1).fill_(int64_t{7});
  expect_error([&] { fg::vmap::nll_loss(rnd(0b1, {4, C}), oob, Batched{}, Reduction::Sum, -100); },
               "fg::vmap: nll_loss: target 7 is out of bounds for 5 classes");
  expect_error([&] { fg::vmap::cross_entropy(rnd(0b1, {4, C}), oob, Batched{}, Reduction::Sum, -100); },
               "fg::vmap: cross_entropy: target 7 is out of bounds for 5 classes");
  expect_error_prefix([] { fg::vmap::nll_loss(rnd(0b1, {4, C}), rint(0, {4}, C), rnd(0, {4}), Reduction::Sum, -100); },
                      "fg::vmap: nll_loss: expected a weight of logical shape [5]");
}

TEST_F(VmapTest, Float32KeepsItsDtype) {
  const Batched a = {fg::randn({3, 4, 5}), 0b1}, b = {fg::randn({5, 2}), 0};
  const Batched m = fg::vmap::matmul(a, b);
  EXPECT_EQ(m.value.dtype(), fg::kFloat);
  expect_per_example(m, 0b1, {a, b}, [](const std::vector<Tensor>& v) { return fg::matmul(v[0], v[1]); }, 1e-5,
                     1e-6);
  const Batched logits = {fg::randn({3, 4, 6}), 0b1};
  const Batched target = {fg::zeros({4}, TensorOptions(fg::kLong)), 0};
  const Batched weight = {fg::rand({3, 6}) + 0.5, 0b1};
  for (Reduction r : kReductions) {
    const Batched ce = fg::vmap::cross_entropy(logits, target, weight, r, -100);
    EXPECT_EQ(ce.value.dtype(), fg::kFloat);
    expect_per_example(ce, 0b1, {logits, target, weight},
                       [r](const std::vector<Tensor>& v) { return fg::cross_entropy(v[0], v[1], v[2], r); }, 1e-5,
                       1e-6);
  }
  const Batched mse = fg::vmap::mse_loss(a, {fg::randn({4, 5}), 0}, Reduction::Mean);
  EXPECT_EQ(mse.value.dtype(), fg::kFloat);
}

TEST_F(VmapTest, FallbackErrorsNameTheRule) {
  Batched index = rint(0b1, {1}, 1);
  index.value.select(0, 1).fill_(int64_t{4});
  expect_error_prefix([&] { fg::vmap::index_select(rnd(0b1, {}), 0, index); },
                      "fg::vmap: index_select: example [1] of batch sizes [3]: fg::index_select: ");
}

// ================================================================== randomness

TEST_F(VmapTest, DropoutSame) {
  const Batched x = rnd(0b11, {4, 5});
  // The same mask for every example: each example equals fg::dropout on it from the same seed.
  for (double p : {0.3, 0.5}) {
    fg::manual_seed(77);
    const Tensor r = fg::vmap::dropout_same(x.value, 2, p, true);
    ASSERT_EQ(shape_name(r.sizes()), shape_name(x.value.sizes()));
    const Tensor kept0 = r[0][0] != 0;
    bool some_dropped = false, some_kept = false;
    for (int64_t i0 = 0; i0 < 3; ++i0) {
      for (int64_t i1 = 0; i1 < 2; ++i1) {
        fg::manual_seed(77);
        const Tensor expected = fg::dropout(x.value[i0][i1], p, true);
        EXPECT_TRUE(fg::allclose(r[i0][i1], expected, 1e-12, 0));
        EXPECT_TRUE(fg::equal(r[i0][i1] != 0, kept0));
      }
    }
    some_dropped = fg::sum(kept0.to(fg::kLong)).item<int64_t>() < 20;
    some_kept = fg::sum(kept0.to(fg::kLong)).item<int64_t>() > 0;
    EXPECT_TRUE(some_dropped && some_kept);
  }
  EXPECT_TRUE(fg::equal(fg::vmap::dropout_same(x.value, 2, 0.0, true), x.value));
  EXPECT_TRUE(fg::equal(fg::vmap::dropout_same(x.value, 2, 0.7, false), x.value));
  EXPECT_TRUE(fg::equal(fg::vmap::dropout_same(x.value, 2, 1.0, true), fg::zeros_like(x.value)));
  expect_error([&] { fg::vmap::dropout_same(x.value, 2, 1.5, true); },
               "fg::vmap: dropout_same: dropout probability has to be between 0 and 1, but got 1.5");
}

TEST_F(VmapTest, BernoulliSame) {
  const Tensor p = fg::rand({3, 8}, TensorOptions(fg::kDouble));
  fg::manual_seed(5);
  const Tensor r = fg::vmap::bernoulli_same(p, 1);
  ASSERT_EQ(shape_name(r.sizes()), "[3, 8]");
  for (int64_t i = 0; i < 3; ++i) {
    fg::manual_seed(5);
    EXPECT_TRUE(fg::equal(r[i], fg::bernoulli(p[i])));
  }
  // With the same probabilities, every example draws the same values.
  const Tensor q = fg::full({4, 50}, 0.5, TensorOptions(fg::kDouble));
  const Tensor s = fg::vmap::bernoulli_same(q, 1);
  for (int64_t i = 1; i < 4; ++i) EXPECT_TRUE(fg::equal(s[i], s[0]));
  expect_error_prefix([] { fg::vmap::bernoulli_same(fg::full({2, 3}, 1.5, TensorOptions(fg::kDouble)), 1); },
                      "fg::vmap: bernoulli_same: ");
}

// ================================================================== fallback and chunking

TEST_F(VmapTest, PerExample) {
  // An op without a batching rule: a matrix-vector product scaled by the matrix's norm.
  const Ref op = [](const std::vector<Tensor>& v) { return fg::mv(v[0], v[1]) * v[0].norm() + v[2]; };
  for (Levels la : kMasks) {
    for (Levels lb : kMasks) {
      for (Levels lc : kMasks) {
        SCOPED_TRACE(levels_name(la) + ", " + levels_name(lb) + ", " + levels_name(lc));
        const std::vector<Batched> ops = {rnd_strided(la, {3, 4}), rnd(lb, {4}), rnd(lc, {})};
        int calls = 0;
        const Batched r = fg::vmap::per_example(ops, [&](const std::vector<Tensor>& v) {
          ++calls;
          return op(v);
        });
        const Levels all = la | lb | lc;
        int64_t examples = 1;
        for (int64_t s : batch_sizes(all)) examples *= s;
        EXPECT_EQ(calls, examples);
        expect_per_example(r, all, ops, op);
      }
    }
  }
  // A scalar result per example.
  const std::vector<Batched> ops = {rnd(0b11, {5})};
  expect_per_example(fg::vmap::per_example(ops, [](const std::vector<Tensor>& v) { return v[0].norm(); }), 0b11, ops,
                     [](const std::vector<Tensor>& v) { return fg::norm(v[0]); });
  expect_error_prefix(
      [] {
        fg::vmap::per_example({rnd(0b1, {3})}, [](const std::vector<Tensor>& v) { return fg::dot(v[0], v[0][0]); });
      },
      "fg::vmap: per_example: ");
}

TEST_F(VmapTest, Chunked) {
  const int64_t B = 5;
  const Tensor x = fg::randn({B, 3}, TensorOptions(fg::kDouble));     // batch at dim 0
  const Tensor y = fg::randn({3}, TensorOptions(fg::kDouble));        // unbatched
  const Tensor z = fg::randn({3, B, 2}, TensorOptions(fg::kDouble));  // batch at dim 1
  // The body of a vmapped function over a chunk of c examples: outputs with the batch at 0 and 1.
  const auto body = [&](const std::vector<Tensor>& v) -> std::vector<Tensor> {
    return {v[0] * 2 + v[1], v[2].sum(std::vector<int64_t>{2}), v[0].t()};
  };
  const std::vector<Tensor> whole = body({x, y, z});  // [B, 3], [3, B], [3, B]
  for (int64_t chunk : {1, 2, 4, 5, 9}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    std::vector<int64_t> seen;
    const std::vector<Tensor> out =
        fg::vmap::chunked(chunk, B, {{x, 0}, {y, -1}, {z, 1}}, {0, 1, 1}, [&](const std::vector<Tensor>& v) {
          seen.push_back(v[0].size(0));
          EXPECT_TRUE(v[1].is_same(y));
          EXPECT_EQ(v[2].size(1), v[0].size(0));
          return body(v);
        });
    std::vector<int64_t> expected_sizes;
    for (int64_t s = 0; s < B; s += chunk) expected_sizes.push_back(std::min(chunk, B - s));
    EXPECT_EQ(seen, expected_sizes);
    ASSERT_EQ(out.size(), 3u);
    for (size_t j = 0; j < 3; ++j) {
      EXPECT_EQ(shape_name(out[j].sizes()), shape_name(whole[j].sizes()));
      EXPECT_TRUE(fg::allclose(out[j], whole[j]));
    }
  }
  // chunk >= batch: one call on the arguments themselves.
  fg::vmap::chunked(B, B, {{x, 0}, {y, -1}}, {0}, [&](const std::vector<Tensor>& v) {
    EXPECT_TRUE(v[0].is_same(x));
    return std::vector<Tensor>{v[0]};
  });
  expect_error_prefix(
      [&] { fg::vmap::chunked(0, B, {{x, 0}}, {0}, [](const std::vector<Tensor>& v) { return v; }); },
      "fg::vmap: chunked: ");
  expect_error_prefix(
      [&] { fg::vmap::chunked(2, B, {{x, 0}}, {0, 1}, [](const std::vector<Tensor>& v) { return v; }); },
      "fg::vmap: chunked: ");
}

}  // namespace
