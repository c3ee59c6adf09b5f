// The layers of runtime/src/layers.cpp beyond what the golden test compares with torch: direct-loop
// references for the normalizations in float32 and float64, batch_norm's running statistics,
// split/chunk's pieces, the batching rules' own paths (batched weights, stacked embedding
// tables) against loops of the unbatched op, and the errors, which name the op and the shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "funcgen/runtime/ad.h"
#include "funcgen/runtime/vmap.h"

namespace {

using fg::Tensor;

Tensor values(std::vector<int64_t> shape, double seed, fg::ScalarType dtype = fg::kDouble) {
  const int64_t n = [&] {
    int64_t p = 1;
    for (int64_t s : shape) p *= s;
    return p;
  }();
  return (fg::arange(n, fg::TensorOptions().dtype(fg::kDouble)) * 0.37 + seed).sin().reshape(shape).to(dtype);
}

double at(const Tensor& t, std::vector<int64_t> idx) {
  Tensor x = t;
  for (int64_t i : idx) x = x.select(0, i);
  return x.to(fg::kDouble).item<double>();
}

template <typename F>
void expect_error(F&& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "expected an fg::Error containing: " << part;
  } catch (const fg::Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// layer_norm over the last two dims of [2, 3, 4], by loops, with weight and bias.
TEST(Layers, LayerNormAgainstLoops) {
  for (fg::ScalarType dtype : {fg::kFloat, fg::kDouble}) {
    const Tensor x = values({2, 3, 4}, 0.3, dtype), w = values({3, 4}, 1.1, dtype), b = values({3, 4}, 2.2, dtype);
    const Tensor y = fg::layer_norm(x, {3, 4}, w, b, 1e-3);
    for (int64_t n = 0; n < 2; ++n) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j) mean += at(x, {n, i, j}) / 12;
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j) var += std::pow(at(x, {n, i, j}) - mean, 2) / 12;
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j)
          EXPECT_NEAR(at(y, {n, i, j}),
                      (at(x, {n, i, j}) - mean) / std::sqrt(var + 1e-3) * at(w, {i, j}) + at(b, {i, j}),
                      dtype == fg::kFloat ? 1e-5 : 1e-12);
    }
  }
}

// group_norm's groups of channels (and every spatial position) share statistics; a strided input.
TEST(Layers, GroupNormAgainstLoops) {
  const Tensor x = values({4, 2, 3}, 0.7).transpose(0, 1);  // [2, 4, 3], not contiguous
  const Tensor y = fg::group_norm(x, 2, values({4}, 1.0), {}, 1e-5);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t g = 0; g < 2; ++g) {
      double mean = 0, var = 0;
      for (int64_t c = 2 * g; c < 2 * g + 2; ++c)
        for (int64_t l = 0; l < 3; ++l) mean += at(x, {n, c, l}) / 6;
      for (int64_t c = 2 * g; c < 2 * g + 2; ++c)
        for (int64_t l = 0; l < 3; ++l) var += std::pow(at(x, {n, c, l}) - mean, 2) / 6;
      for (int64_t c = 2 * g; c < 2 * g + 2; ++c)
        for (int64_t l = 0; l < 3; ++l)
          EXPECT_NEAR(at(y, {n, c, l}), (at(x, {n, c, l}) - mean) / std::sqrt(var + 1e-5) * at(values({4}, 1.0), {c}),
                      1e-12);
    }
}

// Training updates the running statistics as torch does (the variance unbiased); evaluation uses them.
TEST(Layers, BatchNormRunningStatistics) {
  const Tensor x = values({3, 2, 4}, 0.1);
  Tensor mean = fg::zeros({2}, fg::kDouble), var = fg::ones({2}, fg::kDouble);
  const Tensor y = fg::batch_norm(x, {}, {}, mean, var, true, 0.25, 1e-5);
  for (int64_t c = 0; c < 2; ++c) {
    double m = 0, v = 0;
    for (int64_t n = 0; n < 3; ++n)
      for (int64_t l = 0; l < 4; ++l) m += at(x, {n, c, l}) / 12;
    for (int64_t n = 0; n < 3; ++n)
      for (int64_t l = 0; l < 4; ++l) v += std::pow(at(x, {n, c, l}) - m, 2);
    EXPECT_NEAR(at(mean, {c}), 0.25 * m, 1e-12);
    EXPECT_NEAR(at(var, {c}), 0.75 + 0.25 * v / 11, 1e-12);
    EXPECT_NEAR(at(y, {1, c, 2}), (at(x, {1, c, 2}) - m) / std::sqrt(v / 12 + 1e-5), 1e-12);
  }
  const Tensor e = fg::batch_norm(x, {}, {}, mean, var, false, 0.25, 1e-5);
  EXPECT_NEAR(at(e, {2, 1, 3}), (at(x, {2, 1, 3}) - at(mean, {1})) / std::sqrt(at(var, {1}) + 1e-5), 1e-12);
}

