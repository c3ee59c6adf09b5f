// Shape and view ops: view, reshape, flatten, transpose, t, permute, movedim, unsqueeze, squeeze,
// expand, select, slice, narrow, diagonal, unbind (views: values through the reference's own index
// arithmetic, storage sharing, and write-through of in-place ops); diag_embed, cat, stack (copies);
// copy_, fill_, zero_ into views; and the error messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "reference.h"

namespace {

using fg::Tensor;
using ref::Array;
using ref::Domain;
using ref::Layout;
using ref::Shape;

// 0, 1, 2, ... in row-major order: every element distinguishable.
Array iota(const Shape& shape, double start = 0) {
  Array a(shape);
  for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = start + static_cast<double>(i);
  return a;
}

// The reference view: out[idx] = a[map(idx)].
Array gather_view(const Shape& out_shape, const std::function<Shape(const Shape&)>& map, const Array& a) {
  Array r(out_shape);
  int64_t k = 0;
  ref::for_each_index(out_shape, [&](const Shape& idx) { r.data[k++] = a.at(map(idx)); });
  return r;
}

// Whether `v` lies inside `base`'s allocation: a view, not a copy.
bool shares_memory(const Tensor& v, const Tensor& base) {
  if (v.numel() == 0) return true;
  const char* b = static_cast<const char*>(base.data_ptr()) - base.storage_offset() * base.element_size();
  const char* p = static_cast<const char*>(v.data_ptr());
  const auto& storage = base.unsafeGetTensorImpl()->storage;
  return p >= b && p < b + storage->nbytes && v.unsafeGetTensorImpl()->storage == storage;
}

// ============================================================================ view-producing ops

TEST(Views, TransposeAndT) {
  const Array a = iota({2, 3, 4});
  Tensor x = ref::to_tensor(a, fg::kFloat);
  for (auto [d0, d1] : std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {0, 2}, {1, 2}, {-1, 0}, {2, 2}}) {
    SCOPED_TRACE(std::to_string(d0) + "," + std::to_string(d1));
    Tensor v = x.transpose(d0, d1);
    const int64_t w0 = ref::wrap(d0, 3), w1 = ref::wrap(d1, 3);
    Shape s = a.shape;
    std::swap(s[w0], s[w1]);
    EXPECT_TENSOR_EQ(v, gather_view(s, [&](Shape i) { std::swap(i[w0], i[w1]); return i; }, a), fg::kFloat);
    EXPECT_TRUE(shares_memory(v, x));
    EXPECT_TENSOR_EQ(fg::transpose(x, d0, d1), gather_view(s, [&](Shape i) { std::swap(i[w0], i[w1]); return i; }, a),
                     fg::kFloat);
  }
  Tensor m = ref::to_tensor(iota({3, 5}), fg::kDouble);
  EXPECT_TENSOR_EQ(m.t(), gather_view({5, 3}, [](const Shape& i) { return Shape{i[1], i[0]}; }, iota({3, 5})),
                   fg::kDouble);
  EXPECT_TENSOR_EQ(fg::t(m), gather_view({5, 3}, [](const Shape& i) { return Shape{i[1], i[0]}; }, iota({3, 5})),
                   fg::kDouble);
  EXPECT_EQ(ref::to_shape(m.t().strides()), (Shape{1, 5}));
  // t() of 1-d and 0-d tensors is the tensor itself.
  Tensor v1 = ref::to_tensor(iota({4}), fg::kFloat);
  EXPECT_TENSOR_EQ(v1.t(), iota({4}), fg::kFloat);
  EXPECT_TRUE(shares_memory(v1.t(), v1));
  EXPECT_TENSOR_EQ(fg::scalar_tensor(2.0).t(), Array({}, {2}), fg::kFloat);
  // transpose of a 0-d tensor with dims 0/-1 is allowed.
  EXPECT_TENSOR_EQ(fg::scalar_tensor(2.0).transpose(0, -1), Array({}, {2}), fg::kFloat);
}

TEST(Views, PermuteAndMovedim) {
  const Array a = iota({2, 3, 4, 5});
  Tensor x = ref::to_tensor(a, fg::kLong);
  std::vector<int64_t> perm = {0, 1, 2, 3};
  do {
    SCOPED_TRACE(ref::shape_str(perm));
    Shape s(4), signed_perm = perm;
    for (int d = 0; d < 4; ++d) s[d] = a.shape[perm[d]];
    signed_perm[1] -= 4;  // negative dims are accepted
    Tensor v = x.permute(signed_perm);
    const Array expected = gather_view(s, [&](const Shape& i) {
      Shape src(4);
      for (int d = 0; d < 4; ++d) src[perm[d]] = i[d];
      return src;
    }, a);
    EXPECT_TENSOR_EQ(v, expected, fg::kLong);
    EXPECT_TENSOR_EQ(fg::permute(x, perm), expected, fg::kLong);
    EXPECT_TRUE(shares_memory(v, x));
  } while (std::next_permutation(perm.begin(), perm.end()));
  // movedim(1, -1): [2, 3, 4, 5] -> [2, 4, 5, 3]
  EXPECT_TENSOR_EQ(x.movedim(1, -1), gather_view({2, 4, 5, 3}, [](const Shape& i) {
                     return Shape{i[0], i[3], i[1], i[2]};
                   }, a), fg::kLong);
  EXPECT_TENSOR_EQ(fg::movedim(x, 3, 0), gather_view({5, 2, 3, 4}, [](const Shape& i) {
                     return Shape{i[1], i[2], i[3], i[0]};
                   }, a), fg::kLong);
}

