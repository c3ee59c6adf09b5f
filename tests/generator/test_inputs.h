// Deterministic, smooth test inputs for the generated-code tests (sin of a ramp, in float64, so
// that values are distinct, bounded and the same on every run), and the independent references
// they are checked against: central finite differences and the loop of unbatched calls.
#pragma once

#include <funcgen/funcgen.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace test_inputs {

inline fg::Tensor input(std::vector<int64_t> shape, double offset) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return fg::sin(fg::arange(n, fg::kDouble) * 0.37 + offset).reshape(shape) * 0.8;
}

// d f(x) / d x by central differences in float64: shape out.shape + x.shape.
inline fg::Tensor numeric_jacobian(const std::function<fg::Tensor(const fg::Tensor&)>& f, const fg::Tensor& at,
                                   double step = 1e-6) {
  fg::Tensor x = at.clone().contiguous();
  const fg::Tensor out0 = f(x);
  std::vector<int64_t> shape(out0.sizes().begin(), out0.sizes().end());
  shape.insert(shape.end(), x.sizes().begin(), x.sizes().end());
  fg::Tensor jac = fg::zeros({out0.numel(), x.numel()}, fg::kDouble);
  double* px = x.data_ptr<double>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double saved = px[i];
    px[i] = saved + step;
    const fg::Tensor up = f(x).reshape({-1}).clone();  // (a copy: f may return x itself, or a view of it)
    px[i] = saved - step;
    const fg::Tensor down = f(x).reshape({-1}).clone();
    px[i] = saved;
    jac.select(1, i).copy_((up - down) / (2 * step));
  }
  return jac.reshape(shape);
}

// vmap's definition: f of each example along dim 0, stacked.
inline fg::Tensor loop_over_batch(const std::function<fg::Tensor(const fg::Tensor&)>& f, const fg::Tensor& xs) {
  std::vector<fg::Tensor> outs;
  for (int64_t b = 0; b < xs.size(0); ++b) outs.push_back(f(xs.select(0, b)));
  return fg::stack(outs, 0);
}

}  // namespace test_inputs
