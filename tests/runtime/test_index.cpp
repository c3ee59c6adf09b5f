// Indexing ops: index_select, gather, scatter_add (functional and in place) and their *_out forms,
// against explicit index loops, with non-contiguous self/index/src, every dim, repeated and empty
// indices, several dtypes; and the out-of-range / dtype / shape errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference.h"

namespace {

using fg::Tensor;
using ref::Array;
using ref::Domain;
using ref::Layout;
using ref::Shape;

Array ref_index_select(const Array& self, int64_t dim, const Array& index) {
  const int64_t d = ref::wrap(dim, self.dim());
  Shape shape = self.shape;
  if (self.dim() > 0) shape[d] = index.numel();
  Array r(shape);
  int64_t k = 0;
  ref::for_each_index(shape, [&](const Shape& i) {
    Shape src = i;
    if (!src.empty()) src[d] = static_cast<int64_t>(index.data[i[d]]);
    r.data[k++] = self.at(src);
  });
  return r;
}

Array ref_gather(const Array& self, int64_t dim, const Array& index) {
  const int64_t d = ref::wrap(dim, self.dim());
  Array r(index.shape);
  int64_t k = 0;
  ref::for_each_index(index.shape, [&](const Shape& i) {
    Shape src = i;
    if (!src.empty()) src[d] = static_cast<int64_t>(index.at(i));
    r.data[k++] = self.at(src);
  });
  return r;
}

Array ref_scatter_add(const Array& self, int64_t dim, const Array& index, const Array& src) {
  const int64_t d = ref::wrap(dim, self.dim());
  Array r = self;
  ref::for_each_index(index.shape, [&](const Shape& i) {
    Shape dst = i;
    if (!dst.empty()) dst[d] = static_cast<int64_t>(index.at(i));
    r.at(dst) += src.at(i);
  });
  return r;
}

const std::vector<fg::ScalarType> kDtypes = {fg::kFloat, fg::kDouble, fg::kLong};

TEST(IndexSelect, MatchesReference) {
  ref::Rng rng(1);
  const Shape shape = {4, 5, 6};
  for (fg::ScalarType dt : kDtypes) {
    for (Layout layout : ref::all_layouts()) {
      for (int64_t dim = -3; dim < 3; ++dim) {
        const int64_t d = ref::wrap(dim, 3);
        for (int64_t count : {0, 1, 3, 9}) {
          SCOPED_TRACE(std::string(fg::toString(dt)) + " " + ref::layout_name(layout) + " dim " +
                       std::to_string(dim) + " count " + std::to_string(count));
          ref::Input self = ref::make_input(shape, dt, layout, rng, Domain{-9, 9});
          ref::Input index = ref::make_input({count}, fg::kLong, count % 2 ? Layout::Strided : Layout::Contiguous,
                                             rng, Domain{0, static_cast<double>(shape[d] - 1), true});
          const Array expected =
              ref_index_select(ref::from_tensor(self.view), dim, ref::from_tensor(index.view));
          EXPECT_TENSOR_EQ(fg::index_select(self.view, dim, index.view), expected, dt);
          EXPECT_TENSOR_EQ(self.view.index_select(dim, index.view), expected, dt);
        }
      }
    }
  }
  // A 0-d index keeps the dim with size 1.
  Tensor x = fg::tensor({{1, 2, 3}, {4, 5, 6}});
  EXPECT_TENSOR_EQ(x.index_select(1, fg::scalar_tensor(2, fg::kLong)), Array({2, 1}, {3, 6}), fg::kLong);
  // Repeated indices copy the same slice again; the result does not alias self.
  Tensor r = x.index_select(0, fg::tensor({1, 1, 0}));
  EXPECT_TENSOR_EQ(r, Array({3, 3}, {4, 5, 6, 4, 5, 6, 1, 2, 3}), fg::kLong);
  r.fill_(0);
  EXPECT_TENSOR_EQ(x, Array({2, 3}, {1, 2, 3, 4, 5, 6}), fg::kLong);
  // bool
  EXPECT_TENSOR_EQ(fg::tensor({true, false, true}).index_select(0, fg::tensor({2, 1})), Array({2}, {1, 0}), fg::kBool);
}

TEST(IndexSelect, OutVariant) {
  ref::Rng rng(2);
  ref::Input self = ref::make_input({5, 7}, fg::kFloat, Layout::Transposed, rng);
  Tensor index = fg::tensor({6, 0, 3, 3});
  const Array expected = ref_index_select(ref::from_tensor(self.view), 1, ref::from_tensor(index));
  ref::check_out_variants([&](Tensor& out) { return &fg::index_select_out(out, self.view, 1, index); }, expected,
                          fg::kFloat, ref::exact());
}

TEST(Gather, MatchesReference) {
  ref::Rng rng(3);
  struct Case {
    Shape self, index;
    int64_t dim;
  };
  const std::vector<Case> cases = {{{5}, {7}, 0},          {{3, 4}, {3, 4}, 1},  {{3, 4}, {3, 6}, -1},
                                   {{3, 4}, {5, 4}, 0},    {{3, 4}, {2, 2}, 1},  {{2, 3, 4}, {2, 3, 4}, 1},
                                   {{2, 3, 4}, {1, 2, 7}, 2}, {{2, 3, 4}, {2, 3, 2}, 0}, {{3, 4}, {0, 4}, 1},
                                   {{}, {}, 0}};
  for (fg::ScalarType dt : kDtypes) {
    for (Layout layout : ref::all_layouts()) {
      for (const auto& c : cases) {
        SCOPED_TRACE(std::string(fg::toString(dt)) + " " + ref::layout_name(layout) + " self " +
                     ref::shape_str(c.self) + " index " + ref::shape_str(c.index) + " dim " + std::to_string(c.dim));
        const int64_t size = c.self.empty() ? 1 : c.self[ref::wrap(c.dim, c.self.size())];
        ref::Input self = ref::make_input(c.self, dt, layout, rng, Domain{-9, 9});
        ref::Input index = ref::make_input(c.index, fg::kLong, layout == Layout::Expanded ? Layout::Contiguous : layout,
                                           rng, Domain{0, static_cast<double>(size - 1), true});
        const Array expected = ref_gather(ref::from_tensor(self.view), c.dim, ref::from_tensor(index.view));
        EXPECT_TENSOR_EQ(fg::gather(self.view, c.dim, index.view), expected, dt);
        EXPECT_TENSOR_EQ(self.view.gather(c.dim, index.view), expected, dt);
      }
    }
  }
  // The classic use: picking per-row entries.
  Tensor logits = fg::tensor({{0.1, 0.2, 0.7}, {0.5, 0.4, 0.1}});
  EXPECT_TENSOR_NEAR(logits.gather(1, fg::tensor({2, 0}).unsqueeze(1)), Array({2, 1}, {0.7, 0.5}), fg::kFloat,
                     ref::tol_for(fg::kFloat));
}

TEST(Gather, OutVariant) {
  ref::Rng rng(4);
  ref::Input self = ref::make_input({4, 6}, fg::kDouble, Layout::Strided, rng);
  ref::Input index = ref::make_input({4, 3}, fg::kLong, Layout::Transposed, rng, Domain{0, 5, true});
  const Array expected = ref_gather(ref::from_tensor(self.view), 1, ref::from_tensor(index.view));
  ref::check_out_variants([&](Tensor& out) { return &fg::gather_out(out, self.view, 1, index.view); }, expected,
                          fg::kDouble, ref::exact());
}

TEST(ScatterAdd, MatchesReference) {
  ref::Rng rng(5);
  struct Case {
    Shape self, index;
    int64_t dim;
  };
  // Index sizes no larger than src's; repeated targets accumulate.
  const std::vector<Case> cases = {{{5}, {9}, 0},          {{3, 4}, {3, 4}, 1},    {{3, 4}, {6, 4}, 0},
                                   {{3, 4}, {2, 3}, -1},   {{2, 3, 4}, {2, 3, 5}, 2}, {{2, 3, 4}, {2, 2, 4}, 1},
                                   {{3, 4}, {0, 4}, 0}};
  for (fg::ScalarType dt : kDtypes) {
    for (Layout layout : ref::writable_layouts()) {
      for (const auto& c : cases) {
        SCOPED_TRACE(std::string(fg::toString(dt)) + " " + ref::layout_name(layout) + " self " +
                     ref::shape_str(c.self) + " index " + ref::shape_str(c.index) + " dim " + std::to_string(c.dim));
        const int64_t size = c.self[ref::wrap(c.dim, c.self.size())];
        ref::Input self = ref::make_input(c.self, dt, layout, rng, Domain{-9, 9});
        ref::Input index = ref::make_input(c.index, fg::kLong, Layout::Strided, rng,
                                           Domain{0, static_cast<double>(size - 1), true});
        Shape src_shape = c.index;
        for (auto& s : src_shape) s += 1;  // src may be larger than index
        ref::Input src = ref::make_input(src_shape, dt, Layout::Transposed, rng, Domain{-9, 9});
        const Array self_before = ref::from_tensor(self.view), base_before = ref::from_tensor(self.base);
        const Array expected =
            ref_scatter_add(self_before, c.dim, ref::from_tensor(index.view), ref::from_tensor(src.view));
        const ref::Tol tol = ref::tol_for(dt);
        // Functional: self untouched.
        EXPECT_TENSOR_NEAR(fg::scatter_add(self.view, c.dim, index.view, src.view), expected, dt, tol);
        EXPECT_TENSOR_NEAR(self.view.scatter_add(c.dim, index.view, src.view), expected, dt, tol);
        EXPECT_TRUE(ref::arrays_equal(ref::from_tensor(self.base), base_before));
        // In place: written through the view into the base.
        const Tensor& ret = self.view.scatter_add_(c.dim, index.view, src.view);
        EXPECT_EQ(&ret, &self.view);
        EXPECT_TENSOR_NEAR(self.base, ref::base_after_view_write(self, base_before, expected), dt, tol);
      }
    }
  }
  // Duplicates accumulate (a histogram).
  Tensor hist = fg::zeros({4}, fg::kLong);
  hist.scatter_add_(0, fg::tensor({1, 3, 1, 1, 0}), fg::ones({5}, fg::kLong));
  EXPECT_TENSOR_EQ(hist, Array({4}, {1, 3, 0, 1}), fg::kLong);
}

// ============================================================================ errors

TEST(IndexErrors, OutOfRange) {
  Tensor x = fg::zeros({3, 4});
  EXPECT_FG_ERROR(x.index_select(0, fg::tensor({0, 3})),
                  "fg::index_select: index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_FG_ERROR(x.gather(1, fg::tensor({{0, 4}, {1, 1}})),
                  "fg::gather: index 4 is out of bounds for dimension 1 with size 4");
  EXPECT_FG_ERROR(x.scatter_add_(0, fg::tensor({{3, 0}}), fg::ones({1, 2})),
                  "fg::scatter_add_: index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_FG_ERROR(x.index_select(2, fg::tensor({0})),
                  "fg::index_select: dimension 2 is out of range for a tensor of 2 dimensions (expected to be in "
                  "range [-2, 1])");
  EXPECT_FG_ERROR(x.gather(-3, fg::zeros({1, 1}, fg::kLong)),
                  "fg::gather: dimension -3 is out of range for a tensor of 2 dimensions (expected to be in range "
                  "[-2, 1])");
}

TEST(IndexErrors, NegativeIndicesAreOutOfRange) {
  // torch's index_select, gather and scatter_add reject negative indices ("index -1 is out of
  // bounds for dimension 1 with size 4"); they are not wrapped like Python subscripts.
  Tensor x = ref::to_tensor(Array({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), fg::kFloat);
  EXPECT_FG_ERROR(x.index_select(0, fg::tensor({-1})),
                  "fg::index_select: index -1 is out of bounds for dimension 0 with size 3");
  EXPECT_FG_ERROR(x.gather(1, fg::tensor({-1, 0, 0}).unsqueeze(1)),
                  "fg::gather: index -1 is out of bounds for dimension 1 with size 4");
  EXPECT_FG_ERROR(x.scatter_add_(1, fg::full({1, 1}, -2), fg::ones({1, 1})),
                  "fg::scatter_add_: index -2 is out of bounds for dimension 1 with size 4");
}

TEST(IndexErrors, DtypesAndShapes) {
  Tensor x = fg::zeros({3, 4});
  EXPECT_FG_ERROR(x.index_select(0, fg::tensor({0.0, 1.0})),
                  "fg::index_select: expected an int64 index tensor, got float32");
  EXPECT_FG_ERROR(x.gather(0, fg::zeros({3, 4})), "fg::gather: expected an int64 index tensor, got float32");
  EXPECT_FG_ERROR(x.index_select(0, fg::zeros({2, 2}, fg::kLong)),
                  "fg::index_select: index must be 0-d or 1-d, got shape [2, 2]");
  EXPECT_FG_ERROR(x.gather(1, fg::zeros({4}, fg::kLong)),
                  "fg::gather: index [4] and input [3, 4] must have the same number of dimensions");
  EXPECT_FG_ERROR(x.gather(1, fg::zeros({4, 2}, fg::kLong)),
                  "fg::gather: index [4, 2] is larger than input [3, 4] in dimension 0");
  EXPECT_FG_ERROR(x.scatter_add_(0, fg::zeros({2, 2}, fg::kLong), fg::zeros({2, 2}, fg::kDouble)),
                  "fg::scatter_add_: expected src of dtype float32, got float64");
  EXPECT_FG_ERROR(x.scatter_add_(0, fg::zeros({3, 4}, fg::kLong), fg::zeros({2, 4})),
                  "fg::scatter_add_: index [3, 4] is larger than src [2, 4] in dimension 0");
  EXPECT_FG_ERROR(x.scatter_add_(0, fg::zeros({2, 5}, fg::kLong), fg::zeros({2, 5})),
                  "fg::scatter_add_: index [2, 5] is larger than self [3, 4] in dimension 1");
  EXPECT_FG_ERROR(x.scatter_add_(0, fg::zeros({2}, fg::kLong), fg::zeros({2})),
                  "fg::scatter_add_: index [2], src [2] and self [3, 4] must have the same number of dimensions");
  // The functional form names itself.
  EXPECT_FG_ERROR(fg::scatter_add(x, 0, fg::zeros({2, 2}, fg::kLong), fg::zeros({2, 2}, fg::kDouble)),
                  "fg::scatter_add: expected src of dtype float32, got float64");
}

}  // namespace
