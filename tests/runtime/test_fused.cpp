// fg::Fused (fused.h) against the ops it stands for, run one by one: every unary and binary op,
// float32 and float64, sizes across tile boundaries, expanded (one-value) inputs, values that
// leave the SIMD kernels' domains, many live values, threads; where the fused path does not apply
// (broadcasting, mixed dtypes, integers, bad shapes) the same results and the same errors as the ops;
// shape steps (expand_as, sum_to_as) and random programs against the ops one by one.
#include <gtest/gtest.h>

#include <funcgen/funcgen.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <array>
#include <string>
#include <vector>

namespace {

using fg::Tensor;

// Bit-for-bit equality (NaN equal to NaN), with the shape and dtype.
::testing::AssertionResult same_bits(const Tensor& got, const Tensor& want) {
  if (got.sizes() != want.sizes() || got.dtype() != want.dtype())
    return ::testing::AssertionFailure() << "shape/dtype " << got.sizes() << " " << got.dtype() << " vs "
                                         << want.sizes() << " " << want.dtype();
  const Tensor g = got.contiguous(), w = want.contiguous();
  if (std::memcmp(g.data_ptr(), w.data_ptr(), static_cast<size_t>(g.numel()) * g.element_size()) != 0)
    return ::testing::AssertionFailure() << "values differ:\n" << g << "\n" << w;
  return ::testing::AssertionSuccess();
}

Tensor values(int64_t n, fg::ScalarType dtype, double scale, double shift) {
  return (fg::arange(n, fg::kDouble) * 0.37).sin().mul(scale).add(shift).to(dtype);
}

struct UnaryCase {
  const char* name;
  Tensor (*op)(const Tensor&);
  double scale, shift;  // inputs in the op's domain (log, sqrt: positive)
};

const std::vector<UnaryCase>& unary_cases() {
  static const std::vector<UnaryCase> cases = {
      {"neg", fg::neg, 2, 0},         {"abs", fg::abs, 2, 0},         {"exp", fg::exp, 3, 0},
      {"log", fg::log, 1, 1.5},       {"log1p", fg::log1p, 0.9, 0},   {"sqrt", fg::sqrt, 1, 1.5},
      {"rsqrt", fg::rsqrt, 1, 1.5},   {"sin", fg::sin, 4, 0},         {"cos", fg::cos, 4, 0},
      {"tan", fg::tan, 1.2, 0},       {"tanh", fg::tanh, 3, 0},       {"sigmoid", fg::sigmoid, 5, 0},
      {"relu", fg::relu, 1, 0},       {"erf", fg::erf, 2, 0},         {"silu", fg::silu, 3, 0},
      {"log_sigmoid", fg::log_sigmoid, 4, 0}, {"expm1", fg::expm1, 3, 0}};
  return cases;
}

class FusedUnary : public ::testing::TestWithParam<std::tuple<size_t, fg::ScalarType, int64_t>> {};

// u = op(x); out = mul(u, y): the op's value in scratch, then read by a binary step.
TEST_P(FusedUnary, EqualsTheOpRunAlone) {
  const auto [index, dtype, n] = GetParam();
  const UnaryCase& c = unary_cases()[index];
  const Tensor x = values(n, dtype, c.scale, c.shift), y = values(n, dtype, 1.5, 0.25);
  const std::string program = std::string("u = ") + c.name + "(x); out = mul(u, y)";
  const fg::Fused fused({"x", "y"}, program.c_str(), {"u", "out"});
  auto [u, out] = fused.run<2>({x, y});
  EXPECT_TRUE(same_bits(u, c.op(x))) << c.name;
  EXPECT_TRUE(same_bits(out, c.op(x) * y)) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Ops, FusedUnary,
                         ::testing::Combine(::testing::Range<size_t>(0, 16), ::testing::Values(fg::kFloat, fg::kDouble),
                                            ::testing::Values<int64_t>(1, 15, 1024, 2500)),
                         [](const auto& info) {
                           return std::string(unary_cases()[std::get<0>(info.param)].name) + "_" +
                                  fg::toString(std::get<1>(info.param)) + "_" +
                                  std::to_string(std::get<2>(info.param));
                         });

TEST(Fused, BinaryOpsWithTensorsAndNumbers) {
  for (fg::ScalarType dtype : {fg::kFloat, fg::kDouble}) {
    const Tensor x = values(3000, dtype, 2, 0), y = values(3000, dtype, 1, 2.5);
    const fg::Fused fused({"x", "y"},
                          "a = add(x, y); s = sub(x, y); m = mul(x, y); d = div(x, y); "
                          "a1 = add(2, x); s1 = sub(1, x); m1 = mul(x, 0.5); d1 = div(1.5, y); d2 = div(x, 3)",
                          {"a", "s", "m", "d", "a1", "s1", "m1", "d1", "d2"});
    const std::vector<Tensor> out = fused({x, y});
    ASSERT_EQ(out.size(), 9u);
    EXPECT_TRUE(same_bits(out[0], x + y));
    EXPECT_TRUE(same_bits(out[1], x - y));
    EXPECT_TRUE(same_bits(out[2], x * y));
    EXPECT_TRUE(same_bits(out[3], x / y));
    EXPECT_TRUE(same_bits(out[4], 2 + x));
    EXPECT_TRUE(same_bits(out[5], 1 - x));
    EXPECT_TRUE(same_bits(out[6], x * 0.5));
    EXPECT_TRUE(same_bits(out[7], 1.5 / y));
    EXPECT_TRUE(same_bits(out[8], x / 3));
  }
}

// The hvp's program (jvp(grad(sum(sin(x) cos(x))))): one input a gradient seed expanded from one
// value, values used far from where they are made, outputs read by later steps.
TEST(Fused, ExpandedSeedAndLongLivedValues) {
  const Tensor x = values(4100, fg::kFloat, 3, 0), v = values(4100, fg::kFloat, 1, 0.5);
  const Tensor seed = fg::full({}, 0.75, fg::kFloat).expand({4100});
  const fg::Fused fused({"x", "v", "g"},
                        "t = sin(x); c = cos(x); tt = mul(v, c); ct = neg(v); ct1 = mul(ct, t); "
                        "a = mul(g, c); at = mul(ct1, g); b = mul(g, t); bt = mul(tt, g); nb = neg(b); "
                        "nbt = neg(bt); e = mul(nb, t); et = mul(v, c); f = mul(nbt, t); f1 = mul(et, nb); "
                        "f2 = add(f, f1); g1 = mul(a, c); g2 = mul(at, c); g3 = mul(ct1, a); g4 = add(g2, g3); "
                        "out = add(e, g1); out_t = add(f2, g4); gg = mul(g, 2); hh = sub(1, gg)",
                        {"out", "out_t", "t", "hh"});
  auto [out, out_t, t, hh] = fused.run<4>({x, v, seed});
  const Tensor tr = x.sin(), c = x.cos(), tt = v * c, ct1 = (-v) * tr, a = seed * c, at = ct1 * seed;
  const Tensor b = seed * tr, bt = tt * seed, nb = -b, nbt = -bt;
  const Tensor f2 = nbt * tr + (v * c) * nb, g4 = at * c + ct1 * a;
  EXPECT_TRUE(same_bits(out, nb * tr + a * c));
  EXPECT_TRUE(same_bits(out_t, f2 + g4));
  EXPECT_TRUE(same_bits(t, tr));
  EXPECT_TRUE(same_bits(hh, 1 - seed * 2)) << "a value of the seed alone fills its output";
  EXPECT_TRUE(hh.is_contiguous());
}

// expand_as and sum_to_as, AD's broadcasting: on values of the run's shape they are their operand
// (expand_as a view of it, sum_to_as the tensor itself, as the ops return); an input read only
// through expand_as is broadcast first, one read only for its shape may be of any dtype.
TEST(Fused, ShapeStepsCarryBroadcastingThroughARun) {
  const Tensor x = values(1480, fg::kFloat, 3, 0).reshape({37, 40}), v = values(1480, fg::kFloat, 1, 0.5).reshape({37, 40});
  const Tensor g = fg::full({}, 0.75, fg::kFloat).expand({37, 40}), bias_t = values(40, fg::kFloat, 2, 0.1);
  const Tensor like = fg::zeros({37, 40}, fg::kDouble), one = fg::full({1}, 1.5, fg::kFloat);
  const fg::Fused fused({"x", "v", "g", "bias_t", "like", "one"},
                        "a = mul(g, x); at = expand_as(bias_t, a); s = sum_to_as(a, x); e = mul(at, s); "
                        "w = sum_to_as(e, v); u = expand_as(one, like); z = mul(u, w); out = add(z, v); "
                        "same = expand_as(s, like)",
                        {"at", "s", "out", "same", "w"});
  auto [at, s, out, same, w] = fused.run<5>({x, v, g, bias_t, like, one});
  const Tensor a = g * x;
  EXPECT_TRUE(same_bits(at, bias_t.expand({37, 40})));
  EXPECT_EQ(at.data_ptr(), bias_t.data_ptr()) << "expand_as of an input is a view of it";
  EXPECT_TRUE(same_bits(s, a));
  EXPECT_TRUE(same_bits(w, bias_t.expand({37, 40}) * a));
  EXPECT_TRUE(same_bits(out, one.expand({37, 40}) * (bias_t * a) + v));
  EXPECT_TRUE(same_bits(same, a));
  EXPECT_EQ(same.data_ptr(), s.data_ptr()) << "expand_as of a value is a view of it";
  const fg::Fused alias({"x", "y"}, "c = sum_to_as(x, y); d = sin(c); e = cos(d)", {"c", "e"});
  auto [c, e2] = alias.run<2>({x, v});
  EXPECT_TRUE(c.is_same(x)) << "sum_to_as to its own shape is the tensor itself";
  const fg::Fused chain({"x", "y"}, "e = expand_as(x, y); f = sum_to_as(e, y); g = sin(f); h = cos(g)", {"e", "f", "h"});
  auto [e3, f3, h3] = chain.run<3>({x, v});
  EXPECT_TRUE(f3.is_same(e3)) << "sum_to_as of an expand_as is that view";
  EXPECT_FALSE(e3.is_same(x));
  EXPECT_EQ(e3.data_ptr(), x.data_ptr());
  EXPECT_TRUE(same_bits(e2, x.sin().cos()));
}

// Shape steps that change the shape run through the ops: a sum over the broadcast dims, an
// expand to a larger shape, and their errors.
TEST(Fused, ShapeStepsThatReshapeRunAsTheOps) {
  const Tensor a = values(12, fg::kFloat, 1, 0).reshape({3, 4}), b = values(4, fg::kFloat, 2, 0.5);
  const fg::Fused reduce({"a", "b"}, "p = mul(a, 2); q = sum_to_as(p, b); r = exp(q)", {"q", "r"});
  auto [q, r] = reduce.run<2>({a, b});
  EXPECT_TRUE(same_bits(q, fg::ad::sum_to(a * 2, {4})));
  EXPECT_TRUE(same_bits(r, fg::ad::sum_to(a * 2, {4}).exp()));
  const fg::Fused grow({"b", "a"}, "p = sin(b); q = expand_as(p, a); r = mul(q, 3)", {"q", "r"});
  auto [q2, r2] = grow.run<2>({b, a});
  EXPECT_TRUE(same_bits(q2, b.sin().expand({3, 4})));
  EXPECT_TRUE(same_bits(r2, b.sin().expand({3, 4}) * 3));
  // b broadcast into the run and the shape its gradient sums back to: not the run's shape.
  const fg::Fused both({"b", "a"}, "p = expand_as(b, a); q = mul(p, a); r = sum_to_as(q, b); s = exp(r)", {"r", "s"});
  auto [r3, s3] = both.run<2>({b, a});
  EXPECT_TRUE(same_bits(r3, fg::ad::sum_to(b * a, {4})));
  EXPECT_TRUE(same_bits(s3, fg::ad::sum_to(b * a, {4}).exp()));
  EXPECT_THROW(grow.run<2>({a, b}), fg::Error);  // [3, 4] does not expand to [4]
  EXPECT_THROW(reduce.run<2>({b, a}), fg::Error);
}

// Random programs of element-wise and shape steps on inputs of random shapes (broadcast rows and
// columns, 0-d, empty, an expanded seed, non-contiguous, another dtype), against the ops run one
// by one: the same values, shapes and errors, and the same sharing of memory and of tensors.
TEST(Fused, RandomProgramsEqualTheOpsOneByOne) {
  std::mt19937 rng(2026);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const char* unary[] = {"neg", "abs", "sin", "cos", "tanh", "sigmoid", "relu", "exp"};
  Tensor (*unary_op[])(const Tensor&) = {fg::neg, fg::abs, fg::sin, fg::cos, fg::tanh, fg::sigmoid, fg::relu, fg::exp};
  const char* binary[] = {"add", "sub", "mul"};
  for (int program = 0; program < 3000; ++program) {
    const int64_t rows = pick(15) == 0 ? 0 : pick(6) == 0 ? 300 + pick(50) : 1 + pick(5), cols = 1 + pick(40);
    const fg::ScalarType dtype = pick(2) ? fg::kDouble : fg::kFloat;
    std::vector<Tensor> env;
    for (int i = 0; i < 3; ++i) {
      const int kind = pick(9);
      const std::vector<int64_t> shape = kind == 0 ? std::vector<int64_t>{cols}
                                         : kind == 1 ? std::vector<int64_t>{1, cols}
                                         : kind == 2 ? std::vector<int64_t>{rows, 1}
                                         : kind == 3 ? std::vector<int64_t>{}
                                         : kind == 4 ? std::vector<int64_t>{1}
                                                     : std::vector<int64_t>{rows, cols};
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      Tensor t = values(n, dtype, 1, 0.1 * i).reshape(shape);
      if (kind >= 5 && pick(5) == 0) t = fg::full({}, 0.5 + i, dtype).expand(shape);
      if (kind >= 5 && pick(8) == 0) t = t.t().contiguous().t();
      if (pick(12) == 0) t = t.to(dtype == fg::kFloat ? fg::kDouble : fg::kFloat);
      env.push_back(t);
    }
    std::vector<std::string> names = {"i0", "i1", "i2"};
    std::string text;
    std::string error;
    const int steps = 3 + pick(5);
    for (int k = 0; k < steps; ++k) {
      const int a = pick(static_cast<int>(names.size())), b = pick(static_cast<int>(names.size())), kind = pick(10);
      const std::string name = "v" + std::to_string(k);
      Tensor v;
      try {
        if (kind < 3) {
          const int u = pick(8);
          text += name + " = " + unary[u] + "(" + names[a] + "); ";
          if (error.empty()) v = unary_op[u](env[a]);
        } else if (kind < 6) {
          const int op = pick(3);
          const bool number = pick(5) == 0;
          text += name + " = " + binary[op] + "(" + names[a] + ", " + (number ? "1.5" : names[b]) + "); ";
          const Tensor& y = env[b];
          if (error.empty())
            v = number ? (op == 0 ? env[a] + 1.5 : op == 1 ? env[a] - 1.5 : env[a] * 1.5)
                       : (op == 0 ? env[a] + y : op == 1 ? env[a] - y : env[a] * y);
        } else {
          const bool expand = kind < 8;
          text += name + (expand ? " = expand_as(" : " = sum_to_as(") + names[a] + ", " + names[b] + "); ";
          if (error.empty()) v = expand ? env[a].expand(env[b].sizes()) : fg::ad::sum_to(env[a], env[b].sizes());
        }
      } catch (const fg::Error& e) {
        error = e.what();
      }
      env.push_back(v);
      names.push_back(name);
    }
    std::ostringstream inputs;
    for (int i = 0; i < 3; ++i) inputs << " " << env[i].sizes() << " " << env[i].dtype() << (env[i].is_contiguous() ? "" : " strided");
    SCOPED_TRACE(text + "inputs" + inputs.str());
    const size_t last = names.size() - 1;
    const fg::Fused fused({"i0", "i1", "i2"}, text.c_str(),
                          {names[last - 2].c_str(), names[last - 1].c_str(), names[last].c_str()});
    std::array<Tensor, 3> got;
    try {
      got = fused.run<3>({env[0], env[1], env[2]});
    } catch (const fg::Error& e) {
      EXPECT_EQ(std::string(e.what()), error);
      continue;
    }
    ASSERT_EQ(error, "");
    const Tensor want[3] = {env[last - 2], env[last - 1], env[last]};
    for (int k = 0; k < 3; ++k) {
      ASSERT_EQ(got[k].sizes(), want[k].sizes()) << "output " << k;
      ASSERT_EQ(got[k].dtype(), want[k].dtype()) << "output " << k;
      EXPECT_TRUE(fg::allclose(got[k], want[k], 1e-6, 1e-7, /*equal_nan=*/true)) << "output " << k;
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(got[k].is_same(env[i]), want[k].is_same(env[i])) << "output " << k << ", input " << i;
        if (want[k].numel() > 0) {
          EXPECT_EQ(got[k].data_ptr() == env[i].data_ptr(), want[k].data_ptr() == env[i].data_ptr())
              << "output " << k << " shares input " << i;
        }
      }
      for (int j = 0; j < k; ++j) {
        EXPECT_EQ(got[k].is_same(got[j]), want[k].is_same(want[j])) << "outputs " << j << ", " << k;
        if (want[k].numel() > 0) {
          EXPECT_EQ(got[k].data_ptr() == got[j].data_ptr(), want[k].data_ptr() == want[j].data_ptr())
              << "outputs " << j << ", " << k << " share memory";
        }
      }
    }
    if (HasFailure()) break;  // one program's report
  }
}

