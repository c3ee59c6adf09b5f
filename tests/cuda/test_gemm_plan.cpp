// cuda/gemm_plan.h on the CPU: plan_gemm maps row-major strided products to cuBLAS's column-major
// arguments, and reference_gemm reads a plan as cuBLAS does. Every layout the runtime can hand the
// CUDA matmul (contiguous, transposed, padded, sliced, expanded, size-1 dims with any stride,
// broadcast batches, empty dims) runs through the plan and its copies and is compared with a
// naive product of the row-major view; the plan's fields are checked against cuBLAS's rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cuda/gemm_plan.h"
#include "funcgen/runtime/error.h"

namespace {

using fg::cuda::detail::GemmPlan;
using fg::cuda::detail::invalid_cublas_arguments;
using fg::cuda::detail::Op;
using fg::cuda::detail::OperandStrides;
using fg::cuda::detail::plan_gemm;
using fg::cuda::detail::reference_gemm;

constexpr int64_t kHuge = int64_t{1} << 33;  // a stride above cuBLAS's int

// How an operand [batch, rows, cols] lies in its buffer.
enum class Layout { Contiguous, Transposed, PaddedRows, PaddedCols, Step2, Step2Transposed, ExpandRows, ExpandCols };
const Layout kLayouts[] = {Layout::Contiguous, Layout::Transposed,      Layout::PaddedRows, Layout::PaddedCols,
                           Layout::Step2,      Layout::Step2Transposed, Layout::ExpandRows, Layout::ExpandCols};
const char* name(Layout l) {
  const char* names[] = {"contiguous", "transposed",        "padded rows",   "padded cols",
                         "step 2",     "step 2 transposed", "expanded rows", "expanded cols"};
  return names[static_cast<int>(l)];
}

// The stride given to a size-1 dim, which nothing may read.
enum class Unit { Natural, Zero, Huge };

struct Spec {
  Layout layout;
  bool broadcast;  // batch stride 0
  Unit unit;
};

// Whether cuBLAS cannot read the layout: both strides of a real (size > 1) matrix dim non-unit,
// or one of them 0.
bool expect_copy(Layout l, int64_t rows, int64_t cols) {
  switch (l) {
    case Layout::Step2:
    case Layout::Step2Transposed:
      return rows > 1 && cols > 1;
    case Layout::ExpandRows:
      return rows > 1;
    case Layout::ExpandCols:
      return cols > 1;
    default:
      return false;
  }
}

template <typename T>
struct Operand {
  int64_t batch, rows, cols;
  OperandStrides s;
  int64_t offset;
  std::vector<T> data;
  T at(int64_t b, int64_t r, int64_t c) const { return data[offset + b * s.bs + r * s.rs + c * s.cs]; }
};

OperandStrides matrix_strides(Layout l, int64_t rows, int64_t cols) {
  const int64_t r = std::max<int64_t>(rows, 1), c = std::max<int64_t>(cols, 1);
  switch (l) {
    case Layout::Contiguous:
      return {0, c, 1};
    case Layout::Transposed:
      return {0, 1, r};
    case Layout::PaddedRows:
      return {0, c + 3, 1};
    case Layout::PaddedCols:
      return {0, 1, r + 2};
    case Layout::Step2:
      return {0, 2 * c + 1, 2};
    case Layout::Step2Transposed:
      return {0, 2, 2 * r + 1};
    case Layout::ExpandRows:
      return {0, 0, 1};
    case Layout::ExpandCols:
      return {0, 1, 0};
  }
  return {};
}

// Random values everywhere in the buffer, gaps included, so a wrong stride reads a wrong value.
template <typename T>
Operand<T> make_operand(const Spec& spec, int64_t batch, int64_t rows, int64_t cols, std::mt19937& rng) {
  Operand<T> op{batch, rows, cols, matrix_strides(spec.layout, rows, cols), 1, {}};
  const int64_t span = rows > 0 && cols > 0 ? (rows - 1) * op.s.rs + (cols - 1) * op.s.cs + 1 : 0;
  op.s.bs = spec.broadcast ? 0 : span + 2;
  const int64_t unit = spec.unit == Unit::Zero ? 0 : kHuge;
  if (spec.unit != Unit::Natural) {
    if (rows == 1) op.s.rs = unit;
    if (cols == 1) op.s.cs = unit;
    if (batch == 1) op.s.bs = unit;
  }
  const int64_t matrices = spec.broadcast || batch == 0 ? 1 : batch;
  op.data.resize(op.offset + (matrices - 1) * (span + 2) + span + 1);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (T& v : op.data) v = static_cast<T>(dist(rng));
  return op;
}

// The row-major contiguous copy the plan asks for: one matrix when the batch is broadcast.
template <typename T>
std::vector<T> contiguous_copy(const Operand<T>& op) {
  const int64_t matrices = op.s.bs == 0 ? 1 : op.batch;
  std::vector<T> out;
  for (int64_t b = 0; b < matrices; ++b)
    for (int64_t r = 0; r < op.rows; ++r)
      for (int64_t c = 0; c < op.cols; ++c) out.push_back(op.at(b, r, c));
  return out;
}

// cuBLAS's documented constraints, written out here independently of the plan's own check.
void expect_valid_for_cublas(const GemmPlan& p) {
  const auto at_least = [](int64_t rows) { return std::max<int64_t>(1, rows); };
  EXPECT_GE(p.lda, at_least(p.transa == Op::N ? p.m : p.k));
  EXPECT_GE(p.ldb, at_least(p.transb == Op::N ? p.k : p.n));
  EXPECT_GE(p.ldc, at_least(p.m));
  for (int64_t v : {p.m, p.n, p.k, p.batch, p.lda, p.ldb, p.ldc}) EXPECT_LE(v, INT_MAX);
  EXPECT_EQ(invalid_cublas_arguments(p), "");
}

// Fields that follow from the case alone: sizes, the swap, the copies and the batch strides.
template <typename T>
void expect_plan_fields(const GemmPlan& p, int64_t batch, int64_t m, int64_t n, int64_t k, const Operand<T>& a,
                        const Operand<T>& b, const Spec& sa, const Spec& sb) {
  const bool call = batch > 0 && m > 0 && n > 0 && k > 0;
  EXPECT_TRUE(p.swap);
  EXPECT_EQ(p.call, call);
  EXPECT_EQ(p.m, n);
  EXPECT_EQ(p.n, m);
  EXPECT_EQ(p.k, k);
  EXPECT_EQ(p.batch, batch);
  EXPECT_EQ(p.stride_c, m * n);
  EXPECT_EQ(p.copy_a, call && expect_copy(sa.layout, m, k));
  EXPECT_EQ(p.copy_b, call && expect_copy(sb.layout, k, n));
  EXPECT_EQ(p.stride_b, a.s.bs == 0 ? 0 : p.copy_a ? m * k : a.s.bs);
  EXPECT_EQ(p.stride_a, b.s.bs == 0 ? 0 : p.copy_b ? k * n : b.s.bs);
}

template <typename T>
void run_case(int64_t batch, int64_t m, int64_t n, int64_t k, const Spec& sa, const Spec& sb, std::mt19937& rng) {
  const Operand<T> a = make_operand<T>(sa, batch, m, k, rng), b = make_operand<T>(sb, batch, k, n, rng);
  const GemmPlan p = plan_gemm(batch, m, n, k, a.s, b.s);
  expect_valid_for_cublas(p);
  expect_plan_fields(p, batch, m, n, k, a, b, sa, sb);
  const std::vector<T> a_copy = p.copy_a ? contiguous_copy(a) : std::vector<T>();
  const std::vector<T> b_copy = p.copy_b ? contiguous_copy(b) : std::vector<T>();
  const T* a_ptr = p.copy_a ? a_copy.data() : a.data.data() + a.offset;
  const T* b_ptr = p.copy_b ? b_copy.data() : b.data.data() + b.offset;
  std::vector<T> c(batch * m * n, T(12345));
  reference_gemm<T>(p, p.swap ? b_ptr : a_ptr, p.swap ? a_ptr : b_ptr, c.data());
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0, scale = 0;
        for (int64_t l = 0; l < k; ++l) {
          want += double(a.at(bi, i, l)) * double(b.at(bi, l, j));
          scale += std::abs(double(a.at(bi, i, l)) * double(b.at(bi, l, j)));
        }
        const double tol = sizeof(T) == 8 ? 1e-12 : 1e-4 * std::max(1.0, scale);
        EXPECT_NEAR(c[(bi * m + i) * n + j], want, tol) << "at [" << bi << ", " << i << ", " << j << "]";
      }
}

