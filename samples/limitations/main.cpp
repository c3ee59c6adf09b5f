// Runs the fixed versions of the UX Limitations gallery and shows that each vmap equals the loop
// over the examples (the page's mental model).
#include <functional>
#include <iostream>
#include <vector>

#include "fixed.funcgen.h"

fg::Tensor diag_embed_fixed(const fg::Tensor& vec);
fg::Tensor relu_branchy(const fg::Tensor& x);
fg::Tensor custom_dot(const fg::Tensor& x);
fg::Tensor halve_until_small(const fg::Tensor& x, double limit);

namespace {

bool same_as_loop(const char* name, const fg::Tensor& batched, const std::function<fg::Tensor(const fg::Tensor&)>& f,
                  const fg::Tensor& xs) {
  std::vector<fg::Tensor> items;
  for (int64_t i = 0; i < xs.size(0); ++i) items.push_back(f(xs[i]));
  const bool same = fg::allclose(batched, fg::stack(items), 1e-5, 1e-6);
  std::cout << name << ": " << batched.sizes() << (same ? ", equals the loop\n" : ", DIFFERS from the loop\n");
  return same;
}

}  // namespace

int main() {
  fg::manual_seed(0);
  const fg::Tensor vecs = fg::tensor({{0., 1., 2.}, {3., 4., 5.}});
  const fg::Tensor xs = fg::randn({6, 3});
  bool ok = true;
  ok &= same_as_loop("vmap(diag_embed) with new_zeros", batched_diag_embed_fixed(vecs), diag_embed_fixed, vecs);
  ok &= same_as_loop("vmap(custom_dot), control flow on x.dim()", batched_custom_dot(xs), custom_dot, xs);
  ok &= same_as_loop("vmap(relu, control_flow='select')", batched_relu_select(xs.select(1, 0)), relu_branchy,
                     xs.select(1, 0));
  ok &= same_as_loop("vmap(halve_until_small, control_flow='select')", batched_halve(xs * 10, 0.5),
                     [](const fg::Tensor& x) { return halve_until_small(x, 0.5); }, xs * 10);
  std::cout << batched_diag_embed_fixed(vecs) << "\n";
  return ok ? 0 : 1;
}