TEST(Fused, ValuesOutsideTheKernelsDomains) {
  // Large arguments of sin (Payne-Hanek in the scalar path), negative logs (NaN), infinities.
  Tensor x = values(100, fg::kFloat, 1, 0);
  x.select(0, 3).fill_(1e30);
  x.select(0, 40).fill_(-2.0);
  x.select(0, 77).fill_(std::numeric_limits<float>::infinity());
  const fg::Fused fused({"x"}, "s = sin(x); l = log(x); e = exp(x); m = mul(s, l)", {"s", "l", "e", "m"});
  auto [s, l, e, m] = fused.run<4>({x});
  EXPECT_TRUE(same_bits(s, x.sin()));
  EXPECT_TRUE(same_bits(l, x.log()));
  EXPECT_TRUE(same_bits(e, x.exp()));
  EXPECT_TRUE(same_bits(m, x.sin() * x.log()));
}

TEST(Fused, ThreadsSplitTheTiles) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(2);
  const Tensor x = values(300001, fg::kDouble, 2, 0), y = values(300001, fg::kDouble, 1, 3);
  const fg::Fused fused({"x", "y"}, "a = sin(x); b = div(a, y); c = add(b, x)", {"c"});
  auto [c] = fused.run<1>({x, y});
  EXPECT_TRUE(same_bits(c, x.sin() / y + x));
  omp_set_num_threads(before);
}

