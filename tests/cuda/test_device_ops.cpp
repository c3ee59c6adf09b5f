// Ops on kCUDA tensors against the same ops on the CPU backend (an independent implementation:
// Highway kernels and BLAS there, the CUDA kernels and the GEMM plan here). Built twice:
//  - test_cuda_host_run (tier 1, every machine): kCUDA runs on the CUDA backend compiled for the
//    CPU (host_run_backend.h), so dispatch, copies, the caching allocator and every kernel run;
//  - test_cuda_gpu (tier 2): the real backend; each test skips, naming the CUDA error, where no
//    GPU can be used (tests/gpu/run.sh runs it where one can, and fails on skips).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "device_test.h"
#if !defined(FG_TEST_HOST_RUN)
#include "device.h"
#endif

namespace {

using fg::Tensor;
using fg::testing::Cuda;
using fg::testing::cuda;
using fg::testing::error_of;
using fg::testing::expect_close;

#if !defined(FG_TEST_HOST_RUN)
// Whether a library whose file name contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(name) != std::string::npos) return true;
  return false;
}
const bool cublas_mapped_at_start = mapped("libcublas");  // before main, so before any test

// cuBLAS is opened at the first product on a device, not linked: a program that runs nothing on a
// GPU never maps it (libcublas and libcublasLt cost every process 64 ms at start), and the library
// the backend opens has every function the backend calls (that needs no device to check).
TEST(CudaLibraries, CublasIsOpenedAtTheFirstProductNotAtStart) {
  EXPECT_FALSE(cublas_mapped_at_start);
  const bool before = mapped("libcublas");  // (an earlier test of this process may have run a product on a GPU)
  const Tensor a = fg::ones({4, 3}), b = fg::ones({3, 2});
  EXPECT_EQ(fg::matmul(a, b).sum().item<float>(), 12.0F * 2);  // on the CPU: no cuBLAS
  EXPECT_EQ(mapped("libcublas"), before);
  const fg::detail::DeviceBackend* backend = fg::detail::builtin_cuda_backend();
  ASSERT_NE(backend, nullptr);
  ASSERT_NE(backend->load_libraries, nullptr);
  const std::string path = backend->load_libraries();
  EXPECT_NE(path.find("libcublas.so."), std::string::npos) << path;
  EXPECT_TRUE(mapped("libcublas"));
  EXPECT_EQ(backend->load_libraries(), path);  // the same library every time
}
#endif

TEST_F(Cuda, MovesBetweenDevicesExactly) {
  fg::manual_seed(1);
  const Tensor x = fg::randn({3, 4, 5});
  const Tensor y = x.cuda();
  EXPECT_TRUE(y.is_cuda());
  EXPECT_EQ(y.device(), fg::Device(fg::kCUDA, 0));
  EXPECT_EQ(y.device().str(), "cuda:0");
  expect_close(y, x);
  EXPECT_TRUE(fg::equal(y.cpu(), x));
  // Strided sources and destinations, both ways.
  expect_close(x.transpose(0, 2).cuda(), x.transpose(0, 2));
  expect_close(cuda(x).transpose(0, 2), x.transpose(0, 2));
  const Tensor back = fg::zeros({5, 4, 3});
  back.transpose(0, 2).copy_(y);
  EXPECT_TRUE(fg::equal(back.transpose(0, 2), x));
  // Into a strided device slice, with broadcasting and conversion.
  const Tensor d = fg::zeros({4, 6}, fg::TensorOptions(fg::kDouble).device(fg::kCUDA));
  d.slice(1, 0, 6, 2).copy_(fg::arange(3));
  Tensor expected = fg::zeros({4, 6}, fg::kDouble);
  expected.slice(1, 0, 6, 2).copy_(fg::arange(3));
  expect_close(d, expected);
  expect_close(x.to(fg::Device(fg::kCUDA), fg::kDouble), x.to(fg::kDouble));
}

TEST_F(Cuda, ConvertsEveryDtypePair) {
  const Tensor src = fg::tensor({-2.5, -1.0, 0.0, 0.5, 3.0, 7.75}).reshape({2, 3});
  for (fg::ScalarType from : {fg::kFloat, fg::kDouble, fg::kLong, fg::kBool})
    for (fg::ScalarType to : {fg::kFloat, fg::kDouble, fg::kLong, fg::kBool}) {
      SCOPED_TRACE(std::string(fg::toString(from)) + " -> " + fg::toString(to));
      const Tensor x = src.to(from);
      expect_close(cuda(x).t().to(to), x.t().to(to));
    }
}

TEST_F(Cuda, FactoriesTakeTheDeviceOption) {
  const auto on_cuda = fg::TensorOptions().device(fg::kCUDA);
  expect_close(fg::zeros({2, 3}, on_cuda), fg::zeros({2, 3}));
  expect_close(fg::ones({4}, on_cuda.dtype(fg::kDouble)), fg::ones({4}, fg::kDouble));
  expect_close(fg::full({2, 2}, 7, on_cuda), fg::full({2, 2}, 7));
  expect_close(fg::full({3}, true, on_cuda), fg::full({3}, true));
  expect_close(fg::arange(1, 10, 2, on_cuda), fg::arange(1, 10, 2));
  expect_close(fg::eye(3, 4, on_cuda), fg::eye(3, 4));
  expect_close(fg::tensor({1.5, 2.5}, on_cuda), fg::tensor({1.5, 2.5}));
  const Tensor z = fg::zeros({3}, on_cuda);
  EXPECT_TRUE(fg::zeros_like(z).is_cuda());
  EXPECT_TRUE(fg::ones_like(z).is_cuda());
  EXPECT_TRUE(z.new_zeros({2}).is_cuda());
  EXPECT_TRUE(fg::empty({0}, on_cuda).is_cuda());
}

