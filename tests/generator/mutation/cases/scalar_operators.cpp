// Unary, bitwise, logical and modulo operators on sizes and scalars next to tensor code.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vscalar_ops = vmap(scalar_ops)")
FUNCGEN("gscalar_ops = grad(scalar_ops)")
fg::Tensor scalar_ops(const fg::Tensor& x) {
  const int64_t n = x.size(0);
  const int64_t bits = (n << 2) | (n & 1) ^ 3, rest = n % 2;
  const bool odd = !(rest == 0) && ~n != 0;
  const double sign = -static_cast<double>(odd ? 1 : -1);
  return (x * sign * static_cast<double>(bits) + x.neg()).sum();
}