TEST(Views, ViewReshapeFlatten) {
  const Array a = iota({2, 3, 4});
  Tensor x = ref::to_tensor(a, fg::kFloat);
  for (Shape s : {Shape{24}, Shape{4, 6}, Shape{2, 12}, Shape{1, 24, 1}, Shape{2, 3, 2, 2}}) {
    SCOPED_TRACE(ref::shape_str(s));
    Tensor v = x.view(s);
    EXPECT_TENSOR_EQ(v, Array(s, a.data), fg::kFloat);  // row-major order is kept
    EXPECT_TRUE(shares_memory(v, x));
    EXPECT_TENSOR_EQ(fg::view(x, s), Array(s, a.data), fg::kFloat);
    EXPECT_TENSOR_EQ(x.reshape(s), Array(s, a.data), fg::kFloat);
    EXPECT_TRUE(shares_memory(x.reshape(s), x)) << "reshape of a contiguous tensor is a view";
  }
  // -1 infers one size.
  EXPECT_TENSOR_EQ(x.view({-1, 4}), Array({6, 4}, a.data), fg::kFloat);
  EXPECT_TENSOR_EQ(x.reshape({3, -1}), Array({3, 8}, a.data), fg::kFloat);
  EXPECT_TENSOR_EQ(x.view({-1}), Array({24}, a.data), fg::kFloat);
  // view_as / reshape_as.
  EXPECT_TENSOR_EQ(x.view_as(fg::zeros({4, 6})), Array({4, 6}, a.data), fg::kFloat);
  EXPECT_TENSOR_EQ(x.reshape_as(fg::zeros({6, 4})), Array({6, 4}, a.data), fg::kFloat);
  // 0-d <-> [1].
  Tensor s = fg::scalar_tensor(5.0);
  EXPECT_TENSOR_EQ(s.view({1}), Array({1}, {5}), fg::kFloat);
  EXPECT_TENSOR_EQ(s.reshape({1, 1}), Array({1, 1}, {5}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::ones({1}).view({}), Array({}, {1}), fg::kFloat);
  // Views of compatible non-contiguous tensors: splitting or keeping a strided dim.
  Tensor tt = x.transpose(0, 2);  // [4, 3, 2], strides [1, 4, 12]
  const Array ta = ref::from_tensor(tt);
  Tensor split = tt.view({2, 2, 3, 2});
  EXPECT_TENSOR_EQ(split, Array({2, 2, 3, 2}, ta.data), fg::kFloat);
  EXPECT_TRUE(shares_memory(split, x));
  // A non-contiguous tensor that cannot be viewed is copied by reshape.
  Tensor flat = tt.reshape({24});
  EXPECT_TENSOR_EQ(flat, Array({24}, ta.data), fg::kFloat);
  flat.fill_(100);
  EXPECT_TENSOR_EQ(x, a, fg::kFloat) << "reshape's copy must not alias the input";
  // flatten
  EXPECT_TENSOR_EQ(x.flatten(), Array({24}, a.data), fg::kFloat);
  EXPECT_TENSOR_EQ(x.flatten(1), Array({2, 12}, a.data), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::flatten(x, 0, 1), Array({6, 4}, a.data), fg::kFloat);
  EXPECT_TENSOR_EQ(x.flatten(-2, -1), Array({2, 12}, a.data), fg::kFloat);
  EXPECT_TENSOR_EQ(x.flatten(1, 1), a, fg::kFloat);
  EXPECT_TENSOR_EQ(tt.flatten(), Array({24}, ta.data), fg::kFloat);
  EXPECT_TENSOR_EQ(s.flatten(), Array({1}, {5}), fg::kFloat);
  // Empty tensors.
  EXPECT_EQ(ref::to_shape(fg::zeros({0, 3}).view({3, 0}).sizes()), (Shape{3, 0}));
  EXPECT_EQ(ref::to_shape(fg::zeros({2, 0, 3}).reshape({3, 0, 2}).sizes()), (Shape{3, 0, 2}));
}

TEST(Views, UnsqueezeSqueeze) {
  const Array a = iota({2, 3});
  Tensor x = ref::to_tensor(a, fg::kDouble);
  EXPECT_TENSOR_EQ(x.unsqueeze(0), Array({1, 2, 3}, a.data), fg::kDouble);
  EXPECT_TENSOR_EQ(x.unsqueeze(1), Array({2, 1, 3}, a.data), fg::kDouble);
  EXPECT_TENSOR_EQ(x.unsqueeze(2), Array({2, 3, 1}, a.data), fg::kDouble);
  EXPECT_TENSOR_EQ(x.unsqueeze(-1), Array({2, 3, 1}, a.data), fg::kDouble);
  EXPECT_TENSOR_EQ(fg::unsqueeze(x, -3), Array({1, 2, 3}, a.data), fg::kDouble);
  EXPECT_TENSOR_EQ(fg::scalar_tensor(1.0).unsqueeze(0), Array({1}, {1}), fg::kFloat);
  // unsqueeze of a transposed view keeps the element mapping.
  EXPECT_TENSOR_EQ(x.t().unsqueeze(1), gather_view({3, 1, 2}, [](const Shape& i) { return Shape{i[2], i[0]}; }, a),
                   fg::kDouble);
  Tensor y = ref::to_tensor(iota({1, 3, 1, 2}), fg::kFloat);
  EXPECT_TENSOR_EQ(y.squeeze(), Array({3, 2}, iota({6}).data), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::squeeze(y, 0), Array({3, 1, 2}, iota({6}).data), fg::kFloat);
  EXPECT_TENSOR_EQ(y.squeeze(-2), Array({1, 3, 2}, iota({6}).data), fg::kFloat);
  EXPECT_TENSOR_EQ(y.squeeze(1), Array({1, 3, 1, 2}, iota({6}).data), fg::kFloat);  // size 3: unchanged
  EXPECT_TENSOR_EQ(fg::ones({1, 1}).squeeze(), Array({}, {1}), fg::kFloat);
  EXPECT_TRUE(shares_memory(y.squeeze(), y));
  EXPECT_TRUE(shares_memory(x.unsqueeze(1), x));
}

TEST(Views, ExpandAndBroadcastTo) {
  const Array a = iota({3, 1});
  Tensor x = ref::to_tensor(a, fg::kFloat);
  const Array e = gather_view({2, 3, 4}, [](const Shape& i) { return Shape{i[1], 0}; }, a);
  EXPECT_TENSOR_EQ(x.expand({2, 3, 4}), e, fg::kFloat);
  EXPECT_TENSOR_EQ(fg::expand(x, {2, -1, 4}), e, fg::kFloat);
  EXPECT_TENSOR_EQ(fg::broadcast_to(x, {2, 3, 4}), e, fg::kFloat);
  EXPECT_TENSOR_EQ(x.expand_as(fg::zeros({2, 3, 4})), e, fg::kFloat);
  Tensor v = x.expand({2, 3, 4});
  EXPECT_EQ(v.stride(0), 0);
  EXPECT_EQ(v.stride(2), 0);
  EXPECT_TRUE(shares_memory(v, x));
  // A 0-d tensor expands to anything.
  EXPECT_TENSOR_EQ(fg::scalar_tensor(7.0).expand({2, 2}), Array({2, 2}, 7.0), fg::kFloat);
  // Reductions and arithmetic read expanded tensors correctly.
  EXPECT_TENSOR_NEAR(v.sum({0, 2}), Array({3}, {0, 8, 16}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(v.contiguous(), e, fg::kFloat, ref::exact());
}

TEST(Views, SelectSliceNarrow) {
  const Array a = iota({4, 5, 6});
  Tensor x = ref::to_tensor(a, fg::kFloat);
  for (int64_t dim = -3; dim < 3; ++dim) {
    const int64_t d = ref::wrap(dim, 3);
    for (int64_t index : {int64_t{0}, int64_t{2}, int64_t{-1}}) {
      SCOPED_TRACE("select dim " + std::to_string(dim) + " index " + std::to_string(index));
      Shape s = a.shape;
      const int64_t i = index < 0 ? index + s[d] : index;
      s.erase(s.begin() + d);
      const Array expected = gather_view(s, [&](Shape idx) { idx.insert(idx.begin() + d, i); return idx; }, a);
      EXPECT_TENSOR_EQ(x.select(dim, index), expected, fg::kFloat);
      EXPECT_TENSOR_EQ(fg::select(x, dim, index), expected, fg::kFloat);
      EXPECT_TRUE(shares_memory(x.select(dim, index), x));
    }
  }
  EXPECT_TENSOR_EQ(x[1], gather_view({5, 6}, [](const Shape& i) { return Shape{1, i[0], i[1]}; }, a), fg::kFloat);
  EXPECT_TENSOR_EQ(x[1][2][3], Array({}, {a.at({1, 2, 3})}), fg::kFloat);
  // slice: Python semantics for start/end (negative, clamped) and steps.
  struct SliceCase {
    int64_t dim;
    std::optional<int64_t> start, end;
    int64_t step;
  };
  const std::vector<SliceCase> cases = {{0, 1, 3, 1},  {1, std::nullopt, std::nullopt, 2}, {2, 1, std::nullopt, 3},
                                        {-1, -4, -1, 1}, {1, -100, 100, 1},                  {0, 3, 1, 1},
                                        {2, 0, 6, 4},   {1, 4, 5, 2},                       {0, std::nullopt, 2, 1},
                                        {2, 6, std::nullopt, 1}};
  for (const auto& c : cases) {
    const int64_t d = ref::wrap(c.dim, 3);
    const int64_t n = a.shape[d];
    auto norm = [n](int64_t v) { return std::min(std::max(v < 0 ? v + n : v, int64_t{0}), n); };
    const int64_t s = c.start ? norm(*c.start) : 0;
    const int64_t e = std::max(c.end ? norm(*c.end) : n, s);
    const int64_t len = (e - s + c.step - 1) / c.step;
    Shape shape = a.shape;
    shape[d] = len;
    SCOPED_TRACE("slice dim " + std::to_string(c.dim) + " -> [" + std::to_string(s) + ", " + std::to_string(e) +
                 ") step " + std::to_string(c.step));
    const Array expected = gather_view(shape, [&](Shape idx) { idx[d] = s + idx[d] * c.step; return idx; }, a);
    EXPECT_TENSOR_EQ(x.slice(c.dim, c.start, c.end, c.step), expected, fg::kFloat);
    EXPECT_TENSOR_EQ(fg::slice(x, c.dim, c.start, c.end, c.step), expected, fg::kFloat);
    if (len > 0) {
      EXPECT_TRUE(shares_memory(x.slice(c.dim, c.start, c.end, c.step), x));
    }
  }
  // narrow(dim, start, length), negative start counts from the end.
  EXPECT_TENSOR_EQ(x.narrow(1, 1, 3), gather_view({4, 3, 6}, [](Shape i) { i[1] += 1; return i; }, a), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::narrow(x, -1, -2, 2), gather_view({4, 5, 2}, [](Shape i) { i[2] += 4; return i; }, a),
                   fg::kFloat);
  EXPECT_EQ(ref::to_shape(x.narrow(0, 4, 0).sizes()), (Shape{0, 5, 6}));
  // Chains of views compose.
  Tensor chain = x.transpose(0, 2).slice(0, 1, std::nullopt, 2).select(1, 3).narrow(1, 1, 2);  // [3, 2]
  EXPECT_TENSOR_EQ(chain, gather_view({3, 2}, [](const Shape& i) { return Shape{1 + i[1], 3, 1 + 2 * i[0]}; }, a),
                   fg::kFloat);
}

TEST(Views, Diagonal) {
  const Array a = iota({3, 4});
  Tensor x = ref::to_tensor(a, fg::kDouble);
  // x.diagonal(k) = [x[i, i + k]]
  auto diag = [&](int64_t k) {
    std::vector<double> d;
    for (int64_t i = 0; i < 3; ++i)
      if (i + k >= 0 && i + k < 4) d.push_back(a.at({i, i + k}));
    return Array({static_cast<int64_t>(d.size())}, d);
  };
  for (int64_t offset : {-3, -2, -1, 0, 1, 2, 3, 4, 5}) {
    SCOPED_TRACE("offset " + std::to_string(offset));
    EXPECT_TENSOR_EQ(x.diagonal(offset), diag(offset), fg::kDouble);
    EXPECT_TENSOR_EQ(fg::diagonal(x.t(), -offset), diag(offset), fg::kDouble);
    // (dim1, dim2) = (1, 0): x[i + k, i], the diagonal of the transpose.
    EXPECT_TENSOR_EQ(x.diagonal(offset, 1, 0), diag(-offset), fg::kDouble);
    if (diag(offset).numel() > 0) {
      EXPECT_TRUE(shares_memory(x.diagonal(offset), x));
    }
  }
  // Batched: dims (1, 2) of [2, 3, 4]; the diagonal goes last.
  const Array b = iota({2, 3, 4});
  Tensor y = ref::to_tensor(b, fg::kFloat);
  EXPECT_TENSOR_EQ(y.diagonal(0, 1, 2), gather_view({2, 3}, [](const Shape& i) { return Shape{i[0], i[1], i[1]}; }, b),
                   fg::kFloat);
  // offset 1 with dim1 = 2, dim2 = 1: y[b, i + 1, i], length min(4, 3 - 1) = 2.
  EXPECT_TENSOR_EQ(y.diagonal(1, -1, -2), gather_view({2, 2}, [](const Shape& i) { return Shape{i[0], i[1] + 1, i[1]}; }, b),
                   fg::kFloat);
  EXPECT_TENSOR_EQ(y.diagonal(0, 0, 2), gather_view({3, 2}, [](const Shape& i) { return Shape{i[1], i[0], i[1]}; }, b),
                   fg::kFloat);
  EXPECT_TRUE(shares_memory(y.diagonal(0, 1, 2), y));
}

TEST(Views, Unbind) {
  const Array a = iota({3, 4});
  Tensor x = ref::to_tensor(a, fg::kFloat);
  auto rows = x.unbind();
  ASSERT_EQ(rows.size(), 3u);
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_TENSOR_EQ(rows[i], gather_view({4}, [i](const Shape& j) { return Shape{i, j[0]}; }, a), fg::kFloat);
  auto cols = fg::unbind(x, -1);
  ASSERT_EQ(cols.size(), 4u);
  for (int64_t j = 0; j < 4; ++j)
    EXPECT_TENSOR_EQ(cols[j], gather_view({3}, [j](const Shape& i) { return Shape{i[0], j}; }, a), fg::kFloat);
  // The pieces are views: writing one writes x.
  cols[2].mul_(-1);
  Array expected = a;
  for (int64_t i = 0; i < 3; ++i) expected.at({i, 2}) *= -1;
  EXPECT_TENSOR_EQ(x, expected, fg::kFloat);
}

// ============================================================================ write-through

TEST(WriteThrough, DiagonalCopy) {
  auto r = fg::zeros({3, 3});
  auto v = fg::tensor({1.0, 2.0, 3.0});
  r.diagonal().copy_(v);
  EXPECT_TENSOR_EQ(r, Array({3, 3}, {1, 0, 0, 0, 2, 0, 0, 0, 3}), fg::kFloat);
  r.diagonal(1).fill_(7);
  r.diagonal(-2).add_(5);
  EXPECT_TENSOR_EQ(r, Array({3, 3}, {1, 7, 0, 0, 2, 7, 5, 0, 3}), fg::kFloat);
}

TEST(WriteThrough, TransposeAddChangesBase) {
  Tensor x = ref::to_tensor(iota({2, 3}), fg::kFloat);
  x.t().add_(1);
  EXPECT_TENSOR_EQ(x, iota({2, 3}, 1), fg::kFloat);
  // An operand broadcast along the transposed view's rows.
  x.t().mul_(fg::tensor({10.0, 100.0}));
  EXPECT_TENSOR_EQ(x, Array({2, 3}, {10, 20, 30, 400, 500, 600}), fg::kFloat);
}

TEST(WriteThrough, SliceSelectNarrow) {
  Tensor x = ref::to_tensor(iota({4, 5}), fg::kDouble);
  x.slice(1, 0, std::nullopt, 2).fill_(-1);  // columns 0, 2, 4
  Array e = iota({4, 5});
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j : {0, 2, 4}) e.at({i, j}) = -1;
  EXPECT_TENSOR_EQ(x, e, fg::kDouble);
  x.select(0, 2).mul_(3);  // row 2
  for (int64_t j = 0; j < 5; ++j) e.at({2, j}) *= 3;
  EXPECT_TENSOR_EQ(x, e, fg::kDouble);
  x.narrow(1, 1, 2).zero_();  // columns 1, 2
  for (int64_t i = 0; i < 4; ++i) e.at({i, 1}) = e.at({i, 2}) = 0;
  EXPECT_TENSOR_EQ(x, e, fg::kDouble);
  x.select(1, -1).slice(0, 1, 3).sub_(fg::tensor({1.0, 2.0}, fg::kDouble));  // x[1:3, 4] -= [1, 2]
  e.at({1, 4}) -= 1;
  e.at({2, 4}) -= 2;
  EXPECT_TENSOR_EQ(x, e, fg::kDouble);
  x[3][0].fill_(42);
  e.at({3, 0}) = 42;
  EXPECT_TENSOR_EQ(x, e, fg::kDouble);
}

TEST(WriteThrough, ViewsOfViews) {
  Tensor x = ref::to_tensor(iota({2, 3, 4}), fg::kFloat);
  Array e = iota({2, 3, 4});
  x.view({6, 4}).select(1, 3).fill_(0);  // x[..., 3] = 0
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) e.at({i, j, 3}) = 0;
  EXPECT_TENSOR_EQ(x, e, fg::kFloat);
  x.permute({2, 0, 1}).select(0, 0).unsqueeze(0).squeeze(0).add_(1000);  // x[..., 0] += 1000
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) e.at({i, j, 0}) += 1000;
  EXPECT_TENSOR_EQ(x, e, fg::kFloat);
  x.flatten().slice(0, 5, 8).neg_();  // flat elements 5, 6, 7
  for (int64_t k = 5; k < 8; ++k) e.data[k] = -e.data[k];
  EXPECT_TENSOR_EQ(x, e, fg::kFloat);
  x.reshape({4, 6}).diagonal().fill_(-5);  // flat elements 0, 7, 14, 21
  for (int64_t k : {0, 7, 14, 21}) e.data[k] = -5;
  EXPECT_TENSOR_EQ(x, e, fg::kFloat);
  x.movedim(0, 2).select(2, 1).clamp_(std::nullopt, 0.0);  // x[1] = min(x[1], 0)
  for (int64_t k = 12; k < 24; ++k) e.data[k] = std::min(e.data[k], 0.0);
  EXPECT_TENSOR_EQ(x, e, fg::kFloat);
}

