// Tests of the matrix products (matmul, mm, bmm, mv, dot, outer, linear, the *_out variants) and
// einsum against plain scalar references computed here in double precision, and of the float32
// gemm kernel behind them (fg::cpu::sgemm) on every ISA.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cpu/gemm.h"  // fg::cpu::sgemm, the runtime's own float32 gemm
#include "funcgen/funcgen.h"

namespace {

using fg::Tensor;
using Shape = std::vector<int64_t>;

// ------------------------------------------------------------------------------ helpers

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t x : s) n *= x;
  return n;
}

// The elements of t in row-major order of its logical shape, read through its strides.
std::vector<double> values(const Tensor& t) {
  const Shape sizes = t.sizes().vec(), strides = t.strides().vec();
  const int64_t n = numel_of(sizes);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(n));
  Shape idx(sizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < sizes.size(); ++d) off += idx[d] * strides[d];
    switch (t.dtype()) {
      case fg::kFloat: out.push_back(t.data_ptr<float>()[off]); break;
      case fg::kDouble: out.push_back(t.data_ptr<double>()[off]); break;
      case fg::kLong: out.push_back(static_cast<double>(t.data_ptr<int64_t>()[off])); break;
      case fg::kBool: out.push_back(t.data_ptr<bool>()[off] ? 1.0 : 0.0); break;
    }
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// A contiguous tensor of deterministic pseudo-random values: uniform in [-1, 1] for floating
// dtypes, integers in [-5, 5] for int64, alternating for bool.
Tensor make(const Shape& shape, fg::ScalarType dtype, uint32_t seed) {
  Tensor t = fg::empty(shape, dtype);
  uint64_t state = 0x9E3779B97F4A7C15ULL * (seed + 1);
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  const int64_t n = numel_of(shape);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t r = next();
    switch (dtype) {
      case fg::kFloat: t.data_ptr<float>()[i] = static_cast<float>(r / 2147483648.0 * 2.0 - 1.0); break;
      case fg::kDouble: t.data_ptr<double>()[i] = r / 2147483648.0 * 2.0 - 1.0; break;
      case fg::kLong: t.data_ptr<int64_t>()[i] = static_cast<int64_t>(r % 11) - 5; break;
      case fg::kBool: t.data_ptr<bool>()[i] = (r & 1) != 0; break;
    }
  }
  return t;
}

// A dense array with a shape, for references.
struct Ref {
  Shape shape;
  std::vector<double> v;
};

Ref ref_of(const Tensor& t) { return {t.sizes().vec(), values(t)}; }

// torch.matmul in plain loops: 1-D operands become a row / column, batch dims broadcast.
Ref ref_matmul(const Ref& a, const Ref& b) {
  Shape as = a.shape, bs = b.shape;
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const size_t nd = std::max(ab.size(), bb.size());
  Shape batch(nd);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t x = i + ab.size() >= nd ? ab[i + ab.size() - nd] : 1;
    const int64_t y = i + bb.size() >= nd ? bb[i + bb.size() - nd] : 1;
    batch[i] = std::max(x, y);
  }
  // Row-major offset of a batch index in an operand with batch dims `ob` (broadcast where 1).
  auto batch_offset = [&](const Shape& idx, const Shape& ob) {
    int64_t off = 0;
    for (size_t i = 0; i < ob.size(); ++i) {
      const int64_t j = idx[i + nd - ob.size()];
      off = off * ob[i] + (ob[i] == 1 ? 0 : j);
    }
    return off;
  };
  Ref out;
  out.shape = batch;
  if (!a_vec) out.shape.push_back(m);
  if (!b_vec) out.shape.push_back(n);
  const int64_t nb = numel_of(batch);
  out.v.assign(static_cast<size_t>(nb * m * n), 0.0);
  Shape idx(nd, 0);
  for (int64_t bi = 0; bi < nb; ++bi) {
    const int64_t oa = batch_offset(idx, ab) * m * k, ob = batch_offset(idx, bb) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += a.v[oa + i * k + p] * b.v[ob + p * n + j];
        out.v[bi * m * n + i * n + j] = s;
      }
    for (size_t d = nd; d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// Naive einsum over letters only (explicit output), size-1 dims broadcasting: every assignment
// of every label, the product of the operands' elements summed into the output.
Ref ref_einsum(const std::string& eq, const std::vector<Ref>& ops) {
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow), rhs = eq.substr(arrow + 2);
  std::vector<std::string> subs;
  size_t start = 0;
  while (true) {
    const size_t c = lhs.find(',', start);
    subs.push_back(lhs.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  std::map<char, int64_t> size;
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t d = 0; d < subs[i].size(); ++d) size[subs[i][d]] = std::max(size[subs[i][d]], ops[i].shape[d]);
  std::vector<char> labels;
  for (auto& kv : size) labels.push_back(kv.first);
  Ref out;
  for (char c : rhs) out.shape.push_back(size[c]);
  out.v.assign(static_cast<size_t>(numel_of(out.shape)), 0.0);
  std::map<char, int64_t> val;
  std::function<void(size_t)> rec = [&](size_t li) {
    if (li == labels.size()) {
      double prod = 1;
      for (size_t i = 0; i < ops.size(); ++i) {
        int64_t off = 0;
        for (size_t d = 0; d < subs[i].size(); ++d) {
          const int64_t s = ops[i].shape[d];
          off = off * s + (s == 1 ? 0 : val[subs[i][d]]);
        }
        prod *= ops[i].v[off];
      }
      int64_t o = 0;
      for (size_t d = 0; d < rhs.size(); ++d) o = o * out.shape[d] + val[rhs[d]];
      out.v[o] += prod;
      return;
    }
    for (int64_t x = 0; x < size[labels[li]]; ++x) {
      val[labels[li]] = x;
      rec(li + 1);
    }
  };
  rec(0);
  return out;
}

double tolerance(fg::ScalarType dt, int64_t k) {
  const double eps = dt == fg::kFloat ? 1.2e-7 : dt == fg::kDouble ? 2.3e-16 : 0.0;
  return 8.0 * eps * static_cast<double>(k + 1);
}

// got matches ref in shape and in every value to within the rounding a k-term sum allows.
void expect_matches(const Tensor& got, const Ref& ref, int64_t k, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(got.defined());
  ASSERT_EQ(got.sizes().vec(), ref.shape);
  const std::vector<double> v = values(got);
  ASSERT_EQ(v.size(), ref.v.size());
  const double tol = tolerance(got.dtype(), k);
  int bad = 0;
  for (size_t i = 0; i < v.size() && bad < 5; ++i) {
    const double scale = std::max(1.0, std::abs(ref.v[i]));
    if (!(std::abs(v[i] - ref.v[i]) <= tol * scale)) {
      ADD_FAILURE() << "element " << i << ": got " << v[i] << ", expected " << ref.v[i];
      ++bad;
    }
  }
}

// The message of the fg::Error that f throws, or a marker when it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const fg::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not an fg::Error: ") + e.what() + ">";
  }
  return "<no error>";
}