TEST_F(Cuda, UnaryOpsMatchTheCpu) {
  fg::manual_seed(2);
  for (fg::ScalarType t : {fg::kFloat, fg::kDouble}) {
    const double rtol = t == fg::kFloat ? 2e-6 : 1e-13, atol = t == fg::kFloat ? 1e-6 : 1e-14;
    const Tensor x = (fg::randn({5, 7}, t) * 3).t();  // strided
    const Tensor pos = fg::rand({5, 7}, t) * 4 + 0.01;
    const Tensor cx = cuda(x), cp = cuda(pos);
    expect_close(fg::neg(cx), fg::neg(x), rtol, atol);
    expect_close(fg::abs(cx), fg::abs(x), rtol, atol);
    expect_close(fg::exp(cx), fg::exp(x), rtol, atol);
    expect_close(fg::log(cp), fg::log(pos), rtol, atol);
    expect_close(fg::log1p(cp), fg::log1p(pos), rtol, atol);
    expect_close(fg::expm1(cx), fg::expm1(x), rtol, atol);
    expect_close(fg::sqrt(cp), fg::sqrt(pos), rtol, atol);
    expect_close(fg::rsqrt(cp), fg::rsqrt(pos), rtol, atol);
    expect_close(fg::sin(cx), fg::sin(x), rtol, atol);
    expect_close(fg::cos(cx), fg::cos(x), rtol, atol);
    expect_close(fg::tan(cp), fg::tan(pos), rtol * 10, atol);
    expect_close(fg::tanh(cx), fg::tanh(x), rtol, atol);
    expect_close(fg::sigmoid(cx), fg::sigmoid(x), rtol, atol);
    expect_close(fg::relu(cx), fg::relu(x), rtol, atol);
    expect_close(fg::erf(cx), fg::erf(x), rtol, atol);
    expect_close(fg::silu(cx), fg::silu(x), rtol, atol);
    expect_close(fg::log_sigmoid(cx), fg::log_sigmoid(x), rtol, atol);
  }
  const Tensor i = fg::tensor({-3, 0, 4});
  expect_close(fg::neg(cuda(i)), fg::neg(i));
  expect_close(fg::abs(cuda(i)), fg::abs(i));
  expect_close(fg::exp(cuda(i)), fg::exp(i), 2e-6);  // promotes to float
  const Tensor nan = fg::tensor({NAN, -1.0, 2.0});
  expect_close(fg::relu(cuda(nan)), fg::relu(nan));
  Tensor inplace = cuda(nan);
  inplace.exp_();
  expect_close(inplace, fg::exp(nan), 2e-6);
}

TEST_F(Cuda, BinaryOpsBroadcastPromoteAndWriteInPlace) {
  fg::manual_seed(3);
  const Tensor a = fg::randn({3, 1, 5}), b = fg::randn({4, 1}), w = fg::randn({5, 4}).t();
  const Tensor ca = cuda(a), cb = cuda(b), cw = cuda(w);
  expect_close(ca + cb, a + b, 1e-7);
  expect_close(ca - cw, a - w, 1e-7);
  expect_close(ca * cb, a * b, 1e-7);
  expect_close(ca / cb, a / b, 1e-6);
  expect_close(fg::maximum(ca, cw), fg::maximum(a, w));
  expect_close(fg::minimum(ca, cw), fg::minimum(a, w));
  expect_close(fg::pow(fg::abs(ca), cb), fg::pow(fg::abs(a), b), 1e-6);
  // Numbers and 0-d CPU tensors go with any device, as in torch.
  expect_close(ca + 2.5, a + 2.5, 1e-7);
  expect_close(2 - ca, 2 - a, 1e-7);
  expect_close(ca * fg::scalar_tensor(3.0), a * 3.0, 1e-7);
  expect_close(cb.to(fg::kDouble) * ca, b.to(fg::kDouble) * a, 1e-15);
  // Integers and bools.
  const Tensor i = fg::tensor({-4, 3, 0, 9}), j = fg::tensor({2, -3, 5, 1});
  expect_close(cuda(i) * cuda(j), i * j);
  expect_close(fg::pow(cuda(i), fg::abs(cuda(j))), fg::pow(i, fg::abs(j)));
  expect_close(cuda(i) / cuda(j), i / j, 1e-7);
  const Tensor p = fg::tensor({true, false, true}), q = fg::tensor({true, true, false});
  expect_close(cuda(p) + cuda(q), p + q);
  expect_close(cuda(p) * cuda(q), p * q);
  // In place and out=.
  Tensor acc = cuda(w).clone();
  acc.add_(ca.reshape({3, 5}).t().slice(1, 0, 3).sum(1), 0.5);
  expect_close(acc, w + 0.5 * a.reshape({3, 5}).t().slice(1, 0, 3).sum(1), 1e-6);
  Tensor out = fg::empty({0}, fg::TensorOptions().device(fg::kCUDA));
  fg::mul_out(out, ca, cb);
  expect_close(out, a * b, 1e-7);
}