TEST(WriteThrough, InPlaceWithExpandedOperand) {
  Tensor x = fg::zeros({3, 4});
  Tensor row = fg::tensor({1.0, 2.0, 3.0, 4.0});
  x.add_(row.expand({3, 4}));
  x.mul_(fg::tensor({1.0, 10.0, 100.0}).unsqueeze(1).expand({3, 4}));
  x.slice(0, 1).sub_(row.unsqueeze(0));
  EXPECT_TENSOR_EQ(x, Array({3, 4}, {1, 2, 3, 4, 9, 18, 27, 36, 99, 198, 297, 396}), fg::kFloat);
}

TEST(WriteThrough, CopyBroadcastsAndConverts) {
  Tensor x = fg::zeros({3, 4}, fg::kLong);
  x.copy_(fg::tensor({1.9, -2.7, 3.0, 0.5}));  // float -> int64 truncates toward zero
  EXPECT_TENSOR_EQ(x, Array({3, 4}, {1, -2, 3, 0, 1, -2, 3, 0, 1, -2, 3, 0}), fg::kLong);
  Tensor b = fg::zeros({2}, fg::kBool);
  b.copy_(fg::tensor({0.0, -0.5}));
  EXPECT_TENSOR_EQ(b, Array({2}, {0, 1}), fg::kBool);
  Tensor f = fg::zeros({2, 3});
  f.t().copy_(ref::to_tensor(iota({3, 2}), fg::kDouble));
  EXPECT_TENSOR_EQ(f, gather_view({2, 3}, [](const Shape& i) { return Shape{i[1], i[0]}; }, iota({3, 2})), fg::kFloat);
  // Overlapping source and destination, as torch: the same elements in the same layout are a
  // no-op; a partial overlap (a transpose onto itself, a shifted slice) is refused; disjoint views
  // of one storage copy; strided views, which torch does not judge, copy exactly.
  const std::string partial =
      "fg::copy_: unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
      "single memory location; clone() the input before copying";
  Tensor sq = ref::to_tensor(iota({3, 3}), fg::kFloat);
  EXPECT_FG_ERROR(sq.copy_(sq.t()), partial);
  Tensor sh = ref::to_tensor(iota({6}), fg::kFloat);
  EXPECT_FG_ERROR(sh.slice(0, 1).copy_(sh.slice(0, 0, 5)), partial);
  EXPECT_FG_ERROR(sh.narrow(0, 0, 4).copy_(sh.narrow(0, 2, 4)), partial);
  EXPECT_TENSOR_EQ(sh, iota({6}), fg::kFloat);  // (nothing written)
  sh.copy_(sh);
  sh.narrow(0, 1, 3).copy_(sh.narrow(0, 1, 3));
  sq.t().copy_(sq.t());
  EXPECT_TENSOR_EQ(sh, iota({6}), fg::kFloat);
  EXPECT_TENSOR_EQ(sq, iota({3, 3}), fg::kFloat);
  sh.narrow(0, 0, 3).copy_(sh.narrow(0, 3, 3));
  EXPECT_TENSOR_EQ(sh, Array({6}, {3, 4, 5, 3, 4, 5}), fg::kFloat);
  Tensor st = ref::to_tensor(iota({6}), fg::kFloat);
  st.slice(0, 1, 6, 2).copy_(st.slice(0, 0, 6, 2));
  EXPECT_TENSOR_EQ(st, Array({6}, {0, 0, 2, 2, 4, 4}), fg::kFloat);
  Tensor sm = ref::to_tensor(iota({2, 3}), fg::kFloat);  // strided rows onto overlapping columns
  sm.slice(1, 0, 2).copy_(sm.slice(1, 1, 3));
  EXPECT_TENSOR_EQ(sm, Array({2, 3}, {1, 2, 2, 4, 5, 5}), fg::kFloat);
  const Tensor& ret = f.copy_(fg::ones({3}));
  EXPECT_EQ(&ret, &f);
  EXPECT_FG_ERROR(fg::zeros({3}).copy_(fg::zeros({2, 3})),
                  "fg::copy_: source of shape [2, 3] cannot be copied into a tensor of shape [3]");
  EXPECT_FG_ERROR(fg::zeros({3}).copy_(fg::zeros({4})), "fg::copy_: shapes [3] and [4] cannot be broadcast");
}