template <typename T>
class GemmPlanProducts : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GemmPlanProducts, Types);

// Every pair of layouts, broadcast batches and size-1 strides over small sizes, 0 and 1 included.
TYPED_TEST(GemmPlanProducts, MatchTheRowMajorProductInEveryLayout) {
  std::mt19937 rng(7);
  for (int64_t batch : {0, 1, 3})
    for (int64_t m : {0, 1, 2, 4})
      for (int64_t n : {0, 1, 3})
        for (int64_t k : {0, 1, 2, 5})
          for (Layout la : kLayouts)
            for (Layout lb : kLayouts)
              for (int mods = 0; mods < 12; ++mods) {
                const Unit unit = static_cast<Unit>(mods % 3);
                const Spec sa{la, (mods / 3) % 2 == 1, unit}, sb{lb, mods / 6 == 1, unit};
                SCOPED_TRACE(::testing::Message()
                             << "batch " << batch << ", m " << m << ", n " << n << ", k " << k << ", A " << name(la)
                             << (sa.broadcast ? " broadcast" : "") << ", B " << name(lb)
                             << (sb.broadcast ? " broadcast" : "") << ", size-1 strides " << static_cast<int>(unit));
                run_case<TypeParam>(batch, m, n, k, sa, sb, rng);
                if (this->HasFailure()) return;  // one case's report, not thousands
              }
}