// Variants of one logical matrix with different memory layouts (same values).
struct Variant {
  std::string name;
  Tensor t;
};

// `rows x cols` matrices holding the values of `base` (contiguous, shape rows x cols).
std::vector<Variant> layouts(const Tensor& base) {
  const int64_t rows = base.size(0), cols = base.size(1);
  std::vector<Variant> out;
  out.push_back({"contiguous", base});
  // A transposed view of a contiguous transpose: column-major storage.
  out.push_back({"transposed", base.t().contiguous().t()});
  // Every other column / row of a wider / taller buffer.
  {
    Tensor wide = fg::zeros({rows, 2 * cols}, base.dtype());
    wide.slice(1, 0, 2 * cols, 2).copy_(base);
    out.push_back({"column step 2", wide.slice(1, 0, 2 * cols, 2)});
    Tensor tall = fg::zeros({2 * rows, cols}, base.dtype());
    tall.slice(0, 0, 2 * rows, 2).copy_(base);
    out.push_back({"row step 2", tall.slice(0, 0, 2 * rows, 2)});
  }
  // A slice with row padding (leading dimension larger than the row).
  {
    Tensor padded = fg::zeros({rows, cols + 3}, base.dtype());
    padded.narrow(1, 1, cols).copy_(base);
    out.push_back({"padded rows", padded.narrow(1, 1, cols)});
  }
  return out;
}

const fg::ScalarType kFloatTypes[] = {fg::kFloat, fg::kDouble};

// ------------------------------------------------------------------------------ mm

TEST(Mm, MatchesReferenceForShapesAndLayouts) {
  const std::vector<std::array<int64_t, 3>> dims = {
      {1, 1, 1}, {3, 4, 5}, {17, 33, 9}, {64, 1, 7}, {1, 50, 3}, {7, 50, 1}, {1, 40, 1}, {65, 70, 67}};
  uint32_t seed = 1;
  for (fg::ScalarType dt : kFloatTypes) {
    for (const auto& d : dims) {
      const Tensor a = make({d[0], d[1]}, dt, seed++), b = make({d[1], d[2]}, dt, seed++);
      const Ref ref = ref_matmul(ref_of(a), ref_of(b));
      for (const Variant& va : layouts(a))
        for (const Variant& vb : layouts(b)) {
          const std::string what = std::string(fg::toString(dt)) + " [" + std::to_string(d[0]) + "," +
                                   std::to_string(d[1]) + "]@[" + std::to_string(d[1]) + "," +
                                   std::to_string(d[2]) + "] " + va.name + " @ " + vb.name;
          const Tensor c = fg::mm(va.t, vb.t);
          EXPECT_EQ(c.dtype(), dt);
          EXPECT_TRUE(c.is_contiguous());
          expect_matches(c, ref, d[1], what);
        }
    }
  }
}

TEST(Mm, ExpandedOperands) {
  for (fg::ScalarType dt : kFloatTypes) {
    // Rows that are all the same row (stride 0), and a broadcast column.
    const Tensor row = make({1, 6}, dt, 3), col = make({6, 1}, dt, 4);
    const Tensor a = row.expand({5, 6}), b = col.expand({6, 4});
    expect_matches(fg::mm(a, b), ref_matmul(ref_of(a), ref_of(b)), 6, fg::toString(dt));
    const Tensor s = make({1, 1}, dt, 5).expand({3, 3});
    expect_matches(fg::mm(s, s), ref_matmul(ref_of(s), ref_of(s)), 3, "scalar expanded");
  }
}

TEST(Mm, LargeFloat32) {
  const Tensor a = make({300, 257}, fg::kFloat, 7), b = make({257, 129}, fg::kFloat, 8);
  expect_matches(fg::mm(a, b), ref_matmul(ref_of(a), ref_of(b)), 257, "300x257x129");
  expect_matches(fg::mm(b.t(), a.t()), ref_matmul(ref_of(b.t()), ref_of(a.t())), 300, "transposed");
}

TEST(Mm, EmptyAndZeroInnerDimension) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble, fg::kLong}) {
    Tensor c = fg::mm(fg::empty({3, 0}, dt), fg::empty({0, 4}, dt));
    ASSERT_EQ(c.sizes().vec(), Shape({3, 4}));
    for (double v : values(c)) EXPECT_EQ(v, 0.0);
    EXPECT_EQ(fg::mm(fg::empty({0, 5}, dt), make({5, 4}, dt, 1)).sizes().vec(), Shape({0, 4}));
    EXPECT_EQ(fg::mm(make({2, 5}, dt, 1), fg::empty({5, 0}, dt)).sizes().vec(), Shape({2, 0}));
  }
}

TEST(Mm, Int64IsExact) {
  const Tensor a = make({13, 11}, fg::kLong, 1), b = make({11, 7}, fg::kLong, 2);
  const Ref ref = ref_matmul(ref_of(a), ref_of(b));
  for (const Variant& va : layouts(a))
    for (const Variant& vb : layouts(b)) {
      const Tensor c = fg::mm(va.t, vb.t);
      EXPECT_EQ(c.dtype(), fg::kLong);
      EXPECT_EQ(values(c), ref.v) << va.name << " @ " << vb.name;
    }
  // Large enough for the parallel row loop.
  const Tensor x = make({70, 80}, fg::kLong, 3), y = make({80, 90}, fg::kLong, 4);
  EXPECT_EQ(values(fg::mm(x, y)), ref_matmul(ref_of(x), ref_of(y)).v);
}

TEST(Mm, Errors) {
  const Tensor a = make({2, 3}, fg::kFloat, 1), b = make({4, 5}, fg::kFloat, 2);
  EXPECT_EQ(error_of([&] { fg::mm(a, b); }), "fg::mm: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)");
  EXPECT_EQ(error_of([&] { fg::mm(a, make({3, 2}, fg::kDouble, 3)); }),
            "fg::mm: expected both operands to have the same dtype, got float32 and float64");
  EXPECT_EQ(error_of([&] { fg::mm(make({2, 3, 4}, fg::kFloat, 1), b); }),
            "fg::mm: expected 2-D tensors, got [2, 3, 4] and [4, 5]");
  EXPECT_EQ(error_of([&] { fg::mm(make({2, 3}, fg::kBool, 1), make({3, 2}, fg::kBool, 2)); }),
            "fg::mm: expected float32, float64 or int64 operands, got bool");
  EXPECT_EQ(error_of([&] { fg::mm(Tensor(), b); }), "fg::mm: the self tensor is undefined");
}

// ------------------------------------------------------------------------------ bmm

