// Ops on kCUDA tensors against the same ops on the CPU backend (an independent implementation:
// Highway kernels and BLAS there, the CUDA kernels and the GEMM plan here). Built twice:
//  - test_cuda_host_run (tier 1, every machine): kCUDA runs on the CUDA backend compiled for the
//    CPU (host_run_backend.h), so dispatch, copies, the caching allocator and every kernel run;
//  - test_cuda_gpu (tier 2): the real backend; each test skips, naming the CUDA error, where no
//    GPU can be used (tests/gpu/run.sh runs it where one can, and fails on skips).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "device_test.h"

namespace {

using fg::Tensor;
using fg::testing::Cuda;
using fg::testing::cuda;
using fg::testing::expect_close;

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

TEST_F(Cuda, MixedDevicesAndCpuOnlyOpsAreErrors) {
  const Tensor c = fg::ones({3}, fg::TensorOptions().device(fg::kCUDA)), h = fg::ones({3});
  try {
    (void)(c + h);
    ADD_FAILURE() << "expected an fg::Error";
  } catch (const fg::Error& e) {
    EXPECT_STREQ(e.what(),
                 "fg::add: expected all tensors to be on the same device, but found tensors on cuda:0 and cpu");
  }
  try {
    (void)fg::cat({c, c});
    ADD_FAILURE() << "expected an fg::Error";
  } catch (const fg::Error& e) {
    EXPECT_STREQ(e.what(),
                 "fg::cat: expected a cpu tensor, got one on cuda:0 (this op does not run on CUDA yet: move its "
                 "operands with .cpu())");
  }
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
