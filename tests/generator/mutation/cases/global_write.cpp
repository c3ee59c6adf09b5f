// A write to a global: it would happen once for the whole batch.
// EXPECT: reject
#include <funcgen/funcgen.h>

int calls = 0;

FUNCGEN("vcounted = vmap(counted)")
fg::Tensor counted(const fg::Tensor& x) {
  calls += 1;
//^
  return x * 2;
}