TEST(Layers, SplitChunkAndRearrangements) {
  const Tensor x = values({5, 4}, 0.2);
  const std::vector<Tensor> parts = x.split(2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].sizes(), fg::IntArrayRef({1, 4}));
  EXPECT_TRUE(fg::equal(parts[1], x.narrow(0, 2, 2)));
  const std::vector<Tensor> sized = fg::split(x, {1, 3}, 1);
  EXPECT_TRUE(fg::equal(sized[1], x.narrow(1, 1, 3)));
  const std::vector<Tensor> halves = x.chunk(3, 1);  // ceil(4 / 3) = 2: two pieces, as torch
  ASSERT_EQ(halves.size(), 2u);
  // The pieces one at a time (what funcgen reads a vector of pieces as) are the same pieces.
  ASSERT_EQ(fg::ad::split_count(x.size(0), 2), 3);
  ASSERT_EQ(fg::ad::chunk_count(x.size(-1), 3), 2);
  for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(fg::equal(fg::ad::split_piece(x, 2, 0, i), parts[static_cast<size_t>(i)]));
  for (int64_t i = 0; i < 2; ++i) EXPECT_TRUE(fg::equal(fg::ad::chunk_piece(x, 3, -1, i), halves[static_cast<size_t>(i)]));
  EXPECT_EQ(x.chunk(7, 0).size(), 5u);  // ceil(5 / 7) = 1: five pieces of one row
  EXPECT_EQ(fg::ad::chunk_count(5, 7), 5);
  const Tensor empty = fg::zeros({0, 2});
  EXPECT_EQ(empty.split(2).size(), 1u);  // as torch: one empty piece, or `chunks` of them
  EXPECT_EQ(empty.chunk(3).size(), 3u);
  EXPECT_EQ(fg::ad::chunk_piece(empty, 3, 0, 2).sizes(), fg::IntArrayRef({0, 2}));
  expect_error([&] { fg::ad::split_piece(x, 2, 0, 3); },
               "fg::split: piece 3 does not exist: there are 3 pieces");
  expect_error([&] { fg::ad::chunk_piece(empty, 3, 0, 3); }, "fg::chunk: piece 3 does not exist: there are 3 pieces");
  expect_error([&] { fg::ad::split_piece(empty, 2, 0, 1); }, "fg::split: piece 1 does not exist: there is 1 piece");
  expect_error([&] { fg::ad::chunk_piece(x, 0, 0, 0); }, "fg::chunk: expected a positive number of chunks, got 0");
  expect_error([&] { x.split(0); }, "fg::split: expected a positive split_size, got 0");
  expect_error([&] { fg::zeros({}).chunk(2); }, "fg::chunk: cannot chunk a 0-d tensor");
  EXPECT_DOUBLE_EQ(at(x.flip({0, 1}), {0, 0}), at(x, {4, 3}));
  // A 0-d tensor's dim 0 has one element, as in torch: flip returns it, its variance over dim 0 is 0.
  const Tensor scalar = fg::full({}, 2.5, fg::kDouble);
  EXPECT_DOUBLE_EQ(scalar.flip({0}).item<double>(), 2.5);
  EXPECT_DOUBLE_EQ(fg::std(scalar, {0}, false).item<double>(), 0.0);
  EXPECT_TRUE(std::isnan(scalar.var().item<double>()));  // (0 / 0 unbiased, as torch)
  EXPECT_DOUBLE_EQ(at(x.roll({1, -1}, {0, 1}), {0, 0}), at(x, {4, 1}));
  EXPECT_DOUBLE_EQ(at(x.roll(7), {2, 1}), at(x, {0, 2}));  // flat index 9 - 7 = 2
  const Tensor r = x.repeat({2, 1, 3});
  EXPECT_EQ(r.sizes(), fg::IntArrayRef({2, 5, 12}));
  EXPECT_DOUBLE_EQ(at(r, {1, 3, 9}), at(x, {3, 1}));
  const Tensor h = fg::one_hot(fg::arange(3) * 2);
  EXPECT_EQ(h.sizes(), fg::IntArrayRef({3, 5}));
  EXPECT_EQ(h.sum().item<int64_t>(), 3);
  EXPECT_EQ(at(h, {2, 4}), 1);
}

