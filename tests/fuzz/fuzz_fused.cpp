// Fuzz target 3: fused element-wise programs (fg::Fused, what funcgen's optimizer emits for a run
// of element-wise ops) against the same program run op by op through the runtime's public ops,
// the code funcgen emits under --no-optimize, and against the loop of the program over the
// examples of a batch. Fused promises the ops' results bit for bit, so the comparisons are exact;
// where the program raises, both must raise. Random programs over random
// inputs (shapes, float and double, contiguous, strided and expanded), and sometimes the input as
// raw program text, which must build or raise an fg::Error.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "funcgen/funcgen.h"
#include "op_db.h"

namespace {

using fg::Tensor;

const char* const kUnary[] = {"neg", "abs", "exp", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
                              "tanh", "sigmoid", "relu", "erf", "silu", "log_sigmoid", "expm1"};
const char* const kBinary[] = {"add", "sub", "mul", "div"};
const char* const kShape[] = {"expand_as", "sum_to_as"};

[[noreturn]] void fail(const std::string& program, const std::string& what) {
  std::fprintf(stderr, "fuzz_fused: %s\nprogram: %s\n", what.c_str(), program.c_str());
  std::abort();
}

// An operand: an input, an earlier statement's value, or a number.
struct Operand {
  int input = -1, value = -1;
  double number = 0;
  bool integral = false;
  std::string text;
};

struct Statement {
  std::string op;
  int arity = 1;
  bool shape_step = false;
  Operand a, b;
};

// The op database's functional form (tests/runtime/op_db.h), by the name Fused reads.
Tensor unary(const std::string& op, const Tensor& x) {
  for (const opdb::UnaryOp& u : opdb::unary_ops())
    if (u.name == op) return u.fn(x);
  std::fprintf(stderr, "fuzz_fused: '%s' is not in the op database\n", op.c_str());
  std::abort();
}

fg::Scalar scalar_of(const Operand& o) { return o.integral ? fg::Scalar(static_cast<int64_t>(o.number)) : fg::Scalar(o.number); }

// What the unfused generated code calls: the op on tensors, the Scalar overload, or the operator
// with the number first.
Tensor binary(const std::string& op, const Operand& a, const Tensor* ta, const Operand& b, const Tensor* tb) {
  if (ta != nullptr && tb != nullptr) {
    if (op == "add") return fg::add(*ta, *tb);
    if (op == "sub") return fg::sub(*ta, *tb);
    if (op == "mul") return fg::mul(*ta, *tb);
    return fg::div(*ta, *tb);
  }
  if (ta != nullptr) {
    if (op == "add") return fg::add(*ta, scalar_of(b));
    if (op == "sub") return fg::sub(*ta, scalar_of(b));
    if (op == "mul") return fg::mul(*ta, scalar_of(b));
    return fg::div(*ta, scalar_of(b));
  }
  if (op == "add") return scalar_of(a) + *tb;
  if (op == "sub") return scalar_of(a) - *tb;
  if (op == "mul") return scalar_of(a) * *tb;
  return scalar_of(a) / *tb;
}

struct Program {
  std::vector<Statement> statements;
  std::vector<int> outputs;
  std::string text;
  std::vector<std::string> output_names;
};

Operand draw_operand(FuzzedDataProvider& in, int inputs, int values, bool allow_number) {
  Operand o;
  const int pick = in.ConsumeIntegralInRange(0, allow_number ? 3 : 2);
  if (pick == 3) {
    o.integral = in.ConsumeBool();
    o.number = o.integral ? in.ConsumeIntegralInRange(-3, 3) : in.ConsumeFloatingPointInRange(-4.0, 4.0);
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, o.integral ? "%.0f" : "%.17g", o.number);
    o.text = buffer;
    if (!o.integral && std::strpbrk(buffer, ".e") == nullptr) o.text += ".0";  // written as a double
    return o;
  }
  if (values > 0 && pick != 0) {
    o.value = in.ConsumeIntegralInRange(0, values - 1);
    o.text = "t" + std::to_string(o.value);
  } else {
    o.input = in.ConsumeIntegralInRange(0, inputs - 1);
    o.text = "x" + std::to_string(o.input);
  }
  return o;
}

