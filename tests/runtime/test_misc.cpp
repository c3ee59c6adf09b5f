// Tensor data access and conversions (item, data_ptr, to, contiguous, clone, is_contiguous),
// checks (allclose, isclose, equal), value-dependent shapes (nonzero, is_nonzero, masked_select,
// unique), printing with operator<<, and the small value types (Scalar, ScalarType, Device).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "reference.h"

namespace {

using fg::Tensor;
using ref::Array;
using ref::Layout;
using ref::Shape;

std::string str(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

// ============================================================================ item, data_ptr

TEST(Item, ConvertsTheSingleElement) {
  EXPECT_EQ(fg::scalar_tensor(2.5).item<double>(), 2.5);
  EXPECT_EQ(fg::scalar_tensor(2.5).item<float>(), 2.5f);
  EXPECT_EQ(fg::scalar_tensor(-2.7).item<int64_t>(), -2);  // truncation toward zero
  EXPECT_EQ(fg::tensor({7}).item<int64_t>(), 7);
  EXPECT_EQ(fg::tensor({7}).item<int>(), 7);
  EXPECT_EQ(fg::tensor({7}).item<double>(), 7.0);
  EXPECT_TRUE(fg::tensor({true}).item<bool>());
  EXPECT_FALSE(fg::zeros({1, 1, 1}).item<bool>());
  EXPECT_TRUE(fg::full({1}, 0.25).item<bool>());
  EXPECT_EQ(fg::full({1, 1}, 3.0, fg::kDouble).item<double>(), 3.0);
  // The Scalar form keeps the kind of the dtype.
  EXPECT_TRUE(fg::scalar_tensor(1.5).item().isFloatingPoint());
  EXPECT_EQ(fg::scalar_tensor(1.5).item().toDouble(), 1.5);
  EXPECT_TRUE(fg::tensor({3}).item().isIntegral(false));
  EXPECT_EQ(fg::tensor({3}).item().toLong(), 3);
  EXPECT_TRUE(fg::tensor({true}).item().isBoolean());
  // Views read their own element.
  Tensor x = ref::to_tensor(Array({2, 3}, {1, 2, 3, 4, 5, 6}), fg::kFloat);
  EXPECT_EQ(x[1][2].item<float>(), 6.0f);
  EXPECT_EQ(x.t()[2][0].item<float>(), 3.0f);
  EXPECT_EQ(x.select(1, 1).slice(0, 1).item<double>(), 5.0);
  EXPECT_EQ(x.expand({4, 2, 3})[3][0][1].item<float>(), 2.0f);
}

TEST(Item, Errors) {
  EXPECT_FG_ERROR(fg::zeros({3}).item<float>(),
                  "fg::item: a tensor with 3 elements cannot be converted to a scalar (shape [3])");
  EXPECT_FG_ERROR(fg::zeros({2, 2}).item(),
                  "fg::item: a tensor with 4 elements cannot be converted to a scalar (shape [2, 2])");
  EXPECT_FG_ERROR(fg::zeros({0}).item<double>(),
                  "fg::item: a tensor with 0 elements cannot be converted to a scalar (shape [0])");
}

TEST(DataPtr, PointsAtTheFirstElement) {
  Tensor x = ref::to_tensor(Array({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), fg::kFloat);
  float* p = x.data_ptr<float>();
  EXPECT_EQ(p[5], 5.0f);
  EXPECT_EQ(static_cast<void*>(p), x.data_ptr());
  // A view's pointer includes its storage offset.
  EXPECT_EQ(x.select(0, 2).data_ptr<float>(), p + 8);
  EXPECT_EQ(x.narrow(1, 1, 2).data_ptr<float>(), p + 1);
  EXPECT_EQ(x.diagonal(1).data_ptr<float>(), p + 1);
  EXPECT_EQ(*x.select(0, 2).select(0, 3).data_ptr<float>(), 11.0f);
  // Writes through the pointer are seen by the tensor.
  p[0] = 42;
  EXPECT_EQ(x[0][0].item<float>(), 42.0f);
  EXPECT_NE(fg::zeros({2}, fg::kDouble).data_ptr<double>(), nullptr);
  EXPECT_NE(fg::zeros({2}, fg::kLong).data_ptr<int64_t>(), nullptr);
  EXPECT_NE(fg::zeros({2}, fg::kBool).data_ptr<bool>(), nullptr);
}

TEST(DataPtr, WrongTypeIsAnError) {
  EXPECT_FG_ERROR(fg::zeros({2}).data_ptr<double>(), "fg::data_ptr: expected a tensor of dtype float64, got float32");
  EXPECT_FG_ERROR(fg::zeros({2}, fg::kDouble).data_ptr<float>(),
                  "fg::data_ptr: expected a tensor of dtype float32, got float64");
  EXPECT_FG_ERROR(fg::tensor({1}).data_ptr<bool>(), "fg::data_ptr: expected a tensor of dtype bool, got int64");
  EXPECT_FG_ERROR(fg::tensor({true}).data_ptr<int64_t>(), "fg::data_ptr: expected a tensor of dtype int64, got bool");
}

// ============================================================================ to, contiguous, clone

TEST(To, DtypeConversions) {
  Tensor f = fg::tensor({2.7, -2.7, 0.0, -0.5, 3.0}, fg::kDouble);
  EXPECT_TENSOR_EQ(f.to(fg::kLong), Array({5}, {2, -2, 0, 0, 3}), fg::kLong);
  EXPECT_TENSOR_EQ(f.to(fg::kBool), Array({5}, {1, 1, 0, 1, 1}), fg::kBool);
  EXPECT_TENSOR_NEAR(f.to(fg::kFloat), ref::round_all(Array({5}, {2.7, -2.7, 0.0, -0.5, 3.0}), fg::kFloat), fg::kFloat,
                     ref::exact());
  EXPECT_TENSOR_NEAR(fg::tensor({true, false}).to(fg::kFloat), Array({2}, {1, 0}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::tensor({int64_t{1} << 40}).to(fg::kDouble), Array({1}, {double(int64_t{1} << 40)}),
                     fg::kDouble, ref::exact());
  EXPECT_TENSOR_EQ(fg::tensor({0, 5, -1}).to(fg::kBool), Array({3}, {0, 1, 1}), fg::kBool);
  // A NaN is truthy.
  EXPECT_TENSOR_EQ(fg::tensor({ref::nan()}).to(fg::kBool), Array({1}, {1}), fg::kBool);
  // Non-contiguous input: values follow the view; the result is contiguous and new.
  Tensor x = ref::to_tensor(Array({2, 3}, {1.5, 2.5, 3.5, 4.5, 5.5, 6.5}), fg::kFloat);
  Tensor y = x.t().to(fg::kDouble);
  EXPECT_TENSOR_NEAR(y, Array({3, 2}, {1.5, 4.5, 2.5, 5.5, 3.5, 6.5}), fg::kDouble, ref::exact());
  EXPECT_TRUE(y.is_contiguous());
  // to() the same dtype or device returns self (torch returns the same tensor).
  Tensor same = x.to(fg::kFloat);
  EXPECT_TRUE(same.is_same(x));
  EXPECT_TRUE(x.to(fg::kCPU).is_same(x));
  EXPECT_TRUE(x.cpu().is_same(x));
  EXPECT_TENSOR_NEAR(x.to(fg::Device(fg::kCPU), fg::kDouble), Array({2, 3}, {1.5, 2.5, 3.5, 4.5, 5.5, 6.5}),
                     fg::kDouble, ref::exact());
}

TEST(To, CudaIsAnErrorWithoutCuda) {
  if (fg::cuda::is_available()) GTEST_SKIP() << "CUDA is usable here";
  const std::string why = fg::cuda::unavailable_reason();
  Tensor x = fg::zeros({2, 3});
  EXPECT_FG_ERROR(x.to(fg::kCUDA), "fg::to: cannot move a tensor of shape [2, 3] from cpu to cuda:0: " + why);
  EXPECT_FG_ERROR(x.cuda(), "fg::to: cannot move a tensor of shape [2, 3] from cpu to cuda:0: " + why);
  EXPECT_FG_ERROR(x.to(fg::Device("cuda:1")), "fg::to: cannot move a tensor of shape [2, 3] from cpu to cuda:1: " + why);
  EXPECT_FG_ERROR(x.to(fg::Device("cuda"), fg::kDouble),
                  "fg::to: cannot move a tensor of shape [2, 3] from cpu to cuda:0: " + why);
}

TEST(Contiguity, ContiguousAndClone) {
  const Array a({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Tensor x = ref::to_tensor(a, fg::kFloat);
  // contiguous() of a contiguous tensor is the tensor itself.
  EXPECT_EQ(x.contiguous().data_ptr(), x.data_ptr());
  // Of a non-contiguous one, a contiguous copy with the same values.
  for (Layout layout : ref::all_layouts()) {
    SCOPED_TRACE(ref::layout_name(layout));
    ref::Rng rng(1);
    ref::Input in = ref::make_input({3, 4}, fg::kDouble, layout, rng);
    const Array v = ref::from_tensor(in.view);
    Tensor c = in.view.contiguous();
    EXPECT_TRUE(c.is_contiguous());
    EXPECT_EQ(ref::to_shape(c.strides()), (Shape{4, 1}));
    EXPECT_TENSOR_EQ(c, v, fg::kDouble);
    // clone: same values, own storage.
    Tensor k = in.view.clone();
    EXPECT_TENSOR_EQ(k, v, fg::kDouble);
    EXPECT_FALSE(k.unsafeGetTensorImpl()->storage == in.base.unsafeGetTensorImpl()->storage);
    k.fill_(-9);
    EXPECT_TENSOR_EQ(in.view, v, fg::kDouble);
    if (!in.view.is_contiguous()) {
      c.fill_(-9);
      EXPECT_TENSOR_EQ(in.view, v, fg::kDouble) << "contiguous() of a non-contiguous tensor copies";
    }
  }
  EXPECT_TENSOR_EQ(fg::tensor({true, false}).clone(), Array({2}, {1, 0}), fg::kBool);
  EXPECT_TENSOR_EQ(fg::tensor({5}).clone(), Array({1}, {5}), fg::kLong);
}

TEST(Contiguity, IsContiguous) {
  Tensor x = fg::zeros({3, 4});
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_FALSE(x.t().is_contiguous());
  EXPECT_FALSE(x.slice(1, 0, std::nullopt, 2).is_contiguous());
  EXPECT_TRUE(x.narrow(0, 1, 2).is_contiguous());
  EXPECT_FALSE(x.narrow(1, 1, 2).is_contiguous());
  EXPECT_TRUE(x.select(0, 1).is_contiguous());
  EXPECT_FALSE(x.select(1, 1).is_contiguous());
  EXPECT_FALSE(fg::zeros({3}).expand({2, 3}).is_contiguous());
  EXPECT_TRUE(x.unsqueeze(1).is_contiguous());
  EXPECT_TRUE(fg::zeros({4, 1}).t().is_contiguous()) << "size-1 dims do not matter";
  EXPECT_TRUE(fg::zeros({}).is_contiguous());
  // A tensor with no elements is contiguous whatever its strides (torch's is_contiguous).
  EXPECT_TRUE(fg::zeros({2, 0, 3}).is_contiguous());
  EXPECT_TRUE(fg::zeros({0, 3}).t().is_contiguous());
}

// ============================================================================ allclose, isclose, equal

TEST(Checks, AllcloseIscloseEqual) {
  Tensor a = fg::tensor({1.0, 2.0, 3.0}, fg::kDouble);
  EXPECT_TRUE(fg::allclose(a, a));
  EXPECT_TRUE(fg::allclose(a, a + 1e-6));   // 1e-6 <= 1e-8 + 1e-5 * |b|
  EXPECT_FALSE(fg::allclose(a, a + 1e-3));
  EXPECT_TRUE(fg::allclose(a, a + 1e-3, 1e-3));
  EXPECT_TRUE(fg::allclose(a, a + 0.5, 0.0, 0.5));
  EXPECT_FALSE(fg::allclose(a, a + 0.5, 0.0, 0.49));
  // |a - b| <= atol + rtol * |b|: relative to the second argument.
  Tensor x = fg::tensor({100.0}, fg::kDouble), y = fg::tensor({110.0}, fg::kDouble);
  EXPECT_TRUE(fg::allclose(x, y, 10.0 / 110.0 + 1e-12, 0.0));
  EXPECT_FALSE(fg::allclose(y, x, 10.0 / 110.0 + 1e-12, 0.0));
  // Broadcasting.
  EXPECT_TRUE(fg::allclose(fg::ones({3, 4}), fg::ones({4})));
  EXPECT_FALSE(fg::allclose(fg::ones({3, 4}), fg::zeros({4})));
  // NaN and infinities.
  const double inf = ref::inf(), nan = ref::nan();
  Tensor n = fg::tensor({nan, inf, -inf, 1.0});
  EXPECT_FALSE(fg::allclose(n, n));
  EXPECT_TRUE(fg::allclose(n, n, 1e-5, 1e-8, true));
  EXPECT_FALSE(fg::allclose(fg::tensor({inf}), fg::tensor({-inf}), 1.0, 1e30));
  EXPECT_FALSE(fg::allclose(fg::tensor({inf}), fg::tensor({1e30}), 1.0, 1e30));
  EXPECT_TENSOR_EQ(fg::isclose(n, fg::tensor({nan, inf, inf, 1.0 + 1e-7})), Array({4}, {0, 1, 0, 1}), fg::kBool);
  EXPECT_TENSOR_EQ(fg::isclose(n, n, 1e-5, 1e-8, true), Array({4}, {1, 1, 1, 1}), fg::kBool);
  EXPECT_TENSOR_EQ(fg::isclose(fg::tensor({1, 2}), fg::tensor({1, 3})), Array({2}, {1, 0}), fg::kBool);
  // Non-contiguous operands.
  Tensor m = ref::to_tensor(Array({2, 2}, {1, 2, 3, 4}), fg::kFloat);
  EXPECT_TRUE(fg::allclose(m.t(), ref::to_tensor(Array({2, 2}, {1, 3, 2, 4}), fg::kFloat)));
  // equal: same shape and exactly the same values.
  EXPECT_TRUE(fg::equal(m, m.clone()));
  EXPECT_TRUE(fg::equal(m.t(), ref::to_tensor(Array({2, 2}, {1, 3, 2, 4}), fg::kFloat)));
  EXPECT_FALSE(fg::equal(m, m + 1e-3));
  EXPECT_FALSE(fg::equal(fg::ones({2}), fg::ones({1, 2})));
  EXPECT_FALSE(fg::equal(fg::ones({2}), fg::ones({1})));
  EXPECT_FALSE(fg::equal(n, n));
  EXPECT_TRUE(fg::equal(fg::zeros({0}), fg::zeros({0})));
  // Errors.
  EXPECT_FG_ERROR(fg::allclose(fg::zeros({3}), fg::zeros({4})), "fg::allclose: shapes [3] and [4] cannot be broadcast");
  EXPECT_FG_ERROR(fg::allclose(fg::zeros({3}), fg::zeros({3}, fg::kDouble)),
                  "fg::allclose: expected both tensors to have the same dtype, got float32 and float64");
  EXPECT_FG_ERROR(fg::isclose(fg::zeros({3}), fg::zeros({3}, fg::kLong)),
                  "fg::isclose: expected both tensors to have the same dtype, got float32 and int64");
}

// ============================================================================ value-dependent shapes

TEST(Dynamic, Nonzero) {
  Tensor x = ref::to_tensor(Array({3, 4}, {0, 1, 0, 2, 0, 0, 0, 0, 3, 0, 4, 5}), fg::kFloat);
  EXPECT_TENSOR_EQ(x.nonzero(), Array({5, 2}, {0, 1, 0, 3, 2, 0, 2, 2, 2, 3}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::nonzero(x), Array({5, 2}, {0, 1, 0, 3, 2, 0, 2, 2, 2, 3}), fg::kLong);
  // Coordinates of the view, in its own row-major order.
  EXPECT_TENSOR_EQ(x.t().nonzero(), Array({5, 2}, {0, 2, 1, 0, 2, 2, 3, 0, 3, 2}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::tensor({true, false, true}).nonzero(), Array({2, 1}, {0, 2}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::tensor({0, -3, 0}).nonzero(), Array({1, 1}, {1}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::tensor({ref::nan(), 0.0}).nonzero(), Array({1, 1}, {0}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::zeros({2, 3}).nonzero(), Array({0, 2}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::zeros({0}).nonzero(), Array({0, 1}), fg::kLong);
  // A 0-d tensor: torch gives shape [1, 0] when it is nonzero and [0, 0] when not.
  EXPECT_TENSOR_EQ(fg::scalar_tensor(5.0).nonzero(), Array({1, 0}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::scalar_tensor(0.0).nonzero(), Array({0, 0}), fg::kLong);
  Tensor big = fg::zeros({1000});
  big.narrow(0, 990, 10).fill_(1);
  big[3].fill_(-1);
  const Array nz = ref::from_tensor(big.nonzero());
  ASSERT_EQ(nz.shape, (Shape{11, 1}));
  EXPECT_EQ(nz.data[0], 3);
  EXPECT_EQ(nz.data[10], 999);
}

TEST(Dynamic, IsNonzero) {
  EXPECT_TRUE(fg::is_nonzero(fg::tensor({0.5})));
  EXPECT_FALSE(fg::is_nonzero(fg::zeros({1, 1})));
  EXPECT_TRUE(fg::tensor({true}).is_nonzero());
  EXPECT_FALSE(fg::tensor({0}).is_nonzero());
  EXPECT_TRUE(fg::scalar_tensor(ref::nan()).is_nonzero());
  EXPECT_FG_ERROR(fg::is_nonzero(fg::zeros({2})),
                  "fg::is_nonzero: boolean value of a tensor with more than one value is ambiguous (shape [2])");
  EXPECT_FG_ERROR(fg::zeros({0}).is_nonzero(), "fg::is_nonzero: boolean value of a tensor with no values is ambiguous");
}

TEST(Dynamic, MaskedSelect) {
  ref::Rng rng(3);
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble, fg::kLong}) {
    for (Layout layout : ref::all_layouts()) {
      for (const auto& [xs, ms] : std::vector<std::pair<Shape, Shape>>{
               {{3, 4}, {3, 4}}, {{3, 4}, {4}}, {{4}, {3, 4}}, {{2, 1, 5}, {3, 1}}, {{}, {}}, {{5}, {}}}) {
        SCOPED_TRACE(std::string(fg::toString(dt)) + " " + ref::layout_name(layout) + " " + ref::shape_str(xs) +
                     " mask " + ref::shape_str(ms));
        ref::Input x = ref::make_input(xs, dt, layout, rng);
        ref::Input m = ref::make_input(ms, fg::kBool, layout == Layout::Expanded ? Layout::Transposed : layout, rng);
        const Array xa = ref::from_tensor(x.view), ma = ref::from_tensor(m.view);
        const Shape shape = ref::broadcast(xa.shape, ma.shape);
        std::vector<double> picked;
        ref::for_each_index(shape, [&](const Shape& i) {
          if (ref::bget(ma, i) != 0) picked.push_back(ref::bget(xa, i));
        });
        const Array expected({static_cast<int64_t>(picked.size())}, picked);
        EXPECT_TENSOR_EQ(fg::masked_select(x.view, m.view), expected, dt);
        EXPECT_TENSOR_EQ(x.view.masked_select(m.view), expected, dt);
      }
    }
  }
  EXPECT_FG_ERROR(fg::masked_select(fg::zeros({3}), fg::zeros({3})), "fg::masked_select: expected a bool mask, got float32");
  EXPECT_FG_ERROR(fg::masked_select(fg::zeros({3}), fg::zeros({2}, fg::kBool)),
                  "fg::masked_select: shapes [3] and [2] cannot be broadcast");
}

TEST(Dynamic, Unique) {
  Tensor x = ref::to_tensor(Array({2, 4}, {3, 1, 2, 3, 1, -5, 2, 0}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::unique(x), Array({5}, {-5, 0, 1, 2, 3}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::unique(x.t()), Array({5}, {-5, 0, 1, 2, 3}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::unique(fg::tensor({4, 4, 4})), Array({1}, {4}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::unique(fg::tensor({true, false, true})), Array({2}, {0, 1}), fg::kBool);
  EXPECT_TENSOR_EQ(fg::unique(fg::zeros({0}, fg::kDouble)), Array({0}), fg::kDouble);
  EXPECT_TENSOR_EQ(fg::unique(fg::scalar_tensor(2.0)), Array({1}, {2}), fg::kFloat);
  ref::Rng rng(4);
  const Array r = ref::random_array({1000}, rng, ref::Domain{-20, 20, true}, fg::kLong);
  std::vector<double> s = r.data;
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  EXPECT_TENSOR_EQ(fg::unique(ref::to_tensor(r, fg::kLong)), Array({static_cast<int64_t>(s.size())}, s), fg::kLong);
}

// ============================================================================ printing

TEST(Printing, LikePythonRepr) {
  EXPECT_EQ(str(fg::tensor({1.0, 2.0, 3.0})), "tensor([1., 2., 3.])");
  EXPECT_EQ(str(fg::tensor({1.5, -2.0})), "tensor([ 1.5000, -2.0000])");
  EXPECT_EQ(str(fg::tensor({1, -20, 3})), "tensor([  1, -20,   3])");
  EXPECT_EQ(str(fg::tensor({true, false})), "tensor([ True, False])");
  EXPECT_EQ(str(fg::tensor({{1.0, 2.0}, {3.0, 4.0}})), "tensor([[1., 2.],\n        [3., 4.]])");
  EXPECT_EQ(str(fg::arange(8).view({2, 2, 2})),
            "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])");
  EXPECT_EQ(str(fg::scalar_tensor(3.0)), "tensor(3.)");
  EXPECT_EQ(str(fg::scalar_tensor(2.5)), "tensor(2.5000)");
  EXPECT_EQ(str(fg::tensor({0.5, 1.0}, fg::kDouble)), "tensor([0.5000, 1.0000], dtype=float64)");
  EXPECT_EQ(str(fg::zeros({0})), "tensor([])");
  EXPECT_EQ(str(fg::zeros({2, 0})), "tensor([], size=[2, 0])");
  EXPECT_EQ(str(fg::tensor({1e-5, 1.0})), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(str(fg::tensor({ref::nan(), ref::inf(), 1.0})), "tensor([nan, inf,  1.])");
  // A transposed view prints its own layout.
  EXPECT_EQ(str(fg::tensor({{1, 2}, {3, 4}}).t()), "tensor([[1, 3],\n        [2, 4]])");
  // More than 1000 elements: the first and last three of each dim.
  EXPECT_EQ(str(fg::arange(2000)), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  EXPECT_EQ(str(Tensor()), "tensor(undefined)");
}

TEST(Printing, ValueTypes) {
  std::ostringstream os;
  os << fg::kFloat << ' ' << fg::kDouble << ' ' << fg::kLong << ' ' << fg::kBool << ' ' << fg::Device("cpu") << ' '
     << fg::Device("cuda:1") << ' ' << fg::Scalar(2.5) << ' ' << fg::Scalar(3) << ' ' << fg::Scalar(true) << ' '
     << fg::IntArrayRef({3, 4});
  EXPECT_EQ(os.str(), "float32 float64 int64 bool cpu cuda:1 2.5 3 true [3, 4]");
}

// ============================================================================ value types

TEST(ValueTypes, ScalarTypePromotionAndSizes) {
  const std::vector<fg::ScalarType> order = {fg::kBool, fg::kLong, fg::kFloat, fg::kDouble};
  for (size_t i = 0; i < order.size(); ++i)
    for (size_t j = 0; j < order.size(); ++j)
      EXPECT_EQ(fg::promoteTypes(order[i], order[j]), order[std::max(i, j)]) << i << " " << j;
  EXPECT_EQ(fg::elementSize(fg::kBool), 1u);
  EXPECT_EQ(fg::elementSize(fg::kLong), 8u);
  EXPECT_EQ(fg::elementSize(fg::kFloat), 4u);
  EXPECT_EQ(fg::elementSize(fg::kDouble), 8u);
  EXPECT_TRUE(fg::isFloatingType(fg::kFloat));
  EXPECT_FALSE(fg::isFloatingType(fg::kLong));
  EXPECT_TRUE(fg::isIntegralType(fg::kBool, true));
  EXPECT_FALSE(fg::isIntegralType(fg::kBool, false));
  EXPECT_EQ(fg::zeros({1}, fg::kDouble).element_size(), 8u);
}

TEST(ValueTypes, ScalarAndDevice) {
  EXPECT_TRUE(fg::Scalar(2.5).isFloatingPoint());
  EXPECT_TRUE(fg::Scalar(2.5f).isFloatingPoint());
  EXPECT_EQ(fg::Scalar(3).type(), fg::kLong);
  EXPECT_EQ(fg::Scalar(int64_t{3}).type(), fg::kLong);
  EXPECT_TRUE(fg::Scalar(false).isBoolean());
  EXPECT_EQ(fg::Scalar(-2.7).toLong(), -2);
  EXPECT_EQ(fg::Scalar(7).toDouble(), 7.0);
  EXPECT_TRUE(fg::Scalar(0.1).toBool());
  fg::Device cpu("cpu"), cuda1("cuda:1"), cuda("cuda");
  EXPECT_TRUE(cpu.is_cpu());
  EXPECT_TRUE(cuda1.is_cuda());
  EXPECT_EQ(cuda1.index(), 1);
  EXPECT_EQ(cuda.str(), "cuda:0");
  EXPECT_EQ(cpu, fg::Device(fg::kCPU));
  EXPECT_NE(cpu, cuda);
  EXPECT_FG_ERROR(fg::Device("gpu"), "fg::Device: invalid device string 'gpu' (expected cpu, cuda or cuda:N)");
  EXPECT_FG_ERROR(fg::Device("cuda:x"), "fg::Device: invalid device string 'cuda:x'");
  EXPECT_TRUE(fg::zeros({1}).device().is_cpu());
  EXPECT_EQ(fg::zeros({1}, fg::kDouble).options().dtype(), fg::kDouble);
}

TEST(ValueTypes, UndefinedTensor) {
  Tensor u;
  EXPECT_FALSE(u.defined());
  EXPECT_TRUE(fg::zeros({1}).defined());
  EXPECT_FG_ERROR(u.dim(), "fg::Tensor: the tensor is undefined (default-constructed)");
  EXPECT_FG_ERROR(fg::add(u, fg::zeros({1})), "fg::add: the input tensor is undefined");
  EXPECT_FG_ERROR(fg::sum(u), "fg::sum: the input tensor is undefined");
  EXPECT_FG_ERROR(u.view({1}), "fg::view: the input tensor is undefined");
}

}  // namespace

namespace {

// ============================================================================ metadata

TEST(Metadata, SizesStridesDims) {
  Tensor x = fg::zeros({2, 3, 4});
  EXPECT_EQ(x.dim(), 3);
  EXPECT_EQ(x.ndimension(), 3);
  EXPECT_EQ(x.size(0), 2);
  EXPECT_EQ(x.size(-1), 4);
  EXPECT_EQ(x.stride(0), 12);
  EXPECT_EQ(x.stride(-2), 4);
  EXPECT_EQ(x.numel(), 24);
  EXPECT_EQ(x.sizes(), fg::IntArrayRef({2, 3, 4}));
  EXPECT_EQ(x.strides(), fg::IntArrayRef({12, 4, 1}));
  EXPECT_EQ(x.scalar_type(), fg::kFloat);
  EXPECT_TRUE(x.is_floating_point());
  EXPECT_FALSE(fg::zeros({1}, fg::kLong).is_floating_point());
  Tensor v = x.permute({2, 0, 1}).select(1, 1);
  EXPECT_EQ(v.sizes(), fg::IntArrayRef({4, 3}));
  EXPECT_EQ(v.strides(), fg::IntArrayRef({1, 4}));
  EXPECT_EQ(v.storage_offset(), 12);
  EXPECT_EQ(fg::scalar_tensor(1.0).dim(), 0);
  EXPECT_EQ(fg::scalar_tensor(1.0).numel(), 1);
  EXPECT_EQ(fg::zeros({3, 0}).numel(), 0);
  Tensor same = x;  // copying a Tensor copies the handle
  EXPECT_TRUE(same.is_same(x));
  EXPECT_FALSE(x.view({24}).is_same(x));
  EXPECT_FG_ERROR(x.size(3),
                  "fg::size: dimension 3 is out of range for a tensor of 3 dimensions (expected to be in range [-3, 2])");
  EXPECT_FG_ERROR(x.stride(-4),
                  "fg::stride: dimension -4 is out of range for a tensor of 3 dimensions (expected to be in range [-3, 2])");
  EXPECT_FG_ERROR(fg::scalar_tensor(1.0).size(0), "fg::size: dimension specified as 0 but tensor has no dimensions");
  EXPECT_FG_ERROR(fg::scalar_tensor(1.0).stride(-1), "fg::stride: dimension specified as -1 but tensor has no dimensions");
}

// ============================================================================ the reference itself

// The reference must be able to fail: these pin down its reading of strides, its broadcasting and
// its comparison, independently of the runtime's view ops (from_blob with explicit strides).
TEST(Reference, ReadsStridedMemoryAndComparesStrictly) {
  std::vector<double> buf = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  Tensor t = fg::from_blob(buf.data() + 1, {2, 3}, {1, 4}, fg::kDouble);  // t[i][j] = buf[1 + i + 4j]
  const Array a = ref::from_tensor(t);
  EXPECT_EQ(a.shape, (Shape{2, 3}));
  EXPECT_EQ(a.data, (std::vector<double>{1, 5, 9, 2, 6, 10}));
  EXPECT_TRUE(ref::tensor_matches(t, a, fg::kDouble, ref::exact()));
  Array off = a;
  off.data[4] += 1e-9;
  EXPECT_FALSE(ref::tensor_matches(t, off, fg::kDouble, ref::exact()));
  EXPECT_TRUE(ref::tensor_matches(t, off, fg::kDouble, ref::Tol{0, 1e-8}));
  EXPECT_FALSE(ref::tensor_matches(t, a, fg::kFloat, ref::exact())) << "dtype is checked";
  EXPECT_FALSE(ref::tensor_matches(t, Array({3, 2}, a.data), fg::kDouble, ref::exact())) << "shape is checked";
  EXPECT_FALSE(ref::tensor_matches(t, ref::map(a, [](double v) { return v == 6 ? ref::nan() : v; }), fg::kDouble,
                                   ref::Tol{1, 1}))
      << "NaN matches only NaN";
  EXPECT_FALSE(ref::close(ref::inf(), 1e308, ref::Tol{1, 1e308}));
  // Writing through strides.
  ref::write_into(t, Array({2, 3}, {-1, -2, -3, -4, -5, -6}));
  EXPECT_EQ(buf, (std::vector<double>{0, -1, -4, 3, 4, -2, -5, 7, 8, -3, -6, 11}));
  // Broadcasting and reduction arithmetic.
  EXPECT_EQ(ref::broadcast({2, 1, 5}, {3, 1}), (Shape{2, 3, 5}));
  EXPECT_FALSE(ref::try_broadcast({3, 4}, {5}).has_value());
  const Array s = ref::map(Array({2, 1}, {10, 20}), Array({3}, {1, 2, 3}), std::plus<double>());
  EXPECT_EQ(s.data, (std::vector<double>{11, 12, 13, 21, 22, 23}));
  const Array r = ref::reduce(Array({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), {0, 2}, true, ref::sum_of);
  EXPECT_EQ(r.shape, (Shape{1, 3, 1}));
  EXPECT_EQ(r.data, (std::vector<double>{0 + 1 + 6 + 7, 2 + 3 + 8 + 9, 4 + 5 + 10 + 11}));
  EXPECT_EQ(ref::argmax_of({1, 3, 3, ref::nan(), 5}), 3);
  EXPECT_EQ(ref::along_dim(Array({2, 2}, {1, 2, 3, 4}), 0, [](const std::vector<double>& v) {
              return std::vector<double>{v[1], v[0]};
            }).data,
            (std::vector<double>{3, 4, 1, 2}));
}

TEST(Reference, InputLayoutsAreWhatTheyClaim) {
  ref::Rng rng(1);
  for (Layout layout : ref::all_layouts()) {
    SCOPED_TRACE(ref::layout_name(layout));
    ref::Input in = ref::make_input({3, 4}, fg::kFloat, layout, rng);
    EXPECT_EQ(ref::to_shape(in.view.sizes()), (Shape{3, 4}));
    EXPECT_EQ(in.view.is_contiguous(), layout == Layout::Contiguous || layout == Layout::Offset);
    if (layout == Layout::Offset) {
      EXPECT_GT(in.view.storage_offset(), 0);
    }
    if (layout == Layout::Expanded) {
      EXPECT_EQ(in.view.stride(0), 0);
    }
  }
}

}  // namespace
