// Losses: mse_loss, nll_loss and cross_entropy against explicit loops, for every reduction, class
// weights, ignore_index, [C] and [N, C] and [N, C, d] inputs, non-contiguous operands, float32 and
// float64; and the target/shape/dtype errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference.h"

namespace {

using fg::Reduction;
using fg::Tensor;
using ref::Array;
using ref::Domain;
using ref::Layout;
using ref::Shape;

const char* reduction_name(Reduction r) {
  return r == Reduction::None ? "none" : r == Reduction::Mean ? "mean" : "sum";
}

Array reduce_losses(const Array& losses, Reduction r, double weight_sum) {
  if (r == Reduction::None) return losses;
  const double s = ref::sum_of(losses.data);
  return Array({}, {r == Reduction::Sum ? s : s / weight_sum});
}

TEST(MseLoss, MatchesReference) {
  ref::Rng rng(1);
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    for (Layout layout : ref::all_layouts()) {
      for (const Shape& shape : {Shape{}, Shape{7}, Shape{3, 4}, Shape{2, 3, 5}, Shape{37, 65}}) {
        for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
          SCOPED_TRACE(std::string(fg::toString(dt)) + " " + ref::layout_name(layout) + " " + ref::shape_str(shape) +
                       " " + reduction_name(r));
          ref::Input input = ref::make_input(shape, dt, layout, rng);
          ref::Input target = ref::make_input(shape, dt, Layout::Strided, rng);
          const Array sq = ref::map(ref::from_tensor(input.view), ref::from_tensor(target.view),
                                    [](double a, double b) { return (a - b) * (a - b); });
          const Array expected = reduce_losses(sq, r, static_cast<double>(sq.numel()));
          const ref::Tol tol = dt == fg::kFloat ? ref::Tol{1e-5, 1e-5} : ref::Tol{1e-12, 1e-12};
          EXPECT_TENSOR_NEAR(fg::mse_loss(input.view, target.view, r), expected, dt, tol);
        }
      }
    }
  }
  // Default reduction is the mean.
  EXPECT_TENSOR_NEAR(fg::mse_loss(fg::tensor({1.0, 2.0}), fg::tensor({0.0, 0.0})), Array({}, {2.5}), fg::kFloat,
                     ref::exact());
}

// The reference nll_loss: input [N, C, d...] (or [C]), target [N, d...] (or []).
struct NllRef {
  Array losses;       // shaped like target
  double weight_sum;  // over non-ignored targets
};

NllRef ref_nll(const Array& input, const Array& target, const Array* weight, int64_t ignore_index) {
  NllRef r{Array(target.shape), 0.0};
  const bool batched = input.dim() >= 2;
  int64_t k = 0;
  ref::for_each_index(target.shape, [&](const Shape& t) {
    const auto c = static_cast<int64_t>(target.at(t));
    if (c == ignore_index) {
      r.losses.data[k++] = 0;
      return;
    }
    Shape at;
    if (batched) {
      at = {t[0], c};
      at.insert(at.end(), t.begin() + 1, t.end());
    } else {
      at = {c};
    }
    const double w = weight ? weight->data[c] : 1.0;
    r.losses.data[k++] = -w * input.at(at);
    r.weight_sum += w;
  });
  return r;
}

// log_softmax along the class dim of the reference input.
Array ref_log_softmax_classes(const Array& input) {
  return ref::along_dim(input, input.dim() >= 2 ? 1 : 0, ref::log_softmax_of);
}

struct NllCase {
  Shape input;
  bool weighted;
  int64_t ignore_index;
};

const std::vector<NllCase>& nll_cases() {
  static const std::vector<NllCase> cases = {
      {{5}, false, -100}, {{5}, true, -100},      {{4, 5}, false, -100}, {{4, 5}, true, -100},
      {{6, 3}, false, 1}, {{6, 3}, true, 2},      {{2, 4, 3}, false, -100}, {{2, 4, 3, 2}, true, 0},
      {{33, 7}, true, -100}, {{0, 3}, false, -100}};
  return cases;
}

Array random_targets(const Shape& input, ref::Rng& rng) {
  const bool batched = input.size() >= 2;
  const int64_t C = batched ? input[1] : input[0];
  Shape tshape;
  if (batched) {
    tshape.push_back(input[0]);
    tshape.insert(tshape.end(), input.begin() + 2, input.end());
  }
  return ref::random_array(tshape, rng, Domain{0, static_cast<double>(C - 1), true}, fg::kLong);
}

TEST(NllLoss, MatchesReference) {
  ref::Rng rng(2);
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    for (Layout layout : {Layout::Contiguous, Layout::Transposed, Layout::Strided, Layout::Offset}) {
      for (const auto& c : nll_cases()) {
        for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
          SCOPED_TRACE(std::string(fg::toString(dt)) + " " + ref::layout_name(layout) + " input " +
                       ref::shape_str(c.input) + (c.weighted ? " weighted" : "") + " ignore " +
                       std::to_string(c.ignore_index) + " " + reduction_name(r));
          ref::Input input = ref::make_input(c.input, dt, layout, rng, Domain{-4, 0});
          const Array t = random_targets(c.input, rng);
          const int64_t C = c.input.size() >= 2 ? c.input[1] : c.input[0];
          const Array w = ref::random_array({C}, rng, Domain{0.1, 2}, dt);
          std::optional<Tensor> weight;
          if (c.weighted) weight = ref::to_tensor(w, dt);
          const NllRef nr = ref_nll(ref::from_tensor(input.view), t, c.weighted ? &w : nullptr, c.ignore_index);
          const ref::Tol tol = dt == fg::kFloat ? ref::Tol{1e-5, 1e-5} : ref::Tol{1e-12, 1e-12};
          EXPECT_TENSOR_NEAR(fg::nll_loss(input.view, ref::to_tensor(t, fg::kLong), weight, r, c.ignore_index),
                             reduce_losses(nr.losses, r, nr.weight_sum), dt, tol);
          // cross_entropy = nll_loss(log_softmax(input, class dim)).
          const NllRef cr = ref_nll(ref_log_softmax_classes(ref::from_tensor(input.view)), t,
                                    c.weighted ? &w : nullptr, c.ignore_index);
          EXPECT_TENSOR_NEAR(fg::cross_entropy(input.view, ref::to_tensor(t, fg::kLong), weight, r, c.ignore_index),
                             reduce_losses(cr.losses, r, cr.weight_sum), dt, tol);
        }
      }
    }
  }
}

