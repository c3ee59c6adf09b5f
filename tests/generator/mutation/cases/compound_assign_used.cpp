// The reference operator+= returns, used further: reported at the call, which funcgen lowers as a
// statement that changes the object.
// EXPECT: reject
#include <funcgen/funcgen.h>

struct Acc {
  fg::Tensor v;
  Acc& operator+=(const fg::Tensor& x) {
    v = v + x;
    return *this;
  }
};

FUNCGEN("gacc = grad(accumulate)")
fg::Tensor accumulate(const fg::Tensor& x) {
  Acc a{x};
  Acc b = (a += x.exp());
//         ^
  return a.v.sum() + b.v.sum();
}
