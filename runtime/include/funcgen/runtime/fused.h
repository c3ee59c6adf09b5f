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
// so the results are the ops' results bit for bit. Where the inputs are not float32/float64 CPU
// tensors of one shape, each contiguous or one value expanded (a broadcast gradient seed), the
// program runs op by op through the runtime's ops instead: the same results, the same errors.
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
  // returned, in order. Unary ops: neg abs exp log log1p sqrt rsqrt sin cos tan tanh sigmoid relu
  // erf silu log_sigmoid; binary: add sub mul div. A malformed program is an fg::Error.
  Fused(std::initializer_list<const char*> inputs, const char* program, std::initializer_list<const char*> outputs);

  // The outputs for these inputs (as many as the constructor named, in its order).
  std::vector<Tensor> operator()(std::initializer_list<Tensor> inputs) const;
  template <size_t N>
  std::array<Tensor, N> run(std::initializer_list<Tensor> inputs) const {
    std::vector<Tensor> all = (*this)(inputs);
    check_outputs(N);
    std::array<Tensor, N> out;
    for (size_t i = 0; i < N; ++i) out[i] = std::move(all[i]);
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
  struct Step {
    bool binary = false;
    int kind = 0;  // cpu kernels' UnaryKind or BinaryKind
    std::string op;
    Operand a, b;
  };

 private:
  void check_outputs(size_t n) const;
  std::vector<Tensor> op_by_op(const std::vector<Tensor>& inputs) const;
  template <typename T>
  std::vector<Tensor> fused(const std::vector<Tensor>& inputs) const;

  // The numbers of each step's two operands in the dtype T (2 per step).
  template <typename T>
  const T* numbers_of() const {
    if constexpr (sizeof(T) == sizeof(float)) return numbers32_.data();
    else return numbers64_.data();
  }

  std::vector<std::string> input_names_;
  std::vector<Step> steps_;
  std::vector<int> outputs_;    // the statement of each output
  std::vector<int> output_of_;  // per statement: its place among the outputs (-1: none)
  std::vector<int> last_use_;   // per statement: the last statement that reads it (-1: none)
  std::vector<float> numbers32_;
  std::vector<double> numbers64_;
};

}  // namespace fg
