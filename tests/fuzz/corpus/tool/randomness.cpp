#include <funcgen/funcgen.h>

FUNCGEN("noisy = vmap(f, randomness='different')")
fg::Tensor f(const fg::Tensor& x) { return fg::dropout(x, 0.5, true) + fg::randn_like(x); }

FUNCGEN("eval = vmap(g)")
fg::Tensor g(const fg::Tensor& x) { return fg::dropout(x, 0.5, /*train=*/false).softmax(-1); }
