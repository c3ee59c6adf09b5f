// operator+= of a user's class returning *this, called as a statement: a non-const member function
// that changes the caller's object (its flat function returns nothing: the object is its result).
// EXPECT: accept
#include <funcgen/funcgen.h>

struct Acc {
  fg::Tensor v;
  Acc& operator+=(const fg::Tensor& x) {
    v = v + x;
    return *this;
  }
};

FUNCGEN("gacc = grad(accumulate)")
FUNCGEN("vacc = vmap(accumulate)")
fg::Tensor accumulate(const fg::Tensor& x) {
  Acc a{x};
  a += x.exp();
  a += a.v.sin();
  return a.v.sum();
}
