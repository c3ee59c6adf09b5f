// The fg::ad helpers of the derivative rules (slice/narrow/diagonal/index_select/nll_loss
// backward, inverse_permutation, norm_order, class_dim) against explicit index loops over the
// scalar reference, with non-contiguous gradients and every dim; their batching rules
// (fg::vmap::ad) against the loop of the unbatched helper over every example, for operands
// batched at the level masks 0b0, 0b1, 0b10 and 0b11.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "funcgen/runtime/ad.h"
#include "funcgen/runtime/vmap.h"
#include "reference.h"

namespace {

using fg::Reduction;
using fg::Tensor;
using fg::vmap::Batched;
using fg::vmap::Levels;
using ref::Array;
using ref::Layout;
using ref::Shape;

const std::vector<fg::ScalarType> kFloating = {fg::kFloat, fg::kDouble};
const std::vector<Layout> kGradLayouts = {Layout::Contiguous, Layout::Transposed, Layout::Strided};

// A random gradient of `shape` laid out as `layout`, and its values.
struct Grad {
  Tensor t;
  Array a;
};
Grad random_grad(const Shape& shape, fg::ScalarType dt, Layout layout, ref::Rng& rng) {
  ref::Input in = ref::make_input(shape, dt, layout, rng);
  return {in.view, ref::from_tensor(in.view)};
}

// Python slice bounds, as fg::slice clamps them.
int64_t clamp_bound(int64_t v, int64_t n) { return std::min(std::max(v < 0 ? v + n : v, int64_t{0}), n); }

TEST(SliceBackward, MatchesReference) {
  ref::Rng rng(11);
  const Shape sizes = {4, 5, 6};
  struct Bounds {
    std::optional<int64_t> start, end;
    int64_t step;
  };
  const std::vector<Bounds> cases = {{std::nullopt, std::nullopt, 1}, {1, 3, 1}, {0, std::nullopt, 2},
                                     {-3, std::nullopt, 1},           {1, -1, 2}, {-100, 100, 3},
                                     {3, 2, 1}};
  for (fg::ScalarType dt : kFloating)
    for (Layout layout : kGradLayouts)
      for (int64_t dim = -3; dim < 3; ++dim)
        for (const Bounds& b : cases) {
          SCOPED_TRACE(std::string(fg::toString(dt)) + " " + ref::layout_name(layout) + " dim " + std::to_string(dim) +
                       " start " + (b.start ? std::to_string(*b.start) : "none") + " end " +
                       (b.end ? std::to_string(*b.end) : "none") + " step " + std::to_string(b.step));
          const int64_t d = ref::wrap(dim, 3), n = sizes[d];
          const int64_t s = b.start ? clamp_bound(*b.start, n) : 0;
          const int64_t e = std::max(b.end ? clamp_bound(*b.end, n) : n, s);
          Shape gshape = sizes;
          gshape[d] = (e - s + b.step - 1) / b.step;
          const Grad g = random_grad(gshape, dt, layout, rng);
          Array want(sizes);
          ref::for_each_index(gshape, [&](const Shape& i) {
            Shape dst = i;
            dst[d] = s + i[d] * b.step;
            want.at(dst) = g.a.at(i);
          });
          EXPECT_TENSOR_EQ(fg::ad::slice_backward(g.t, sizes, dim, b.start, b.end, b.step), want, dt);
        }
}

TEST(NarrowBackward, MatchesReference) {
  ref::Rng rng(12);
  const Shape sizes = {4, 5, 6};
  for (fg::ScalarType dt : kFloating)
    for (Layout layout : kGradLayouts)
      for (int64_t dim = -3; dim < 3; ++dim) {
        const int64_t d = ref::wrap(dim, 3), n = sizes[d];
        for (int64_t start = -n; start < n; ++start)
          for (int64_t length : {int64_t{0}, int64_t{1}, int64_t{2}}) {
            const int64_t s = start < 0 ? start + n : start;
            if (s + length > n) continue;
            SCOPED_TRACE(std::string(fg::toString(dt)) + " " + ref::layout_name(layout) + " dim " +
                         std::to_string(dim) + " start " + std::to_string(start) + " length " + std::to_string(length));
            Shape gshape = sizes;
            gshape[d] = length;
            const Grad g = random_grad(gshape, dt, layout, rng);
            Array want(sizes);
            ref::for_each_index(gshape, [&](const Shape& i) {
              Shape dst = i;
              dst[d] = s + i[d];
              want.at(dst) = g.a.at(i);
            });
            EXPECT_TENSOR_EQ(fg::ad::narrow_backward(g.t, sizes, dim, start, length), want, dt);
          }
      }
}

TEST(DiagonalBackward, MatchesReference) {
  ref::Rng rng(13);
  for (const Shape& sizes : {Shape{4, 4}, Shape{3, 4, 5}}) {
    const int64_t nd = static_cast<int64_t>(sizes.size());
    for (fg::ScalarType dt : kFloating)
      for (int64_t dim1 = -nd; dim1 < nd; ++dim1)
        for (int64_t dim2 = -nd; dim2 < nd; ++dim2) {
          const int64_t a = ref::wrap(dim1, nd), b = ref::wrap(dim2, nd);
          if (a == b) continue;
          for (int64_t offset = -3; offset <= 3; ++offset) {
            SCOPED_TRACE(std::string(fg::toString(dt)) + " shape " + ref::shape_str(sizes) + " offset " +
                         std::to_string(offset) + " dims " + std::to_string(dim1) + ", " + std::to_string(dim2));
            const int64_t len = std::max<int64_t>(
                offset >= 0 ? std::min(sizes[a], sizes[b] - offset) : std::min(sizes[a] + offset, sizes[b]), 0);
            // The diagonal's shape: the other dims in order, then the diagonal.
            Shape gshape, others;
            for (int64_t k = 0; k < nd; ++k)
              if (k != a && k != b) {
                gshape.push_back(sizes[k]);
                others.push_back(k);
              }
            gshape.push_back(len);
            const Grad g = random_grad(gshape, dt, Layout::Transposed, rng);
            Array want(sizes);
            ref::for_each_index(gshape, [&](const Shape& i) {
              Shape dst(sizes.size(), 0);
              for (size_t k = 0; k < others.size(); ++k) dst[others[k]] = i[k];
              const int64_t j = i.back();
              dst[a] = j + (offset < 0 ? -offset : 0);
              dst[b] = j + (offset > 0 ? offset : 0);
              want.at(dst) = g.a.at(i);
            });
            EXPECT_TENSOR_EQ(fg::ad::diagonal_backward(g.t, sizes, offset, dim1, dim2), want, dt);
          }
        }
  }
}

TEST(IndexSelectBackward, MatchesReferenceAndAccumulatesRepeats) {
  ref::Rng rng(14);
  const Shape sizes = {4, 5, 3};
  for (fg::ScalarType dt : kFloating)
    for (Layout layout : kGradLayouts)
      for (int64_t dim = -3; dim < 3; ++dim) {
        const int64_t d = ref::wrap(dim, 3);
        for (const std::vector<int64_t>& index :
             {std::vector<int64_t>{}, std::vector<int64_t>{1}, std::vector<int64_t>{2, 0, 2, 2},
              std::vector<int64_t>{0, 1, 2}}) {
          SCOPED_TRACE(std::string(fg::toString(dt)) + " " + ref::layout_name(layout) + " dim " +
                       std::to_string(dim) + " index of " + std::to_string(index.size()));
          Shape gshape = sizes;
          gshape[d] = static_cast<int64_t>(index.size());
          const Grad g = random_grad(gshape, dt, layout, rng);
          Array want(sizes);
          ref::for_each_index(gshape, [&](const Shape& i) {
            Shape dst = i;
            dst[d] = index[static_cast<size_t>(i[d])];
            want.at(dst) += g.a.at(i);
          });
          // Repeated indices accumulate in an order of their own: exact up to rounding.
          EXPECT_TENSOR_NEAR(fg::ad::index_select_backward(g.t, sizes, dim, fg::tensor(index)), want, dt,
                             ref::tol_for(dt));
        }
      }
  // A 0-d index selects one slice with the dim kept (size 1).
  const Tensor g = fg::tensor({{1.0, 2.0}}, fg::kDouble);  // [1, 2]
  const Tensor idx = fg::scalar_tensor(2, fg::kLong);
  EXPECT_TENSOR_EQ(fg::ad::index_select_backward(g, {3, 2}, 0, idx), Array({3, 2}, {0, 0, 0, 0, 1, 2}), fg::kDouble);
}

// nll_loss's input gradient, element by element: -w[t] * g at (n, t, d...), divided by the total
// weight of the kept targets for Mean, zero at ignored targets.
Array ref_nll_loss_backward(const Array& g, const Shape& input, const std::vector<int64_t>& target,
                            const std::vector<double>* weight, Reduction reduction, int64_t ignore_index) {
  const bool batched = input.size() >= 2;
  Shape tshape;
  if (batched) {
    tshape.push_back(input[0]);
    tshape.insert(tshape.end(), input.begin() + 2, input.end());
  }
  double total = 0;
  for (int64_t t : target)
    if (t != ignore_index) total += weight ? (*weight)[static_cast<size_t>(t)] : 1.0;
  Array r(input);
  int64_t k = 0;
  ref::for_each_index(tshape, [&](const Shape& i) {
    const int64_t t = target[static_cast<size_t>(k)];
    const double gi = reduction == Reduction::None ? g.data[static_cast<size_t>(k)] : g.data[0];
    ++k;
    if (t == ignore_index) return;
    const double w = weight ? (*weight)[static_cast<size_t>(t)] : 1.0;
    Shape dst;
    if (batched) {
      dst = {i[0], t};
      dst.insert(dst.end(), i.begin() + 1, i.end());
    } else {
      dst = {t};
    }
    r.at(dst) = -w * gi / (reduction == Reduction::Mean ? total : 1.0);
  });
  return r;
}

TEST(NllLossBackward, MatchesReference) {
  ref::Rng rng(15);
  const std::vector<double> weight = {0.5, 2.0, 1.0, 1.5, 3.0};
  struct Case {
    Shape input;
    std::vector<int64_t> target;
  };
  const std::vector<Case> cases = {{{5}, {3}}, {{4, 5}, {0, 4, 4, 2}}, {{3, 5, 2}, {1, 0, 4, 4, 2, 1}}};
  for (fg::ScalarType dt : kFloating)
    for (const Case& c : cases)
      for (Reduction reduction : {Reduction::None, Reduction::Sum, Reduction::Mean})
        for (bool with_weight : {false, true})
          for (int64_t ignore_index : {int64_t{-100}, int64_t{4}}) {
            SCOPED_TRACE(std::string(fg::toString(dt)) + " input " + ref::shape_str(c.input) + " reduction " +
                         std::to_string(static_cast<int>(reduction)) + (with_weight ? " weight" : "") + " ignore " +
                         std::to_string(ignore_index));
            Shape tshape;
            if (c.input.size() >= 2) {
              tshape.push_back(c.input[0]);
              tshape.insert(tshape.end(), c.input.begin() + 2, c.input.end());
            }
            const Tensor target = fg::tensor(c.target).reshape(tshape);
            const Grad g = random_grad(reduction == Reduction::None ? tshape : Shape{}, dt, Layout::Contiguous, rng);
            const Tensor input = fg::zeros(c.input, dt);
            const std::optional<Tensor> w =
                with_weight ? std::optional<Tensor>(fg::tensor(weight, fg::kDouble)) : std::nullopt;
            const Array want =
                ref_nll_loss_backward(g.a, c.input, c.target, with_weight ? &weight : nullptr, reduction, ignore_index);
            EXPECT_TENSOR_NEAR(fg::ad::nll_loss_backward(g.t, input, target, w, reduction, ignore_index), want, dt,
                               ref::tol_for(dt));
          }
}

TEST(InversePermutation, UndoesThePermutation) {
  EXPECT_EQ(fg::ad::inverse_permutation({2, 0, 1}), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(fg::ad::inverse_permutation({-1, 0, -2}), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(fg::ad::inverse_permutation({0}), (std::vector<int64_t>{0}));
  EXPECT_EQ(fg::ad::inverse_permutation({}), (std::vector<int64_t>{}));
  const std::vector<int64_t> p = {3, 1, 0, 2};
  const std::vector<int64_t> inv = fg::ad::inverse_permutation(p);
  for (size_t i = 0; i < p.size(); ++i) EXPECT_EQ(inv[static_cast<size_t>(p[i])], static_cast<int64_t>(i));
  const Tensor x = fg::randn({2, 3, 4, 5}, fg::kDouble);
  EXPECT_TRUE(fg::equal(x.permute(p).permute(inv), x));
  EXPECT_THROW(fg::ad::inverse_permutation({0, 0}), fg::Error);
  EXPECT_THROW(fg::ad::inverse_permutation({0, 2}), fg::Error);
}

TEST(NormOrder, GivesTheOrderAndRejectsTheUncoveredOnes) {
  EXPECT_EQ(fg::ad::norm_order(std::nullopt), 2.0);
  EXPECT_EQ(fg::ad::norm_order(2), 2.0);
  EXPECT_EQ(fg::ad::norm_order(1), 1.0);
  EXPECT_EQ(fg::ad::norm_order(3.5), 3.5);
  for (double p : {0.0, 0.5, -1.0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::quiet_NaN()})
    EXPECT_THROW(fg::ad::norm_order(p), fg::Error) << p;
}

TEST(ClassDim, IsTheDimOfTheClasses) {
  EXPECT_EQ(fg::ad::class_dim(1), 0);
  EXPECT_EQ(fg::ad::class_dim(2), 1);
  EXPECT_EQ(fg::ad::class_dim(4), 1);
}

// ------------------------------------------------------------------ batching rules (fg::vmap::ad)

constexpr int64_t kLevelSize[2] = {3, 2};
constexpr Levels kMasks[] = {0b0, 0b1, 0b10, 0b11};

Shape physical(Levels levels, const Shape& logical) {
  Shape s;
  for (int l = 0; l < 2; ++l)
    if (levels & (1u << l)) s.push_back(kLevelSize[l]);
  s.insert(s.end(), logical.begin(), logical.end());
  return s;
}

Batched rnd(Levels levels, const Shape& logical) { return {fg::randn(physical(levels, logical), fg::kDouble), levels}; }

// Random class indices in [0, hi) of the given physical shape (int64).
Tensor randint(int64_t hi, const Shape& shape) {
  static ref::Rng rng(99);
  std::vector<int64_t> values(static_cast<size_t>(ref::numel_of(shape)));
  for (int64_t& v : values) v = rng.integer(0, hi - 1);
  return fg::tensor(values).reshape(shape);
}

// The example (i0, i1) of x: its slice at each level it is batched at.
Tensor example(const Batched& x, int64_t i0, int64_t i1) {
  Tensor t = x.value;
  if (x.levels & 0b1) t = t.select(0, i0);
  if (x.levels & 0b10) t = t.select(0, i1);
  return t;
}

// `rule` on the batched operands equals `op` on every example's slices, batched at their union.
void expect_loop(const std::vector<Batched>& ops, const std::function<Batched()>& rule,
                 const std::function<Tensor(const std::vector<Tensor>&)>& op) {
  Levels all = 0;
  for (const Batched& b : ops) all |= b.levels;
  const Batched r = rule();
  ASSERT_EQ(r.levels, all);
  for (int64_t i0 = 0; i0 < kLevelSize[0]; ++i0)
    for (int64_t i1 = 0; i1 < kLevelSize[1]; ++i1) {
      std::vector<Tensor> slices;
      for (const Batched& b : ops) slices.push_back(example(b, i0, i1));
      const Tensor want = op(slices);
      const Tensor got = example(r, i0, i1);
      ASSERT_EQ(got.sizes(), want.sizes()) << "example " << i0 << ", " << i1;
      // (Mean over targets that are all ignored is 0/0 = nan, batched or not.)
      EXPECT_TRUE(fg::allclose(got, want, 1e-12, 1e-12, /*equal_nan=*/true)) << "example " << i0 << ", " << i1;
      if (!(all & 0b10)) break;
    }
}

TEST(BatchedAdHelpers, ViewBackwardsAreTheLoop) {
  fg::manual_seed(3);
  const Shape sizes = {4, 5, 3};
  for (Levels m : kMasks) {
    SCOPED_TRACE("levels " + std::to_string(m));
    const Batched gs = rnd(m, {4, 2, 3});
    expect_loop({gs}, [&] { return fg::vmap::ad::slice_backward(gs, sizes, 1, 1, std::nullopt, 2); },
                [&](const std::vector<Tensor>& v) { return fg::ad::slice_backward(v[0], sizes, 1, 1, std::nullopt, 2); });
    expect_loop({gs}, [&] { return fg::vmap::ad::slice_backward(gs, sizes, -2, -4, -2, 1); },
                [&](const std::vector<Tensor>& v) { return fg::ad::slice_backward(v[0], sizes, -2, -4, -2, 1); });
    expect_loop({gs}, [&] { return fg::vmap::ad::narrow_backward(gs, sizes, -2, -3, 2); },
                [&](const std::vector<Tensor>& v) { return fg::ad::narrow_backward(v[0], sizes, -2, -3, 2); });
    const Batched gd = rnd(m, {5, 2});
    expect_loop({gd}, [&] { return fg::vmap::ad::diagonal_backward(gd, sizes, 1, 0, 2); },
                [&](const std::vector<Tensor>& v) { return fg::ad::diagonal_backward(v[0], sizes, 1, 0, 2); });
    const Batched gn = rnd(m, {5, 2});
    expect_loop({gn}, [&] { return fg::vmap::ad::diagonal_backward(gn, sizes, -1, -1, -3); },
                [&](const std::vector<Tensor>& v) { return fg::ad::diagonal_backward(v[0], sizes, -1, -1, -3); });
  }
}

TEST(BatchedAdHelpers, IndexSelectBackwardIsTheLoop) {
  fg::manual_seed(4);
  const Shape sizes = {4, 5, 3};
  for (Levels gm : kMasks)
    for (Levels im : kMasks)
      for (int64_t dim : {0, 1, -1}) {
        SCOPED_TRACE("g levels " + std::to_string(gm) + " index levels " + std::to_string(im) + " dim " +
                     std::to_string(dim));
        const int64_t d = ref::wrap(dim, 3);
        const Batched index{randint(sizes[d], physical(im, {4})), im};
        Shape gshape = sizes;
        gshape[d] = 4;
        const Batched g = rnd(gm, gshape);
        expect_loop({g, index}, [&] { return fg::vmap::ad::index_select_backward(g, sizes, dim, index); },
                    [&](const std::vector<Tensor>& v) { return fg::ad::index_select_backward(v[0], sizes, dim, v[1]); });
      }
}

// The gradients of matmul and linear at every level of their three operands, the one read for its
// shape only included (batched where the gradient is not, as a weight passed unbatched to a
// pullback over a jacobian's basis).
TEST(BatchedAdHelpers, ProductBackwardsAreTheLoopAtEveryLevel) {
  fg::manual_seed(6);
  struct Ranks { Shape a, b, out; };
  const std::vector<Ranks> cases = {{{4, 3}, {3}, {4}}, {{3}, {3, 5}, {5}}, {{4, 3}, {3, 5}, {4, 5}}, {{3}, {3}, {}}};
  for (Levels gm : kMasks)
    for (Levels am : kMasks)
      for (Levels bm : kMasks)
        for (const Ranks& c : cases) {
          SCOPED_TRACE("levels " + std::to_string(gm) + " " + std::to_string(am) + " " + std::to_string(bm) + ", a " +
                       std::to_string(c.a.size()) + "-d, b " + std::to_string(c.b.size()) + "-d");
          const Batched g = rnd(gm, c.out), a = rnd(am, c.a), b = rnd(bm, c.b);
          expect_loop({g, a, b}, [&] { return fg::vmap::ad::matmul_backward_self(g, a, b); },
                      [](const std::vector<Tensor>& v) { return fg::ad::matmul_backward_self(v[0], v[1], v[2]); });
          expect_loop({g, a, b}, [&] { return fg::vmap::ad::matmul_backward_other(g, a, b); },
                      [](const std::vector<Tensor>& v) { return fg::ad::matmul_backward_other(v[0], v[1], v[2]); });
        }
  for (Levels gm : kMasks)
    for (Levels xm : kMasks)
      for (Levels wm : kMasks) {
        SCOPED_TRACE("levels " + std::to_string(gm) + " " + std::to_string(xm) + " " + std::to_string(wm));
        const Batched g = rnd(gm, {2, 4}), x = rnd(xm, {2, 3}), w = rnd(wm, {4, 3});
        expect_loop({g, x, w}, [&] { return fg::vmap::ad::linear_backward_weight(g, x, w); },
                    [](const std::vector<Tensor>& v) { return fg::ad::linear_backward_weight(v[0], v[1], v[2]); });
      }
}

TEST(BatchedAdHelpers, NllLossBackwardIsTheLoop) {
  fg::manual_seed(5);
  for (const Shape& input_shape : {Shape{5}, Shape{4, 5}, Shape{3, 5, 2}}) {
    Shape tshape;
    if (input_shape.size() >= 2) {
      tshape.push_back(input_shape[0]);
      tshape.insert(tshape.end(), input_shape.begin() + 2, input_shape.end());
    }
    for (Reduction reduction : {Reduction::None, Reduction::Sum, Reduction::Mean})
      for (Levels gm : kMasks)
        for (Levels tm : {Levels{0b0}, Levels{0b10}})
          for (Levels wm : {Levels{0b0}, Levels{0b1}})
            for (Levels xm : {Levels{0b0}, Levels{0b1}})
              for (bool with_weight : {false, true}) {
                SCOPED_TRACE("input " + ref::shape_str(input_shape) + " reduction " +
                             std::to_string(static_cast<int>(reduction)) + " levels g " + std::to_string(gm) +
                             " target " + std::to_string(tm) + " weight " + std::to_string(wm) + " input " +
                             std::to_string(xm) + (with_weight ? " with weight" : ""));
                const Batched g = rnd(gm, reduction == Reduction::None ? tshape : Shape{});
                const Batched input = rnd(xm, input_shape);
                // Class 4 is ignored where it is drawn.
                const Batched target{randint(5, physical(tm, tshape)), tm};
                const Batched weight = with_weight ? Batched{fg::rand(physical(wm, {5}), fg::kDouble) + 0.5, wm}
                                                   : Batched{};
                std::vector<Batched> ops{g, input, target};
                if (with_weight) ops.push_back(weight);
                expect_loop(
                    ops, [&] { return fg::vmap::ad::nll_loss_backward(g, input, target, weight, reduction, 4); },
                    [&](const std::vector<Tensor>& v) {
                      return fg::ad::nll_loss_backward(
                          v[0], v[1], v[2], with_weight ? std::optional<Tensor>(v[3]) : std::nullopt, reduction, 4);
                    });
              }
  }
  // No weight, spelled as generated code spells std::nullopt.
  const Batched g = rnd(0b1, {}), input = rnd(0, {4, 5});
  const Batched target{fg::tensor(std::vector<int64_t>{0, 1, 2, 3}), 0};
  const Batched r = fg::vmap::ad::nll_loss_backward(g, input, target, {std::nullopt, 0}, Reduction::Sum, -100);
  EXPECT_TRUE(fg::equal(r.value, fg::vmap::ad::nll_loss_backward(g, input, target, {}, Reduction::Sum, -100).value));
}

}  // namespace

// The tapes of gradients of reverse mode over a loop's reverse pass: tape_add grows the tape to the
// trip, adds to what is there and skips a gradient without a value; tape_pop takes entries off
// last first, an entry without a value as it is.
TEST(TapeGradients, AddGrowsAndAccumulatesPopTakesTheLastFirst) {
  std::vector<Tensor> tape;
  const Tensor a = fg::full({2}, 1.5, fg::kDouble), b = fg::full({2}, -4.0, fg::kDouble);
  fg::ad::tape_add(tape, 2, a);
  ASSERT_EQ(tape.size(), 3u);
  EXPECT_FALSE(tape[0].defined());
  fg::ad::tape_add(tape, 2, b);
  fg::ad::tape_add(tape, 0, b);
  fg::ad::tape_add(tape, 0, Tensor());  // a trip whose value a branch not taken left unset
  EXPECT_TRUE(fg::allclose(fg::ad::tape_pop(tape), a + b));
  EXPECT_FALSE(fg::ad::tape_pop(tape).defined());
  EXPECT_TRUE(fg::allclose(fg::ad::tape_pop(tape), b));
  EXPECT_TRUE(tape.empty());
  EXPECT_FG_ERROR(fg::ad::tape_pop(tape), "fg::ad::tape_pop: an empty tape (internal error of the generated code)");
  EXPECT_FG_ERROR(fg::ad::tape_add(tape, -1, a),
                  "fg::ad::tape_add: trip -1 of a tape (internal error of the generated code)");
}

TEST(TapeGradients, TapesOfANestedLoopsTapes) {
  std::vector<std::vector<Tensor>> outer;
  EXPECT_TRUE(fg::ad::tape_pop(outer).empty());  // no gradient reached the inner loop
  fg::ad::tape_add(outer, 1, std::vector<Tensor>{fg::ones({1})});
  ASSERT_EQ(outer.size(), 2u);
  EXPECT_EQ(fg::ad::tape_pop(outer).size(), 1u);
  EXPECT_TRUE(fg::ad::tape_pop(outer).empty());
}

// A third derivative reads a tape of gradients back by trip (what the pops of the second pushed):
// the entry, or none past its end; a nested loop's entry as an inner tape.
TEST(TapeGradients, ReadGivesTheTripsEntryOrNone) {
  std::vector<Tensor> tape{fg::full({2}, 3.0, fg::kDouble), Tensor()};
  EXPECT_TRUE(fg::allclose(fg::ad::tape_read(tape, 0), fg::full({2}, 3.0, fg::kDouble)));
  EXPECT_FALSE(fg::ad::tape_read(tape, 1).defined());
  EXPECT_FALSE(fg::ad::tape_read(tape, 5).defined());
  EXPECT_EQ(tape.size(), 2u);  // reading takes nothing off
  EXPECT_FG_ERROR(fg::ad::tape_read(tape, -1),
                  "fg::ad::tape_read: trip -1 of a tape (internal error of the generated code)");
  std::vector<std::vector<Tensor>> outer{{fg::ones({1}), fg::ones({1})}};
  EXPECT_EQ(fg::ad::tape_read(outer, 0).size(), 2u);
  EXPECT_TRUE(fg::ad::tape_read(outer, 3).empty());
}

// Gradients of a value that a branch may leave without a tensor: a missing one counts as none;
// batched, the sum has the levels the generated code expects even when one side has no batch.
TEST(TapeGradients, AddGradientsTakesAMissingOneAsNone) {
  const Tensor a = fg::full({2}, 1.5, fg::kDouble), b = fg::full({2}, -4.0, fg::kDouble);
  EXPECT_FALSE(fg::ad::add_gradients(Tensor(), Tensor()).defined());
  EXPECT_TRUE(fg::allclose(fg::ad::add_gradients(Tensor(), b), b));
  EXPECT_TRUE(fg::allclose(fg::ad::add_gradients(a, Tensor()), a));
  EXPECT_TRUE(fg::allclose(fg::ad::add_gradients(a, b), a + b));
  const Tensor batched = fg::arange(6, fg::kDouble).reshape({3, 2});  // level 0b1, batch 3
  const fg::vmap::Batched one = fg::vmap::ad::add_gradients({batched, 0b1}, {Tensor(), 0b10}, 0b11, {3, 4});
  EXPECT_EQ(one.levels, 0b11u);
  ASSERT_EQ(one.value.sizes(), (std::vector<int64_t>{3, 4, 2}));
  EXPECT_TRUE(fg::allclose(one.value.select(1, 2), batched));
  const fg::vmap::Batched both = fg::vmap::ad::add_gradients({batched, 0b1}, {b, 0}, 0b1, {3});
  EXPECT_TRUE(fg::allclose(both.value, batched + b));
  EXPECT_FALSE(fg::vmap::ad::add_gradients({Tensor(), 0b1}, {Tensor(), 0}, 0b1, {3}).value.defined());
}

TEST(TapeGradients, MaterializeKeepsAnUndefinedGradientUndefined) {
  EXPECT_FALSE(fg::vmap::materialize(Tensor(), 0, 0b1, {3}).defined());
}

// ------------------------------------------------------------------ products with a basis

// jacobians through a structured basis (fg::vmap::ad::basis_matmul and its siblings): with a
// placeholder for the basis at level `level`, each example equals the unbatched product with that
// example's row of the real basis, whichever levels the scale and the other operand have (below
// and above the basis's), on the fast paths (a vector basis) and the formed-basis ones (a matrix
// basis, a scale that grows the row, a mixed dtype is not among them: the rule checks it).
struct BasisCase {
  Shape basis, other;
  std::optional<Shape> scale;
  bool basis_left;
};

TEST(BatchedAdHelpers, BasisProductsAreTheLoopOverTheBasis) {
  fg::manual_seed(5);
  const std::vector<BasisCase> cases = {
      {{4}, {4, 5}, std::nullopt, true},    {{4}, {4, 5}, Shape{4}, true},    {{4}, {4, 5}, Shape{}, true},
      {{4}, {4}, Shape{1}, true},           {{4}, {4}, Shape{4}, true},       {{4}, {5, 4}, std::nullopt, false},
      {{4}, {5, 4}, Shape{4}, false},       {{4}, {4}, Shape{4}, false},      {{4}, {4}, std::nullopt, false},
      {{2, 2}, {2, 5}, std::nullopt, true}, {{2, 2}, {2, 5}, Shape{2}, true}, {{2, 2}, {5, 2}, Shape{2, 2}, false},
      {{4}, {4, 5}, Shape{3, 4}, true},  // basis * scale has more dims than the basis: formed
  };
  for (int level : {0, 1})
    for (Levels others : kMasks) {
      if (others & (1u << level)) continue;
      for (bool scale_batched : {false, true})
        for (const BasisCase& c : cases) {
          SCOPED_TRACE("basis level " + std::to_string(level) + ", others " + std::to_string(others) + ", case " +
                       std::to_string(&c - cases.data()) + (scale_batched ? ", batched scale" : ""));
          const int64_t n = ref::numel_of(c.basis);
          int64_t size[2] = {3, 2};
          size[level] = n;
          auto phys = [&](Levels m, const Shape& logical) {
            Shape s;
            for (int l = 0; l < 2; ++l)
              if (m & (1u << l)) s.push_back(size[l]);
            s.insert(s.end(), logical.begin(), logical.end());
            return s;
          };
          const Tensor like = fg::zeros({}, fg::kDouble);
          const Levels bl = 1u << level;
          const Batched real{fg::ad::basis(like, c.basis), bl},
              placeholder{fg::ad::basis_placeholder(like, c.basis), bl};
          const Levels sl = scale_batched ? others : 0, ol = scale_batched ? 0 : others;
          const Batched other{fg::randn(phys(ol, c.other), fg::kDouble), ol};
          const Batched scale = c.scale ? Batched{fg::randn(phys(sl, *c.scale), fg::kDouble), sl} : Batched{};
          Batched got;
          if (c.basis_left)
            got = c.scale ? fg::vmap::ad::basis_matmul_scaled(placeholder, scale, other)
                          : fg::vmap::ad::basis_matmul(placeholder, other);
          else
            got = c.scale ? fg::vmap::ad::matmul_basis_scaled(other, placeholder, scale)
                          : fg::vmap::ad::matmul_basis(other, placeholder);
          ASSERT_EQ(got.levels, bl | ol | (c.scale ? sl : 0));
          for (int64_t i0 = 0; i0 < size[0]; ++i0)
            for (int64_t i1 = 0; i1 < size[1]; ++i1) {
              auto at = [&](const Batched& x) {
                Tensor t = x.value;
                if (x.levels & 0b1) t = t.select(0, i0);
                if (x.levels & 0b10) t = t.select(0, i1);
                return t;
              };
              const Tensor b = at(real), o = at(other);
              Tensor want;
              if (c.basis_left)
                want = c.scale ? fg::ad::basis_matmul_scaled(b, at(scale), o) : fg::ad::basis_matmul(b, o);
              else
                want = c.scale ? fg::ad::matmul_basis_scaled(o, b, at(scale)) : fg::ad::matmul_basis(o, b);
              const Tensor g = at(got);
              ASSERT_EQ(g.sizes(), want.sizes()) << "example " << i0 << ", " << i1;
              EXPECT_TRUE(fg::allclose(g, want, 1e-12, 1e-12)) << "example " << i0 << ", " << i1;
            }
        }
    }
}

// An operand batched at the basis's own level (a draw per basis vector) has no shared rows: the
// basis is formed, and each example is still the product with its row. A result taken from the
// weight itself is a copy of it.
TEST(BatchedAdHelpers, BasisProductsWithAnOperandAtTheBasisLevel) {
  fg::manual_seed(6);
  const Tensor like = fg::zeros({}, fg::kDouble);
  const Batched real{fg::ad::basis(like, {4}), 0b1}, placeholder{fg::ad::basis_placeholder(like, {4}), 0b1};
  const Batched scale{fg::randn({4, 4}, fg::kDouble), 0b1}, other{fg::randn({4, 3}, fg::kDouble), 0};
  const Batched got = fg::vmap::ad::basis_matmul_scaled(placeholder, scale, other);
  ASSERT_EQ(got.levels, 0b1u);
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_TRUE(fg::allclose(got.value[i], fg::ad::basis_matmul_scaled(real.value[i], scale.value[i], other.value)));
  const Batched rows = fg::vmap::ad::basis_matmul(placeholder, other);
  EXPECT_TRUE(fg::allclose(rows.value, other.value));
  rows.value.mul_(0.0);
  EXPECT_FALSE(fg::allclose(rows.value, other.value)) << "the rows share the weight's memory";
}

TEST(BatchedAdHelpers, BasisPlaceholderHasTheBasisShapeAndNoStorage) {
  const Tensor like = fg::zeros({}, fg::kFloat);
  const Tensor p = fg::ad::basis_placeholder(like, {3, 2});
  EXPECT_EQ(p.sizes(), fg::ad::basis(like, {3, 2}).sizes());
  EXPECT_EQ(p.dtype(), fg::kFloat);
  for (int64_t d = 0; d < p.dim(); ++d) EXPECT_EQ(p.stride(d), 0);
}
