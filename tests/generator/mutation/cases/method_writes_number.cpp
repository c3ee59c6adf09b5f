// A non-const member function that assigns a number of its object: funcgen passes the object's
// numbers by value, so the caller would not see it.
// EXPECT: reject
#include <funcgen/funcgen.h>

struct Counter {
  fg::Tensor total;
  int64_t n = 0;
  void add(const fg::Tensor& x) {
    total = total + x;
    n += 1;
//  ^
  }
};

FUNCGEN("gcount = grad(count)")
fg::Tensor count(const fg::Tensor& x) {
  Counter c{x * 0};
  c.add(x.sin());
  return c.total.sum() * double(c.n);
}