TEST_F(Cuda, ReductionsMatchTheCpu) {
  fg::manual_seed(4);
  for (fg::ScalarType t : {fg::kFloat, fg::kDouble}) {
    const double rtol = t == fg::kFloat ? 1e-5 : 1e-12;
    // Row kernels run one block per output element: shapes that stay quick on CPU threads while
    // covering one warp, several warps and rows longer than the block.
    const Tensor x = fg::randn({3, 5, 40}, t);
    const Tensor cx = cuda(x);
    expect_close(fg::sum(cx), fg::sum(x), rtol, rtol);
    expect_close(fg::sum(cx, {1}), fg::sum(x, {1}), rtol, rtol);
    expect_close(fg::sum(cx, {0, 2}, true), fg::sum(x, {0, 2}, true), rtol, rtol);
    expect_close(fg::mean(cx, {-1}), fg::mean(x, {-1}), rtol, rtol);
    expect_close(fg::amax(cx, {0}), fg::amax(x, {0}));
    expect_close(fg::amin(cx.transpose(1, 2), {1}), fg::amin(x.transpose(1, 2), {1}));
    expect_close(fg::max(cx), fg::max(x));
    const Tensor wide = fg::randn({2, 5000}, t);
    expect_close(fg::sum(cuda(wide), {1}), fg::sum(wide, {1}), rtol, rtol);
  }
  const Tensor nan = fg::tensor({1.0, NAN, 3.0, -2.0}).reshape({2, 2});
  expect_close(fg::amax(cuda(nan), {1}), fg::amax(nan, {1}));
  expect_close(fg::amin(cuda(nan), {0}), fg::amin(nan, {0}));
  const Tensor bits = fg::tensor({true, false, true, true});
  expect_close(fg::sum(cuda(bits)), fg::sum(bits));
  expect_close(fg::amax(cuda(bits), {0}), fg::amax(bits, {0}));
  expect_close(fg::sum(cuda(fg::tensor({5, -7, 11}))), fg::sum(fg::tensor({5, -7, 11})));
  expect_close(fg::sum(fg::zeros({3, 0}, fg::TensorOptions().device(fg::kCUDA)), {1}), fg::zeros({3}));
  EXPECT_THROW(fg::amax(fg::zeros({3, 0}, fg::TensorOptions().device(fg::kCUDA)), {1}), fg::Error);
  EXPECT_DOUBLE_EQ(fg::sum(cuda(fg::arange(100, fg::kDouble))).item<double>(), 4950.0);
}

TEST_F(Cuda, SoftmaxMatchesTheCpu) {
  fg::manual_seed(5);
  for (fg::ScalarType t : {fg::kFloat, fg::kDouble}) {
    const double rtol = t == fg::kFloat ? 1e-5 : 1e-12;
    const Tensor x = fg::randn({2, 24, 2}, t) * 5;
    for (int64_t dim : {0, 1, 2, -1}) {
      expect_close(fg::softmax(cuda(x), dim), fg::softmax(x, dim), rtol, 1e-7);
      expect_close(fg::log_softmax(cuda(x), dim), fg::log_softmax(x, dim), rtol, 1e-6);
    }
  }
  // The result is contiguous whatever the dim, as on the CPU.
  EXPECT_TRUE(fg::softmax(cuda(fg::randn({3, 4})), 0).is_contiguous());
  EXPECT_EQ(fg::softmax(cuda(fg::randn({3, 4})), 0).view({-1}).numel(), 12);
  const Tensor inf = fg::tensor({-INFINITY, 0.0, 1.0});
  expect_close(fg::softmax(cuda(inf), 0), fg::softmax(inf, 0), 1e-6);
}

TEST_F(Cuda, MatrixProductsMatchTheCpu) {
  fg::manual_seed(6);
  for (fg::ScalarType t : {fg::kFloat, fg::kDouble}) {
    const double rtol = t == fg::kFloat ? 1e-5 : 1e-12, atol = t == fg::kFloat ? 1e-5 : 1e-12;
    const Tensor a = fg::randn({5, 3}, t), b = fg::randn({3, 4}, t);
    expect_close(fg::matmul(cuda(a), cuda(b)), fg::matmul(a, b), rtol, atol);
    expect_close(fg::mm(cuda(b).t(), cuda(a).t()), fg::mm(b.t(), a.t()), rtol, atol);
    const Tensor x = fg::randn({2, 1, 3, 4}, t), y = fg::randn({5, 4, 2}, t);
    expect_close(fg::matmul(cuda(x), cuda(y)), fg::matmul(x, y), rtol, atol);
    const Tensor p = fg::randn({6, 4, 3}, t), q = fg::randn({6, 3, 5}, t);
    expect_close(fg::bmm(cuda(p), cuda(q)), fg::bmm(p, q), rtol, atol);
    expect_close(fg::bmm(cuda(p).transpose(1, 2).contiguous().transpose(1, 2), cuda(q)), fg::bmm(p, q), rtol, atol);
    const Tensor v = fg::randn({3}, t);
    expect_close(fg::matmul(cuda(a), cuda(v)), fg::matmul(a, v), rtol, atol);
    expect_close(fg::matmul(cuda(v), cuda(b)), fg::matmul(v, b), rtol, atol);
    expect_close(fg::matmul(cuda(v), cuda(v)), fg::matmul(v, v), rtol, atol);
    expect_close(fg::matmul(cuda(a).slice(1, 0, 3, 2), cuda(b).slice(0, 0, 3, 2)),
                 fg::matmul(a.slice(1, 0, 3, 2), b.slice(0, 0, 3, 2)), rtol, atol);
    const Tensor m = fg::randn({3, 4}, t), u = fg::randn({3}, t);
    expect_close(fg::mv(cuda(a), cuda(v)), fg::mv(a, v), rtol, atol);
    expect_close(fg::dot(cuda(v), cuda(v)), fg::dot(v, v), rtol, atol);
    expect_close(fg::outer(cuda(v), cuda(u)), fg::outer(v, u), rtol, atol);
    expect_close(fg::linear(cuda(x), cuda(m), cuda(u)), fg::linear(x, m, u), rtol, atol);
    expect_close(fg::linear(cuda(x), cuda(m)), fg::linear(x, m), rtol, atol);
    // An empty batch broadcast against one matrix: nothing to compute, nothing written.
    const Tensor no_batch = fg::matmul(cuda(fg::zeros({0, 3, 4}, t)), cuda(fg::ones({4, 200}, t)));
    EXPECT_EQ(no_batch.sizes(), (std::vector<int64_t>{0, 3, 200}));
    const Tensor empty_k = fg::zeros({2, 0}, t);
    expect_close(fg::matmul(cuda(empty_k), cuda(fg::zeros({0, 3}, t))), fg::zeros({2, 3}, t));
  }
}

