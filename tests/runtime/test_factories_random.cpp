// Factories (empty, zeros, ones, full, *_like, new_*, arange, eye, from_blob, tensor, scalar_tensor)
// and random tensors (manual_seed, Generator, rand, randn, *_like, bernoulli, dropout).
// Statistical checks use 1e5 samples from a fixed seed with bounds of 6 or more standard errors,
// so they are deterministic and would only fail for a broken distribution.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "reference.h"

namespace {

using fg::Tensor;
using ref::Array;
using ref::Shape;

// ============================================================================ factories

TEST(Factories, EmptyZerosOnesFull) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble, fg::kLong, fg::kBool}) {
    SCOPED_TRACE(fg::toString(dt));
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{3}, Shape{2, 3, 4}, Shape{2, 0, 5}}) {
      SCOPED_TRACE("shape " + ref::shape_str(shape));
      Tensor e = fg::empty(shape, dt);
      EXPECT_EQ(ref::to_shape(e.sizes()), shape);
      EXPECT_EQ(e.dtype(), dt);
      EXPECT_EQ(ref::to_shape(e.strides()), ref::contiguous_strides_of(shape));
      EXPECT_EQ(e.storage_offset(), 0);
      EXPECT_TRUE(e.is_contiguous());
      EXPECT_TRUE(e.is_cpu());
      EXPECT_EQ(e.numel(), ref::numel_of(shape));
      EXPECT_TENSOR_EQ(fg::zeros(shape, dt), Array(shape, 0.0), dt);
      EXPECT_TENSOR_EQ(fg::ones(shape, dt), Array(shape, 1.0), dt);
      EXPECT_TENSOR_EQ(fg::full(shape, 3, dt), Array(shape, ref::round_to(3, dt)), dt);
      EXPECT_TENSOR_EQ(fg::full(shape, -2.5, fg::TensorOptions(dt)), Array(shape, ref::round_to(-2.5, dt)), dt);
    }
  }
  // Default dtype float32.
  EXPECT_EQ(fg::empty({2}).dtype(), fg::kFloat);
  EXPECT_EQ(fg::zeros({2}).dtype(), fg::kFloat);
  EXPECT_EQ(fg::ones({2}).dtype(), fg::kFloat);
  // torch.full infers the dtype from the value: int -> int64, bool -> bool, float -> float32.
  EXPECT_TENSOR_EQ(fg::full({2}, 3), Array({2}, 3.0), fg::kLong);
  EXPECT_TENSOR_EQ(fg::full({2}, true), Array({2}, 1.0), fg::kBool);
  EXPECT_TENSOR_NEAR(fg::full({2}, 1.5), Array({2}, 1.5), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::full({2}, 1.5f), Array({2}, 1.5), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::full({2}, 0.1, fg::kDouble), Array({2}, 0.1), fg::kDouble, ref::exact());
}