TEST(GemmPlan, ContiguousProductIsTheSwappedColumnMajorOne) {
  const GemmPlan p = plan_gemm(1, 2, 4, 3, {6, 3, 1}, {12, 4, 1});  // [2,3] @ [3,4]
  EXPECT_TRUE(p.swap);
  EXPECT_TRUE(p.call);
  EXPECT_EQ(p.transa, Op::N);
  EXPECT_EQ(p.transb, Op::N);
  EXPECT_EQ(p.m, 4);
  EXPECT_EQ(p.n, 2);
  EXPECT_EQ(p.k, 3);
  EXPECT_EQ(p.lda, 4);
  EXPECT_EQ(p.ldb, 3);
  EXPECT_EQ(p.ldc, 4);
  EXPECT_EQ(p.stride_a, 12);
  EXPECT_EQ(p.stride_b, 6);
  EXPECT_EQ(p.stride_c, 8);
  EXPECT_EQ(p.batch, 1);
  EXPECT_FALSE(p.copy_a);
  EXPECT_FALSE(p.copy_b);
}

TEST(GemmPlan, TransposedOperandsAreReadWithOpT) {
  // A = At.T with At [3,2] contiguous (A [2,3], strides (1, 2)); B = Bt.T with Bt [4,3] contiguous.
  const GemmPlan p = plan_gemm(1, 2, 4, 3, {6, 1, 2}, {12, 1, 3});
  EXPECT_EQ(p.transa, Op::T);  // X = B stored as itself, k x n column-major
  EXPECT_EQ(p.lda, 3);
  EXPECT_EQ(p.transb, Op::T);  // Y = A stored as itself, m x k column-major
  EXPECT_EQ(p.ldb, 2);
  EXPECT_FALSE(p.copy_a || p.copy_b);
}

TEST(GemmPlan, PaddedRowsKeepTheirLeadingDimension) {
  // A [2,3] a column slice of [2,10]; B [3,4] a column slice of [3,7], over a batch of 5 with A broadcast.
  const GemmPlan p = plan_gemm(5, 2, 4, 3, {0, 10, 1}, {21, 7, 1});
  EXPECT_EQ(p.lda, 7);
  EXPECT_EQ(p.ldb, 10);
  EXPECT_EQ(p.stride_a, 21);
  EXPECT_EQ(p.stride_b, 0);  // the broadcast stays one matrix
  EXPECT_EQ(p.stride_c, 8);
  EXPECT_EQ(p.batch, 5);
}

TEST(GemmPlan, StepSlicesAreCopiedAndThePlanDescribesTheCopy) {
  const GemmPlan p = plan_gemm(2, 2, 4, 3, {20, 8, 2}, {0, 4, 1});  // A[:, :, ::2]; B broadcast
  EXPECT_TRUE(p.copy_a);
  EXPECT_FALSE(p.copy_b);
  EXPECT_EQ(p.transb, Op::N);
  EXPECT_EQ(p.ldb, 3);
  EXPECT_EQ(p.stride_b, 6);
  EXPECT_EQ(p.stride_a, 0);
  // Broadcast and copied: the copy may be one matrix, so the batch stride stays 0.
  const GemmPlan q = plan_gemm(2, 2, 4, 3, {0, 0, 1}, {12, 4, 1});
  EXPECT_TRUE(q.copy_a);
  EXPECT_EQ(q.stride_b, 0);
}

TEST(GemmPlan, SizeOneDimsIgnoreTheirStrides) {
  // A row vector [1,3] whose row stride is 0, B a column [3,1] whose column stride is huge.
  const GemmPlan p = plan_gemm(1, 1, 1, 3, {3, 0, 1}, {3, 1, kHuge});
  EXPECT_EQ(p.transb, Op::N);
  EXPECT_EQ(p.ldb, 3);  // max(1, k): rows of the stored A^T
  EXPECT_EQ(p.transa, Op::N);
  EXPECT_EQ(p.lda, 1);  // B^T, 1 x 3, with ld = B's row stride
  // A row vector [1,5] sliced with step 3 is still readable: column-major 1 x 5 with ld 3.
  const GemmPlan q = plan_gemm(1, 1, 2, 5, {15, 15, 3}, {10, 2, 1});
  EXPECT_FALSE(q.copy_a);
  EXPECT_EQ(q.transb, Op::T);
  EXPECT_EQ(q.ldb, 3);
}