TEST(Bmm, MatchesReference) {
  uint32_t seed = 10;
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble, fg::kLong}) {
    const Tensor a = make({5, 4, 6}, dt, seed++), b = make({5, 6, 3}, dt, seed++);
    const Ref ref = ref_matmul(ref_of(a), ref_of(b));
    expect_matches(fg::bmm(a, b), ref, 6, "contiguous");
    // Batch dim not outermost in memory, transposed matrices, step-2 batch.
    const Tensor ap = a.permute({1, 0, 2}).contiguous().permute({1, 0, 2});
    const Tensor bt = b.transpose(1, 2).contiguous().transpose(1, 2);
    expect_matches(fg::bmm(ap, bt), ref, 6, "permuted / transposed");
    Tensor a2 = fg::zeros({10, 4, 6}, dt);
    a2.slice(0, 0, 10, 2).copy_(a);
    expect_matches(fg::bmm(a2.slice(0, 0, 10, 2), b), ref, 6, "batch step 2");
    // One matrix broadcast over the batch (stride 0).
    const Tensor one = make({1, 6, 3}, dt, seed++).expand({5, 6, 3});
    expect_matches(fg::bmm(a, one), ref_matmul(ref_of(a), ref_of(one)), 6, "expanded right");
    const Tensor onel = make({1, 4, 6}, dt, seed++).expand({5, 4, 6});
    expect_matches(fg::bmm(onel, b), ref_matmul(ref_of(onel), ref_of(b)), 6, "expanded left");
  }
}

TEST(Bmm, ManySmallMatrices) {
  for (fg::ScalarType dt : kFloatTypes) {
    const Tensor a = make({64, 16, 78}, dt, 1), b = make({64, 78, 10}, dt, 2);
    expect_matches(fg::bmm(a, b), ref_matmul(ref_of(a), ref_of(b)), 78, "64 x [16,78]@[78,10]");
    const Tensor x = make({200, 3, 4}, dt, 3), y = make({200, 4, 2}, dt, 4);
    expect_matches(fg::bmm(x, y), ref_matmul(ref_of(x), ref_of(y)), 4, "200 x [3,4]@[4,2]");
  }
}

TEST(Bmm, LargeBatchItems) {
  const Tensor a = make({3, 130, 150}, fg::kFloat, 1), b = make({3, 150, 140}, fg::kFloat, 2);
  expect_matches(fg::bmm(a, b), ref_matmul(ref_of(a), ref_of(b)), 150, "3 x 130x150x140");
}

TEST(Bmm, Errors) {
  EXPECT_EQ(error_of([&] { fg::bmm(make({2, 3}, fg::kFloat, 1), make({3, 4}, fg::kFloat, 2)); }),
            "fg::bmm: expected 3-D tensors, got [2, 3] and [3, 4]");
  EXPECT_EQ(error_of([&] { fg::bmm(make({2, 3, 4}, fg::kFloat, 1), make({3, 4, 5}, fg::kFloat, 2)); }),
            "fg::bmm: batch sizes of [2, 3, 4] and [3, 4, 5] differ (2 != 3)");
  EXPECT_EQ(error_of([&] { fg::bmm(make({2, 3, 4}, fg::kFloat, 1), make({2, 5, 6}, fg::kFloat, 2)); }),
            "fg::bmm: shapes [2, 3, 4] and [2, 5, 6] cannot be multiplied (4 != 5)");
  EXPECT_EQ(error_of([&] { fg::bmm(make({2, 3, 4}, fg::kFloat, 1), make({2, 4, 6}, fg::kLong, 2)); }),
            "fg::bmm: expected both operands to have the same dtype, got float32 and int64");
}

// ------------------------------------------------------------------------------ matmul

struct MatmulCase {
  Shape a, b;
};

TEST(Matmul, BroadcastingRules) {
  const std::vector<MatmulCase> cases = {
      {{5}, {5}},                      // dot
      {{3, 5}, {5, 4}},                // mm
      {{5}, {5, 4}},                   // vector @ matrix
      {{3, 5}, {5}},                   // matrix @ vector
      {{4, 3, 5}, {5}},                // batched matrix @ vector (folded)
      {{5}, {2, 5, 4}},                // vector @ batched matrix
      {{2, 4, 3, 5}, {5, 6}},          // N-D @ 2-D (folded into one gemm)
      {{3, 5}, {2, 5, 4}},             // 2-D @ N-D
      {{2, 3, 5}, {2, 5, 4}},          // bmm
      {{2, 1, 3, 5}, {4, 5, 6}},       // batch broadcast both ways
      {{1, 3, 5}, {4, 5, 2}},          // size-1 batch broadcast
      {{3, 1, 2, 5}, {1, 2, 5, 3}},    // 4-D both broadcast
      {{2, 3, 1, 5}, {5, 1}},          // m = 1 / n = 1 inside a batch
      {{64, 128, 78}, {78, 10}},       // the MLP shape, scaled down in k
  };
  uint32_t seed = 100;
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble, fg::kLong}) {
    for (const MatmulCase& c : cases) {
      const Tensor a = make(c.a, dt, seed++), b = make(c.b, dt, seed++);
      const std::string what = std::string(fg::toString(dt)) + " " + shape_str(c.a) + " @ " +
                               shape_str(c.b);
      const Ref ref = ref_matmul(ref_of(a), ref_of(b));
      const int64_t k = c.a.back();
      expect_matches(fg::matmul(a, b), ref, k, what);
      // The same values in non-contiguous layouts: last two dims transposed in memory.
      auto relayout = [](const Tensor& t) {
        if (t.dim() < 2) {
          Tensor wide = fg::zeros({2 * t.size(0)}, t.dtype());
          wide.slice(0, 0, 2 * t.size(0), 2).copy_(t);
          return wide.slice(0, 0, 2 * t.size(0), 2);
        }
        return t.transpose(-1, -2).contiguous().transpose(-1, -2);
      };
      expect_matches(fg::matmul(relayout(a), relayout(b)), ref, k, what + " (strided)");
      expect_matches(a.matmul(b), ref, k, what + " (method)");
    }
  }
}

TEST(Matmul, FoldsNonContiguousLeftOperand) {
  // A permuted batch cannot be folded as a view; the result must still be right.
  const Tensor a = make({128, 4, 30}, fg::kFloat, 1).permute({1, 0, 2});  // [4, 128, 30]
  const Tensor w = make({30, 10}, fg::kFloat, 2);
  expect_matches(fg::matmul(a, w), ref_matmul(ref_of(a), ref_of(w)), 30, "permuted batch");
  const Tensor v = make({30}, fg::kFloat, 3);
  expect_matches(fg::matmul(a, v), ref_matmul(ref_of(a), ref_of(v)), 30, "permuted batch @ vector");
  // An expanded left operand with a shared right one.
  const Tensor e = make({1, 5, 30}, fg::kFloat, 4).expand({6, 5, 30});
  expect_matches(fg::matmul(e, w), ref_matmul(ref_of(e), ref_of(w)), 30, "expanded batch");
}

