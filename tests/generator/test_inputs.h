// Deterministic, smooth test inputs for the generated-code tests: sin of a ramp, in float64, so
// that values are distinct, bounded and the same on every run.
#pragma once

#include <funcgen/funcgen.h>

#include <cstdint>
#include <vector>

namespace test_inputs {

inline fg::Tensor input(std::vector<int64_t> shape, double offset) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return fg::sin(fg::arange(n, fg::kDouble) * 0.37 + offset).reshape(shape) * 0.8;
}

}  // namespace test_inputs