TEST(Fused, WhereTheFusedPathDoesNotApplyTheOpsRun) {
  const fg::Fused fused({"x", "y"}, "a = mul(x, y); b = sub(1, a); c = exp(b)", {"b", "c"});
  auto check = [&](const Tensor& x, const Tensor& y) {
    auto [b, c] = fused.run<2>({x, y});
    EXPECT_TRUE(same_bits(b, 1 - x * y));
    EXPECT_TRUE(same_bits(c, (1 - x * y).exp()));
  };
  check(values(12, fg::kFloat, 1, 0).reshape({3, 4}), values(4, fg::kFloat, 1, 0));      // broadcasting
  check(values(12, fg::kFloat, 1, 0), values(12, fg::kDouble, 1, 0));                     // promotion
  check(fg::arange(6, fg::kLong), fg::arange(6, fg::kLong));                              // integers
  check(values(12, fg::kDouble, 1, 0).reshape({3, 4}).t(), values(12, fg::kDouble, 1, 0).reshape({4, 3}));  // strided
  check(fg::zeros({0}, fg::kFloat), fg::zeros({0}, fg::kFloat));                          // empty
  check(values(5, fg::kFloat, 1, 0), fg::full({}, 2.0, fg::kFloat));                      // a 0-d operand
}

TEST(Fused, ErrorsAreTheOps) {
  const fg::Fused fused({"x", "y"}, "a = mul(x, y); b = sin(a)", {"b"});
  try {
    fused.run<1>({fg::zeros({3}), fg::zeros({4})});
    FAIL() << "no error";
  } catch (const fg::Error& e) {
    std::string want;
    try {
      fg::zeros({3}) * fg::zeros({4});
    } catch (const fg::Error& op) {
      want = op.what();
    }
    EXPECT_EQ(std::string(e.what()), want);
  }
  EXPECT_THROW(fused.run<1>({fg::zeros({3}), Tensor()}), fg::Error);
  EXPECT_THROW(fused.run<2>({fg::zeros({3}), fg::zeros({3})}), fg::Error);
  EXPECT_THROW(fused({fg::zeros({3})}), fg::Error);
}