// The batching rules' own paths against loops of the op: batched weight and bias, a stacked
// embedding table, batch_norm folded into the channels.
TEST(Layers, BatchingRulesAgainstLoops) {
  using fg::vmap::Batched;
  const Tensor x = values({3, 2, 4, 5}, 0.4), w = values({3, 4}, 1.3), b = values({3, 4}, 2.1);
  const Tensor wide = values({3, 4, 5}, 0.8);
  const Tensor ln = fg::vmap::layer_norm({x, 1}, {4, 5}, {wide, 1}, {}, 1e-5).value;
  const Tensor gn = fg::vmap::group_norm({x, 1}, 2, {w, 1}, {b, 1}, 1e-5).value;
  const Tensor bn = fg::vmap::batch_norm({x, 1}, {w, 1}, {}, {}, {}, true, 0.1, 1e-5).value;
  for (int64_t k = 0; k < 3; ++k) {
    EXPECT_TRUE(fg::allclose(ln[k], fg::layer_norm(x[k], {4, 5}, wide[k]), 1e-12, 1e-12));
    EXPECT_TRUE(fg::allclose(gn[k], fg::group_norm(x[k], 2, w[k], b[k]), 1e-12, 1e-12));
    EXPECT_TRUE(fg::allclose(bn[k], fg::batch_norm(x[k], w[k], {}, {}, {}, true), 1e-12, 1e-12));
  }
  const Tensor tables = values({3, 6, 2}, 0.9), idx = fg::tensor(std::vector<int64_t>{5, 0, 3, 3, 1, 4, 2, 0, 5, 5, 1, 2}).reshape({3, 4});
  const Tensor e = fg::vmap::embedding({tables, 1}, {idx, 1}, -1).value;
  for (int64_t k = 0; k < 3; ++k) EXPECT_TRUE(fg::equal(e[k], fg::embedding(tables[k], idx[k])));
}

TEST(Layers, Errors) {
  const Tensor x = values({2, 3, 4}, 0.5);
  expect_error([&] { fg::layer_norm(x, {3}); }, "fg::layer_norm: expected an input whose last dims are normalized_shape [3], got shape [2, 3, 4]");
  expect_error([&] { fg::layer_norm(x, {4}, fg::ones({3}, fg::kDouble)); }, "fg::layer_norm: expected a weight of shape [4]");
  expect_error([&] { fg::group_norm(x, 2); }, "fg::group_norm: expected num_groups to divide the 3 channels, got 2");
  expect_error([&] { fg::batch_norm(x.select(0, 0).select(0, 0), {}, {}, {}, {}, true); },
               "fg::batch_norm: expected an input of shape [N, C, *], got [4]");
  expect_error([&] { fg::batch_norm(x.narrow(0, 0, 1).narrow(2, 0, 1), {}, {}, {}, {}, true); },
               "fg::batch_norm: expected more than 1 value per channel when training");
  expect_error([&] { fg::embedding(values({5, 2}, 0.1), fg::arange(3).to(fg::kDouble)); }, "fg::embedding: expected int64 indices");
  expect_error([&] { fg::embedding(values({5}, 0.1), fg::arange(3)); }, "fg::embedding: expected a weight of shape [num_embeddings, embedding_dim], got [5]");
  expect_error([&] { fg::one_hot(fg::arange(4), 3); }, "fg::one_hot: class index 3 is out of range for 3 classes");
  // A bad index is embedding's error, not that of the index_select it runs on.
  expect_error([&] { fg::embedding(values({3, 2}, 0.1), fg::tensor({0, 5, 1})); },
               "fg::embedding: index 5 is out of range for 3 embeddings (weight of shape [3, 2])");
  expect_error([&] { fg::embedding(values({3, 2}, 0.1), fg::tensor({2, -1})); },
               "fg::embedding: index -1 is out of range for 3 embeddings (weight of shape [3, 2])");
  expect_error([&] { fg::scaled_dot_product_attention(x, values({2, 5, 3}, 0.2), x); },
               "fg::scaled_dot_product_attention: expected query [..., L, E], key [..., S, E] and value [..., S, Ev]");
  {  // a float mask of another dtype than the query: refused by the op and by its decomposition's helper
    const Tensor q = values({2, 3, 4}, 0.2), mask = fg::zeros({3, 3}, fg::kFloat);
    const char* want = "fg::scaled_dot_product_attention: expected a bool attn_mask or one of the query's dtype (float64), got float32";
    expect_error([&] { fg::scaled_dot_product_attention(q, q, q, mask); }, want);
    expect_error([&] { fg::ad::apply_attention_mask(fg::zeros({2, 3, 3}, fg::kDouble), mask); }, want);
  }
  expect_error([&] { fg::split(x, {1, 1}, 1); }, "fg::split: split sizes [1, 1] add up to 2, not to the size 3 of dim 1");
  expect_error([&] { x.repeat({2}); }, "fg::repeat: expected at least as many repeats as dims");
  expect_error([&] { x.masked_fill(fg::ones({3}, fg::kBool), 1); }, "masked_fill");
  expect_error([&] { fg::smooth_l1_loss(x, values({3, 4}, 0.1)); }, "fg::smooth_l1_loss: expected a target of shape [2, 3, 4], got [3, 4]");
  using fg::vmap::Batched;
  expect_error([&] { fg::vmap::batch_norm({values({2, 3, 2, 4}, 0.3), 1}, {}, {}, {fg::zeros({2}, fg::kDouble), 0},
                                          {fg::ones({2}, fg::kDouble), 0}, true, 0.1, 1e-5); },
               "fg::vmap: batch_norm: cannot update the unbatched running statistics in place with batched values");
  expect_error([&] { fg::vmap::one_hot({fg::arange(6).reshape({2, 3}), 1}, -1); }, "fg::vmap: one_hot: num_classes -1");
}

}  // namespace