TEST_F(Cuda, RandomStreamsMatchTheCpuGenerator) {
  for (fg::ScalarType t : {fg::kFloat, fg::kDouble}) {
    fg::manual_seed(1234);
    const Tensor u_cpu = fg::rand({1001}, t), n_cpu = fg::randn({7, 9}, t);
    fg::manual_seed(1234);
    const Tensor u_cuda = fg::rand({1001}, fg::TensorOptions(t).device(fg::kCUDA));
    const Tensor n_cuda = fg::randn({7, 9}, fg::TensorOptions(t).device(fg::kCUDA));
    expect_close(u_cuda, u_cpu);  // exactly: the uniform bits are the same on every device
    // Box-Muller goes through the device's log/cos/sin, which may differ in the last bit.
    expect_close(n_cuda, n_cpu, t == fg::kFloat ? 1e-6 : 1e-14, 1e-14);
  }
}

TEST_F(Cuda, WhereClampAndComparisonsMatchTheCpu) {
  fg::manual_seed(7);
  for (fg::ScalarType t : {fg::kFloat, fg::kDouble, fg::kLong}) {
    const Tensor a = (fg::randn({4, 1, 3}) * 4).to(t), b = (fg::randn({5, 1}) * 4).to(t);
    const Tensor c = fg::randn({4, 5, 3}) > 0;
    expect_close(fg::where(cuda(c), cuda(a), cuda(b)), fg::where(c, a, b));
    expect_close(fg::where(cuda(c).transpose(0, 2), 2.5, cuda(a).transpose(0, 2)),
                 fg::where(c.transpose(0, 2), 2.5, a.transpose(0, 2)));
    expect_close(cuda(a).masked_fill(cuda(c), -7), a.masked_fill(c, -7));
    expect_close(fg::clamp(cuda(a), -1, 2), fg::clamp(a, -1, 2));
    expect_close(fg::clamp_min(cuda(a).transpose(0, 2), 0.5), fg::clamp_min(a.transpose(0, 2), 0.5));
    expect_close(fg::clamp(cuda(a), 3, -3), fg::clamp(a, 3, -3));  // lo > hi: hi, as torch
    expect_close(fg::triu(cuda(b * a.select(1, 0).sum())), fg::triu(b * a.select(1, 0).sum()));
  }
  const Tensor m = fg::randn({3, 4});
  expect_close(fg::tril(cuda(m), -1), fg::tril(m, -1));
  expect_close(fg::triu(cuda(m), 2), fg::triu(m, 2));
  const Tensor nan = fg::tensor({NAN, -3.0, 0.25, 9.0});
  expect_close(fg::clamp(cuda(nan), -1, 1), fg::clamp(nan, -1, 1));
  Tensor inplace = cuda(nan).clone();
  inplace.clamp_(std::nullopt, 0.5);
  expect_close(inplace, fg::clamp_max(nan, 0.5));
  expect_close(fg::clamp(cuda(fg::tensor({-3, 4, 9})), 0, 5), fg::tensor({0, 4, 5}));
  // isclose in double, as the CPU kernel; allclose and equal from it.
  const Tensor x = fg::tensor({1.0, 2.0, NAN, INFINITY, 1e-9}), y = fg::tensor({1.0 + 1e-9, 2.1, NAN, INFINITY, 0.0});
  expect_close(fg::isclose(cuda(x), cuda(y)), fg::isclose(x, y));
  expect_close(fg::isclose(cuda(x), cuda(y), 0.1, 0, true), fg::isclose(x, y, 0.1, 0, true));
  EXPECT_TRUE(fg::allclose(cuda(m), cuda(m) + 1e-9));
  EXPECT_FALSE(fg::allclose(cuda(m), cuda(m) + 1e-3));
  EXPECT_TRUE(fg::equal(cuda(m), cuda(m).clone()));
  EXPECT_FALSE(fg::equal(cuda(m), cuda(m).t().contiguous().t() + 1));
  EXPECT_EQ(error_of([&] { (void)fg::where(cuda(m) > 0, m, 0.0); }),
            "fg::where: expected all tensors to be on the same device, but found tensors on cuda:0 and cpu");
}