TEST(Fused, MalformedProgramsAreErrors) {
  auto message = [](std::initializer_list<const char*> in, const char* program, std::initializer_list<const char*> out) {
    try {
      fg::Fused f(in, program, out);
    } catch (const fg::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({"x"}, "a = sin(z)", {"a"}).find("operand 'z' of 'a = sin(z)' is neither"), std::string::npos);
  EXPECT_NE(message({"x"}, "a = pow(x, x)", {"a"}).find("'pow' with 2 operand(s)"), std::string::npos);
  EXPECT_NE(message({"x"}, "a = sin(x, x)", {"a"}).find("'sin' with 2 operand(s)"), std::string::npos);
  EXPECT_NE(message({"x"}, "a sin(x)", {"a"}).find("is not 'name = op(operands)'"), std::string::npos);
  EXPECT_NE(message({"x"}, "a = sin(x); a = cos(x)", {"a"}).find("does not name a new value"), std::string::npos);
  EXPECT_NE(message({"x"}, "a = add(1, 2)", {"a"}).find("reads no tensor"), std::string::npos);
  EXPECT_NE(message({"x"}, "a = sin(x)", {"b"}).find("output 'b' is not a value"), std::string::npos);
  EXPECT_NE(message({"x"}, "a = sin(x)", {"a", "a"}).find("output 'a' is named twice"), std::string::npos);
  EXPECT_NE(message({"x"}, "a = expand_as(x, 1)", {"a"}).find("reshapes a number"), std::string::npos);
  EXPECT_NE(message({"x"}, "a = sum_to_as(x)", {"a"}).find("'sum_to_as' with 1 operand(s)"), std::string::npos);
  EXPECT_EQ(message({"x"}, " a = sin( x ) ; b = add(a, 1e-3) ;", {"b"}), "no error");
}

// Whole numbers are int64s, as in C++: `-0` is 0 (x + -0 of -0.0 is +0.0), and above 2^53 an
// int64 tensor's op-by-op path keeps them exact.
TEST(Fused, WholeNumbersAreIntegers) {
  const Tensor x = fg::full({4}, -0.0, fg::kFloat);
  const fg::Fused zero({"x"}, "a = add(x, -0); b = mul(a, 1)", {"b"});
  auto [b] = zero.run<1>({x});
  EXPECT_TRUE(same_bits(b, (x + 0) * 1));
  EXPECT_FALSE(std::signbit(b.select(0, 0).item<float>()));
  const Tensor big = fg::full({3}, int64_t{1} << 60, fg::kLong);
  const fg::Fused add({"x"}, "a = add(x, 9007199254740993); b = sub(a, 1)", {"b"});
  auto [c] = add.run<1>({big});
  EXPECT_TRUE(same_bits(c, big + int64_t{9007199254740993} - 1));
}

}  // namespace