TEST(Matmul, Errors) {
  EXPECT_EQ(error_of([&] { fg::matmul(make({2, 3}, fg::kFloat, 1), make({4, 5}, fg::kFloat, 2)); }),
            "fg::matmul: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)");
  EXPECT_EQ(error_of([&] { fg::matmul(make({3}, fg::kFloat, 1), make({4}, fg::kFloat, 2)); }),
            "fg::matmul: shapes [3] and [4] cannot be multiplied (3 != 4)");
  EXPECT_EQ(error_of([&] { fg::matmul(make({2, 3, 4}, fg::kFloat, 1), make({3, 4, 5}, fg::kFloat, 2)); }),
            "fg::matmul: batch dimensions [2] and [3] of shapes [2, 3, 4] and [3, 4, 5] cannot be "
            "broadcast (2 != 3 at dim 0)");
  EXPECT_EQ(error_of([&] { fg::matmul(fg::scalar_tensor(2.0), make({3}, fg::kFloat, 2)); }),
            "fg::matmul: both arguments need at least 1 dimension, got [] and [3]");
  EXPECT_EQ(error_of([&] { fg::matmul(make({3}, fg::kFloat, 1), make({3}, fg::kDouble, 2)); }),
            "fg::matmul: expected both operands to have the same dtype, got float32 and float64");
}

// ------------------------------------------------------------------------------ mv, dot, outer

TEST(Mv, MatchesReference) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble, fg::kLong}) {
    const Tensor a = make({7, 9}, dt, 1), v = make({9}, dt, 2);
    const Ref ref = ref_matmul(ref_of(a), ref_of(v));
    for (const Variant& va : layouts(a)) {
      expect_matches(fg::mv(va.t, v), ref, 9, va.name);
      Tensor wide = fg::zeros({18}, dt);
      wide.slice(0, 0, 18, 2).copy_(v);
      expect_matches(fg::mv(va.t, wide.slice(0, 0, 18, 2)), ref, 9, va.name + ", vector step 2");
    }
    const Tensor ones = make({1}, dt, 3).expand({9});
    expect_matches(fg::mv(a, ones), ref_matmul(ref_of(a), ref_of(ones)), 9, "expanded vector");
  }
  EXPECT_EQ(error_of([&] { fg::mv(make({2, 3}, fg::kFloat, 1), make({3, 1}, fg::kFloat, 2)); }),
            "fg::mv: expected a 2-D matrix and a 1-D vector, got [2, 3] and [3, 1]");
  EXPECT_EQ(error_of([&] { fg::mv(make({2, 3}, fg::kFloat, 1), make({4}, fg::kFloat, 2)); }),
            "fg::mv: shapes [2, 3] and [4] cannot be multiplied (3 != 4)");
}

TEST(Dot, MatchesReference) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble, fg::kLong}) {
    const Tensor a = make({33}, dt, 1), b = make({66}, dt, 2).slice(0, 0, 66, 2);
    const Tensor c = fg::dot(a, b);
    EXPECT_EQ(c.dim(), 0);
    expect_matches(c, ref_matmul(ref_of(a), ref_of(b)), 33, fg::toString(dt));
    const Tensor e = make({1}, dt, 3).expand({33});
    expect_matches(fg::dot(a, e), ref_matmul(ref_of(a), ref_of(e)), 33, "expanded");
    expect_matches(a.dot(b), ref_matmul(ref_of(a), ref_of(b)), 33, "method");
  }
  Tensor z = fg::dot(fg::empty({0}, fg::kFloat), fg::empty({0}, fg::kFloat));
  EXPECT_EQ(z.item<double>(), 0.0);
  EXPECT_EQ(error_of([&] { fg::dot(make({3}, fg::kFloat, 1), make({4}, fg::kFloat, 2)); }),
            "fg::dot: shapes [3] and [4] cannot be multiplied (3 != 4)");
  EXPECT_EQ(error_of([&] { fg::dot(make({3, 1}, fg::kFloat, 1), make({3}, fg::kFloat, 2)); }),
            "fg::dot: expected 1-D tensors, got [3, 1] and [3]");
}

TEST(Outer, MatchesReference) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble, fg::kLong}) {
    const Tensor a = make({5}, dt, 1), b = make({14}, dt, 2).slice(0, 0, 14, 2);
    const Ref ref = ref_matmul({{5, 1}, values(a)}, {{1, 7}, values(b)});
    expect_matches(fg::outer(a, b), ref, 1, fg::toString(dt));
    expect_matches(a.outer(b), ref, 1, "method");
  }
  EXPECT_EQ(error_of([&] { fg::outer(make({3, 1}, fg::kFloat, 1), make({3}, fg::kFloat, 2)); }),
            "fg::outer: expected 1-D tensors, got [3, 1] and [3]");
}

// ------------------------------------------------------------------------------ linear

TEST(Linear, MatchesReference) {
  for (fg::ScalarType dt : kFloatTypes) {
    const Tensor w = make({6, 8}, dt, 1), bias = make({6}, dt, 2);
    for (const Shape& in_shape : {Shape{8}, Shape{5, 8}, Shape{3, 4, 8}}) {
      const Tensor x = make(in_shape, dt, 3);
      Ref ref = ref_matmul(ref_of(x), ref_of(w.t()));
      expect_matches(fg::linear(x, w), ref, 8, "no bias " + shape_str(in_shape));
      const std::vector<double> bv = values(bias);
      for (size_t i = 0; i < ref.v.size(); ++i) ref.v[i] += bv[i % 6];
      expect_matches(fg::linear(x, w, bias), ref, 8, "bias " + shape_str(in_shape));
      // Non-contiguous weight (stored transposed) and bias (step 2).
      Tensor wide = fg::zeros({12}, dt);
      wide.slice(0, 0, 12, 2).copy_(bias);
      expect_matches(fg::linear(x, w.t().contiguous().t(), wide.slice(0, 0, 12, 2)), ref, 8,
                     "strided weight and bias " + shape_str(in_shape));
    }
    // One output feature: the products become dot products / gemv, still adding the bias.
    const Tensor w1 = make({1, 8}, dt, 7), bias1 = make({1}, dt, 8);
    for (const Shape& in_shape : {Shape{8}, Shape{5, 8}}) {
      const Tensor x = make(in_shape, dt, 9);
      Ref ref = ref_matmul(ref_of(x), ref_of(w1.t()));
      for (double& v : ref.v) v += values(bias1)[0];
      expect_matches(fg::linear(x, w1, bias1), ref, 8, "one output " + shape_str(in_shape));
    }
    // Few outputs, deep input: the narrow-product kernel, accumulating onto the bias.
    const Tensor wn = make({12, 40}, dt, 10), bn = make({12}, dt, 11);
    for (const Shape& in_shape : {Shape{40}, Shape{7, 40}, Shape{3, 33, 40}}) {
      const Tensor x = make(in_shape, dt, 12);
      Ref ref = ref_matmul(ref_of(x), ref_of(wn.t()));
      const std::vector<double> bv = values(bn);
      for (size_t i = 0; i < ref.v.size(); ++i) ref.v[i] += bv[i % 12];
      expect_matches(fg::linear(x, wn, bn), ref, 40, "narrow " + shape_str(in_shape));
    }
    // A one-element bias broadcasts.
    const Tensor x = make({4, 8}, dt, 5), b1 = make({1}, dt, 6);
    Ref ref = ref_matmul(ref_of(x), ref_of(w.t()));
    for (double& v : ref.v) v += values(b1)[0];
    expect_matches(fg::linear(x, w, b1), ref, 8, "one-element bias");
  }
  const Tensor xi = make({4, 3}, fg::kLong, 1), wi = make({2, 3}, fg::kLong, 2), bi = make({2}, fg::kLong, 3);
  Ref ref = ref_matmul(ref_of(xi), ref_of(wi.t()));
  for (size_t i = 0; i < ref.v.size(); ++i) ref.v[i] += values(bi)[i % 2];
  EXPECT_EQ(values(fg::linear(xi, wi, bi)), ref.v);
}