TEST_F(Cuda, IndexingMatchesTheCpu) {
  fg::manual_seed(8);
  for (fg::ScalarType t : {fg::kFloat, fg::kDouble, fg::kLong}) {
    const Tensor x = (fg::randn({4, 6, 5}) * 10).to(t);
    const Tensor idx = fg::tensor({3, 0, 3, 1});
    expect_close(fg::index_select(cuda(x), 0, cuda(idx)), fg::index_select(x, 0, idx));
    expect_close(fg::index_select(cuda(x).transpose(0, 2), 1, cuda(idx)), fg::index_select(x.transpose(0, 2), 1, idx));
    expect_close(fg::index_select(cuda(x), -1, cuda(idx)), fg::index_select(x, -1, idx));
    const Tensor g = (fg::rand({4, 3, 5}) * 6).to(fg::kLong);
    expect_close(fg::gather(cuda(x), 1, cuda(g)), fg::gather(x, 1, g));
    const Tensor g5 = (fg::rand({4, 3, 2}) * 5).to(fg::kLong), g4 = (fg::rand({1, 3, 5}) * 4).to(fg::kLong);
    expect_close(fg::gather(cuda(x), 2, cuda(g5)), fg::gather(x, 2, g5));
    // Repeated indices accumulate (atomically on the device).
    const Tensor src = (fg::randn({4, 3, 5}) * 10).to(t);
    const Tensor base = fg::zeros({4, 6, 5}, t);
    expect_close(fg::scatter_add(cuda(base), 1, cuda(g), cuda(src)), fg::scatter_add(base, 1, g, src),
                 t == fg::kFloat ? 1e-5 : 1e-12, 1e-5);
    Tensor acc = cuda(x).clone();
    acc.scatter_add_(0, cuda(g4), cuda(src));
    expect_close(acc, x.clone().scatter_add_(0, g4, src), t == fg::kFloat ? 1e-5 : 1e-12, 1e-5);
  }
  const Tensor scalar = fg::scalar_tensor(4.5);
  expect_close(fg::index_select(cuda(scalar), 0, cuda(fg::tensor({0}))), scalar.index_select(0, fg::tensor({0})));
  EXPECT_EQ(error_of([] {
              (void)fg::gather(cuda(fg::randn({3, 4})), 1, cuda(fg::tensor({1, 4}).reshape({1, 2})));
            }),
            "fg::gather: index 4 is out of bounds for dimension 1 with size 4");
  EXPECT_EQ(error_of([] {
              (void)fg::index_select(cuda(fg::randn({3, 4})), 0, cuda(fg::tensor({-1})));
            }),
            "fg::index_select: index -1 is out of bounds for dimension 0 with size 3");
  // Embedding and one_hot over int64 ids; nonzero, masked_select and unique wait for the values.
  const Tensor table = fg::randn({10, 3}), ids = fg::tensor({2, 9, 0, 2}).reshape({2, 2});
  expect_close(fg::embedding(cuda(table), cuda(ids)), fg::embedding(table, ids));
  expect_close(fg::one_hot(cuda(ids)), fg::one_hot(ids));
  expect_close(fg::one_hot(cuda(ids), 12), fg::one_hot(ids, 12));
  EXPECT_EQ(error_of([&] { (void)fg::one_hot(cuda(ids), 5); }),
            "fg::one_hot: class index 9 is out of range for 5 classes");
  const Tensor v = fg::tensor({0.0, 2.0, 0.0, -1.0, 2.0, NAN}).reshape({2, 3});
  expect_close(fg::nonzero(cuda(v)), fg::nonzero(v));
  expect_close(fg::masked_select(cuda(v), cuda(v) > 0), fg::masked_select(v, v > 0));
  expect_close(fg::unique(cuda(v)), fg::unique(v));
  // max/min along a dim with their first index; NaN counts as the extreme.
  for (const Tensor& y : {fg::tensor({3.0, 7.0, 7.0, -1.0, 2.0, 2.0}).reshape({2, 3}), v, fg::randn({3, 40, 2})}) {
    for (int64_t d : {0, 1, -1}) {
      const auto [cv, ci] = fg::max(cuda(y), d, true);
      const auto [hv, hi] = fg::max(y, d, true);
      expect_close(cv, hv);
      expect_close(ci, hi);
      const auto [mv, mi] = fg::min(cuda(y), d);
      const auto [nv, ni] = fg::min(y, d);
      expect_close(mv, nv);
      expect_close(mi, ni);
    }
    expect_close(fg::argmax(cuda(y)), fg::argmax(y));
    expect_close(fg::argmin(cuda(y), 1), fg::argmin(y, 1));
  }
}

TEST_F(Cuda, ShapesAndCompositeReductionsMatchTheCpu) {
  fg::manual_seed(9);
  const Tensor a = fg::randn({2, 3}), b = fg::randn({2, 5}, fg::kDouble), e = fg::empty({0});
  expect_close(fg::cat({cuda(a), cuda(b), cuda(e)}, 1), fg::cat({a, b, e}, 1));
  expect_close(fg::cat({cuda(a).t(), cuda(a).t()}, 0), fg::cat({a.t(), a.t()}, 0));
  expect_close(fg::stack({cuda(a), cuda(a) * 2}, 1), fg::stack({a, a * 2}, 1));
  expect_close(fg::diag_embed(cuda(a), 1), fg::diag_embed(a, 1));
  EXPECT_EQ(error_of([&] {
              (void)fg::cat({cuda(a), a});
            }),
            "fg::cat: expected all tensors to be on the same device, but found tensors on cuda:0 and cpu");
  for (fg::ScalarType t : {fg::kFloat, fg::kDouble}) {
    const double rtol = t == fg::kFloat ? 1e-5 : 1e-12;
    const Tensor x = fg::randn({3, 4, 6}, t) * 3;
    expect_close(fg::logsumexp(cuda(x), {2}), fg::logsumexp(x, {2}), rtol, rtol);
    expect_close(fg::logsumexp(cuda(x), {0, 1}, true), fg::logsumexp(x, {0, 1}, true), rtol, rtol);
    for (double p : {1.0, 2.0, 3.0, std::numeric_limits<double>::infinity()})
      expect_close(fg::norm(cuda(x), p, {1}, false), fg::norm(x, p, {1}, false), rtol, rtol);
    expect_close(fg::var(cuda(x), {1}, true, false), fg::var(x, {1}, true, false), rtol, rtol);
    expect_close(fg::std(cuda(x)), fg::std(x), rtol, rtol);
  }
}

TEST_F(Cuda, LossesMatchTheCpu) {
  fg::manual_seed(10);
  using fg::Reduction;
  for (fg::ScalarType t : {fg::kFloat, fg::kDouble}) {
    const double tol = t == fg::kFloat ? 1e-5 : 1e-12;
    const Tensor logits = fg::randn({6, 4}, t) * 2, target = fg::tensor({3, 0, 1, -100, 3, 2});
    const Tensor w = fg::rand({4}, t) + 0.5;
    for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
      expect_close(fg::cross_entropy(cuda(logits), cuda(target), std::nullopt, r),
                   fg::cross_entropy(logits, target, std::nullopt, r), tol, tol);
      expect_close(fg::nll_loss(cuda(logits).log_softmax(1), cuda(target), cuda(w), r),
                   fg::nll_loss(logits.log_softmax(1), target, w, r), tol, tol);
    }
    // [N, C, d] with the class dim second; a [C] input with a 0-d target.
    const Tensor images = fg::randn({2, 4, 3}, t), pixels = (fg::rand({2, 3}) * 4).to(fg::kLong);
    expect_close(fg::cross_entropy(cuda(images), cuda(pixels)), fg::cross_entropy(images, pixels), tol, tol);
    expect_close(fg::cross_entropy(cuda(logits.select(0, 0)), cuda(target.select(0, 0))),
                 fg::cross_entropy(logits.select(0, 0), target.select(0, 0)), tol, tol);
    const Tensor x = fg::randn({5, 3}, t), y = fg::randn({5, 3}, t);
    expect_close(fg::mse_loss(cuda(x), cuda(y)), fg::mse_loss(x, y), tol, tol);
    expect_close(fg::smooth_l1_loss(cuda(x), cuda(y), Reduction::None, 0.5),
                 fg::smooth_l1_loss(x, y, Reduction::None, 0.5), tol, tol);
    expect_close(fg::huber_loss(cuda(x), cuda(y), Reduction::Sum, 0.7), fg::huber_loss(x, y, Reduction::Sum, 0.7), tol,
                 tol);
    const Tensor p = fg::rand({5, 3}, t);
    expect_close(fg::binary_cross_entropy_with_logits(cuda(x), cuda(p)), fg::binary_cross_entropy_with_logits(x, p),
                 tol, tol);
  }
  EXPECT_EQ(error_of([] {
              (void)fg::cross_entropy(cuda(fg::randn({2, 3})), cuda(fg::tensor({1, 3})));
            }),
            "fg::cross_entropy: target 3 is out of bounds for 3 classes");
}

