// A try block around tensor code.
// EXPECT: reject
#include <funcgen/funcgen.h>

FUNCGEN("vguarded = vmap(guarded)")
fg::Tensor guarded(const fg::Tensor& x) {
  fg::Tensor y = x;
  try {
//^
    y = x.log();
  } catch (const fg::Error&) {
    y = x;
  }
  return y;
}