TEST(Linear, Errors) {
  const Tensor x = make({4, 3}, fg::kFloat, 1);
  EXPECT_EQ(error_of([&] { fg::linear(x, make({5, 6}, fg::kFloat, 2)); }),
            "fg::linear: input of shape [4, 3] has 3 features but weight of shape [5, 6] expects 6");
  EXPECT_EQ(error_of([&] { fg::linear(x, make({5, 3}, fg::kDouble, 2)); }),
            "fg::linear: expected input and weight to have the same dtype, got float32 and float64");
  EXPECT_EQ(error_of([&] { fg::linear(x, make({5, 3}, fg::kFloat, 2), make({5}, fg::kDouble, 3)); }),
            "fg::linear: expected bias to have the dtype of input and weight (float32), got float64");
  EXPECT_EQ(error_of([&] { fg::linear(x, make({2, 5, 3}, fg::kFloat, 2)); }),
            "fg::linear: expected a 1-D or 2-D weight, got shape [2, 5, 3]");
}

// ------------------------------------------------------------------------------ *_out

TEST(Out, WritesIntoMatchingOutput) {
  const Tensor a = make({4, 5}, fg::kFloat, 1), b = make({5, 3}, fg::kFloat, 2);
  const Ref ref = ref_matmul(ref_of(a), ref_of(b));
  Tensor out = fg::empty({4, 3}, fg::kFloat);
  void* before = out.data_ptr();
  Tensor& r = fg::mm_out(out, a, b);
  EXPECT_EQ(&r, &out);
  EXPECT_EQ(out.data_ptr(), before);
  expect_matches(out, ref, 5, "mm_out");
  Tensor out2 = fg::empty({4, 3}, fg::kFloat);
  before = out2.data_ptr();
  fg::matmul_out(out2, a, b);
  EXPECT_EQ(out2.data_ptr(), before);
  expect_matches(out2, ref, 5, "matmul_out");
}

TEST(Out, ResizesWrongShapeAndHandlesAliasing) {
  const Tensor a = make({4, 5}, fg::kDouble, 1), b = make({5, 3}, fg::kDouble, 2);
  Tensor out = fg::empty({7}, fg::kDouble);
  fg::matmul_out(out, a, b);
  expect_matches(out, ref_matmul(ref_of(a), ref_of(b)), 5, "resized");
  Tensor out2 = fg::empty({2}, fg::kDouble);
  fg::mm_out(out2, a, b);
  expect_matches(out2, ref_matmul(ref_of(a), ref_of(b)), 5, "mm_out resized");
  // out is also an input: the product must read the old values.
  Tensor sq = make({6, 6}, fg::kDouble, 3);
  const Ref ref = ref_matmul(ref_of(sq), ref_of(sq));
  fg::mm_out(sq, sq, sq);
  expect_matches(sq, ref, 6, "aliased");
  // A non-contiguous out of the right shape receives the values.
  const Tensor base = fg::zeros({3, 4}, fg::kDouble);
  Tensor tout = base.t();
  fg::matmul_out(tout, make({4, 2}, fg::kDouble, 4), make({2, 3}, fg::kDouble, 5));
  expect_matches(tout, ref_matmul(ref_of(make({4, 2}, fg::kDouble, 4)), ref_of(make({2, 3}, fg::kDouble, 5))), 2,
                 "transposed out");
}

// ------------------------------------------------------------------------------ einsum

struct EinsumCase {
  std::string eq;      // the equation under test
  std::string ref_eq;  // the same with explicit output and letters only, for ref_einsum
  std::vector<Shape> shapes;
};

TEST(Einsum, MatchesReference) {
  const std::vector<EinsumCase> cases = {
      {"ij,jk->ik", "ij,jk->ik", {{3, 4}, {4, 5}}},              // matrix product
      {"ij,jk", "ij,jk->ik", {{3, 4}, {4, 5}}},                  // implicit output
      {"bij,bjk->bik", "bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},  // batch
      {"ii->", "ii->", {{4, 4}}},                                // trace
      {"ii", "ii->", {{4, 4}}},                                  // trace, implicit
      {"ii->i", "ii->i", {{4, 4}}},                              // diagonal
      {"i,j->ij", "i,j->ij", {{3}, {4}}},                        // outer
      {"ij->ji", "ij->ji", {{3, 4}}},                            // transpose
      {"ji", "ji->ij", {{3, 4}}},                                // implicit: alphabetical
      {"ij->", "ij->", {{3, 4}}},                                // sum
      {"ij->j", "ij->j", {{3, 4}}},                              // column sums
      {"i,i->", "i,i->", {{6}, {6}}},                            // dot
      {"i,i->i", "i,i->i", {{6}, {6}}},                          // element-wise product
      {"ij,j->i", "ij,j->i", {{3, 4}, {4}}},                     // mv
      {"ij,ij->ij", "ij,ij->ij", {{3, 4}, {3, 4}}},              // Hadamard
      {"bi,bi->b", "bi,bi->b", {{5, 7}, {5, 7}}},                // batched dot
      {"ij,jk,kl->il", "ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}},  // three operands
      {"ab,bc,ca->", "ab,bc,ca->", {{2, 3}, {3, 4}, {4, 2}}},      // closed chain
      {"i,j,k->ijk", "i,j,k->ijk", {{2}, {3}, {4}}},               // three-way outer
      {"iij->j", "iij->j", {{3, 3, 2}}},                           // partial trace
      {"iji->ij", "iji->ij", {{3, 2, 3}}},                         // non-adjacent repeat
      {"bij,bkj->bik", "bij,bkj->bik", {{2, 3, 4}, {2, 5, 4}}},    // transposed right side
      {"ijk,kj->i", "ijk,kj->i", {{2, 3, 4}, {4, 3}}},             // two contracted labels
      {"ab,cd->", "ab,cd->", {{2, 3}, {4, 5}}},                    // disjoint, all summed
      {"Ab,ba->Aa", "Ab,ba->Aa", {{2, 3}, {3, 4}}},                // upper-case labels
      {"i,i->i", "i,i->i", {{4}, {1}}},                            // size-1 broadcast
      {"ij,jk->ik", "ij,jk->ik", {{3, 1}, {4, 5}}},                // broadcast contracted label
      {"...ij,...jk->...ik", "xij,xjk->xik", {{2, 3, 4}, {2, 4, 5}}},  // ellipsis, same rank
      {"...ij,...jk->...ik", "xyij,yjk->xyik", {{2, 3, 4, 5}, {3, 5, 6}}},  // ellipsis broadcast
      {"...ij,...jk", "xyij,yjk->xyik", {{2, 1, 4, 5}, {2, 5, 3}}},        // implicit, size-1 broadcast
      {"i...->...", "ixy->xy", {{3, 2, 4}}},                               // ellipsis after letters
      {"...ii->...i", "xii->xi", {{2, 3, 3}}},                             // batched diagonal
      {"ij...,jk...->ik...", "ijx,jkx->ikx", {{2, 3, 4}, {3, 5, 4}}},      // trailing ellipsis
      {"...i->i", "xi->i", {{3, 4}}},                                      // ellipsis summed out
      {" i j , j k -> i k ", "ij,jk->ik", {{3, 4}, {4, 5}}},               // spaces
  };
  uint32_t seed = 500;
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble, fg::kLong}) {
    for (const EinsumCase& c : cases) {
      std::vector<Tensor> ts;
      std::vector<Ref> refs;
      int64_t k = 1;
      for (const Shape& s : c.shapes) {
        ts.push_back(make(s, dt, seed++));
        refs.push_back(ref_of(ts.back()));
        for (int64_t x : s) k *= x;
      }
      const std::string what = std::string(fg::toString(dt)) + " " + c.eq;
      const Ref ref = ref_einsum(c.ref_eq, refs);
      const Tensor got = fg::einsum(c.eq, ts);
      EXPECT_EQ(got.dtype(), dt) << what;
      expect_matches(got, ref, k, what);
      // Non-contiguous operands: every operand of >= 2 dims stored transposed.
      std::vector<Tensor> nc;
      for (const Tensor& t : ts)
        nc.push_back(t.dim() >= 2 ? t.transpose(0, -1).contiguous().transpose(0, -1) : t);
      expect_matches(fg::einsum(c.eq, nc), ref, k, what + " (transposed storage)");
    }
  }
}

