// The checks of an accepted mutation case, compiled with the code funcgen generated for it:
// vmap against the loop of unbatched calls, grad against central finite differences, in float64.
// A case's functions take `const fg::Tensor&` arguments of shape [3] and return one tensor.
#pragma once

#include <funcgen/funcgen.h>

#include <cstdio>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace mutation {

inline int failures = 0;

inline void report(bool ok, const std::string& what, const std::string& detail = "") {
  std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what.c_str(), detail.empty() ? "" : ": ", detail.c_str());
  if (!ok) ++failures;
}

// Values in [0.5, 1.5]: the cases may take logs and square roots.
inline fg::Tensor sample(fg::IntArrayRef sizes) { return fg::rand(sizes, fg::kDouble) + 0.5; }

template <typename F, size_t... I>
fg::Tensor apply(F f, const std::vector<fg::Tensor>& args, std::index_sequence<I...>) {
  return f(args[I]...);
}

// vmap(f)(xs...) equals stack([f(xs[b]...) for b]), every argument mapped over dim 0.
template <typename... A>
void check_vmap(const std::string& name, fg::Tensor (*batched)(A...), fg::Tensor (*f)(A...)) {
  constexpr int64_t examples = 4;
  std::vector<fg::Tensor> xs;
  for (size_t i = 0; i < sizeof...(A); ++i) xs.push_back(sample({examples, 3}));
  const fg::Tensor got = apply(batched, xs, std::index_sequence_for<A...>{});
  std::vector<fg::Tensor> rows;
  for (int64_t b = 0; b < examples; ++b) {
    std::vector<fg::Tensor> example;
    for (const auto& x : xs) example.push_back(x.select(0, b));
    rows.push_back(apply(f, example, std::index_sequence_for<A...>{}));
  }
  const fg::Tensor want = fg::stack(rows, 0);
  const bool same_shape = got.sizes() == want.sizes();
  report(same_shape && fg::allclose(got, want, 1e-6, 1e-8), name + " (vmap vs loop)",
         same_shape ? "" : "the shapes differ");
}

// grad(f)(x, ...) equals the central differences of f in its first argument.
template <typename... A>
void check_grad(const std::string& name, fg::Tensor (*g)(A...), fg::Tensor (*f)(A...)) {
  constexpr double h = 1e-6;
  std::vector<fg::Tensor> xs;
  for (size_t i = 0; i < sizeof...(A); ++i) xs.push_back(sample({3}));
  const fg::Tensor got = apply(g, xs, std::index_sequence_for<A...>{});
  fg::Tensor x = xs[0].clone().contiguous();
  fg::Tensor want = fg::zeros_like(x);
  double* px = x.data_ptr<double>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double saved = px[i];
    xs[0] = x;
    px[i] = saved + h;
    const double up = apply(f, xs, std::index_sequence_for<A...>{}).template item<double>();
    px[i] = saved - h;
    const double down = apply(f, xs, std::index_sequence_for<A...>{}).template item<double>();
    px[i] = saved;
    want.data_ptr<double>()[i] = (up - down) / (2 * h);
  }
  const bool same_shape = got.sizes() == want.sizes();
  report(same_shape && fg::allclose(got, want, 1e-5, 1e-6), name + " (grad vs finite differences)",
         same_shape ? "" : "the shapes differ");
}

}  // namespace mutation