// Assignment to a temporary, as libtorch's rvalue operator=: `x[i] = v` copies into the view
// (broadcast, converted), `= number` fills it; assignment to a named tensor rebinds it.
TEST(WriteThrough, AssigningToAViewCopiesIntoIt) {
  Tensor x = ref::to_tensor(iota({3, 4}), fg::kDouble);
  Array e = iota({3, 4});
  x[1] = fg::tensor({-1.0, -2.0, -3.0, -4.0}, fg::kDouble);  // a row
  for (int64_t j = 0; j < 4; ++j) e.at({1, j}) = -1.0 - static_cast<double>(j);
  EXPECT_TENSOR_EQ(x, e, fg::kDouble);
  x.select(1, 2) = fg::tensor({7.0}, fg::kDouble);  // a column, the value broadcast along it
  for (int64_t i = 0; i < 3; ++i) e.at({i, 2}) = 7;
  EXPECT_TENSOR_EQ(x, e, fg::kDouble);
  x.narrow(1, 0, 2) = 0.5;  // a number fills
  for (int64_t i = 0; i < 3; ++i) e.at({i, 0}) = e.at({i, 1}) = 0.5;
  EXPECT_TENSOR_EQ(x, e, fg::kDouble);
  x[2][3] = fg::tensor({9.0}, fg::kDouble).sum();  // an element, from a 0-d tensor
  x[0][3] = 11;  // an integer
  e.at({2, 3}) = 9;
  e.at({0, 3}) = 11;
  EXPECT_TENSOR_EQ(x, e, fg::kDouble);
  x.t().narrow(0, 1, 2) = fg::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, fg::kDouble);  // through a transpose
  for (int64_t i = 0; i < 3; ++i) {
    e.at({i, 1}) = 1.0 + static_cast<double>(i);
    e.at({i, 2}) = 4.0 + static_cast<double>(i);
  }
  EXPECT_TENSOR_EQ(x, e, fg::kDouble);
  // As copy_: converted to the destination's dtype (int64 truncates toward zero).
  Tensor n = fg::zeros({2, 3}, fg::kLong);
  n[0] = fg::tensor({1.9, -2.7, 3.0});
  n.select(1, 0) = 2.75;
  EXPECT_TENSOR_EQ(n, Array({2, 3}, {2, -2, 3, 2, 0, 0}), fg::kLong);
  // A view of a view of a temporary's base still writes through; the result is the view.
  Tensor y = fg::zeros({2, 2});
  const Tensor r = (y.view({4}).narrow(0, 1, 2) = fg::ones({2}));
  EXPECT_TENSOR_EQ(r, Array({2}, {1, 1}), fg::kFloat);
  EXPECT_TENSOR_EQ(y, Array({2, 2}, {0, 1, 1, 0}), fg::kFloat);
  // std::move of a named tensor is an rvalue too: libtorch copies into it.
  Tensor m = fg::zeros({2});
  Tensor alias = m;
  std::move(m) = fg::ones({2});
  EXPECT_TENSOR_EQ(alias, Array({2}, {1, 1}), fg::kFloat);
}