TEST(Einsum, LargerContractionsUseBmm) {
  const Tensor a = make({8, 40, 50}, fg::kFloat, 1), b = make({8, 50, 30}, fg::kFloat, 2);
  expect_matches(fg::einsum("bij,bjk->bik", {a, b}), ref_matmul(ref_of(a), ref_of(b)), 50, "bmm");
  const Tensor x = make({64, 78}, fg::kFloat, 3), w = make({10, 78}, fg::kFloat, 4);
  expect_matches(fg::einsum("ni,oi->no", {x, w}), ref_matmul(ref_of(x), ref_of(w.t())), 78, "linear");
}

TEST(Einsum, Errors) {
  const Tensor m = make({2, 3}, fg::kFloat, 1), v = make({3}, fg::kFloat, 2);
  EXPECT_EQ(error_of([&] { fg::einsum("ij,jk->ik", {m}); }),
            "fg::einsum: equation has 2 operands but 1 tensors were given");
  EXPECT_EQ(error_of([&] { fg::einsum("ij", {m, v}); }),
            "fg::einsum: equation has 1 operands but 2 tensors were given");
  EXPECT_EQ(error_of([&] { fg::einsum("ijk->i", {m}); }),
            "fg::einsum: operand 0 has subscripts \"ijk\" for 3 dimensions but its shape [2, 3] has 2");
  EXPECT_EQ(error_of([&] { fg::einsum("ij...->i", {v}); }),
            "fg::einsum: operand 0 has subscripts \"ij...\" for at least 2 dimensions but its shape [3] has 1");
  EXPECT_EQ(error_of([&] { fg::einsum("ij,jk->ik", {m, make({4, 5}, fg::kFloat, 3)}); }),
            "fg::einsum: subscript 'j' has size 3 in operand 0 (shape [2, 3]) but size 4 in operand 1 "
            "(shape [4, 5])");
  EXPECT_EQ(error_of([&] { fg::einsum("ii->i", {m}); }),
            "fg::einsum: subscript 'i' is repeated in operand 0 but the sizes differ (2 != 3, shape [2, 3])");
  EXPECT_EQ(error_of([&] { fg::einsum("ij->k", {m}); }),
            "fg::einsum: output subscript 'k' does not appear in any operand of \"ij->k\"");
  EXPECT_EQ(error_of([&] { fg::einsum("ij->ii", {m}); }),
            "fg::einsum: output subscript 'i' appears more than once in \"ij->ii\"");
  EXPECT_EQ(error_of([&] { fg::einsum("i1->i", {v}); }),
            "fg::einsum: invalid character '1' in equation \"i1->i\" (subscripts must be letters a-z, "
            "A-Z or \"...\")");
  EXPECT_EQ(error_of([&] { fg::einsum("i..->i", {v}); }),
            "fg::einsum: invalid equation \"i..->i\": '.' must be part of an ellipsis \"...\"");
  EXPECT_EQ(error_of([&] { fg::einsum("...i...->i", {v}); }),
            "fg::einsum: invalid equation \"...i...->i\": operand 0 has more than one ellipsis");
  EXPECT_EQ(error_of([&] { fg::einsum("i>i", {v}); }),
            "fg::einsum: invalid equation \"i>i\": '>' outside \"->\"");
  EXPECT_EQ(error_of([&] { fg::einsum("i,i->i,i", {v, v}); }),
            "fg::einsum: invalid equation \"i,i->i,i\": the output subscripts contain ','");
  EXPECT_EQ(error_of([&] { fg::einsum("i->i->i", {v}); }),
            "fg::einsum: invalid equation \"i->i->i\": more than one \"->\"");
  EXPECT_EQ(error_of([&] { fg::einsum("...ij,...jk->...ik",
                                      {make({2, 2, 3}, fg::kFloat, 1), make({3, 3, 4}, fg::kFloat, 2)}); }),
            "fg::einsum: the ellipsis dimensions of operand 0 (shape [2, 2, 3]) and operand 1 (shape [3, 3, 4]) "
            "do not broadcast (2 != 3)");
  EXPECT_EQ(error_of([&] { fg::einsum("i,i->i", {v, make({3}, fg::kDouble, 2)}); }),
            "fg::einsum: expected all operands to have the same dtype, got float32 (operand 0) and float64 "
            "(operand 1)");
  EXPECT_EQ(error_of([&] { fg::einsum("i->i", {}); }), "fg::einsum: expected at least one operand tensor, got none");
}


// ------------------------------------------------------------------------------ sgemm kernel
// fg::cpu::sgemm (runtime/src/cpu/gemm.cpp), the float32 gemm behind mm/matmul/bmm/linear on
// AVX-512, called directly on every ISA this machine runs (each has its own register blocks and
// edge handling), then through the public products. Both of its paths are covered: the direct one
// (B with unit column stride that fits L2: the row-major and padded layouts of B below, on AVX2
// and AVX-512) and the packed one (the other layouts of B, larger B, the older ISAs). Shapes
// straddle the register blocks (up to 14 rows x 64 columns), the cache blocks (k > 256, m > 516,
// n > 256, B over 640 KiB), the thread splits (by rows and by columns) and the degenerate sizes.

