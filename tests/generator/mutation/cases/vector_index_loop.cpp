// A loop over the indices of a std::vector<fg::Tensor>, its size() read as a count.
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <vector>

FUNCGEN("vtotal = vmap(total)")
fg::Tensor total(const fg::Tensor& x) {
  std::vector<fg::Tensor> terms = {x, x.cos(), x.exp()};
  fg::Tensor sum = x * 0;
  for (size_t i = 0; i < terms.size(); ++i) sum = sum + terms[i] * static_cast<double>(i + 1);
  return sum.sum();
}
