// Objects of the user's classes in the constructs test (issue 42), each function through every
// transform (test_constructs.cpp): methods and functors of classes of only numbers, a non-const
// member function that writes a tensor field of its object, a compound assignment operator that
// returns *this, and a virtual call whose override is known where it is called.
#include <funcgen/funcgen.h>

namespace cs {

// ---- a method and a functor of classes of only numbers: their fields are constants
struct Scaler {
  double k;
  fg::Tensor apply(const fg::Tensor& x) const { return x * k; }
};
struct Affine {
  double a, b;
  fg::Tensor operator()(const fg::Tensor& x) const { return x * a + b; }
};

FUNCGEN("number_objects_grad = grad(number_objects)")
FUNCGEN("number_objects_jvp = jvp(number_objects)")
FUNCGEN("number_objects_jacfwd = jacfwd(number_objects)")
FUNCGEN("number_objects_hessian = hessian(number_objects)")
FUNCGEN("number_objects_jacrev2 = jacrev(jacrev(number_objects))")
FUNCGEN("number_objects_hvp = jvp(grad(number_objects))")
FUNCGEN("number_objects_vmap = vmap(number_objects)")
FUNCGEN("number_objects_psg = vmap(grad(number_objects))")
FUNCGEN("number_objects_vjacrev = vmap(jacrev(number_objects))")
fg::Tensor number_objects(const fg::Tensor& x) {
  const Scaler s{0.5};
  return (Scaler{2.0}.apply(x).sin() * Affine{2.0, 1.0}(x) + s.apply(x * x)).sum();
}

// ---- non-const member functions that write their object's tensors (and read its numbers): the
// caller's object changes, in a loop and through a method calling another
struct Counter {
  fg::Tensor total;
  double rate = 0.5;
  void add(const fg::Tensor& x) { total = total + x * rate; }
  void add_twice(const fg::Tensor& x) {
    add(x);
    add(x.cos());
  }
};
struct Pair {
  fg::Tensor a, b;
  void rotate() {
    const fg::Tensor t = a;
    a = b * 2.0;
    b = t.sin();
  }
};

FUNCGEN("object_writes_grad = grad(object_writes)")
FUNCGEN("object_writes_jvp = jvp(object_writes)")
FUNCGEN("object_writes_jacfwd = jacfwd(object_writes)")
FUNCGEN("object_writes_hessian = hessian(object_writes)")
FUNCGEN("object_writes_jacrev2 = jacrev(jacrev(object_writes))")
FUNCGEN("object_writes_hvp = jvp(grad(object_writes))")
FUNCGEN("object_writes_vmap = vmap(object_writes)")
FUNCGEN("object_writes_psg = vmap(grad(object_writes))")
FUNCGEN("object_writes_vjacrev = vmap(jacrev(object_writes))")
fg::Tensor object_writes(const fg::Tensor& x) {
  Counter c{x * 0};
  c.add(x.sin());
  c.add(x * x);
  for (int i = 0; i < 2; ++i) c.add_twice(x * double(i + 1));
  Pair p{x, x.exp()};
  p.rotate();
  p.rotate();
  return c.total.sum() + (p.a * p.b).sum();
}

// ---- operator+= (and *=) of a user's class returning *this, as a statement
struct Acc {
  fg::Tensor v;
  Acc& operator+=(const fg::Tensor& x) {
    v = v + x;
    return *this;
  }
  Acc& operator*=(double k) {
    v = v * k;
    return *this;
  }
};

FUNCGEN("compound_assign_grad = grad(compound_assign)")
FUNCGEN("compound_assign_jvp = jvp(compound_assign)")
FUNCGEN("compound_assign_jacfwd = jacfwd(compound_assign)")
FUNCGEN("compound_assign_hessian = hessian(compound_assign)")
FUNCGEN("compound_assign_jacrev2 = jacrev(jacrev(compound_assign))")
FUNCGEN("compound_assign_hvp = jvp(grad(compound_assign))")
FUNCGEN("compound_assign_vmap = vmap(compound_assign)")
FUNCGEN("compound_assign_psg = vmap(grad(compound_assign))")
FUNCGEN("compound_assign_vjacrev = vmap(jacrev(compound_assign))")
fg::Tensor compound_assign(const fg::Tensor& x) {
  Acc a{x};
  a += x.exp();
  a *= 0.5;
  for (int i = 0; i < 2; ++i) a += a.v.sin();
  return a.v.sum();
}

// ---- virtual calls on an object whose class is known where it is called (a variable of the class,
// a temporary, a reference or a pointer that is only read bound to one, a final class): the
// override of that class; a qualified call (b.Shape::f) calls the function it names
struct Shape {
  virtual ~Shape() = default;
  virtual fg::Tensor f(const fg::Tensor& x) const { return x; }
};
struct Square : Shape {
  fg::Tensor f(const fg::Tensor& x) const override { return x * x; }
};
struct Sine final : Shape {
  fg::Tensor f(const fg::Tensor& x) const override { return x.sin(); }
};
struct Tripled : Shape {
  fg::Tensor f(const fg::Tensor& x) const override { return x * 3.0; }
};
struct Inherits : Tripled {};  // its override is its base's

FUNCGEN("devirtualized_grad = grad(devirtualized)")
FUNCGEN("devirtualized_jvp = jvp(devirtualized)")
FUNCGEN("devirtualized_jacfwd = jacfwd(devirtualized)")
FUNCGEN("devirtualized_hessian = hessian(devirtualized)")
FUNCGEN("devirtualized_jacrev2 = jacrev(jacrev(devirtualized))")
FUNCGEN("devirtualized_hvp = jvp(grad(devirtualized))")
FUNCGEN("devirtualized_vmap = vmap(devirtualized)")
FUNCGEN("devirtualized_psg = vmap(grad(devirtualized))")
FUNCGEN("devirtualized_vjacrev = vmap(jacrev(devirtualized))")
fg::Tensor devirtualized(const fg::Tensor& x) {
  Square s;
  const Shape& b = s;
  Sine n;
  const Sine& r = n;  // (a final class)
  Inherits i;
  const Shape* p = &i;
  return (b.f(x) + s.f(x.cos()) * r.f(x) + p->f(x * x) + Tripled{}.f(x).exp() + b.Shape::f(x)).sum();
}

}  // namespace cs