TEST_F(Cuda, LayersAndActivationsMatchTheCpu) {
  fg::manual_seed(11);
  for (fg::ScalarType t : {fg::kFloat, fg::kDouble}) {
    const double tol = t == fg::kFloat ? 2e-5 : 1e-12;
    const Tensor x = fg::randn({2, 4, 3, 2}, t) * 2 + 1, gamma = fg::randn({3, 2}, t), beta = fg::randn({3, 2}, t);
    expect_close(fg::layer_norm(cuda(x), {3, 2}, cuda(gamma), cuda(beta)), fg::layer_norm(x, {3, 2}, gamma, beta), tol,
                 tol);
    const Tensor cw = fg::randn({4}, t), cb = fg::randn({4}, t);
    expect_close(fg::group_norm(cuda(x), 2, cuda(cw), cuda(cb)), fg::group_norm(x, 2, cw, cb), tol, tol);
    Tensor mean = fg::zeros({4}, t), var = fg::ones({4}, t);
    Tensor cmean = cuda(mean), cvar = cuda(var);
    expect_close(fg::batch_norm(cuda(x), cuda(cw), cuda(cb), cmean, cvar, true),
                 fg::batch_norm(x, cw, cb, mean, var, true), tol, tol);
    expect_close(cmean, mean, tol, tol);
    expect_close(cvar, var, tol, tol);
    const Tensor q = fg::randn({2, 5, 4}, t), k = fg::randn({2, 6, 4}, t), v = fg::randn({2, 6, 3}, t);
    const Tensor keep = fg::rand({5, 6}) > 0.3, bias = fg::randn({5, 6}, t);
    expect_close(fg::scaled_dot_product_attention(cuda(q), cuda(k), cuda(v)), fg::scaled_dot_product_attention(q, k, v),
                 tol, tol);
    expect_close(fg::scaled_dot_product_attention(cuda(q), cuda(k), cuda(v), std::nullopt, 0.0, true),
                 fg::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, true), tol, tol);
    expect_close(fg::scaled_dot_product_attention(cuda(q), cuda(k), cuda(v), cuda(keep)),
                 fg::scaled_dot_product_attention(q, k, v, keep), tol, tol);
    expect_close(fg::scaled_dot_product_attention(cuda(q), cuda(k), cuda(v), cuda(bias), 0.0, false, 0.3),
                 fg::scaled_dot_product_attention(q, k, v, bias, 0.0, false, 0.3), tol, tol);
    const Tensor a = fg::randn({4, 5}, t) * 3;
    expect_close(fg::leaky_relu(cuda(a), 0.1), fg::leaky_relu(a, 0.1), tol, tol);
    expect_close(fg::elu(cuda(a), 1.5), fg::elu(a, 1.5), tol, tol);
    expect_close(fg::elu(cuda(fg::tensor({-1e-7, -30.0}, t))), fg::elu(fg::tensor({-1e-7, -30.0}, t)), tol, 0);
    expect_close(fg::softplus(cuda(a), 2, 5), fg::softplus(a, 2, 5), tol, tol);
    expect_close(fg::gelu(cuda(a)), fg::gelu(a), tol, tol);
    expect_close(fg::gelu(cuda(a), "tanh"), fg::gelu(a, "tanh"), tol, tol);
    expect_close(fg::hardtanh(cuda(a), -1, 2), fg::hardtanh(a, -1, 2));
    // One Philox stream: a seed drops the same elements on every device.
    fg::manual_seed(99);
    const Tensor dropped = fg::dropout(a, 0.4, true);
    fg::manual_seed(99);
    expect_close(fg::dropout(cuda(a), 0.4, true), dropped, tol, tol);
  }
}