TEST(Factories, LikeAndNew) {
  Tensor i = fg::tensor({{1, 2, 3}, {4, 5, 6}}).t();  // non-contiguous int64 [3, 2]
  EXPECT_TENSOR_EQ(fg::zeros_like(i), Array({3, 2}, 0.0), fg::kLong);
  EXPECT_TENSOR_EQ(fg::ones_like(i), Array({3, 2}, 1.0), fg::kLong);
  EXPECT_TENSOR_EQ(fg::full_like(i, 2.5), Array({3, 2}, 2.0), fg::kLong);  // self's dtype wins
  EXPECT_EQ(ref::to_shape(fg::empty_like(i).sizes()), (Shape{3, 2}));
  EXPECT_EQ(fg::empty_like(i).dtype(), fg::kLong);
  EXPECT_TENSOR_NEAR(fg::zeros_like(i, fg::kDouble), Array({3, 2}, 0.0), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(fg::full_like(i, 2.5, fg::kFloat), Array({3, 2}, 2.5), fg::kFloat, ref::exact());
  EXPECT_TENSOR_EQ(fg::ones_like(fg::tensor({true, false})), Array({2}, 1.0), fg::kBool);
  // The like-tensors are new storage.
  Tensor z = fg::zeros_like(i);
  z.fill_(9);
  EXPECT_TENSOR_EQ(i, Array({3, 2}, {1, 4, 2, 5, 3, 6}), fg::kLong);
  Tensor d = fg::zeros({1}, fg::kDouble);
  EXPECT_TENSOR_NEAR(d.new_zeros({2, 2}), Array({2, 2}, 0.0), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(d.new_ones({3}), Array({3}, 1.0), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(d.new_full({2}, 7), Array({2}, 7.0), fg::kDouble, ref::exact());
  EXPECT_EQ(d.new_empty({4, 1}).dtype(), fg::kDouble);
  EXPECT_EQ(ref::to_shape(d.new_empty({4, 1}).sizes()), (Shape{4, 1}));
  EXPECT_TENSOR_EQ(d.new_zeros({2}, fg::kLong), Array({2}, 0.0), fg::kLong);
  EXPECT_TENSOR_EQ(d.new_full({2}, 3.7, fg::kLong), Array({2}, 3.0), fg::kLong);
  EXPECT_EQ(d.new_ones({1}, fg::TensorOptions(fg::kCPU)).dtype(), fg::kDouble);
}

TEST(Factories, Arange) {
  EXPECT_TENSOR_EQ(fg::arange(5), Array({5}, {0, 1, 2, 3, 4}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::arange(2, 7), Array({5}, {2, 3, 4, 5, 6}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::arange(0, 10, 3), Array({4}, {0, 3, 6, 9}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::arange(5, 0, -2), Array({3}, {5, 3, 1}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::arange(-3, -1), Array({2}, {-3, -2}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::arange(0), Array({0}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::arange(3, 3), Array({0}), fg::kLong);
  EXPECT_TENSOR_NEAR(fg::arange(1.0, 2.0, 0.25), Array({4}, {1, 1.25, 1.5, 1.75}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::arange(2.5), Array({3}, {0, 1, 2}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::arange(0, 1, 0.5), Array({2}, {0, 0.5}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::arange(5, fg::kDouble), Array({5}, {0, 1, 2, 3, 4}), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(fg::arange(1, 0, -0.25, fg::kDouble), Array({4}, {1, 0.75, 0.5, 0.25}), fg::kDouble,
                     ref::exact());
  // Lengths with a fractional step: ceil((end - start) / step).
  EXPECT_EQ(fg::arange(0.0, 1.0, 0.1).numel(), 10);
  EXPECT_EQ(fg::arange(0.0, 1.0, 0.3).numel(), 4);
  EXPECT_EQ(fg::arange(0, 10, 4).numel(), 3);
  Tensor a = fg::arange(0.0, 1.0, 0.1, fg::kDouble);
  for (int64_t k = 0; k < 10; ++k) EXPECT_NEAR(a[k].item<double>(), 0.1 * k, 1e-15);
  EXPECT_FG_ERROR(fg::arange(0, 5, 0), "fg::arange: step must be nonzero");
  EXPECT_FG_ERROR(fg::arange(5, 0, 1),
                  "fg::arange: upper bound and larger bound inconsistent with step sign (start 5, end 0, step 1)");
}

TEST(Factories, Eye) {
  EXPECT_TENSOR_EQ(fg::eye(3), Array({3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::eye(2, 4), Array({2, 4}, {1, 0, 0, 0, 0, 1, 0, 0}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::eye(3, 2, fg::kLong), Array({3, 2}, {1, 0, 0, 1, 0, 0}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::eye(0), Array({0, 0}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::eye(2, fg::kBool), Array({2, 2}, {1, 0, 0, 1}), fg::kBool);
  EXPECT_FG_ERROR(fg::eye(-1), "fg::eye: n and m must be non-negative, got -1 and -1");
}

TEST(Factories, FromBlobSharesMemory) {
  std::vector<double> buf = {1, 2, 3, 4, 5, 6};
  Tensor t = fg::from_blob(buf.data(), {2, 3}, fg::kDouble);
  EXPECT_TENSOR_EQ(t, Array({2, 3}, {1, 2, 3, 4, 5, 6}), fg::kDouble);
  EXPECT_EQ(t.data_ptr(), static_cast<void*>(buf.data()));
  buf[4] = 50;  // the caller's memory is the tensor's
  EXPECT_EQ(t[1][1].item<double>(), 50);
  t.mul_(2);  // and writes go to the caller's memory
  EXPECT_EQ(buf, (std::vector<double>{2, 4, 6, 8, 100, 12}));
  // Explicit strides: every other element, transposed.
  std::vector<float> f(12);
  for (int i = 0; i < 12; ++i) f[i] = static_cast<float>(i);
  Tensor s = fg::from_blob(f.data(), {3, 2}, {2, 6}, fg::kFloat);
  EXPECT_TENSOR_EQ(s, Array({3, 2}, {0, 6, 2, 8, 4, 10}), fg::kFloat);
  EXPECT_FALSE(s.is_contiguous());
  EXPECT_TENSOR_NEAR(s.sum({0}), Array({2}, {6, 24}), fg::kFloat, ref::exact());
  std::vector<int64_t> l = {7, 8};
  EXPECT_TENSOR_EQ(fg::from_blob(l.data(), {2}, fg::kLong), Array({2}, {7, 8}), fg::kLong);
  EXPECT_FG_ERROR(fg::from_blob(f.data(), {3, 2}, {2}, fg::kFloat),
                  "fg::from_blob: sizes [3, 2] and strides [2] differ in length");
}

TEST(Factories, TensorFromValues) {
  EXPECT_TENSOR_NEAR(fg::tensor({1.5, 2.0}), Array({2}, {1.5, 2}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::tensor({1.5f, 2.0f}), Array({2}, {1.5, 2}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_EQ(fg::tensor({1, 2, 3}), Array({3}, {1, 2, 3}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::tensor({int64_t{1} << 40, int64_t{-5}}), Array({2}, {double(int64_t{1} << 40), -5}),
                   fg::kLong);
  EXPECT_TENSOR_EQ(fg::tensor({true, false, true}), Array({3}, {1, 0, 1}), fg::kBool);
  EXPECT_TENSOR_NEAR(fg::tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}), Array({3, 2}, {1, 2, 3, 4, 5, 6}), fg::kFloat,
                     ref::exact());
  EXPECT_TENSOR_EQ(fg::tensor({{1, 2, 3}, {4, 5, 6}}), Array({2, 3}, {1, 2, 3, 4, 5, 6}), fg::kLong);
  EXPECT_TENSOR_NEAR(fg::tensor(std::vector<double>{0.1, 0.2}, fg::kDouble), Array({2}, {0.1, 0.2}), fg::kDouble,
                     ref::exact());
  EXPECT_TENSOR_NEAR(fg::tensor(std::vector<float>{0.5f}), Array({1}, {0.5}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_EQ(fg::tensor(std::vector<int64_t>{4, 5}), Array({2}, {4, 5}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::tensor(std::vector<int>{-4}), Array({1}, {-4}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::tensor(std::vector<bool>{false, true}), Array({2}, {0, 1}), fg::kBool);
  EXPECT_TENSOR_EQ(fg::tensor(std::vector<double>{}), Array({0}), fg::kFloat);
  // Options convert.
  EXPECT_TENSOR_NEAR(fg::tensor({1, 2}, fg::kDouble), Array({2}, {1, 2}), fg::kDouble, ref::exact());
  EXPECT_TENSOR_EQ(fg::tensor({1.9, -1.9}, fg::kLong), Array({2}, {1, -1}), fg::kLong);
  EXPECT_TENSOR_NEAR(fg::tensor({0.1}, fg::kDouble), Array({1}, {0.1}), fg::kDouble, ref::exact());
  EXPECT_FG_ERROR(fg::tensor({{1.0, 2.0}, {3.0}}), "fg::tensor: rows have different lengths (2 and 1)");
}

// Empty containers have null data(): every way of building a tensor from one copies nothing and
// passes no null pointer to memcpy (the sanitized build, scripts/run.sh test, stops on that).
TEST(Factories, TensorFromEmptyContainers) {
  EXPECT_TENSOR_EQ(fg::tensor(std::vector<double>{}), Array({0}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::tensor(std::vector<double>{}, fg::kDouble), Array({0}), fg::kDouble);
  EXPECT_TENSOR_EQ(fg::tensor(std::vector<float>{}), Array({0}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::tensor(std::vector<int64_t>{}), Array({0}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::tensor(std::vector<int>{}), Array({0}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::tensor(std::vector<bool>{}), Array({0}), fg::kBool);
  EXPECT_TENSOR_EQ(fg::tensor(std::initializer_list<double>{}), Array({0}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::tensor(std::initializer_list<std::initializer_list<double>>{}), Array({0, 0}), fg::kFloat);
  const Tensor borrowed = fg::from_blob(nullptr, {2, 0}, fg::kDouble);
  EXPECT_TENSOR_EQ(borrowed.clone(), Array({2, 0}), fg::kDouble);
  EXPECT_TENSOR_EQ(borrowed.to(fg::kFloat), Array({2, 0}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::empty({2, 0}, fg::kDouble).copy_(borrowed), Array({2, 0}), fg::kDouble);
}

TEST(Factories, ScalarTensor) {
  EXPECT_TENSOR_NEAR(fg::scalar_tensor(2.5), Array({}, {2.5}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::scalar_tensor(2.5, fg::kDouble), Array({}, {2.5}), fg::kDouble, ref::exact());
  EXPECT_TENSOR_EQ(fg::scalar_tensor(4, fg::kLong), Array({}, {4}), fg::kLong);
  // torch.scalar_tensor uses the default dtype (float32) whatever the value's type:
  // torch.scalar_tensor(3) is tensor(3.), torch.scalar_tensor(True) is tensor(1.).
  EXPECT_TENSOR_NEAR(fg::scalar_tensor(3), Array({}, {3}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::scalar_tensor(true), Array({}, {1}), fg::kFloat, ref::exact());
}

TEST(Factories, Errors) {
  EXPECT_FG_ERROR(fg::empty({2, -1}), "fg::empty: sizes must be non-negative, got [2, -1]");
  EXPECT_ANY_FG_ERROR(fg::zeros({-3}));
  EXPECT_ANY_FG_ERROR(fg::full({-1}, 2.0));
  // Where CUDA cannot run (no backend in this build, no driver, no device), the reason is given.
  if (!fg::cuda::is_available()) {
    const std::string why = fg::cuda::unavailable_reason();
    EXPECT_FALSE(why.empty());
    EXPECT_FG_ERROR(fg::empty({2}, fg::kCUDA), "fg::empty: cannot create a tensor on cuda:0: " + why);
    EXPECT_FG_ERROR(fg::empty({2}, fg::TensorOptions(fg::kFloat).device(fg::Device("cuda:1"))),
                    "fg::empty: cannot create a tensor on cuda:1: " + why);
    EXPECT_FG_ERROR(fg::zeros({2}, fg::kCUDA), "fg::zeros: cannot create a tensor on cuda:0: " + why);
    EXPECT_EQ(fg::cuda::device_count(), 0);
    EXPECT_ANY_FG_ERROR(fg::cuda::synchronize());
  }
}

// ============================================================================ random

Array values(const Tensor& t) { return ref::from_tensor(t); }

int64_t count_equal(const Array& a, const Array& b) {
  int64_t n = 0;
  for (size_t i = 0; i < a.data.size(); ++i) n += a.data[i] == b.data[i];
  return n;
}

struct Moments {
  double mean, var, skew, kurt;
};

Moments moments(const Array& a) {
  const double n = static_cast<double>(a.numel());
  double m = 0;
  for (double v : a.data) m += v;
  m /= n;
  double m2 = 0, m3 = 0, m4 = 0;
  for (double v : a.data) {
    const double d = v - m;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  m2 /= n;
  m3 /= n;
  m4 /= n;
  return {m, m2, m3 / std::pow(m2, 1.5), m4 / (m2 * m2)};
}

TEST(Random, ManualSeedReproducibility) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    SCOPED_TRACE(fg::toString(dt));
    fg::manual_seed(42);
    const Array a = values(fg::randn({1000}, dt));
    const Array a2 = values(fg::rand({3, 7}, dt));
    fg::manual_seed(42);
    const Array b = values(fg::randn({1000}, dt));
    const Array b2 = values(fg::rand({3, 7}, dt));
    EXPECT_TRUE(ref::arrays_equal(a, b)) << "same seed, same values";
    EXPECT_TRUE(ref::arrays_equal(a2, b2)) << "the stream continues identically";
    fg::manual_seed(43);
    const Array c = values(fg::randn({1000}, dt));
    EXPECT_LT(count_equal(a, c), 5) << "a different seed gives different values";
    // Consecutive draws differ.
    fg::manual_seed(42);
    const Array d1 = values(fg::randn({1000}, dt));
    const Array d2 = values(fg::randn({1000}, dt));
    EXPECT_LT(count_equal(d1, d2), 5);
  }
}

TEST(Random, ExplicitGenerator) {
  fg::Generator g1(7), g2(7), g3(8);
  const Array a = values(fg::rand({500}, g1));
  const Array b = values(fg::rand({500}, g2));
  const Array c = values(fg::rand({500}, g3));
  EXPECT_TRUE(ref::arrays_equal(a, b));
  EXPECT_LT(count_equal(a, c), 5);
  EXPECT_EQ(g1.seed(), 7u);
  EXPECT_GT(g1.offset(), 0u) << "drawing advances the generator";
  g1.manual_seed(7);
  EXPECT_EQ(g1.offset(), 0u);
  EXPECT_TRUE(ref::arrays_equal(values(fg::rand({500}, g1)), a));
  // Drawing from an explicit generator leaves the default generator's stream alone.
  fg::manual_seed(1);
  const Array x = values(fg::randn({50}));
  fg::manual_seed(1);
  fg::Generator other(99);
  (void)fg::randn({50}, other, fg::kDouble);
  EXPECT_TRUE(ref::arrays_equal(values(fg::randn({50})), x));
  // The default generator is the one manual_seed seeds.
  fg::manual_seed(5);
  EXPECT_EQ(fg::default_generator().seed(), 5u);
}

TEST(Random, RandnMoments) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    SCOPED_TRACE(fg::toString(dt));
    fg::manual_seed(2024);
    Tensor t = fg::randn({100000}, dt);
    EXPECT_EQ(t.dtype(), dt);
    const Array a = values(t);
    const Moments m = moments(a);
    // Standard errors at n = 1e5: mean 0.0032, variance 0.0045, skewness 0.0077, kurtosis 0.0155.
    EXPECT_NEAR(m.mean, 0.0, 0.02);
    EXPECT_NEAR(m.var, 1.0, 0.03);
    EXPECT_NEAR(m.skew, 0.0, 0.06);
    EXPECT_NEAR(m.kurt, 3.0, 0.12);
    int64_t within1 = 0, beyond3 = 0;
    for (double v : a.data) {
      within1 += std::fabs(v) < 1;
      beyond3 += std::fabs(v) > 3;
      ASSERT_TRUE(std::isfinite(v));
    }
    EXPECT_NEAR(within1 / 1e5, 0.6827, 0.01);
    EXPECT_GT(beyond3, 100);  // expected 270
    EXPECT_LT(beyond3, 450);
  }
}

TEST(Random, RandIsUniformOnHalfOpenUnitInterval) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    SCOPED_TRACE(fg::toString(dt));
    fg::manual_seed(7);
    const Array a = values(fg::rand({100000}, dt));
    double lo = 1, hi = 0;
    std::vector<int64_t> bins(10, 0);
    for (double v : a.data) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      if (v >= 0 && v < 1) ++bins[static_cast<size_t>(v * 10)];
    }
    EXPECT_GE(lo, 0.0);
    EXPECT_LT(hi, 1.0);
    EXPECT_LT(lo, 1e-3);
    EXPECT_GT(hi, 1 - 1e-3);
    const Moments m = moments(a);
    EXPECT_NEAR(m.mean, 0.5, 0.006);     // standard error 0.0009
    EXPECT_NEAR(m.var, 1.0 / 12, 0.003);  // standard error 0.0003
    for (int64_t b : bins) EXPECT_NEAR(b / 1e5, 0.1, 0.01);  // standard error 0.00095
  }
  // float64 draws use more than float32's 24 bits.
  fg::manual_seed(8);
  const Array d = values(fg::rand({1000}, fg::kDouble));
  int64_t not_float = 0;
  for (double v : d.data) not_float += ref::round_to(v, fg::kFloat) != v;
  EXPECT_GT(not_float, 900);
  // rand never gives exactly 1 in float32, even over many draws.
  fg::manual_seed(9);
  EXPECT_LT(fg::amax(fg::rand({1000000})).item<double>(), 1.0);
}

TEST(Random, LikeVariants) {
  Tensor x = fg::zeros({3, 4}, fg::kDouble).t();
  fg::manual_seed(3);
  Tensor r = fg::rand_like(x);
  EXPECT_EQ(ref::to_shape(r.sizes()), (Shape{4, 3}));
  EXPECT_EQ(r.dtype(), fg::kDouble);
  Tensor n = fg::randn_like(fg::zeros({5}));
  EXPECT_EQ(ref::to_shape(n.sizes()), (Shape{5}));
  EXPECT_EQ(n.dtype(), fg::kFloat);
  // Same stream as rand with the same shape and dtype.
  fg::manual_seed(3);
  EXPECT_TRUE(ref::arrays_equal(values(fg::rand({4, 3}, fg::kDouble)), values(r)));
  EXPECT_FG_ERROR(fg::rand({2}, fg::kLong), "fg::rand: expected a floating dtype, got int64");
  EXPECT_FG_ERROR(fg::randn({2}, fg::kBool), "fg::randn: expected a floating dtype, got bool");
}

TEST(Random, Bernoulli) {
  fg::manual_seed(11);
  EXPECT_TENSOR_EQ(fg::bernoulli(fg::zeros({1000})), Array({1000}, 0.0), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::bernoulli(fg::ones({1000}, fg::kDouble)), Array({1000}, 1.0), fg::kDouble);
  // Per-element probabilities: the first half 0.2, the second half 0.8.
  Tensor p = fg::cat({fg::full({50000}, 0.2), fg::full({50000}, 0.8)});
  const Array b = values(fg::bernoulli(p));
  double first = 0, second = 0;
  for (int64_t i = 0; i < 100000; ++i) {
    ASSERT_TRUE(b.data[i] == 0 || b.data[i] == 1);
    (i < 50000 ? first : second) += b.data[i];
  }
  // Standard error sqrt(0.16 / 5e4) = 0.0018.
  EXPECT_NEAR(first / 5e4, 0.2, 0.012);
  EXPECT_NEAR(second / 5e4, 0.8, 0.012);
  // bernoulli(self, p): self's shape, each element 1 with probability p.
  Tensor shaped = fg::zeros({200, 500}, fg::kDouble);
  Tensor s = fg::bernoulli(shaped, 0.3);
  EXPECT_EQ(ref::to_shape(s.sizes()), (Shape{200, 500}));
  EXPECT_EQ(s.dtype(), fg::kDouble);
  const Array sv = values(s);
  EXPECT_NEAR(ref::sum_of(sv.data) / 1e5, 0.3, 0.01);  // standard error 0.00145
  // Reproducible under a seed.
  fg::manual_seed(12);
  const Array r1 = values(fg::bernoulli(fg::full({1000}, 0.5)));
  fg::manual_seed(12);
  EXPECT_TRUE(ref::arrays_equal(values(fg::bernoulli(fg::full({1000}, 0.5))), r1));
  EXPECT_FG_ERROR(fg::bernoulli(fg::tensor({-0.5, 1.0})),
                  "fg::bernoulli: probabilities must be in [0, 1], got values in [-0.5, 1]");
  EXPECT_FG_ERROR(fg::bernoulli(fg::zeros({2}), 1.5), "fg::bernoulli: p must be in [0, 1], got 1.5");
}

TEST(Random, Dropout) {
  fg::manual_seed(13);
  ref::Rng rng(13);
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    SCOPED_TRACE(fg::toString(dt));
    const Array xa = ref::random_array({100000}, rng, ref::Domain{0.5, 2}, dt);
    Tensor x = ref::to_tensor(xa, dt);
    // Evaluation mode and p = 0: the identity.
    EXPECT_TENSOR_EQ(fg::dropout(x, 0.3, false), xa, dt);
    EXPECT_TENSOR_EQ(fg::dropout(x, 0.0, true), xa, dt);
    // p = 1 zeroes everything.
    EXPECT_TENSOR_EQ(fg::dropout(x, 1.0, true), Array({100000}, 0.0), dt);
    // Training: each element is 0 or x / (1 - p); about p of them are 0.
    const double p = 0.3;
    Tensor y = fg::dropout(x, p, true);
    EXPECT_EQ(y.dtype(), dt);
    const Array ya = values(y);
    int64_t zeros = 0;
    double sum_in = 0, sum_out = 0;
    for (int64_t i = 0; i < 100000; ++i) {
      if (ya.data[i] == 0) {
        ++zeros;
      } else {
        ASSERT_NEAR(ya.data[i], xa.data[i] / (1 - p), 1e-6 * xa.data[i]) << "element " << i;
      }
      sum_in += xa.data[i];
      sum_out += ya.data[i];
    }
    EXPECT_NEAR(zeros / 1e5, p, 0.01);  // standard error 0.00145
    // The 1 / (1 - p) scaling keeps the expectation: relative standard error about 0.0025.
    EXPECT_NEAR(sum_out / sum_in, 1.0, 0.02);
    // The input is untouched.
    EXPECT_TENSOR_EQ(x, xa, dt);
  }
  // A non-contiguous input.
  Tensor t = fg::ones({400, 300}).t();
  const Array ta = values(fg::dropout(t, 0.5, true));
  EXPECT_EQ(ta.shape, (Shape{300, 400}));
  int64_t kept = 0;
  for (double v : ta.data) {
    ASSERT_TRUE(v == 0 || v == 2);
    kept += v == 2;
  }
  EXPECT_NEAR(kept / 120000.0, 0.5, 0.01);
  EXPECT_FG_ERROR(fg::dropout(fg::ones({2}), 1.5, true),
                  "fg::dropout: dropout probability has to be between 0 and 1, but got 1.5");
  EXPECT_FG_ERROR(fg::dropout(fg::ones({2}), -0.1, false),
                  "fg::dropout: dropout probability has to be between 0 and 1, but got -0.1");
}

// As torch: training dropout scales the kept elements by 1 / (1 - p), which an integer tensor cannot
// hold; evaluation, p = 0 and p = 1 scale nothing and keep any dtype.
TEST(Random, DropoutNeedsAFloatingInput) {
  const std::string want =
      "fg::dropout: expected a floating-point input (the kept elements are scaled by 1 / (1 - p)), got ";
  EXPECT_FG_ERROR(fg::dropout(fg::ones({3}, fg::kLong), 0.5, true), want + "int64");
  EXPECT_FG_ERROR(fg::dropout(fg::ones({3}, fg::kBool), 0.5, true), want + "bool");
  EXPECT_FG_ERROR(fg::dropout_mask(fg::ones({3}, fg::kLong), 0.5, true), want + "int64");
  EXPECT_FG_ERROR(fg::feature_dropout(fg::ones({2, 3}, fg::kLong), 0.5, true),
                  "fg::feature_dropout: expected a floating-point input (the kept elements are scaled by 1 / (1 - p)), "
                  "got int64");
  EXPECT_TENSOR_EQ(fg::dropout(fg::ones({3}, fg::kLong), 0.5, false), Array({3}, 1.0), fg::kLong);
  EXPECT_TENSOR_EQ(fg::dropout(fg::ones({3}, fg::kLong), 0.0, true), Array({3}, 1.0), fg::kLong);
  EXPECT_TENSOR_EQ(fg::dropout(fg::ones({3}, fg::kLong), 1.0, true), Array({3}, 0.0), fg::kLong);
}

}  // namespace
