// Helpers in a header, as a library of layers keeps them: inline functions in a namespace that
// read the namespace's constants unqualified, a template, a static member function. funcgen
// transforms them with their callers in constructs_functions.cpp.
#pragma once

#include <funcgen/funcgen.h>

namespace layers {

constexpr double kSlope = 0.1;
inline double twice(double a) { return 2 * a; }

inline fg::Tensor smooth(const fg::Tensor& x) { return x.tanh() * kSlope + x * twice(kSlope); }

template <int N>
fg::Tensor power(const fg::Tensor& x) {
  fg::Tensor y = x;
  for (int i = 1; i < N; ++i) y = y * x;
  return y;
}

// Applies a layer to each row, as a library's `map_rows(f, x)` does: the lambda is called here.
template <typename F>
fg::Tensor map_rows(const F& f, const fg::Tensor& x) {
  std::vector<fg::Tensor> rows;
  for (int64_t i = 0; i < x.size(0); ++i) rows.push_back(f(x[i]));
  return fg::stack(rows, 0);
}

struct Ops {
  static fg::Tensor softsign(const fg::Tensor& x) { return x / (x.abs() + twice(0.5)); }
};

}  // namespace layers