TEST_F(Cuda, ConvolutionsAndTheirAdjointsMatchTheCpu) {
  fg::manual_seed(12);
  for (fg::ScalarType t : {fg::kFloat, fg::kDouble}) {
    const double tol = t == fg::kFloat ? 1e-5 : 1e-12;
    const Tensor x = fg::randn({2, 4, 7, 6}, t), w = fg::randn({6, 2, 3, 2}, t), b = fg::randn({6}, t);
    const std::vector<int64_t> stride{2, 1}, padding{1, 2}, dilation{1, 2};
    const Tensor w1 = fg::randn({6, 4, 3, 3}, t);
    expect_close(fg::conv2d(cuda(x), cuda(w1), cuda(b)), fg::conv2d(x, w1, b), tol, tol);
    expect_close(fg::conv2d(cuda(x), cuda(w), cuda(b), stride, padding, dilation, 2),
                 fg::conv2d(x, w, b, stride, padding, dilation, 2), tol, tol);
    const Tensor one = x.select(0, 1);  // unbatched
    expect_close(fg::conv2d(cuda(one), cuda(w), std::nullopt, {1}, fg::PaddingMode("same"), {1}, 2),
                 fg::conv2d(one, w, std::nullopt, {1}, fg::PaddingMode("same"), {1}, 2), tol, tol);
    const Tensor sig = fg::randn({3, 2, 9}, t), k = fg::randn({5, 2, 3}, t);
    expect_close(fg::conv1d(cuda(sig), cuda(k), std::nullopt, {2}, {1}), fg::conv1d(sig, k, std::nullopt, {2}, {1}),
                 tol, tol);
    // The adjoints (the derivatives' kernels) and the transposed convolution built on them.
    const Tensor y = fg::conv2d(x, w, b, stride, padding, dilation, 2), g = fg::randn(y.sizes(), t);
    expect_close(fg::ad::conv_backward_input(cuda(g), x.sizes(), cuda(w), stride, padding, dilation, 2),
                 fg::ad::conv_backward_input(g, x.sizes(), w, stride, padding, dilation, 2), tol, tol);
    expect_close(fg::ad::conv_backward_weight(cuda(g), cuda(x), w.sizes(), stride, padding, dilation, 2),
                 fg::ad::conv_backward_weight(g, x, w.sizes(), stride, padding, dilation, 2), tol, tol);
    const Tensor up = fg::randn({2, 4, 3, 3}, t), uw = fg::randn({4, 3, 3, 3}, t);
    expect_close(fg::conv_transpose2d(cuda(up), cuda(uw), std::nullopt, {2}, {1}, {1}),
                 fg::conv_transpose2d(up, uw, std::nullopt, {2}, {1}, {1}), tol, tol);
  }
}

TEST_F(Cuda, PoolsAndTheirAdjointsMatchTheCpu) {
  fg::manual_seed(13);
  for (fg::ScalarType t : {fg::kFloat, fg::kDouble}) {
    const double tol = t == fg::kFloat ? 1e-5 : 1e-12;
    Tensor x = fg::randn({2, 3, 7, 6}, t);
    x.select(1, 1).select(1, 2).fill_(NAN);  // NaN wins its windows
    x.select(1, 2).fill_(-INFINITY);         // windows of -inf pick their first element
    const std::vector<int64_t> k{3, 2}, s{2, 2}, p{1, 1}, d{1, 2};
    expect_close(fg::max_pool2d(cuda(x), k), fg::max_pool2d(x, k));
    expect_close(fg::max_pool2d(cuda(x), k, s, p, d, true), fg::max_pool2d(x, k, s, p, d, true));
    expect_close(fg::max_pool1d(cuda(x.select(2, 0)), {3}, {2}, {1}), fg::max_pool1d(x.select(2, 0), {3}, {2}, {1}));
    const Tensor y = fg::max_pool2d(x, k, s, p, d, true), g = fg::randn(y.sizes(), t), tx = fg::randn(x.sizes(), t);
    expect_close(fg::ad::max_pool_scatter(cuda(g), cuda(x), k, s, p, d, true, 2),
                 fg::ad::max_pool_scatter(g, x, k, s, p, d, true, 2), tol, tol);
    expect_close(fg::ad::max_pool_gather(cuda(tx), cuda(x), k, s, p, d, true, 2),
                 fg::ad::max_pool_gather(tx, x, k, s, p, d, true, 2));
    const Tensor z = fg::randn({2, 3, 7, 6}, t);
    for (bool include_pad : {true, false}) {
      expect_close(fg::avg_pool2d(cuda(z), k, s, p, true, include_pad), fg::avg_pool2d(z, k, s, p, true, include_pad),
                   tol, tol);
      const Tensor a = fg::avg_pool2d(z, k, s, p, true, include_pad), ga = fg::randn(a.sizes(), t);
      expect_close(fg::ad::avg_pool2d_backward(cuda(ga), z.sizes(), k, s, p, true, include_pad, std::nullopt),
                   fg::ad::avg_pool2d_backward(ga, z.sizes(), k, s, p, true, include_pad, std::nullopt), tol, tol);
    }
    expect_close(fg::avg_pool2d(cuda(z), {2, 2}, {}, {0}, false, true, 3),
                 fg::avg_pool2d(z, {2, 2}, {}, {0}, false, true, 3), tol, tol);
    expect_close(fg::adaptive_avg_pool2d(cuda(z), {3, 4}), fg::adaptive_avg_pool2d(z, {3, 4}), tol, tol);
    const Tensor gz = fg::randn({2, 3, 3, 4}, t);
    expect_close(fg::ad::adaptive_avg_pool2d_backward(cuda(gz), z.sizes()),
                 fg::ad::adaptive_avg_pool2d_backward(gz, z.sizes()), tol, tol);
  }
}

TEST_F(Cuda, AveragesKeepInfinitiesInTheirOwnWindows) {
  Tensor x = fg::randn({1, 2, 5, 6});
  x.select(1, 0).select(1, 1).select(1, 2).fill_(INFINITY);
  x.select(1, 1).select(1, 4).select(1, 0).fill_(NAN);
  expect_close(fg::avg_pool2d(cuda(x), {2, 2}), fg::avg_pool2d(x, {2, 2}), 1e-6, 1e-6);
  expect_close(fg::avg_pool2d(cuda(x), {3, 3}, {2, 2}, {1, 1}, true, false),
               fg::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, true, false), 1e-6, 1e-6);
  expect_close(fg::adaptive_avg_pool2d(cuda(x), {2, 4}), fg::adaptive_avg_pool2d(x, {2, 4}), 1e-6, 1e-6);
  Tensor g = fg::randn({1, 2, 2, 4});
  g.select(1, 0).select(1, 0).select(1, 1).fill_(-INFINITY);
  expect_close(fg::ad::adaptive_avg_pool2d_backward(cuda(g), x.sizes()),
               fg::ad::adaptive_avg_pool2d_backward(g, x.sizes()), 1e-6, 1e-6);
  const Tensor h = fg::randn({1, 2, 2, 3}).masked_fill(fg::eye(2, 3).to(fg::kBool), INFINITY);
  expect_close(fg::ad::avg_pool2d_backward(cuda(h), {1, 2, 5, 6}, {2, 2}, {}, {0}, false, true, std::nullopt),
               fg::ad::avg_pool2d_backward(h, {1, 2, 5, 6}, {2, 2}, {}, {0}, false, true, std::nullopt), 1e-6, 1e-6);
}

