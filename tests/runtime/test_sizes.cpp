// Bad sizes across the runtime's ops: sizes whose products overflow int64, huge or non-finite
// arguments, allocations no machine can satisfy. Each must be an fg::Error naming the op the user
// called (the runtime never crashes), as torch raises. Nothing here touches a huge allocation:
// every case fails before memory is written, so each test takes milliseconds.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "reference.h"

namespace {

using fg::Tensor;

constexpr int64_t kBig = int64_t{1} << 40;  // kBig * kBig overflows int64
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// ============================================================================ factories

TEST(Sizes, FactoriesRejectOverflowingSizes) {
  EXPECT_FG_ERROR(fg::zeros({kBig, kBig}),
                  "fg::zeros: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  EXPECT_FG_ERROR(fg::ones({int64_t{1} << 32, int64_t{1} << 32}).sum(),
                  "fg::ones: storage size calculation overflowed with sizes=[4294967296, 4294967296]");
  EXPECT_FG_ERROR(fg::empty({kBig, kBig}),
                  "fg::empty: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  EXPECT_FG_ERROR(fg::full({kBig, kBig}, 2.0),
                  "fg::full: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  EXPECT_FG_ERROR(fg::randn({kBig, kBig}),
                  "fg::randn: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  EXPECT_FG_ERROR(fg::rand({kBig, kBig}),
                  "fg::rand: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  // The element count fits int64, the bytes do not (2^62 floats are 2^64 bytes).
  EXPECT_FG_ERROR(fg::empty({int64_t{1} << 62}),
                  "fg::empty: storage size calculation overflowed with sizes=[4611686018427387904]");
  // A zero size leaves no elements, but the contiguous strides of the other dims still overflow.
  EXPECT_FG_ERROR(fg::zeros({0, kBig, kBig}),
                  "fg::zeros: storage size calculation overflowed with sizes=[0, 1099511627776, 1099511627776]");
  EXPECT_FG_ERROR(fg::eye(kBig), "fg::eye: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  EXPECT_FG_ERROR(fg::eye(kMax, kMax),
                  "fg::eye: storage size calculation overflowed with sizes=[9223372036854775807, 9223372036854775807]");
  const Tensor x = fg::zeros({2});
  EXPECT_FG_ERROR(x.new_zeros({kBig, kBig}),
                  "fg::zeros: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  EXPECT_FG_ERROR(fg::zeros({-1}), "fg::zeros: sizes must be non-negative, got [-1]");
  EXPECT_FG_ERROR(fg::randn({2, -3}), "fg::randn: sizes must be non-negative, got [2, -3]");
  // Sizes that fit are still fine, empty ones included.
  EXPECT_EQ(fg::zeros({0, kBig}).numel(), 0);
  EXPECT_EQ(fg::empty({kBig, 0}).numel(), 0);
}

TEST(Sizes, FromBlobChecksItsExtent) {
  float data[4] = {};
  EXPECT_FG_ERROR(fg::from_blob(data, {kBig, kBig}),
                  "fg::from_blob: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  EXPECT_FG_ERROR(fg::from_blob(data, {3, 2}, {kMax, 1}),
                  "fg::from_blob: size calculation overflowed: 2 * 9223372036854775807 does not fit in int64");
  EXPECT_FG_ERROR(fg::from_blob(data, {2, 2}, {kMax, 1}),
                  "fg::from_blob: size calculation overflowed: 9223372036854775807 + 1 does not fit in int64");
}

// Allocations that fit int64 but no machine can hold: the allocator's null is an fg::Error.
TEST(Sizes, ImpossibleAllocationIsAnError) {
  EXPECT_FG_ERROR(fg::empty({int64_t{1} << 58}),
                  "fg::empty: out of memory allocating 1152921504606846976 bytes for shape [288230376151711744]");
  EXPECT_FG_ERROR(fg::zeros({int64_t{1} << 50, 64}, fg::kBool),
                  "fg::zeros: out of memory allocating 72057594037927936 bytes for shape [1125899906842624, 64]");
  EXPECT_FG_ERROR(fg::empty({kMax}, fg::kBool),
                  "fg::empty: out of memory allocating 9223372036854775807 bytes for shape [9223372036854775807]");
}

// 4 TiB: the C library's allocator says no (sanitizer runtimes abort on such requests instead).
TEST(Sizes, HugeAllocationIsAnError) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer aborts on a 4 TiB request";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "AddressSanitizer aborts on a 4 TiB request";
#endif
#endif
  EXPECT_FG_ERROR(fg::empty({kBig}), "fg::empty: out of memory allocating 4398046511104 bytes for shape [1099511627776]");
}

// ============================================================================ arange

TEST(Sizes, ArangeRejectsBadRanges) {
  EXPECT_FG_ERROR(fg::arange(0, NAN), "fg::arange: unsupported range: 0 -> nan");
  EXPECT_FG_ERROR(fg::arange(NAN, 1), "fg::arange: unsupported range: nan -> 1");
  EXPECT_FG_ERROR(fg::arange(0, INFINITY), "fg::arange: unsupported range: 0 -> inf");
  EXPECT_FG_ERROR(fg::arange(-INFINITY, 0.0), "fg::arange: unsupported range: -inf -> 0");
  EXPECT_FG_ERROR(fg::arange(0, 1, NAN), "fg::arange: unsupported step: nan");
  EXPECT_FG_ERROR(fg::arange(0, 1, INFINITY), "fg::arange: unsupported step: inf");
  EXPECT_FG_ERROR(fg::arange(0, 10, 0), "fg::arange: step must be nonzero");
  EXPECT_FG_ERROR(fg::arange(0.0, 1.0, 0.0), "fg::arange: step must be nonzero");
  EXPECT_FG_ERROR(fg::arange(0, 10, -1),
                  "fg::arange: upper bound and larger bound inconsistent with step sign (start 0, end 10, step -1)");
  EXPECT_FG_ERROR(fg::arange(10, 0, 1),
                  "fg::arange: upper bound and larger bound inconsistent with step sign (start 10, end 0, step 1)");
}

TEST(Sizes, ArangeRejectsLengthsBeyondInt64) {
  EXPECT_FG_ERROR(fg::arange(0.0, 1e300, 1e-300),
                  "fg::arange: the range 0 -> 1e+300 with step 1e-300 has more elements than int64 can count");
  EXPECT_FG_ERROR(fg::arange(-kMax, kMax),
                  "fg::arange: the range -9223372036854775807 -> 9223372036854775807 with step 1 has more elements "
                  "than int64 can count");
  // The count fits, its bytes do not.
  EXPECT_FG_ERROR(fg::arange(0, kMax), "fg::arange: storage size calculation overflowed with sizes=[9223372036854775807]");
  // Integer ranges are counted exactly, even where doubles would round.
  EXPECT_EQ(fg::arange(kMax - 3, kMax).numel(), 3);
  EXPECT_EQ(fg::arange(-kMax, -kMax + 10, 3).numel(), 4);
  EXPECT_EQ(fg::arange(kMax, kMax - 10, -4).numel(), 3);
}

// ============================================================================ views and shapes

TEST(Sizes, ViewsRejectOverflowingSizes) {
  const Tensor one = fg::zeros({1});
  EXPECT_FG_ERROR(one.expand({kBig, kBig}),
                  "fg::expand: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  EXPECT_FG_ERROR(fg::broadcast_to(one, {kBig, kBig}),
                  "fg::expand: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  // A huge view that fits is fine (stride 0, nothing allocated).
  EXPECT_EQ(one.expand({kMax}).numel(), kMax);
  EXPECT_FG_ERROR(fg::zeros({0}).view({kBig, kBig, 0}),
                  "fg::view: storage size calculation overflowed with sizes=[1099511627776, 1099511627776, 0]");
  EXPECT_FG_ERROR(fg::zeros({0}).reshape({kBig, kBig, 0, -1}),
                  "fg::reshape: storage size calculation overflowed with sizes=[1099511627776, 1099511627776, 0, -1]");
  const Tensor z = fg::zeros({2, 3});
  EXPECT_FG_ERROR(z.narrow(1, 1, kMax),
                  "fg::narrow: start (1) + length (9223372036854775807) exceeds dimension 1 of size 3 (shape [2, 3])");
  // A step past the end keeps one element (its stride is never used, so it must not overflow).
  const Tensor s = fg::arange(6).reshape({2, 3}).slice(1, 1, 3, kMax);
  EXPECT_EQ(ref::to_shape(s.sizes()), (ref::Shape{2, 1}));
  EXPECT_EQ(s.select(1, 0).sum().item<int64_t>(), 1 + 4);
  EXPECT_EQ(z.slice(1, 0, 3, kMax).numel(), 2);
  EXPECT_FG_ERROR(fg::diag_embed(fg::zeros({2}), kMax),
                  "fg::diag_embed: size calculation overflowed: 2 + 9223372036854775807 does not fit in int64");
  EXPECT_FG_ERROR(fg::diag_embed(fg::zeros({2}), std::numeric_limits<int64_t>::min()),
                  "fg::diag_embed: offset -9223372036854775808 is out of range");
  EXPECT_FG_ERROR(fg::diag_embed(fg::zeros({2}), kBig),
                  "fg::diag_embed: storage size calculation overflowed with sizes=[1099511627778, 1099511627778]");
}

TEST(Sizes, CatAndStackRejectOverflowingSizes) {
  const Tensor huge = fg::zeros({1}).expand({int64_t{1} << 62});
  EXPECT_FG_ERROR(fg::cat({huge, huge}),
                  "fg::cat: size calculation overflowed: 4611686018427387904 + 4611686018427387904 does not fit in "
                  "int64");
  EXPECT_FG_ERROR(fg::stack({huge, huge}),
                  "fg::stack: storage size calculation overflowed with sizes=[2, 4611686018427387904]");
  const Tensor top = fg::zeros({1}).expand({kMax});
  EXPECT_FG_ERROR(fg::cat({top, top}),
                  "fg::cat: size calculation overflowed: 9223372036854775807 + 9223372036854775807 does not fit in "
                  "int64");
}

TEST(Sizes, BroadcastingRejectsOverflowingShapes) {
  const Tensor column = fg::zeros({1}).expand({kBig}).unsqueeze(1), row = fg::zeros({1}).expand({kBig});
  EXPECT_FG_ERROR(column + row,
                  "fg::add: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  EXPECT_FG_ERROR(fg::where(fg::zeros({1}, fg::kBool).expand({kBig}), column, 1.0),
                  "fg::where: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  EXPECT_FG_ERROR(fg::outer(row, row),
                  "fg::outer: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  EXPECT_FG_ERROR(fg::infer_size({kBig}, {kBig, 1}),
                  "fg::broadcast: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
}

// ============================================================================ ops with size arguments

TEST(Sizes, RepeatRejectsOverflowingRepeats) {
  const Tensor x = fg::zeros({2, 2});
  const std::string want = "fg::repeat: storage size calculation overflowed with sizes=[2199023255552, 2199023255552]";
  EXPECT_FG_ERROR(x.repeat({kBig, kBig}), want);
  EXPECT_FG_ERROR(fg::repeat(x, {kBig, kBig}), want);
  EXPECT_FG_ERROR(x.repeat({kMax, 1}), "fg::repeat: size calculation overflowed: 9223372036854775807 * 2 does not fit in int64");
  EXPECT_FG_ERROR(x.repeat({kBig, kBig, 1, 1}),
                  "fg::repeat: storage size calculation overflowed with sizes=[1099511627776, 1099511627776, 2, 2]");
}

TEST(Sizes, ConvolutionsRejectOverflowingArguments) {
  const Tensor x = fg::zeros({1, 1, 5, 5}), w = fg::zeros({1, 1, 3, 3});
  EXPECT_FG_ERROR(fg::conv2d(x, w, std::nullopt, 1, 0, kMax),
                  "fg::conv2d: size calculation overflowed: 9223372036854775807 * 2 does not fit in int64");
  EXPECT_FG_ERROR(fg::conv2d(x, w, std::nullopt, 1, "same", kMax),
                  "fg::conv2d: size calculation overflowed: 9223372036854775807 * 2 does not fit in int64");
  EXPECT_FG_ERROR(fg::conv2d(x, w, std::nullopt, 1, kMax),
                  "fg::conv2d: size calculation overflowed: 2 * 9223372036854775807 does not fit in int64");
  EXPECT_FG_ERROR(fg::conv2d(x, w, std::nullopt, 1, kBig),
                  "fg::conv2d: storage size calculation overflowed with sizes=[1, 1, 2199023255555, 2199023255555]");
  EXPECT_FG_ERROR(fg::conv1d(fg::zeros({1, 1, 5}), fg::zeros({1, 1, 3}), std::nullopt, 1, 0, kMax),
                  "fg::conv1d: size calculation overflowed: 9223372036854775807 * 2 does not fit in int64");
  EXPECT_FG_ERROR(fg::conv_transpose2d(x, w, std::nullopt, kMax),
                  "fg::conv_transpose2d: size calculation overflowed: 4 * 9223372036854775807 does not fit in int64");
  EXPECT_FG_ERROR(fg::conv_transpose2d(x, w, std::nullopt, 1, 0, 0, 1, kMax),
                  "fg::conv_transpose2d: size calculation overflowed: 9223372036854775807 * 2 does not fit in int64");
  EXPECT_FG_ERROR(fg::conv_transpose2d(x, w, std::nullopt, 1, kMax),
                  "fg::conv_transpose2d: size calculation overflowed: 2 * 9223372036854775807 does not fit in int64");
  EXPECT_FG_ERROR(fg::conv_transpose2d(x, w, std::nullopt, kBig),
                  "fg::conv_transpose2d: storage size calculation overflowed with sizes=[1, 1, 4398046511107, "
                  "4398046511107]");
  // The columns of every image (all made at once on other devices) must be countable too.
  // 2^34 images of 2^15 + 1 windows of 2^15 taps: input and output fit, their columns do not.
  const Tensor many = fg::zeros({1}).reshape({1, 1, 1, 1}).expand({int64_t{1} << 34, 1, 1, int64_t{1} << 16});
  EXPECT_FG_ERROR(fg::conv2d(many, fg::zeros({1, 1, 1, int64_t{1} << 15})),
                  "fg::conv2d: size calculation overflowed: 17179869184 * 1073774592 does not fit in int64");
}

TEST(Sizes, PoolsRejectOverflowingArguments) {
  const Tensor x = fg::zeros({1, 1, 4, 4});
  EXPECT_FG_ERROR(fg::max_pool2d(x, {kMax, kMax}, 1, {kMax / 2, kMax / 2}),
                  "fg::max_pool2d: size calculation overflowed: 4 + 9223372036854775806 does not fit in int64");
  EXPECT_FG_ERROR(fg::max_pool2d(x, 2, 1, 0, kMax),
                  "fg::max_pool2d: size calculation overflowed: 9223372036854775807 + 1 does not fit in int64");
  EXPECT_FG_ERROR(fg::max_pool1d(fg::zeros({1, 1, 4}), kMax, 1, kMax / 2),
                  "fg::max_pool1d: size calculation overflowed: 4 + 9223372036854775806 does not fit in int64");
  EXPECT_FG_ERROR(fg::avg_pool2d(x, {kMax, kMax}, 1, {kMax / 2, kMax / 2}),
                  "fg::avg_pool2d: size calculation overflowed: 4 + 9223372036854775806 does not fit in int64");
  EXPECT_FG_ERROR(fg::adaptive_avg_pool2d(x, {kBig, kBig}),
                  "fg::adaptive_avg_pool2d: storage size calculation overflowed with sizes=[1, 1, 1099511627776, "
                  "1099511627776]");
  // A kernel far larger than the input (padding half of it) visits only the input's elements:
  // quick, where it used to walk every tap of the window.
  const Tensor r = fg::arange(16, fg::kFloat).reshape({1, 1, 4, 4});
  EXPECT_TENSOR_EQ(fg::max_pool2d(r, {kBig, kBig}, 1, {kBig / 2, kBig / 2}), ref::Array({1, 1, 5, 5}, 15.0), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::max_pool2d(r, 2, kMax), ref::Array({1, 1, 1, 1}, 5.0), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::avg_pool2d(r, 2, kMax), ref::Array({1, 1, 1, 1}, 2.5), fg::kFloat);
}

TEST(Sizes, ClassesEmbeddingsAndProductsRejectOverflow) {
  EXPECT_FG_ERROR(fg::one_hot(fg::tensor({1}), kMax),
                  "fg::one_hot: storage size calculation overflowed with sizes=[1, 9223372036854775807]");
  EXPECT_FG_ERROR(fg::one_hot(fg::tensor({1}), int64_t{1} << 58),
                  "fg::one_hot: out of memory allocating 2305843009213693952 bytes for shape [1, 288230376151711744]");
  const Tensor many = fg::zeros({1}, fg::kLong).expand({kBig});
  const Tensor table = fg::zeros({1, 1}).expand({3, kBig});  // (nothing allocated)
  EXPECT_FG_ERROR(fg::embedding(table, many.unsqueeze(1)),
                  "fg::embedding: storage size calculation overflowed with sizes=[1099511627776, 1, 1099511627776]");
  EXPECT_FG_ERROR(fg::index_select(table, 0, many),
                  "fg::index_select: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  const Tensor row = fg::zeros({1}).expand({kBig});
  EXPECT_FG_ERROR(fg::einsum("i,j->ij", {row, row}),
                  "fg::einsum: storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
}

}  // namespace