TEST(WriteThrough, AssigningToANamedTensorRebindsIt) {
  Tensor x = fg::zeros({3});
  Tensor alias = x;
  Tensor row = x.narrow(0, 0, 2);
  const Tensor other = fg::ones({5});
  row = other;  // rebinds row: x is untouched, row is other's handle
  EXPECT_TRUE(row.is_same(other));
  EXPECT_TENSOR_EQ(x, Array({3}, {0, 0, 0}), fg::kFloat);
  alias = fg::full({2}, 4.0);  // a temporary on the right: rebinds too
  EXPECT_EQ(alias.sizes(), (std::vector<int64_t>{2}));
  EXPECT_TENSOR_EQ(x, Array({3}, {0, 0, 0}), fg::kFloat);
  Tensor undefined;
  undefined = x;
  EXPECT_TRUE(undefined.is_same(x));
  Tensor moved = std::move(undefined);
  EXPECT_TRUE(moved.is_same(x));
  static_assert(std::is_nothrow_move_assignable_v<Tensor> && std::is_nothrow_move_constructible_v<Tensor>);
}

TEST(WriteThrough, AssigningToAViewReportsWhatCopyReports) {
  EXPECT_FG_ERROR(fg::zeros({3, 4})[0] = fg::zeros({3}),
                  "fg::Tensor::operator=: shapes [4] and [3] cannot be broadcast");
  EXPECT_FG_ERROR(fg::zeros({3, 4})[0] = fg::zeros({2, 4}),
                  "fg::Tensor::operator=: source of shape [2, 4] cannot be copied into a tensor of shape [4]");
  Tensor sh = ref::to_tensor(iota({6}), fg::kFloat);
  EXPECT_FG_ERROR(sh.narrow(0, 0, 4) = sh.narrow(0, 2, 4),
                  "fg::Tensor::operator=: unsupported operation: some elements of the input tensor and the written-to "
                  "tensor refer to a single memory location; clone() the input before copying");
  EXPECT_TENSOR_EQ(sh, iota({6}), fg::kFloat);  // (nothing written)
  sh.narrow(0, 1, 3) = sh.narrow(0, 1, 3);       // the same elements: a no-op
  EXPECT_TENSOR_EQ(sh, iota({6}), fg::kFloat);
  const std::string expanded = "fg::Tensor::operator=: unsupported operation: more than one element of the written-to "
                               "tensor (shape [3, 2], strides [0, 1]) refers to a single memory location; clone() it "
                               "before writing to it";
  Tensor row = fg::zeros({2});
  EXPECT_FG_ERROR(row.expand({3, 2}) = fg::ones({3, 2}), expanded);
  EXPECT_FG_ERROR(row.expand({3, 2}) = 1.0, expanded);
  EXPECT_FG_ERROR(Tensor() = fg::ones({2}), "fg::Tensor::operator=: the input tensor is undefined");
}