class SgemmIsa : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { fg::cpu::force_isa(GetParam()); }
  void TearDown() override { fg::cpu::force_isa(""); }
};

std::vector<double> random_doubles(size_t n, uint32_t seed) {
  uint64_t state = 0x9E3779B97F4A7C15ULL * (seed + 7);
  std::vector<double> v(n);
  for (double& x : v) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<float>(static_cast<uint32_t>(state >> 33) / 2147483648.0 * 2.0 - 1.0);
  }
  return v;
}

// Memory layouts of a rows x cols operand, as element strides (rs, cs).
enum class Layout { kRowMajor, kColMajor, kPadded, kStrided };
const Layout kLayouts[] = {Layout::kRowMajor, Layout::kColMajor, Layout::kPadded, Layout::kStrided};
const char* layout_name(Layout l) {
  switch (l) {
    case Layout::kRowMajor: return "row-major";
    case Layout::kColMajor: return "column-major";
    case Layout::kPadded: return "padded rows";
    case Layout::kStrided: return "step 2";
  }
  return "?";
}

// A float32 operand in a buffer whose gaps hold NaN, so that reading any element outside the
// matrix poisons the result.
struct Operand {
  std::vector<float> buf;
  int64_t rs = 0, cs = 0;
};

Operand lay_out(const std::vector<double>& v, int64_t rows, int64_t cols, Layout l) {
  Operand o;
  switch (l) {
    case Layout::kRowMajor: o.rs = std::max<int64_t>(cols, 1), o.cs = 1; break;
    case Layout::kColMajor: o.rs = 1, o.cs = rows + 1; break;
    case Layout::kPadded: o.rs = cols + 3, o.cs = 1; break;
    case Layout::kStrided: o.rs = 2 * cols + 1, o.cs = 2; break;
  }
  const int64_t size = rows == 0 || cols == 0 ? 1 : (rows - 1) * o.rs + (cols - 1) * o.cs + 1;
  o.buf.assign(static_cast<size_t>(size), std::nanf(""));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) o.buf[i * o.rs + j * o.cs] = static_cast<float>(v[i * cols + j]);
  return o;
}

// One product shape with its operands' values and the double-precision reference.
struct GemmProblem {
  int64_t m, n, k;
  std::vector<double> a, b, c0;  // row-major m x k, k x n; c0: C's prior values (beta != 0)
  std::vector<double> ab, abs_ab;  // A @ B and |A| @ |B| (the rounding-error scale)
};

GemmProblem gemm_problem(int64_t m, int64_t n, int64_t k, uint32_t seed) {
  GemmProblem g{m, n, k, random_doubles(m * k, seed), random_doubles(k * n, seed + 1),
                random_doubles(m * n, seed + 2), {}, {}};
  g.ab.assign(static_cast<size_t>(m * n), 0.0);
  g.abs_ab.assign(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const double x = g.a[i * k + p];
      for (int64_t j = 0; j < n; ++j) {
        g.ab[i * n + j] += x * g.b[p * n + j];
        g.abs_ab[i * n + j] += std::abs(x * g.b[p * n + j]);
      }
    }
  return g;
}

// Runs sgemm on g with the given layouts, beta and threads; C has row stride n + 5, the padding
// columns must come back untouched and, with beta = 0, C's prior NaNs must not leak.
void check_sgemm(const GemmProblem& g, Layout la, Layout lb, float beta, int threads) {
  const int64_t m = g.m, n = g.n, k = g.k, ldc = n + 5;
  const std::string what = "sgemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                           " A " + layout_name(la) + ", B " + layout_name(lb) + ", beta " +
                           std::to_string(beta) + ", " + std::to_string(threads) + " threads";
  SCOPED_TRACE(what);
  const Operand A = lay_out(g.a, m, k, la), B = lay_out(g.b, k, n, lb);
  constexpr float kSentinel = 12345.0f;
  std::vector<float> c(static_cast<size_t>(std::max<int64_t>(m * ldc, 1)), kSentinel);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[i * ldc + j] = beta == 0.0f ? std::nanf("") : static_cast<float>(g.c0[i * n + j]);
  fg::cpu::sgemm(m, n, k, A.buf.data(), A.rs, A.cs, B.buf.data(), B.rs, B.cs, beta, c.data(), ldc, threads);
  int bad = 0;
  for (int64_t i = 0; i < m && bad < 5; ++i)
    for (int64_t j = 0; j < ldc && bad < 5; ++j) {
      const double got = c[i * ldc + j];
      if (j >= n) {
        if (got != kSentinel) {
          ADD_FAILURE() << "C(" << i << ", " << j << ") outside the matrix was overwritten with " << got;
          ++bad;
        }
        continue;
      }
      const double prior = beta == 0.0f ? 0.0 : static_cast<double>(beta) * static_cast<float>(g.c0[i * n + j]);
      const double ref = g.ab[i * n + j] + prior;
      // A k-term float32 sum of products (FMA or not) errs by at most about (k + 2) eps times the
      // sum of the magnitudes of its terms.
      const double tol =
          2.0 * 1.2e-7 * static_cast<double>(k + 2) * (g.abs_ab[i * n + j] + std::abs(prior)) + 1e-30;
      if (!(std::abs(got - ref) <= tol)) {
        ADD_FAILURE() << "C(" << i << ", " << j << "): got " << got << ", expected " << ref << " (tolerance "
                      << tol << ")";
        ++bad;
      }
    }
}

struct Dims {
  int64_t m, n, k;
};

TEST_P(SgemmIsa, MatchesReferenceDirectly) {
  const std::vector<Dims> dims = {
      {1, 1, 1},     {7, 13, 5},    {33, 65, 17},  {100, 1, 300}, {1, 100, 300}, {2, 2, 1},
      {12, 32, 8},   {13, 33, 9},   {14, 64, 3},   {6, 16, 4},    {5, 3, 0},     {0, 4, 3},
      {4, 0, 3},     {48, 48, 48},  {31, 47, 257}, {9, 200, 2},   {257, 129, 511},
  };
  uint32_t seed = 1;
  for (const Dims& d : dims) {
    const GemmProblem g = gemm_problem(d.m, d.n, d.k, seed += 3);
    for (Layout la : kLayouts)
      for (Layout lb : kLayouts) {
        const bool big = d.m * d.n * d.k > 100000;
        if (big && la != lb && !(la == Layout::kRowMajor || lb == Layout::kRowMajor)) continue;
        check_sgemm(g, la, lb, 0.0f, 1);
        check_sgemm(g, la, lb, 1.0f, big ? 2 : 1);
      }
    check_sgemm(g, Layout::kRowMajor, Layout::kRowMajor, 0.0f, 2);
    check_sgemm(g, Layout::kPadded, Layout::kColMajor, -0.5f, 2);
  }
}

