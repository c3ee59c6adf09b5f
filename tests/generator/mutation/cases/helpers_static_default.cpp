// Helpers: a static one, one in an anonymous namespace, one with a default argument.
// EXPECT: accept
#include <funcgen/funcgen.h>

static fg::Tensor smooth(const fg::Tensor& x, double beta = 2.0) { return (x * beta).exp().log1p() / beta; }
namespace {
fg::Tensor centered(const fg::Tensor& x) { return x - x.mean(); }
}  // namespace

FUNCGEN("vhelped = vmap(helped)")
FUNCGEN("ghelped = grad(helped)")
fg::Tensor helped(const fg::Tensor& x) { return (smooth(centered(x)) + smooth(x, 0.5)).sum(); }