TEST(GemmPlan, EmptyProductsNeedNoCallAndStayValid) {
  const std::tuple<int64_t, int64_t, int64_t> sizes[] = {{0, 4, 3}, {2, 0, 3}, {2, 4, 0}, {0, 0, 0}};
  for (const auto& [m, n, k] : sizes) {
    const GemmPlan p = plan_gemm(3, m, n, k, {0, 0, 0}, {0, 0, 0});  // unreadable strides: never read
    EXPECT_FALSE(p.call);
    EXPECT_FALSE(p.copy_a || p.copy_b);
    EXPECT_EQ(invalid_cublas_arguments(p), "") << m << " " << n << " " << k;
  }
  EXPECT_FALSE(plan_gemm(0, 2, 4, 3, {6, 3, 1}, {12, 4, 1}).call);
  // k == 0: the reference writes the zeros the caller must write for cuBLAS.
  const GemmPlan p = plan_gemm(1, 2, 2, 0, {0, 0, 1}, {0, 2, 1});
  std::vector<double> c(4, 7.0);
  reference_gemm<double>(p, nullptr, nullptr, c.data());
  EXPECT_EQ(c, std::vector<double>(4, 0.0));
}

TEST(GemmPlan, LeadingDimensionsAboveIntAreCopied) {
  const GemmPlan p = plan_gemm(1, 2, 4, 3, {0, kHuge, 1}, {0, 1, kHuge});
  EXPECT_TRUE(p.copy_a);
  EXPECT_TRUE(p.copy_b);
  EXPECT_EQ(p.ldb, 3);
  EXPECT_EQ(p.lda, 4);
}

TEST(GemmPlan, SizesAboveIntThrowNamingTheSize) {
  const int64_t big = int64_t{INT_MAX} + 1;
  const auto message = [](auto&& plan) {
    try {
      plan();
    } catch (const fg::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] {
              plan_gemm(1, big, 2, 2, {4, 2, 1}, {4, 2, 1});
            }),
            "fg::matmul: size m = 2147483648 is above cuBLAS's limit of 2147483647 (int)");
  EXPECT_EQ(message([&] {
              plan_gemm(1, 2, 2, big, {4, 2, 1}, {4, 2, 1});
            }),
            "fg::matmul: size k = 2147483648 is above cuBLAS's limit of 2147483647 (int)");
  EXPECT_EQ(message([&] {
              plan_gemm(big, 2, 2, 2, {4, 2, 1}, {4, 2, 1});
            }),
            "fg::matmul: size batch = 2147483648 is above cuBLAS's limit of 2147483647 (int)");
  EXPECT_EQ(message([&] { plan_gemm(1, 2, -1, 2, {4, 2, 1}, {4, 2, 1}); }), "fg::matmul: negative size n = -1");
  EXPECT_NO_THROW(plan_gemm(1, INT_MAX, 1, 1, {0, 1, 1}, {0, 1, 1}));
}

// The reference on its own, against a product worked by hand in column-major storage.
TEST(ReferenceGemm, ReadsColumnMajorWithTheOps) {
  GemmPlan p;
  p.transa = Op::N, p.transb = Op::T;
  p.m = p.n = p.k = 2;
  p.lda = p.ldb = p.ldc = 2;
  p.batch = 1;
  const float x[] = {1, 2, 3, 4};  // [1 3; 2 4]
  const float y[] = {5, 6, 7, 8};  // [5 7; 6 8], op T: [5 6; 7 8]
  float c[4] = {};
  reference_gemm<float>(p, x, y, c);
  EXPECT_EQ(std::vector<float>(c, c + 4), (std::vector<float>{26, 38, 30, 44}));  // [26 30; 38 44]
}

TEST(ReferenceGemm, RejectsWhatCublasRejects) {
  GemmPlan p;
  p.m = 3, p.n = 2, p.k = 2, p.batch = 1;
  p.lda = 2, p.ldb = 2, p.ldc = 3;  // lda < m for op N
  std::vector<double> x(6), y(4), c(6);
  EXPECT_THROW(reference_gemm<double>(p, x.data(), y.data(), c.data()), fg::Error);
  p.lda = 3, p.ldc = 0;  // ldc < max(1, m)
  EXPECT_NE(invalid_cublas_arguments(p), "");
  p.ldc = 3, p.transb = Op::T, p.ldb = 1;  // ldb < max(1, n) for op T
  EXPECT_NE(invalid_cublas_arguments(p), "");
  p.ldb = 2;
  EXPECT_EQ(invalid_cublas_arguments(p), "");
  p.m = 0, p.ldc = 0;  // even an empty C needs ldc >= 1
  EXPECT_NE(invalid_cublas_arguments(p), "");
}

}  // namespace