// Several cache blocks in every direction: m > 516 (two A blocks), k > 256 (three KC chunks),
// n > 256 on each of two threads, B too large for the direct path even when row-major (600 x 300
// x 700, 70 x 600 x 300); two threads splitting the direct path by rows (530 x 500 x 20) and by
// columns (8 x 1500 x 100).
TEST_P(SgemmIsa, MatchesReferenceAcrossCacheBlocks) {
  const std::vector<Dims> dims = {{600, 300, 700}, {600, 40, 700}, {70, 600, 300}, {530, 500, 20}, {8, 1500, 100}};
  for (const Dims& d : dims) {
    const GemmProblem g = gemm_problem(d.m, d.n, d.k, 77);
    check_sgemm(g, Layout::kRowMajor, Layout::kRowMajor, 0.0f, 2);
    check_sgemm(g, Layout::kColMajor, Layout::kRowMajor, 1.0f, 2);
    check_sgemm(g, Layout::kRowMajor, Layout::kColMajor, 0.0f, 1);
  }
}

// The BLAS-style overload: transposed operands as flags, leading dimensions.
TEST_P(SgemmIsa, BlasStyleOverload) {
  const int64_t m = 37, n = 45, k = 29;
  const GemmProblem g = gemm_problem(m, n, k, 5);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE(std::string("trans_a ") + (ta ? "1" : "0") + ", trans_b " + (tb ? "1" : "0"));
      const int64_t lda = (ta ? m : k) + 2, ldb = (tb ? k : n) + 1, ldc = n + 3;
      std::vector<float> a(static_cast<size_t>((ta ? k : m) * lda)), b(static_cast<size_t>((tb ? n : k) * ldb));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p) a[ta ? p * lda + i : i * lda + p] = static_cast<float>(g.a[i * k + p]);
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) b[tb ? j * ldb + p : p * ldb + j] = static_cast<float>(g.b[p * n + j]);
      std::vector<float> c(static_cast<size_t>(m * ldc));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = static_cast<float>(g.c0[i * n + j]);
      fg::cpu::sgemm(ta, tb, m, n, k, a.data(), lda, b.data(), ldb, 1.0f, c.data(), ldc);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const double ref = g.ab[i * n + j] + static_cast<float>(g.c0[i * n + j]);
          ASSERT_NEAR(c[i * ldc + j], ref, 2.4e-7 * (k + 2) * (g.abs_ab[i * n + j] + 1.0)) << i << ", " << j;
        }
    }
}

// The public products on each ISA (on AVX-512 they run sgemm; elsewhere OpenBLAS).
TEST_P(SgemmIsa, ProductsThroughTheApi) {
  uint32_t seed = 300;
  for (const Dims& d : std::vector<Dims>{{1, 1, 1}, {7, 13, 5}, {33, 65, 17}, {100, 1, 300}, {257, 129, 511}}) {
    const Tensor a = make({d.m, d.k}, fg::kFloat, seed++), b = make({d.k, d.n}, fg::kFloat, seed++);
    const Ref ref = ref_matmul(ref_of(a), ref_of(b));
    const std::vector<Variant> las = layouts(a), lbs = layouts(b);
    for (size_t i = 0; i < las.size(); ++i)
      for (size_t j = 0; j < lbs.size(); ++j) {
        if (d.m * d.n * d.k > 100000 && i != j && i != 0 && j != 0) continue;
        const std::string what = "mm " + shape_str({d.m, d.k}) + " " + las[i].name + " @ " + shape_str({d.k, d.n}) +
                                 " " + lbs[j].name;
        expect_matches(fg::mm(las[i].t, lbs[j].t), ref, d.k, what);
      }
    expect_matches(fg::matmul(a, b), ref, d.k, "matmul " + shape_str({d.m, d.k}));
  }
  // A batch folded into one product, a batch run item by item (in parallel), large items.
  const Tensor x = make({3, 33, 65}, fg::kFloat, 1), w = make({65, 70}, fg::kFloat, 2);
  expect_matches(fg::matmul(x, w), ref_matmul(ref_of(x), ref_of(w)), 65, "folded [3,33,65]@[65,70]");
  const Tensor p = make({4, 33, 17}, fg::kFloat, 3), q = make({4, 17, 40}, fg::kFloat, 4);
  expect_matches(fg::bmm(p, q), ref_matmul(ref_of(p), ref_of(q)), 17, "bmm 4 x [33,17]@[17,40]");
  expect_matches(fg::bmm(p, q.transpose(1, 2).contiguous().transpose(1, 2)), ref_matmul(ref_of(p), ref_of(q)), 17,
                 "bmm, right operand transposed");
  const Tensor r = make({2, 257, 129}, fg::kFloat, 5), s = make({2, 129, 100}, fg::kFloat, 6);
  expect_matches(fg::bmm(r, s), ref_matmul(ref_of(r), ref_of(s)), 129, "bmm 2 x [257,129]@[129,100]");
  // linear: weight read transposed, the bias accumulated onto (beta = 1).
  const Tensor in = make({70, 50}, fg::kFloat, 7), wt = make({90, 50}, fg::kFloat, 8), bias = make({90}, fg::kFloat, 9);
  Ref lref = ref_matmul(ref_of(in), ref_of(wt.t()));
  const std::vector<double> bv = values(bias);
  for (size_t i = 0; i < lref.v.size(); ++i) lref.v[i] += bv[i % 90];
  expect_matches(fg::linear(in, wt, bias), lref, 50, "linear [70,50] x [90,50]^T + bias");
  // Into an existing output.
  Tensor out = fg::empty({33, 70}, fg::kFloat);
  const Tensor x2 = make({33, 65}, fg::kFloat, 10);
  fg::mm_out(out, x2, w);
  expect_matches(out, ref_matmul(ref_of(x2), ref_of(w)), 65, "mm_out");
}

INSTANTIATE_TEST_SUITE_P(Isas, SgemmIsa, ::testing::ValuesIn(fg::cpu::available_isas()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Called from inside a parallel region, sgemm must stay on its thread (no nested team, no
// barrier shared with the outer team) and still be right.
TEST(Sgemm, InsideAParallelRegion) {
  const GemmProblem g = gemm_problem(200, 150, 120, 11);
  const Operand A = lay_out(g.a, 200, 120, Layout::kRowMajor), B = lay_out(g.b, 120, 150, Layout::kRowMajor);
  std::vector<std::vector<float>> cs(4, std::vector<float>(200 * 150, 0.0f));
#pragma omp parallel for num_threads(2) schedule(static)
  for (int t = 0; t < 4; ++t)
    fg::cpu::sgemm(200, 150, 120, A.buf.data(), A.rs, A.cs, B.buf.data(), B.rs, B.cs, 0.0f, cs[t].data(), 150, 2);
  for (int t = 0; t < 4; ++t)
    for (int64_t i = 0; i < 200 * 150; ++i)
      ASSERT_NEAR(cs[t][i], g.ab[i], 2.4e-7 * 122 * g.abs_ab[i]) << "call " << t << ", element " << i;
}

}  // namespace
