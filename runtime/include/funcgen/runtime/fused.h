// Fused element-wise chains: what generated code runs instead of a run of element-wise ops (sin,
// cos, mul, add, ... of tensors and numbers), in one pass over tiles that stay in the cache, with
// no tensor allocated for the values between them. funcgen's simplify stage (transforms/fuse.h)
// writes the program as the ops it replaces:
//
//   static const fg::Fused fused(
//       {"x", "v"}, "t = sin(x); t_1 = cos(x); t_2 = mul(v, t_1); out = sub(1, t_2)", {"t", "out"});
//   auto [t, out] = fused.run<2>({x, v});
//
// Each value is computed by the same SIMD kernel, in the same dtype, as the op would compute it,
// so the results are the ops' results bit for bit. Two shape steps carry AD's broadcasting through
// a run: `expand_as(a, b)` is a.expand(b.sizes()) and `sum_to_as(a, b)` fg::ad::sum_to(a, b.sizes());
// on values of one shape both are `a` itself (a view of it, for expand_as, as the op returns).
// Where the inputs are not float32/float64 CPU tensors of one shape, each contiguous or one value
// expanded (a broadcast gradient seed), except those read only by expand_as (broadcast first) or
// only for their shape, the program runs op by op through the runtime's ops instead: the same
// results, the same errors.
#pragma once

#include <array>
#include <cstdint>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include "funcgen/runtime/tensor.h"

namespace fg {

class Fused {
 public:
  // `inputs`: the names the program reads; `program`: statements `name = op(operand, ...)`
  // separated by ';', each operand an input, an earlier name or a number; `outputs`: the names
  // returned, in order. Unary ops: neg abs exp expm1 log log1p sqrt rsqrt sin cos tan tanh sigmoid relu
  // erf silu log_sigmoid; binary: add sub mul div; shape steps: expand_as sum_to_as (two tensors).
  // A malformed program is an fg::Error.
  Fused(std::initializer_list<const char*> inputs, const char* program, std::initializer_list<const char*> outputs)
      : Fused(std::vector<std::string>(inputs.begin(), inputs.end()), program,
              std::vector<std::string>(outputs.begin(), outputs.end())) {}
  // The same from names and a program built at run time (the fuzz target's random programs).
  Fused(std::vector<std::string> inputs, const std::string& program, const std::vector<std::string>& outputs);

  // The outputs for these inputs (as many as the constructor named, in its order).
  std::vector<Tensor> operator()(std::initializer_list<Tensor> inputs) const {
    return run_vector(inputs.begin(), inputs.size());
  }
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const {
    return run_vector(inputs.data(), inputs.size());
  }
  template <size_t N>
  std::array<Tensor, N> run(std::initializer_list<Tensor> inputs) const {
    check_outputs(N);
    std::array<Tensor, N> out;
    run_into(inputs.begin(), inputs.size(), out.data());
    return out;
  }

  // One statement: value `dst` = op(a[, b]).
  struct Operand {
    enum Kind { Input, Value, Number } kind = Number;
    int index = 0;         // Input: the input's position; Value: the statement that computes it
    double number = 0;     // Number
    bool integral = true;  // Number: written without a point or exponent (an int, as in C++)
    int64_t integer = 0;   // Number, integral: its value
  };
  enum class Shape { None, ExpandAs, SumToAs };
  struct Step {
    bool binary = false;
    int kind = 0;  // cpu kernels' UnaryKind or BinaryKind
    Shape shape = Shape::None;  // a shape step: a to b's shape (b is read for its sizes only; not `binary`)
    std::string op;
    Operand a, b;
  };

 private:
  // What the fused path runs: the steps that compute (a shape step reads as its operand), and
  // where each output comes from.
  struct Plan {
    std::vector<Step> steps;     // Value operands index `steps`
    std::vector<int> allocated;  // per step: its tensor among those allocated (-1: scratch)
    std::vector<int> last_use;   // per step: the last step that reads it (-1: none)
    int tensors = 0;             // allocated per run
    struct Source {
      Operand from;         // Input, or Value of `steps`
      bool view = false;    // through an expand_as: a view, as Tensor::expand returns
      int handle = 0;       // outputs of one handle are one tensor (sum_to_as returns its operand)
    };
    std::vector<Source> outputs;
    // Per input, a mask of Role: read as data by a computing step, through expand_as, for its
    // shape (Data and ShapeOnly ask for the run's shape, Broadcast alone for one that expands to it).
    std::vector<int> role;
    int lead = -1;  // the first input read as data: the run's shape and dtype
    std::vector<float> numbers32;  // each step's two operands in float and double (2 per step)
    std::vector<double> numbers64;
  };
  enum Role { Data = 1, Broadcast = 2, ShapeOnly = 4 };

  void plan();
  void check_outputs(size_t n) const;
  std::vector<Tensor> run_vector(const Tensor* inputs, size_t count) const;
  // The outputs for inputs[0, count) into out[0, outputs).
  void run_into(const Tensor* inputs, size_t count, Tensor* out) const;
  void op_by_op(const Tensor* inputs, Tensor* out) const;
  // The fused path over inputs of one shape (`sizes`); the plan's allocated tensors into `values`.
  template <typename T>
  void fused(const Tensor* inputs, IntArrayRef sizes, Tensor* values) const;

  template <typename T>
  const T* numbers_of() const {
    if constexpr (sizeof(T) == sizeof(float)) return plan_.numbers32.data();
    else return plan_.numbers64.data();
  }

  std::vector<std::string> input_names_;
  std::vector<Step> steps_;
  std::vector<int> outputs_;  // the statement of each output
  Plan plan_;
};

}  // namespace fg