Program draw_program(FuzzedDataProvider& in, int inputs) {
  Program p;
  const int count = in.ConsumeIntegralInRange(1, 10);
  for (int i = 0; i < count; ++i) {
    Statement s;
    const int kind = in.ConsumeIntegralInRange(0, 9);
    if (kind < 5) {
      s.op = in.PickValueInArray(kUnary);
      s.a = draw_operand(in, inputs, i, false);
    } else if (kind < 9) {
      s.op = in.PickValueInArray(kBinary);
      s.arity = 2;
      s.a = draw_operand(in, inputs, i, true);
      s.b = draw_operand(in, inputs, i, s.a.input >= 0 || s.a.value >= 0);
    } else {
      s.op = in.PickValueInArray(kShape);
      s.arity = 2;
      s.shape_step = true;
      s.a = draw_operand(in, inputs, i, false);
      s.b = draw_operand(in, inputs, i, false);
    }
    p.text += (i ? "; t" : "t") + std::to_string(i) + " = " + s.op + "(" + s.a.text + (s.arity == 2 ? ", " + s.b.text : "") + ")";
    p.statements.push_back(s);
  }
  const int outputs = in.ConsumeIntegralInRange(1, 3);
  for (int k = 0; k < outputs; ++k) {  // distinct values (Fused refuses one named twice)
    const int o = in.ConsumeIntegralInRange(0, count - 1);
    if (std::find(p.outputs.begin(), p.outputs.end(), o) != p.outputs.end()) continue;
    p.outputs.push_back(o);
    p.output_names.push_back("t" + std::to_string(o));
  }
  return p;
}

// The program statement by statement through the runtime's ops.
std::vector<Tensor> op_by_op(const Program& p, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> v;
  auto tensor = [&](const Operand& o) -> const Tensor* {
    if (o.input >= 0) return &inputs[o.input];
    if (o.value >= 0) return &v[o.value];
    return nullptr;
  };
  for (const Statement& s : p.statements) {
    if (s.shape_step) v.push_back(s.op == "expand_as" ? tensor(s.a)->expand(tensor(s.b)->sizes())
                                                      : fg::ad::sum_to(*tensor(s.a), tensor(s.b)->sizes()));
    else if (s.arity == 1) v.push_back(unary(s.op, *tensor(s.a)));
    else v.push_back(binary(s.op, s.a, tensor(s.a), s.b, tensor(s.b)));
  }
  std::vector<Tensor> out;
  for (int k : p.outputs) out.push_back(v[k]);
  return out;
}

Tensor draw_input(FuzzedDataProvider& in, const std::vector<int64_t>& sizes, fg::ScalarType dtype) {
  const int layout = in.ConsumeIntegralInRange(0, 5);
  std::vector<int64_t> base = sizes;
  if (layout == 1 && !base.empty()) base.back() *= 2;  // every other element
  if (layout == 2) base.assign(sizes.size(), 1);       // one value expanded (a gradient seed)
  if (layout == 3) base.erase(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(base.size() / 2));  // broadcast
  Tensor t = fg::randn(base, fg::TensorOptions().dtype(dtype));
  if (in.ConsumeBool()) t = fg::mul(t, 3.0);
  if (layout == 1 && !base.empty()) return t.slice(-1, 0, std::nullopt, 2);
  if (layout == 2) return t.expand(sizes);
  return t;  // contiguous, or of a broadcastable shape
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  const Tensor x = a.contiguous(), y = b.contiguous();
  const int64_t n = x.numel();
  if (a.dtype() == fg::kFloat) {
    const float *p = x.data_ptr<float>(), *q = y.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i)
      if (!(p[i] == q[i] || (std::isnan(p[i]) && std::isnan(q[i])))) return false;
  } else if (a.dtype() == fg::kDouble) {
    const double *p = x.data_ptr<double>(), *q = y.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i)
      if (!(p[i] == q[i] || (std::isnan(p[i]) && std::isnan(q[i])))) return false;
  } else {
    return fg::equal(x, y);
  }
  return true;
}