TEST(WriteThrough, FillAndZero) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble, fg::kLong, fg::kBool}) {
    SCOPED_TRACE(fg::toString(dt));
    ref::Rng rng(3);
    for (Layout layout : ref::writable_layouts()) {
      ref::Input in = ref::make_input({3, 5}, dt, layout, rng);
      const Array before = ref::from_tensor(in.base);
      const Tensor& r = in.view.fill_(2.5);
      EXPECT_EQ(&r, &in.view);
      EXPECT_TENSOR_EQ(in.base, ref::base_after_view_write(in, before, Array({3, 5}, ref::round_to(2.5, dt))), dt);
      in.view.zero_();
      EXPECT_TENSOR_EQ(in.base, ref::base_after_view_write(in, before, Array({3, 5}, 0.0)), dt);
    }
  }
  // fill_ of an expanded tensor writes the shared element.
  Tensor x = fg::zeros({3});
  x.unsqueeze(0).expand({4, 3}).fill_(6);
  EXPECT_TENSOR_EQ(x, Array({3}, 6.0), fg::kFloat);
}

// ============================================================================ copies: diag_embed, cat, stack

TEST(Copies, DiagEmbed) {
  Tensor v = fg::tensor({1.0, 2.0, 3.0});
  EXPECT_TENSOR_EQ(fg::diag_embed(v), Array({3, 3}, {1, 0, 0, 0, 2, 0, 0, 0, 3}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::diag_embed(v, 1), Array({4, 4}, {0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::diag_embed(v, -1), Array({4, 4}, {0, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0}), fg::kFloat);
  const Array b = iota({2, 3}, 1);
  Tensor bt = ref::to_tensor(b, fg::kDouble);
  Array e({2, 3, 3}, 0.0);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) e.at({i, j, j}) = b.at({i, j});
  EXPECT_TENSOR_EQ(fg::diag_embed(bt), e, fg::kDouble);
  // dims (0, 2): out[j, i, j] = b[i, j]
  Array e02({3, 2, 3}, 0.0);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) e02.at({j, i, j}) = b.at({i, j});
  EXPECT_TENSOR_EQ(fg::diag_embed(bt, 0, 0, 2), e02, fg::kDouble);
  // A copy: writing the result leaves the input alone.
  Tensor d = fg::diag_embed(bt.t());
  d.fill_(0);
  EXPECT_TENSOR_EQ(bt, b, fg::kDouble);
}

TEST(Copies, CatAndStack) {
  ref::Rng rng(5);
  for (Layout layout : ref::all_layouts()) {
    SCOPED_TRACE(ref::layout_name(layout));
    ref::Input p = ref::make_input({2, 3, 4}, fg::kFloat, layout, rng);
    ref::Input q = ref::make_input({2, 5, 4}, fg::kFloat, Layout::Transposed, rng);
    ref::Input r = ref::make_input({2, 1, 4}, fg::kFloat, Layout::Contiguous, rng);
    const Array ap = ref::from_tensor(p.view), aq = ref::from_tensor(q.view), ar = ref::from_tensor(r.view);
    Array expected({2, 9, 4});
    ref::for_each_index(expected.shape, [&](const Shape& i) {
      const int64_t j = i[1];
      expected.at(i) = j < 3 ? ap.at({i[0], j, i[2]}) : j < 8 ? aq.at({i[0], j - 3, i[2]}) : ar.at({i[0], j - 8, i[2]});
    });
    EXPECT_TENSOR_EQ(fg::cat({p.view, q.view, r.view}, 1), expected, fg::kFloat);
    EXPECT_TENSOR_EQ(fg::cat({p.view, q.view, r.view}, -2), expected, fg::kFloat);
    Tensor out = fg::empty({0});
    EXPECT_EQ(&fg::cat_out(out, {p.view, q.view, r.view}, 1), &out);
    EXPECT_TENSOR_EQ(out, expected, fg::kFloat);
    // stack along every position, including the new last dim.
    ref::Input s2 = ref::make_input({2, 3, 4}, fg::kFloat, Layout::Strided, rng);
    const Array as2 = ref::from_tensor(s2.view);
    for (int64_t dim = -4; dim < 4; ++dim) {
      const int64_t d = ref::wrap(dim, 4);
      Shape shape = {2, 3, 4};
      shape.insert(shape.begin() + d, 2);
      Array se(shape);
      ref::for_each_index(shape, [&](const Shape& i) {
        Shape src = i;
        const int64_t which = src[d];
        src.erase(src.begin() + d);
        se.at(i) = which == 0 ? ap.at(src) : as2.at(src);
      });
      EXPECT_TENSOR_EQ(fg::stack({p.view, s2.view}, dim), se, fg::kFloat) << "dim " << dim;
    }
  }
  // cat promotes dtypes; 1-d empty tensors are skipped.
  EXPECT_TENSOR_NEAR(fg::cat({fg::tensor({1, 2}), fg::tensor({0.5})}), Array({3}, {1, 2, 0.5}), fg::kFloat,
                     ref::exact());
  EXPECT_TENSOR_EQ(fg::cat({fg::zeros({0}), fg::ones({2, 2}), fg::zeros({0})}), Array({2, 2}, 1.0), fg::kFloat);
  Tensor so = fg::zeros({2, 2});
  const void* ptr = so.data_ptr();
  fg::stack_out(so, {fg::tensor({1.0, 2.0}), fg::tensor({3.0, 4.0})}, 0);
  EXPECT_EQ(so.data_ptr(), ptr);
  EXPECT_TENSOR_EQ(so, Array({2, 2}, {1, 2, 3, 4}), fg::kFloat);
}

// ============================================================================ errors

TEST(ShapeErrors, ViewAndReshape) {
  Tensor x = fg::zeros({3, 4});
  EXPECT_FG_ERROR(x.view({5}), "fg::view: shape [5] is invalid for an input of 12 elements (shape [3, 4])");
  EXPECT_FG_ERROR(fg::reshape(x, {5, -1}),
                  "fg::reshape: shape [5, -1] is invalid for an input of 12 elements (shape [3, 4])");
  EXPECT_FG_ERROR(x.reshape({-1, -1}), "fg::reshape: only one dimension can be inferred, got shape [-1, -1]");
  EXPECT_FG_ERROR(x.view({-2, 6}), "fg::view: invalid shape dimension -2 in [-2, 6]");
  EXPECT_FG_ERROR(x.t().view({12}),
                  "fg::view: shape [12] is not compatible with the sizes [4, 3] and strides [1, 4] of the input "
                  "(a dimension spans two non-contiguous ranges); use reshape instead");
  EXPECT_FG_ERROR(x.flatten(1, 0), "fg::flatten: start_dim 1 comes after end_dim 0");
  // -1 is ambiguous when the other sizes multiply to 0 (torch refuses too).
  EXPECT_FG_ERROR(fg::zeros({2, 0, 3}).reshape({0, -1}),
                  "fg::reshape: shape [0, -1] is invalid for an input of 0 elements (shape [2, 0, 3])");
}

TEST(ShapeErrors, DimsAndIndices) {
  Tensor x = fg::zeros({3, 4});
  EXPECT_FG_ERROR(x.select(0, 3), "fg::select: index 3 is out of range for dimension 0 of size 3 (shape [3, 4])");
  EXPECT_FG_ERROR(x.select(1, -5), "fg::select: index -5 is out of range for dimension 1 of size 4 (shape [3, 4])");
  EXPECT_FG_ERROR(x.select(2, 0),
                  "fg::select: dimension 2 is out of range for a tensor of 2 dimensions (expected to be in range [-2, 1])");
  EXPECT_FG_ERROR(x[5], "fg::select: index 5 is out of range for dimension 0 of size 3 (shape [3, 4])");
  EXPECT_FG_ERROR(fg::scalar_tensor(1.0).select(0, 0), "fg::select: cannot select from a 0-d tensor");
  EXPECT_FG_ERROR(x.transpose(0, 2),
                  "fg::transpose: dimension 2 is out of range for a tensor of 2 dimensions (expected to be in range [-2, 1])");
  EXPECT_FG_ERROR(x.unsqueeze(3),
                  "fg::unsqueeze: dimension 3 is out of range for a tensor of 2 dimensions (expected to be in range [-3, 2])");
  EXPECT_FG_ERROR(x.squeeze(-3),
                  "fg::squeeze: dimension -3 is out of range for a tensor of 2 dimensions (expected to be in range [-2, 1])");
  EXPECT_FG_ERROR(fg::zeros({2, 3, 4}).t(),
                  "fg::t: expects a tensor with at most 2 dimensions, got shape [2, 3, 4]; use transpose(dim0, dim1) instead");
  EXPECT_FG_ERROR(x.permute({0}), "fg::permute: dims [0] do not match the 2 dimensions of a tensor of shape [3, 4]");
  EXPECT_FG_ERROR(x.permute({1, -1}), "fg::permute: dims [1, -1] repeat dimension 1");
  EXPECT_FG_ERROR(x.slice(0, 0, 2, 0), "fg::slice: step must be positive, got 0");
  EXPECT_FG_ERROR(x.slice(0, 0, 2, -1), "fg::slice: step must be positive, got -1");
  EXPECT_FG_ERROR(x.narrow(1, 2, 3), "fg::narrow: start (2) + length (3) exceeds dimension 1 of size 4 (shape [3, 4])");
  EXPECT_FG_ERROR(x.narrow(0, 4, 1), "fg::narrow: start 4 is out of range for dimension 0 of size 3");
  EXPECT_FG_ERROR(fg::zeros({3}).diagonal(), "fg::diagonal: expected a tensor of at least 2 dimensions, got shape [3]");
  EXPECT_FG_ERROR(x.diagonal(0, 1, -1), "fg::diagonal: dim1 and dim2 cannot be the same dimension (1)");
  EXPECT_FG_ERROR(fg::scalar_tensor(1.0).unbind(), "fg::unbind: cannot unbind a 0-d tensor");
}

TEST(ShapeErrors, Expand) {
  Tensor x = fg::zeros({2, 3});
  EXPECT_FG_ERROR(x.expand({2, 5}),
                  "fg::expand: the expanded size (5) must match the existing size (3) at non-singleton dimension 1; "
                  "target sizes [2, 5], tensor sizes [2, 3]");
  EXPECT_FG_ERROR(x.expand({3}),
                  "fg::expand: the number of sizes provided (1) must be at least the number of dimensions of the "
                  "tensor (2); target sizes [3], tensor sizes [2, 3]");
  EXPECT_FG_ERROR(x.expand({-1, 2, 3}),
                  "fg::expand: the size -1 is not allowed in a new leading dimension; target sizes [-1, 2, 3]");
}

TEST(ShapeErrors, CatAndStack) {
  EXPECT_FG_ERROR(fg::cat({fg::zeros({2, 3}), fg::zeros({2, 4})}),
                  "fg::cat: sizes of tensors must match except in dimension 0; got [2, 3] at position 0 and [2, 4] at "
                  "position 1");
  EXPECT_FG_ERROR(fg::cat({fg::zeros({2, 3}), fg::zeros({2, 3, 1})}, 1),
                  "fg::cat: sizes of tensors must match except in dimension 1; got [2, 3] at position 0 and "
                  "[2, 3, 1] at position 1");
  EXPECT_FG_ERROR(fg::cat({}), "fg::cat: expected a non-empty list of tensors");
  EXPECT_FG_ERROR(fg::cat({fg::scalar_tensor(1.0)}), "fg::cat: zero-dimensional tensor (at position 0) cannot be concatenated");
  EXPECT_FG_ERROR(fg::cat({fg::zeros({2, 3})}, 2),
                  "fg::cat: dimension 2 is out of range for a tensor of 2 dimensions (expected to be in range [-2, 1])");
  EXPECT_FG_ERROR(fg::stack({fg::zeros({2, 3}), fg::zeros({3})}),
                  "fg::stack: expected each tensor to be equal size, but got [2, 3] at entry 0 and [3] at entry 1");
  EXPECT_FG_ERROR(fg::stack({}), "fg::stack: expected a non-empty list of tensors");
}

}  // namespace