TEST_F(Cuda, RearrangementsAndBadIndicesMatchTheCpu) {
  const Tensor x = fg::randn({3, 4, 2});
  expect_close(fg::flip(cuda(x), {0, 2}), fg::flip(x, {0, 2}));
  expect_close(fg::roll(cuda(x), {1, -3}, {0, 1}), fg::roll(x, {1, -3}, {0, 1}));
  // The first bad index in row-major order is the one reported, as on the CPU.
  const Tensor m = fg::randn({3, 4}), bad = fg::tensor({5, -1}).reshape({1, 2});
  EXPECT_EQ(error_of([&] { (void)fg::gather(cuda(m), 1, cuda(bad)); }), error_of([&] { (void)fg::gather(m, 1, bad); }));
  EXPECT_EQ(error_of([&] { (void)fg::gather(cuda(m), 1, cuda(bad)); }),
            "fg::gather: index 5 is out of bounds for dimension 1 with size 4");
  const Tensor targets = fg::tensor({-100, 5, -3});
  EXPECT_EQ(error_of([&] { (void)fg::cross_entropy(cuda(m), cuda(targets)); }),
            error_of([&] { (void)fg::cross_entropy(m, targets); }));
  EXPECT_EQ(error_of([&] { (void)fg::cross_entropy(cuda(m), cuda(targets)); }),
            "fg::cross_entropy: target 5 is out of bounds for 4 classes");
  // An empty result still checks its index.
  const Tensor none = fg::zeros({0, 3}), seven = fg::tensor({7});
  EXPECT_EQ(error_of([&] { (void)fg::index_select(cuda(none), 1, cuda(seven)); }),
            error_of([&] { (void)fg::index_select(none, 1, seven); }));
  EXPECT_NE(error_of([&] { (void)fg::index_select(none, 1, seven); }), "");
  // The gradient of nll_loss lands on the input's device with a 0-d CPU target.
  const Tensor logp = fg::randn({4}).log_softmax(0), target = fg::tensor({2}).reshape({});
  const Tensor seed = fg::ones({});
  expect_close(fg::ad::nll_loss_backward(cuda(seed), cuda(logp), target, std::nullopt, fg::Reduction::Mean, -100),
               fg::ad::nll_loss_backward(seed, logp, target, std::nullopt, fg::Reduction::Mean, -100));
}

TEST_F(Cuda, MixedDevicesAndUnsupportedDtypesAreErrors) {
  const Tensor c = fg::ones({3}, fg::TensorOptions().device(fg::kCUDA)), h = fg::ones({3});
  try {
    (void)(c + h);
    ADD_FAILURE() << "expected an fg::Error";
  } catch (const fg::Error& e) {
    EXPECT_STREQ(e.what(),
                 "fg::add: expected all tensors to be on the same device, but found tensors on cuda:0 and cpu");
  }
  // Every operand counts, the optional ones and a 0-d self too (never a host read of device memory).
  const Tensor cpu_x = fg::randn({2, 3}), cuda_w = fg::ones({3}, fg::TensorOptions().device(fg::kCUDA));
  EXPECT_EQ(error_of([&] { (void)fg::layer_norm(cpu_x, {3}, cuda_w); }),
            "fg::layer_norm: expected all tensors to be on the same device, but found tensors on cpu and cuda:0");
  const Tensor q = fg::randn({2, 3}), mask = fg::ones({2, 2}, fg::TensorOptions(fg::kBool).device(fg::kCUDA));
  EXPECT_EQ(error_of([&] { (void)fg::scaled_dot_product_attention(q, q, q, mask); }),
            "fg::scaled_dot_product_attention: expected all tensors to be on the same device, but found tensors on "
            "cpu and cuda:0");
  EXPECT_EQ(error_of([&] { (void)fg::gather(fg::scalar_tensor(1.0), 0, cuda(fg::tensor({0}).reshape({}))); }),
            "fg::gather: expected all tensors to be on the same device, but found tensors on cuda:0 and cpu");
  // Integer products have no cuBLAS kernel: an error that says what to do.
  const Tensor ints = fg::ones({2, 2}, fg::TensorOptions(fg::kLong).device(fg::kCUDA));
  EXPECT_EQ(error_of([&] { (void)fg::matmul(ints, ints); }),
            "fg::matmul: int64 products do not run on CUDA yet (cuBLAS has no integer GEMM); convert to float64");
  EXPECT_THROW((void)fg::ones({2}, fg::TensorOptions().device(fg::Device(fg::kCUDA, 1))), fg::Error);
  Tensor out = fg::empty({3});
  EXPECT_THROW(fg::add_out(out, c, c), fg::Error);
}

TEST_F(Cuda, PrintsLikeTorch) {
  std::ostringstream os;
  os << fg::tensor({1.5, 2.0}).cuda();
  EXPECT_EQ(os.str(), "tensor([1.5000, 2.0000], device='cuda:0')");
}

#if defined(FG_TEST_HOST_RUN)
TEST_F(Cuda, TensorsGiveTheirMemoryBack) {
  const size_t before = fg::testing::host_run_memory().allocated_bytes;
  {
    const Tensor x = fg::randn({64, 64}).cuda();
    const Tensor y = fg::matmul(x, x).softmax(1).sum(0);
    EXPECT_GT(fg::testing::host_run_memory().allocated_bytes, before);
  }
  EXPECT_EQ(fg::testing::host_run_memory().allocated_bytes, before);
  fg::cuda::empty_cache();
  EXPECT_EQ(fg::testing::host_run_memory().reserved_bytes, fg::testing::host_run_memory().allocated_bytes);
}
#endif

}  // namespace