// vmap's definition, for programs whose inputs all have the run's shape: the program over the
// batch (dim 0) is the program over each example, bit for bit (the examples' runs are shorter, so
// their SIMD tails fall elsewhere).
void check_per_example(const Program& p, const std::vector<std::string>& names, const std::vector<Tensor>& xs,
                       const std::vector<Tensor>& batched) {
  const fg::IntArrayRef sizes = xs[0].sizes();
  if (sizes.empty() || sizes[0] == 0) return;
  for (const Tensor& x : xs)
    if (x.sizes() != sizes) return;
  const fg::Fused fused(names, p.text, p.output_names);
  for (int64_t b = 0; b < sizes[0]; ++b) {
    std::vector<Tensor> examples;
    for (const Tensor& x : xs) examples.push_back(x.select(0, b));
    const std::vector<Tensor> out = fused(examples);
    for (size_t k = 0; k < out.size(); ++k)
      if (!same_bits(out[k], batched[k].select(0, b)))
        fail(p.text, "output " + p.output_names[k] + " of example " + std::to_string(b) + " differs from the batch's");
  }
}

void fuzz_program(FuzzedDataProvider& in) {
  const int inputs = in.ConsumeIntegralInRange(1, 3);
  std::vector<int64_t> sizes(in.ConsumeIntegralInRange<size_t>(0, 3));
  for (int64_t& d : sizes) d = in.ConsumeIntegralInRange<int64_t>(0, in.ConsumeBool() ? 70 : 4);
  const fg::ScalarType dtype = in.ConsumeBool() ? fg::kFloat : fg::kDouble;
  std::vector<Tensor> xs;
  for (int i = 0; i < inputs; ++i)
    xs.push_back(draw_input(in, sizes, in.ConsumeIntegralInRange(0, 9) == 0 ? fg::kDouble : dtype));
  const Program p = draw_program(in, inputs);

  std::vector<std::string> names;
  for (int i = 0; i < inputs; ++i) names.push_back("x" + std::to_string(i));
  std::vector<Tensor> expected, actual;
  std::string expected_error, actual_error;
  try {
    expected = op_by_op(p, xs);
  } catch (const fg::Error& e) {
    expected_error = e.what();
  }
  try {
    const fg::Fused fused = fg::Fused(names, p.text, p.output_names);
    actual = fused(xs);
  } catch (const fg::Error& e) {
    actual_error = e.what();
  }
  if (expected_error.empty() != actual_error.empty())
    fail(p.text, expected_error.empty() ? "fused raised: " + actual_error : "op by op raised: " + expected_error);
  for (size_t k = 0; k < expected.size(); ++k)
    if (!same_bits(actual[k], expected[k])) fail(p.text, "output " + p.output_names[k] + " differs from op by op");
  if (expected_error.empty()) check_per_example(p, names, xs, actual);
}

// Arbitrary text as a program over two inputs: it builds or raises an fg::Error, and runs or
// raises one.
void fuzz_text(FuzzedDataProvider& in) {
  const std::string text = in.ConsumeRemainingBytesAsString();
  try {
    const fg::Fused fused(std::vector<std::string>{"x", "y"}, text, std::vector<std::string>{"out"});
    fused(std::vector<Tensor>{fg::randn({3, 5}), fg::randn({3, 5})});
  } catch (const fg::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  fg::manual_seed(in.ConsumeIntegral<uint32_t>());
  if (in.ConsumeIntegralInRange(0, 7) == 0) fuzz_text(in);
  else fuzz_program(in);
  return 0;
}