TEST(NllLoss, DefaultsAndSpecialCases) {
  Tensor logp = fg::tensor({{-0.5, -1.5, -2.0}, {-0.1, -3.0, -0.7}});
  Tensor target = fg::tensor({2, 0});
  // Default: mean over the batch.
  EXPECT_TENSOR_NEAR(fg::nll_loss(logp, target), Array({}, {(2.0 + 0.1) / 2}), fg::kFloat, ref::tol_for(fg::kFloat));
  // Weighted mean divides by the sum of the picked weights, not by N.
  Tensor w = fg::tensor({1.0, 2.0, 3.0});
  EXPECT_TENSOR_NEAR(fg::nll_loss(logp, target, w), Array({}, {(3 * 2.0 + 1 * 0.1) / 4}), fg::kFloat,
                     ref::tol_for(fg::kFloat));
  // Ignored targets contribute 0 and do not count; all ignored gives NaN for the mean (0/0).
  EXPECT_TENSOR_NEAR(fg::nll_loss(logp, target, std::nullopt, Reduction::None, 2), Array({2}, {0, 0.1}), fg::kFloat,
                     ref::tol_for(fg::kFloat));
  EXPECT_TENSOR_NEAR(fg::nll_loss(logp, target, std::nullopt, Reduction::Mean, 2), Array({}, {0.1}), fg::kFloat,
                     ref::tol_for(fg::kFloat));
  EXPECT_TENSOR_NEAR(fg::nll_loss(logp, fg::tensor({1, 1}), std::nullopt, Reduction::Mean, 1),
                     Array({}, {ref::nan()}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::nll_loss(logp, fg::tensor({1, 1}), std::nullopt, Reduction::Sum, 1), Array({}, {0}),
                     fg::kFloat, ref::exact());
  // [C] input with a 0-d target.
  EXPECT_TENSOR_NEAR(fg::nll_loss(fg::tensor({-1.0, -2.0}), fg::scalar_tensor(1, fg::kLong)), Array({}, {2}),
                     fg::kFloat, ref::exact());
  // cross_entropy of uniform logits is log(C).
  EXPECT_TENSOR_NEAR(fg::cross_entropy(fg::zeros({3, 4}, fg::kDouble), fg::tensor({0, 1, 3})),
                     Array({}, {std::log(4.0)}), fg::kDouble, ref::tol_for(fg::kDouble));
  // Large logits stay finite.
  EXPECT_TENSOR_NEAR(fg::cross_entropy(fg::tensor({{1000.0, 0.0}}), fg::tensor({1})), Array({}, {1000}), fg::kFloat,
                     ref::tol_for(fg::kFloat));
}

TEST(LossErrors, Targets) {
  Tensor logp = fg::zeros({2, 3});
  EXPECT_FG_ERROR(fg::nll_loss(logp, fg::tensor({0, 3})), "fg::nll_loss: target 3 is out of bounds for 3 classes");
  EXPECT_FG_ERROR(fg::nll_loss(logp, fg::tensor({-1, 0})), "fg::nll_loss: target -1 is out of bounds for 3 classes");
  EXPECT_FG_ERROR(fg::cross_entropy(logp, fg::tensor({5, 0})), "fg::cross_entropy: target 5 is out of bounds for 3 classes");
  EXPECT_FG_ERROR(fg::nll_loss(logp, fg::tensor({0.0, 1.0})),
                  "fg::nll_loss: expected an int64 target of class indices, got float32");
  EXPECT_FG_ERROR(fg::nll_loss(logp, fg::tensor({0, 1, 2})),
                  "fg::nll_loss: expected a target of shape [2] for an input of shape [2, 3], got [3]");
  EXPECT_FG_ERROR(fg::nll_loss(logp, fg::tensor({0, 1}), fg::ones({2})),
                  "fg::nll_loss: expected a weight of shape [3], got [2]");
  EXPECT_FG_ERROR(fg::nll_loss(fg::tensor({1, 2}).unsqueeze(0), fg::tensor({0})),
                  "fg::nll_loss: expected a floating-point input, got int64");
  EXPECT_FG_ERROR(fg::nll_loss(fg::scalar_tensor(1.0), fg::scalar_tensor(0, fg::kLong)),
                  "fg::nll_loss: expected an input of at least 1 dimension, got a 0-d tensor");
  EXPECT_FG_ERROR(fg::mse_loss(fg::zeros({3}), fg::zeros({4})), "fg::mse_loss: shapes [3] and [4] cannot be broadcast");
}

}  // namespace
